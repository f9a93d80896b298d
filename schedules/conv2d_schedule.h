/** \file
 * Schedules for the conv2d generator, apart from its algorithm.
 *
 * Hand Sunway schedule (schedule_conv2d_sunway): output tiles (TX x TY pixels x TC channels
 * of one image) are spread over the 64 CPEs. Each CPE keeps its accumulator tile in LDM and,
 * for each chunk of CC input channels, stages the input window and the weights the tile needs
 * by DMA; the finished tile goes back by DMA. Tiles are chosen from the machine's LDM budget
 * to maximise flops per DMA byte times the share of CPEs kept busy. The expert techniques,
 * each visible below: the zero-padded window staged so that its in-bounds box lands in place
 * by DMA (InjectDma); a register block of floatv4 pixel vectors x output channels, unrolled
 * inside the kernel taps (conv2d_register_block; ShareOperands loads each operand once per
 * block, weights splatted by simd_loade); accumulator rows of whole vectors (align_storage:
 * aligned simd_load/simd_store); double buffering of the window and the weights.
 *
 * OpenACC-style baseline (schedule_conv2d_baseline) stands for what a careful OpenACC
 * programmer writes for Sunway:
 *
 *     #pragma acc parallel loop collapse(3) copyin(in[...], w[...], b[...]) copyout(out[...])
 *     for (n) for (co) for (y) {                // one output row of one channel per iteration
 *         float row[OW] = b[co];
 *         for (ci0 = 0; ci0 < CI; ci0 += CC) {  // tile(CC): the slices that fit the LDM
 *             copy in[n][ci0..ci0+CC][rows y*s-p .. y*s-p+K-1][all x], w[co][ci0..][..][..]
 *             for (ci) for (ky) for (kx) for (x) row[x] += w * in;
 *         }
 *         out[n][co][y][:] = relu(row);
 *     }
 *
 * Each iteration DMAs the slices it needs and writes its result; nothing is reused across
 * iterations (the input rows come again for every output channel), nothing is vectorised.
 *
 * CPU schedule (schedule_conv2d_cpu): a plain x86 schedule for Halide's CPU reference build.
 */
#ifndef SCHEDULES_CONV2D_SCHEDULE_H
#define SCHEDULES_CONV2D_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/DoubleBuffer.h"
#include "target_sw/PlaceLdmBuffers.h"
#include "target_sw/SplitPhases.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace schedules {

/** Output pixels along x that one register block of the hand schedule accumulates on \p m, at
 * most (the tile choice rounds the width up to it): 4 vectors. */
inline int conv_block_x(const sw::Machine &m) {
    return 4 * vector_lanes(m);
}

/** What a conv2d schedule needs to see of the algorithm. */
struct Conv2DStages {
    Halide::Func output, conv;
    Halide::Func input, weights, bias; ///< the inputs as Funcs (for .in() wrappers)
    Halide::Func padded;               ///< the input with its zero padding (== input if none)
    bool has_padding;
    Halide::Var x, y, c, n;
    Halide::RDom r; ///< r.x: kernel x, r.y: kernel y, r.z: input channel of the group
    /** The fused residual input (the output's shape, added after the sums); undefined if
     * none. */
    Halide::Func residual = Halide::Func();
    /** The prologue's per-input-channel scale and shift (padded then computes the prologue
     * from the input); undefined if none. */
    Halide::Func pre_scale = Halide::Func(), pre_shift = Halide::Func();
    bool has_prologue() const { return pre_scale.defined(); }
};

struct Conv2DShape {
    int batch, in_channels, out_channels, height, width;
    int kernel_x, kernel_y, stride_x, stride_y;
    int pad_left, pad_right, pad_top, pad_bottom;
    int groups;
    int dilation_x = 1, dilation_y = 1;
    bool residual = false; ///< a residual input is added: one more tile of LDM
    /** A prologue on the input: the staged raw window and the computed one both in LDM. */
    bool prologue = false;
    /** Input pixels one kernel window spans (kernel taps dilation apart). */
    int span_x() const { return (kernel_x - 1) * dilation_x + 1; }
    int span_y() const { return (kernel_y - 1) * dilation_y + 1; }
    int out_height() const { return (height + pad_top + pad_bottom - span_y()) / stride_y + 1; }
    int out_width() const { return (width + pad_left + pad_right - span_x()) / stride_x + 1; }
    int in_per_group() const { return in_channels / groups; }
    int out_per_group() const { return out_channels / groups; }
};

/** Tile sizes of a conv2d schedule. */
struct Conv2DTiles {
    int tx, ty; ///< output pixels per tile
    int tc;     ///< output channels per tile
    int cc;     ///< input channels staged at once
};

/** A register block of the hand schedule: floatv4 accumulators along x times output
 * channels. */
struct ConvRegisterBlock {
    int vectors, channels;
};

/** The register block for tiles of \p t: 16 accumulators (of the 32 vector registers, leaving
 * Machine::operand_registers and more for the operands), as expert kernels keep (a 4x4
 * block, SW26010.md): 4 vectors x 4 channels where the tile is 16 pixels wide or more, else 2
 * x 8 (or 1 x 16) so that a narrow tile does not compute padding; the channels of the tile
 * must divide by the block's. Per tap and input channel that is 16 FMAs on P0 against
 * vectors x (1-2) + channels loads on P1: both pipelines busy, the FMA latency hidden. */
inline ConvRegisterBlock conv2d_register_block(const Conv2DTiles &t, const sw::Machine &m) {
    const ConvRegisterBlock b = t.tx >= 4 * vector_lanes(m)   ? ConvRegisterBlock{4, 4}
                                : t.tx >= 2 * vector_lanes(m) ? ConvRegisterBlock{2, 8}
                                                              : ConvRegisterBlock{1, 16};
    return {b.vectors, power_of_two_block(t.tc, b.channels)};
}

/** Whether the hand schedule keeps the window also split into its phases along x
 * (sw::split_phases): a stride > 1 whose taps along x reuse the window (kernel wider than
 * the stride), so the copy into the planes is shared by several taps and by every output
 * channel of the tile. */
inline bool conv2d_phases(const Conv2DShape &s, const sw::Machine &m) {
    return s.stride_x > 1 && s.span_x() > s.stride_x && m.even_odd_shuffle;
}

/** LDM bytes per CPE of one choice of tiles (accumulator, bias, input window and weights
 * or, after them, the residual tile if any); with \p lanes > 1 the tile width is rounded up
 * to whole vectors. */
inline int64_t conv2d_ldm_bytes(const Conv2DShape &s, const Conv2DTiles &t, const sw::Machine &m,
                                int lanes = 1, bool double_buffered = false) {
    const int64_t tx = (t.tx + lanes - 1) / lanes * lanes;
    const int64_t win_w = (tx - 1) * s.stride_x + s.span_x();
    const int64_t win_h = int64_t(t.ty - 1) * s.stride_y + s.span_y();
    const int64_t acc = tx * t.ty * t.tc;
    const int64_t res = s.residual ? int64_t(t.tx) * t.ty * t.tc : 0;
    // With a prologue the raw window is staged too (the computed one is read by the taps),
    // and the chunk's scale and shift.
    const int64_t window =
        win_w * win_h * t.cc * (s.prologue ? 2 : 1) + (s.prologue ? 2 * t.cc : 0);
    const int64_t w = int64_t(s.kernel_x) * s.kernel_y * t.cc * t.tc;
    // The window's phase planes (one more copy of it), when it is split into phases.
    const int64_t planes =
        conv2d_phases(s, m) && lanes > 1 ? window + s.stride_x * vector_lanes(m) : 0;
    // The residual tile is staged after the reduction, when the window and weights are freed.
    return 4 * (acc + t.tc + std::max(res, (double_buffered ? 2 : 1) * (window + w) + planes));
}

/** The hand schedule double-buffers the window and the weights when there is more than one
 * chunk of input channels (a next chunk to prefetch) and the chosen tiles still fit with
 * two slots of each: smaller tiles would cost more than the overlap gains. */
inline bool conv2d_double_buffered(const Conv2DShape &s, const Conv2DTiles &t, const sw::Machine &m,
                                   int lanes) {
    return s.in_per_group() / t.cc > 1 &&
           conv2d_ldm_bytes(s, t, m, lanes, true) <= ldm_plan_budget(m, 6);
}

/** Flops per byte of DMA of one tile: each chunk of cc input channels brings its input
 * window and weights; the output tile is written once (and the residual tile read once). */
inline double conv2d_tile_intensity(const Conv2DShape &s, const Conv2DTiles &t) {
    const double win =
        double((t.tx - 1) * s.stride_x + s.span_x()) * ((t.ty - 1) * s.stride_y + s.span_y());
    const double chunks = double(s.in_per_group()) / t.cc;
    const double k2 = double(s.kernel_x) * s.kernel_y;
    const double flops = 2.0 * t.tx * t.ty * t.tc * k2 * s.in_per_group();
    const double bytes = 4.0 * (chunks * (win * t.cc + k2 * t.cc * t.tc) +
                                (s.residual ? 2.0 : 1.0) * t.tx * t.ty * t.tc + t.tc);
    return flops / bytes;
}

/** Picks tiles that fit the LDM plan budget and maximise DMA intensity times CPE
 * occupancy. Fixed (non-zero) fields of \p forced are kept. Output-channel tiles divide the
 * channels of a group when groups > 1, and the staged channel count divides the input
 * channels of a group, so that no tile needs a guard. When nothing fits, the smallest
 * candidate is returned and the LDM check of the Sunway lowering reports the overflow. */
inline Conv2DTiles choose_conv2d_tiles(const Conv2DShape &s, const sw::Machine &m,
                                       const Conv2DTiles &forced = {0, 0, 0, 0}, int lanes = 1) {
    const int ow = s.out_width(), oh = s.out_height();
    auto options = [](int fixed, std::vector<int> sizes) {
        return fixed ? std::vector<int>{fixed} : sizes;
    };
    std::vector<int> tcs = {64, 32, 16, 8, 4, 2, 1};
    if (s.groups > 1)
        tcs = divisors_desc(s.out_per_group());
    Conv2DTiles best{1, 1, 1, 1};
    std::pair<bool, double> best_key{false, -1.0};
    for (int tx : options(forced.tx, {64, 32, 16, 8, 4, 2, 1})) {
        for (int ty : options(forced.ty, {32, 16, 8, 4, 2, 1})) {
            for (int tc : options(forced.tc, tcs)) {
                Conv2DTiles t{std::min(tx, ow), std::min(ty, oh), std::min(tc, s.out_channels), 1};
                const int64_t tiles = int64_t(ceil_div(ow, t.tx)) * ceil_div(oh, t.ty) *
                                      ceil_div(s.out_channels, t.tc) * s.batch;
                for (int cc : options(forced.cc, divisors_desc(s.in_per_group()))) {
                    t.cc = cc;
                    const bool fits = conv2d_ldm_bytes(s, t, m, lanes) <= ldm_plan_budget(m, 4);
                    if (!fits && cc > 1 && !forced.cc)
                        continue;
                    const std::pair<bool, double> key{fits, cpe_occupancy(tiles, m) *
                                                                conv2d_tile_intensity(s, t)};
                    if (key > best_key) {
                        best_key = key;
                        best = t;
                    }
                    break; // the largest cc that fits for this tile
                }
            }
        }
    }
    return best;
}

/** The shared structure of both Sunway schedules: blocks over output tiles, the
 * accumulator in LDM, per chunk of input channels the window and the weights in LDM.
 * \p simd (hand schedule): the window is staged zero-padded, so the inner loop has no
 * boundary test, and the accumulation runs on floatv4 along x (rounded up to 4 lanes; with
 * a stride > 1 the input vectors are gathered) in register blocks of \p block. */
inline void schedule_conv2d_tiles(Conv2DStages &st, const Conv2DTiles &t, const sw::Machine &m,
                                  bool simd = false, bool double_buffered = false,
                                  ConvRegisterBlock block = {2, 1}, bool phases = false) {
    using namespace Halide;
    const Var tile = spread_tiles_over_cpes(st.output, st.x, st.y, st.c, st.n, t.tx, t.ty, t.tc);
    st.conv.compute_at(st.output, tile).store_in(sw::LDM);
    st.bias.in().compute_at(st.output, tile).store_in(sw::LDM);
    // The residual tile comes by DMA once per output tile, placed by Halide in the stage of
    // conv that reads it (the residual update), after the reduction: the window and the
    // weights are freed by then, so it needs no LDM of its own (conv2d_ldm_bytes). It is
    // added to the finished sums in LDM, before the ReLU.
    if (st.residual.defined()) {
        st.residual.in().compute_at(LoopLevel(st.conv, st.n, -1)).store_in(sw::LDM);
    }
    RVar rco("rco"), rci("rci");
    st.conv.update(0)
        .split(st.r.z, rco, rci, t.cc)
        .reorder(st.r.x, st.r.y, rci, st.x, st.y, st.c, rco, st.n); // the reduction innermost
    if (st.has_prologue()) {
        // The prologue: the raw window, the chunk's scale and shift come by DMA, and the
        // window the taps read is computed from them in LDM, once per staged element (zero
        // outside the image).
        st.input.in().compute_at(st.conv, rco).store_in(sw::LDM);
        st.pre_scale.in().compute_at(st.conv, rco).store_in(sw::LDM);
        st.pre_shift.in().compute_at(st.conv, rco).store_in(sw::LDM);
        st.padded.compute_at(st.conv, rco).store_in(sw::LDM);
    } else if (simd && st.has_padding) {
        // The zero-padded window: its in-bounds box comes by DMA, the edges are zeroed in
        // LDM (InjectDma's guarded copies); the inner loop then needs no boundary test.
        st.padded.compute_at(st.conv, rco).store_in(sw::LDM);
    } else {
        // The raw input: the clamp of the padding makes the staged window exactly its
        // in-bounds part, one strided DMA per channel; the inner loop tests the boundary.
        st.input.in().compute_at(st.conv, rco).store_in(sw::LDM);
    }
    st.weights.in().compute_at(st.conv, rco).store_in(sw::LDM);
    const Func window = (simd && st.has_padding) || st.has_prologue() ? st.padded : st.input.in();
    if (double_buffered) {
        // The next chunk's window and weights arrive while this one is computed (with a
        // prologue the raw window, the computed one is computed when its chunk starts).
        sw::double_buffer(st.has_prologue() ? st.input.in() : window);
        sw::double_buffer(st.weights.in());
    }
    // A stride S > 1 along x: pixel vectors read every S-th input pixel. The window is also
    // kept split into its S phases (x = S j + p in plane p), where they are unit-stride
    // vectors instead of gathers of S scalars (one LDM copy per chunk).
    if (simd && phases)
        sw::split_phases(window);
    // Rounding x up to whole register blocks reads past the tile: only the zero-padded
    // window (defined everywhere) or a tile whose width is a multiple of the block allows it.
    if (simd && (st.has_padding || t.tx % (block.vectors * vector_lanes(m)) == 0)) {
        // The register block: block.vectors floatv4 of pixels along x times block.channels
        // output channels, block.vectors x block.channels accumulators that stay in
        // registers over the whole chunk (PromoteAccumulators). Per tap and input channel
        // the block loads block.vectors input vectors, each used by every channel, and
        // splats block.channels weights (simd_loade), each used by every vector
        // (ShareOperands): block.vectors x block.channels independent FMAs.
        Var xo("xo"), xi("xi"), xio("xio"), xii("xii"), cb("cb"), cu("cu");
        st.conv.vectorize(st.x, vector_lanes(m), TailStrategy::RoundUp);
        // Whole vectors per accumulator row: its loads and stores are aligned (simd_load).
        st.conv.align_storage(st.x, vector_lanes(m));
        st.conv.update(0)
            .split(st.x, xo, xi, block.vectors * vector_lanes(m), TailStrategy::RoundUp)
            .split(xi, xio, xii, vector_lanes(m))
            .split(st.c, cb, cu, block.channels)
            .reorder(xii, xio, cu, st.r.x, st.r.y, rci, xo, st.y, cb, rco, st.n)
            .vectorize(xii)
            .unroll(xio)
            .unroll(cu);
        // Small kernels are unrolled to drop the loop overhead.
        if (st.r.x.extent().defined() && can_prove(st.r.x.extent() * st.r.y.extent() <= 25)) {
            st.conv.update(0).unroll(st.r.x).unroll(st.r.y);
        } else if (phases && st.r.x.extent().defined() && can_prove(st.r.x.extent() <= 16)) {
            // Each tap along x then reads its phase plane at a constant offset.
            st.conv.update(0).unroll(st.r.x);
        }
    }
    // The residual add and the ReLU, if any, run in place on the LDM tile.
    for (int u = 1; u < st.conv.num_update_definitions(); u++)
        st.conv.update(u).unscheduled();
}

/** The hand Sunway schedule. \p forced holds tile sizes the user fixed (0: choose). */
inline void schedule_conv2d_sunway(Conv2DStages &st, const Conv2DShape &s, const sw::Machine &m,
                                   const Conv2DTiles &forced = {0, 0, 0, 0}) {
    const bool simd = true;
    const Conv2DTiles t = choose_conv2d_tiles(s, m, forced, simd ? conv_block_x(m) : 1);
    const ConvRegisterBlock block = conv2d_register_block(t, m);
    schedule_conv2d_tiles(st, t, m, simd,
                          simd && conv2d_double_buffered(s, t, m, block.vectors * vector_lanes(m)),
                          block, simd && conv2d_phases(s, m));
}

/** The OpenACC-style baseline: one output row of one channel per iteration. */
inline void schedule_conv2d_baseline(Conv2DStages &st, const Conv2DShape &s, const sw::Machine &m) {
    // The tile clause takes as many input channels as fit the LDM.
    Conv2DTiles t{s.out_width(), 1, 1, 1};
    for (int cc : divisors_desc(s.in_per_group())) {
        t.cc = cc;
        if (conv2d_ldm_bytes(s, t, m) <= ldm_plan_budget(m, 4))
            break;
    }
    schedule_conv2d_tiles(st, t, m);
}

inline void schedule_conv2d_cpu(Conv2DStages &st) {
    using namespace Halide;
    Var yo("yo"), yi("yi"), par("par");
    st.output.compute_root()
        .split(st.y, yo, yi, 8, TailStrategy::GuardWithIf)
        .fuse(yo, st.c, par)
        .fuse(par, st.n, par)
        .parallel(par);
    st.conv.compute_at(st.output, par).vectorize(st.x, 8, TailStrategy::GuardWithIf);
    for (int u = 0; u < st.conv.num_update_definitions(); u++) {
        st.conv.update(u).vectorize(st.x, 8, TailStrategy::GuardWithIf);
    }
}

} // namespace schedules

#endif
