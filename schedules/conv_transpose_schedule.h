/** \file
 * Schedules for the conv_transpose generator (2-D transposed convolution).
 *
 * Hand Sunway schedule: output tiles (TX x TY pixels x TC channels of one image) over the
 * CPEs, accumulated in LDM from the bias; the reduction over the group's input channels in
 * chunks of CC, each chunk's input box (the pixels the tile's taps reach, strided by the
 * stride: Halide bounds it from the exact divisions) and its weights staged by DMA; the tile
 * put back by DMA. Tiles and chunk minimise a closed-form estimate (per wave of 64 tiles, the
 * staged bytes at the DMA curve's bandwidth plus the taps' multiply-adds, scalar: the taps that
 * miss an input pixel are multiplied by zero, one in stride^2 hits).
 *
 * OpenACC-style baseline:
 *
 *     #pragma acc parallel loop collapse(3) copyin(in[...], w[...]) copyout(out[...])
 *     for (n) for (co) for (y) {          // one output row of one channel per iteration
 *         for (chunks of input channels) { copy the input rows and weights the row reads
 *             for (ci, ky, kx, x) out[n][co][y][x] += spread(in)[...] * w[ci][co][ky][kx]; }
 *     }
 */
#ifndef SCHEDULES_CONV_TRANSPOSE_SCHEDULE_H
#define SCHEDULES_CONV_TRANSPOSE_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>
#include <limits>

namespace schedules {

struct ConvTransposeStages {
    Halide::Func output, acc, input, weights, bias;
    Halide::Var x, y, c, n;
    Halide::RDom r; ///< kx, ky, the group's input channels
};

struct ConvTransposeShape {
    int batch, in_channels, out_channels, height, width, out_height, out_width;
    int kernel_x, kernel_y, stride_x, stride_y, dilation_x, dilation_y, groups;
};

struct ConvTransposeTiles {
    int tx, ty, tc, cc;
};

/** Input pixels along an axis that a run of \p t outputs reaches (at most). */
inline int conv_transpose_box(int t, int k, int d, int s, int in) {
    return std::min(in, (t - 1 + (k - 1) * d) / s + 2);
}

inline int64_t conv_transpose_ldm_bytes(const ConvTransposeShape &s, const ConvTransposeTiles &t) {
    const int mg = s.out_channels / s.groups;
    const int64_t spanned = (t.tc + mg - 1) / mg; // groups a tile's channels span
    const int64_t box =
        int64_t(conv_transpose_box(t.tx, s.kernel_x, s.dilation_x, s.stride_x, s.width)) *
        conv_transpose_box(t.ty, s.kernel_y, s.dilation_y, s.stride_y, s.height) * t.cc * spanned;
    // With groups the weights' channel is o % (M / groups), which Halide bounds by the group.
    const int64_t wts =
        int64_t(s.kernel_x) * s.kernel_y * (s.groups > 1 ? mg : t.tc) * t.cc * spanned;
    return 4 * (int64_t(t.tx) * t.ty * t.tc + box + wts + t.tc);
}

/** Modelled seconds of tiles \p t: per wave of 64 tiles, each chunk's box and weights and the
 * tile's put at the DMA curve's bandwidth (the core group's channel shared by the wave), plus
 * about 2 cycles per tap (scalar multiply-add with its loads). */
inline double conv_transpose_estimate(const ConvTransposeShape &s, const ConvTransposeTiles &t,
                                      const sw::Machine &m) {
    const int cg = s.in_channels / s.groups;
    const int64_t tiles = int64_t(ceil_div(s.out_width, t.tx)) * ceil_div(s.out_height, t.ty) *
                          ceil_div(s.out_channels, t.tc) * s.batch;
    const int64_t waves = (tiles + m.cpes_per_core_group - 1) / m.cpes_per_core_group;
    const int chunks = ceil_div(cg, t.cc);
    const double cpes = double(std::min<int64_t>(tiles, m.cpes_per_core_group));
    const int bw = conv_transpose_box(t.tx, s.kernel_x, s.dilation_x, s.stride_x, s.width);
    const double get =
        4.0 * chunks *
        (double(bw) * conv_transpose_box(t.ty, s.kernel_y, s.dilation_y, s.stride_y, s.height) *
             t.cc / (dma_gbps(m, 4.0 * bw) * 1e9) +
         double(s.kernel_x) * s.kernel_y * t.tc * t.cc /
             (dma_gbps(m, 4.0 * s.kernel_x * s.kernel_y * t.tc) * 1e9));
    const PixelTiles pt{t.tx, t.ty, t.tc};
    const double put = 4.0 * t.tx * t.ty * t.tc /
                       (dma_gbps(m, contiguous_bytes(pt, s.out_width, s.out_height)) * 1e9);
    const double taps = double(t.tx) * t.ty * t.tc * s.kernel_x * s.kernel_y * cg;
    return double(waves) * (cpes * (get + put) + 2.0 * taps / (m.clock_ghz * 1e9));
}

inline ConvTransposeTiles choose_conv_transpose_tiles(const ConvTransposeShape &s,
                                                      const sw::Machine &m, bool baseline) {
    const int cg = s.in_channels / s.groups, mg = s.out_channels / s.groups;
    ConvTransposeTiles best{1, 1, 1, 1};
    double best_time = std::numeric_limits<double>::infinity();
    const std::vector<int> txs = baseline ? std::vector<int>{s.out_width}
                                          : std::vector<int>{s.out_width, 64, 32, 16, 8, 4, 2, 1};
    const std::vector<int> tys =
        baseline ? std::vector<int>{1} : std::vector<int>{32, 16, 8, 4, 2, 1};
    const std::vector<int> tcs =
        baseline ? std::vector<int>{1} : std::vector<int>{64, 32, 16, 8, 4, 2, 1};
    for (int tx0 : txs) {
        for (int ty0 : tys) {
            for (int tc0 : tcs) {
                for (int cc0 : {256, 128, 64, 32, 16, 8, 4, 2, 1}) {
                    const ConvTransposeTiles t{std::min(tx0, s.out_width),
                                               std::min(ty0, s.out_height),
                                               std::min(tc0, s.out_channels), std::min(cc0, cg)};
                    if (s.groups > 1 && mg % t.tc != 0)
                        continue;
                    if (conv_transpose_ldm_bytes(s, t) > ldm_plan_budget(m, 4))
                        continue;
                    // The baseline takes the largest chunk that fits, not the estimate's best.
                    const double e = baseline ? -double(t.cc) : conv_transpose_estimate(s, t, m);
                    if (e < best_time) {
                        best_time = e;
                        best = t;
                    }
                }
            }
        }
    }
    return best;
}

inline void schedule_conv_transpose_tiles(ConvTransposeStages &st, const ConvTransposeTiles &t) {
    using namespace Halide;
    const Var tile = spread_tiles_over_cpes(st.output, st.x, st.y, st.c, st.n, t.tx, t.ty, t.tc);
    st.acc.compute_at(st.output, tile).store_in(sw::LDM);
    RVar rzo("rzo"), rzi("rzi");
    st.acc.update()
        .split(st.r.z, rzo, rzi, t.cc)
        .reorder(st.x, st.y, st.c, st.r.x, st.r.y, rzi, rzo, st.n);
    st.input.in().compute_at(st.acc, rzo).store_in(sw::LDM);
    st.weights.in().compute_at(st.acc, rzo).store_in(sw::LDM);
    st.bias.in().compute_at(st.output, tile).store_in(sw::LDM);
}

inline void schedule_conv_transpose_sunway(ConvTransposeStages &st, const ConvTransposeShape &s,
                                           const sw::Machine &m) {
    schedule_conv_transpose_tiles(st, choose_conv_transpose_tiles(s, m, false));
}

inline void schedule_conv_transpose_baseline(ConvTransposeStages &st, const ConvTransposeShape &s,
                                             const sw::Machine &m) {
    schedule_conv_transpose_tiles(st, choose_conv_transpose_tiles(s, m, true));
}

inline void schedule_conv_transpose_cpu(ConvTransposeStages &st) {
    using namespace Halide;
    Var par("par");
    st.output.compute_root().fuse(st.c, st.n, par).parallel(par);
    st.acc.compute_at(st.output, par);
}

} // namespace schedules

#endif
