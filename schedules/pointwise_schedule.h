/** \file
 * Schedules for the point-wise NCHW generators: eltwise (Add / Mul with broadcasting),
 * channel_affine (per-channel scale and shift), channel_shuffle (a channel permutation) and
 * channel_slice (a range of channels, a copy).
 * Each output point depends on one point of each input (or of its broadcast), so a tile
 * needs exactly the inputs' boxes under it: no halo, no reduction.
 *
 * Hand Sunway schedule: output tiles (TX x TY pixels x TC channels of one image) over the
 * CPEs; each stages the boxes of its inputs by DMA (a broadcast input brings only its
 * broadcast box, e.g. TC values of a 1xCx1x1 scale), computes the result in LDM (floatv4
 * along x where the operation is only adds and multiplies and the tile is whole vectors;
 * the CPE code generator has no vector min/max/select, so a fused ReLU stays scalar) and
 * writes it back by DMA. Tiles are the largest that fit the LDM and keep the CPEs busy, with
 * whole rows first (one contiguous DMA block per tile when TX is the width). A channel
 * permutation stages one channel per tile (TC = 1): its channels are not contiguous.
 *
 * OpenACC-style baseline:
 *
 *     #pragma acc parallel loop collapse(3) copyin(a[...], b[...]) copyout(out[...])
 *     for (n) for (c) for (y) {      // one row of one channel per iteration
 *         copy a[n][c][y][all x], b[broadcast n][broadcast c][broadcast y][all x or 0]
 *         for (x) out[n][c][y][x] = a op b;
 *     }
 *
 * CPU schedule: the output over channels and images in parallel, 8-wide vectors along x.
 */
#ifndef SCHEDULES_POINTWISE_SCHEDULE_H
#define SCHEDULES_POINTWISE_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>
#include <vector>

namespace schedules {

struct PointwiseStages {
    Halide::Func output;
    Halide::Func result; ///< the values computed in LDM (undefined: output copies the staging)
    std::vector<Halide::Func> inputs; ///< the inputs, each staged per tile (.in())
    Halide::Var x, y, c, n;
};

struct PointwiseShape {
    int batch, channels, height, width; ///< of the output
    int full_inputs;                    ///< inputs staged with one value per output point (at most)
    int channel_inputs;                 ///< inputs staged with one value per channel
    bool vectorizable;                  ///< the result is only adds and multiplies
    bool one_channel_tiles;             ///< TC = 1 (a channel permutation)
};

/** LDM bytes per CPE of tiles \p t: the staged inputs and the result (if computed). */
inline int64_t pointwise_ldm_bytes(const PointwiseShape &s, const PixelTiles &t, bool has_result) {
    const int64_t points = int64_t(t.tx) * t.ty * t.tc;
    return 4 * (points * (s.full_inputs + (has_result ? 1 : 0)) + int64_t(t.tc) * s.channel_inputs);
}

/** The largest tiles that fit and keep the CPEs busy, scored by the DMA rate of the
 * tile's contiguous blocks (a row, or the whole tile when it spans the rows) times CPE
 * occupancy; whole-vector widths are preferred where the result vectorises. */
inline PixelTiles choose_pointwise_tiles(const PointwiseShape &s, const sw::Machine &m,
                                         bool has_result) {
    const std::vector<int> tcs =
        s.one_channel_tiles ? std::vector<int>{1} : std::vector<int>{64, 32, 16, 8, 4, 2, 1};
    return search_pixel_tiles(
        s.width, s.height, s.channels, s.batch, m,
        [&](const PixelTiles &t, double occupancy) {
            if (pointwise_ldm_bytes(s, t, has_result) >
                ldm_plan_budget(m, s.full_inputs + s.channel_inputs + 1))
                return -1.0;
            const double contiguous = contiguous_bytes(t, s.width, s.height);
            const bool vectors = s.vectorizable && t.tx % vector_lanes(m) == 0;
            return occupancy * dma_gbps(m, contiguous) * (vectors ? 1.25 : 1.0);
        },
        {256, 128, 64, 32, 16, 8, 4, 2, 1}, {64, 32, 16, 8, 4, 2, 1}, tcs);
}

inline void schedule_pointwise_tiles(PointwiseStages &st, const PointwiseShape &s,
                                     const PixelTiles &t, bool simd, const sw::Machine &m) {
    using namespace Halide;
    const Var tile = spread_tiles_over_cpes(st.output, st.x, st.y, st.c, st.n, t.tx, t.ty, t.tc);
    if (st.result.defined()) {
        st.result.compute_at(st.output, tile).store_in(sw::LDM);
        // Whole vectors only: rounding a tile up would stage past the inputs' edges.
        if (simd && s.vectorizable && t.tx % vector_lanes(m) == 0)
            st.result.vectorize(st.x, vector_lanes(m));
    }
    for (Func f : st.inputs)
        f.in().compute_at(st.output, tile).store_in(sw::LDM);
}

inline void schedule_pointwise_sunway(PointwiseStages &st, const PointwiseShape &s,
                                      const sw::Machine &m) {
    schedule_pointwise_tiles(st, s, choose_pointwise_tiles(s, m, st.result.defined()), true, m);
}

/** The OpenACC-style baseline: one row of one channel per iteration, scalar. */
inline void schedule_pointwise_baseline(PointwiseStages &st, const PointwiseShape &s,
                                        const sw::Machine &m) {
    schedule_pointwise_tiles(st, s, {s.width, 1, 1}, false, m);
}

inline void schedule_pointwise_cpu(PointwiseStages &st) {
    using namespace Halide;
    Var par("par");
    st.output.compute_root()
        .fuse(st.c, st.n, par)
        .parallel(par)
        .vectorize(st.x, 8, TailStrategy::GuardWithIf);
}

} // namespace schedules

#endif
