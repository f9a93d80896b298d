/** \file
 * Schedules for the conv2d generator, apart from its algorithm.
 *   - schedule_conv2d_sunway: the hand Sunway schedule. Output tiles (TX x TY pixels x TC
 *     channels of one image) are spread over the 64 CPEs; each CPE keeps its accumulator tile
 *     in LDM, and for each chunk of CC input channels stages the input window and the weights
 *     it needs in LDM by DMA, then writes the finished tile back by DMA.
 *   - schedule_conv2d_cpu: a plain x86 schedule for the reference build.
 * Tile sizes are chosen from the machine's LDM budget (target_sw/Machine.h).
 */
#ifndef SCHEDULES_CONV2D_SCHEDULE_H
#define SCHEDULES_CONV2D_SCHEDULE_H

#include "Halide.h"
#include "target_sw/Machine.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace schedules {

/** What a conv2d schedule needs to see of the algorithm. */
struct Conv2DStages {
    Halide::Func output, conv;
    Halide::Func input, weights, bias;  ///< the inputs as Funcs (for .in() wrappers)
    Halide::Var x, y, c, n;
    Halide::RDom r;  ///< r.x: kernel x, r.y: kernel y, r.z: input channel
};

struct Conv2DShape {
    int batch, in_channels, out_channels, height, width, kernel, stride, pad;
    int out_height() const { return (height + 2 * pad - kernel) / stride + 1; }
    int out_width() const { return (width + 2 * pad - kernel) / stride + 1; }
};

/** Tile sizes of the hand Sunway schedule. */
struct Conv2DTiles {
    int tx, ty;  ///< output pixels per tile
    int tc;      ///< output channels per tile
    int cc;      ///< input channels staged at once
    int64_t ldm_bytes;  ///< LDM the tiles use per CPE (upper bound, floats)
};

/** LDM bytes per CPE of one choice of tiles (accumulator, bias, input window, weights). */
inline int64_t conv2d_ldm_bytes(const Conv2DShape &s, int tx, int ty, int tc, int cc) {
    const int64_t win_w = int64_t(tx - 1) * s.stride + s.kernel;
    const int64_t win_h = int64_t(ty - 1) * s.stride + s.kernel;
    const int64_t acc = int64_t(tx) * ty * tc;
    const int64_t window = win_w * win_h * cc;
    const int64_t w = int64_t(s.kernel) * s.kernel * cc * tc;
    return 4 * (acc + tc + window + w);
}

/** Flops per byte of DMA of one tile: one chunk of cc input channels brings its input
 * window and weights; the output tile is written once per tile. */
inline double conv2d_tile_intensity(const Conv2DShape &s, int tx, int ty, int tc, int cc) {
    const double win = double((tx - 1) * s.stride + s.kernel) * ((ty - 1) * s.stride + s.kernel);
    const double chunks = double(s.in_channels) / cc;
    const double flops = 2.0 * tx * ty * tc * s.kernel * s.kernel * s.in_channels;
    const double bytes = 4.0 * (chunks * (win * cc + double(s.kernel) * s.kernel * cc * tc) +
                                double(tx) * ty * tc + tc);
    return flops / bytes;
}

/** Picks tiles that fit the machine's LDM data budget (with room for the 128-byte
 * alignment of each of the four buffers) and maximise DMA intensity times the share of
 * CPEs kept busy by the tiles. The staged channel count divides in_channels, so that no
 * guard is needed. */
inline Conv2DTiles choose_conv2d_tiles(const Conv2DShape &s, const sw::Machine &m,
                                       const Conv2DTiles &forced = {0, 0, 0, 0, 0}) {
    const int64_t budget = m.ldm_data_budget() - 4 * m.ldm_alignment;
    Conv2DTiles best{1, 1, 1, 1, conv2d_ldm_bytes(s, 1, 1, 1, 1)};
    double best_score = -1;
    bool best_fits = false;
    const int ow = s.out_width(), oh = s.out_height();
    auto ceil_div = [](int a, int b) { return (a + b - 1) / b; };
    auto options = [](int fixed, std::vector<int> sizes) {
        return fixed ? std::vector<int>{fixed} : sizes;
    };
    for (int tx : options(forced.tx, {64, 32, 16, 8, 4, 2, 1})) {
        for (int ty : options(forced.ty, {32, 16, 8, 4, 2, 1})) {
            for (int tc : options(forced.tc, {64, 32, 16, 8, 4, 2, 1})) {
                const int ctx = std::min(tx, ow), cty = std::min(ty, oh);
                const int ctc = std::min(tc, s.out_channels);
                const int64_t tiles = int64_t(ceil_div(ow, ctx)) * ceil_div(oh, cty) *
                                      ceil_div(s.out_channels, ctc) * s.batch;
                const int64_t waves = (tiles + m.cpes_per_core_group - 1) / m.cpes_per_core_group;
                const double busy = double(tiles) / double(waves * m.cpes_per_core_group);
                for (int cc = forced.cc ? forced.cc : s.in_channels; cc >= 1; cc--) {
                    if (s.in_channels % cc) continue;
                    const int64_t bytes = conv2d_ldm_bytes(s, ctx, cty, ctc, cc);
                    // Tiles that fit nowhere are kept as a last resort (at the smallest
                    // channel chunk): the LDM check of the Sunway lowering then reports
                    // the overflow with every buffer's size.
                    const bool fits = bytes <= budget;
                    if (!fits && cc > 1 && !forced.cc) continue;
                    const double score = busy * conv2d_tile_intensity(s, ctx, cty, ctc, cc);
                    if (std::make_pair(fits, score) > std::make_pair(best_fits, best_score)) {
                        best_fits = fits;
                        best_score = score;
                        best = {ctx, cty, ctc, cc, bytes};
                    }
                    break;  // the largest cc that fits for this tile
                }
            }
        }
    }
    return best;
}

/** The hand Sunway schedule. \p forced holds tile sizes the user fixed (0: choose). */
inline void schedule_conv2d_sunway(Conv2DStages &st, const Conv2DShape &s, const sw::Machine &m,
                                   const Conv2DTiles &forced = {0, 0, 0, 0, 0}) {
    using namespace Halide;
    const Conv2DTiles t = choose_conv2d_tiles(s, m, forced);
    Var xo("xo"), yo("yo"), co("co"), xi("xi"), yi("yi"), ci("ci"), tile("tile");
    // One CPE block per (x tile, y tile, channel tile, image).
    st.output.tile(st.x, st.y, xo, yo, xi, yi, t.tx, t.ty)
        .split(st.c, co, ci, t.tc)
        .reorder(xi, yi, ci, xo, yo, co, st.n)
        .fuse(xo, yo, tile)
        .fuse(tile, co, tile)
        .fuse(tile, st.n, tile)
        .gpu_blocks(tile, DeviceAPI::Host);
    // The accumulator tile lives in LDM; the output copy writes it back by DMA.
    st.conv.compute_at(st.output, tile).store_in(MemoryType::GPUShared);
    st.bias.in().compute_at(st.output, tile).store_in(MemoryType::GPUShared);
    RVar rco("rco"), rci("rci");
    st.conv.update(0)
        .split(st.r.z, rco, rci, t.cc)
        .reorder(st.x, st.y, st.r.x, st.r.y, rci, st.c, rco, st.n);
    // Per chunk of input channels: the input window and the weights, staged by DMA.
    st.input.in().compute_at(st.conv, rco).store_in(MemoryType::GPUShared);
    st.weights.in().compute_at(st.conv, rco).store_in(MemoryType::GPUShared);
    // The fused ReLU, if any, runs in place on the LDM tile with the default loops.
    for (int u = 1; u < st.conv.num_update_definitions(); u++) st.conv.update(u).unscheduled();
}

inline void schedule_conv2d_cpu(Conv2DStages &st, const Conv2DShape &s) {
    using namespace Halide;
    (void)s;
    Var yo("yo"), yi("yi"), par("par");
    st.output.compute_root()
        .split(st.y, yo, yi, 8, TailStrategy::GuardWithIf)
        .fuse(yo, st.c, par)
        .fuse(par, st.n, par)
        .parallel(par);
    st.conv.compute_at(st.output, par).vectorize(st.x, 8, TailStrategy::GuardWithIf);
    st.conv.update(0).vectorize(st.x, 8, TailStrategy::GuardWithIf);
    for (int u = 1; u < st.conv.num_update_definitions(); u++) {
        st.conv.update(u).vectorize(st.x, 8, TailStrategy::GuardWithIf);
    }
}

}  // namespace schedules

#endif
