/** \file
 * Schedules for the resize generator (nearest and bilinear 2-D resize).
 *
 * Hand Sunway schedule: output tiles (TX x TY pixels x TC channels of one image; whole output
 * rows where they fit) over the CPEs; each stages the box of input rows and columns its
 * pixels read (Halide bounds the box per tile from the source coordinates) by DMA, computes
 * the tile in LDM and writes it back by DMA. The tile minimises a closed-form estimate: per
 * wave of 64 tiles, the staged box and the tile's put at the DMA curve's bandwidth for their
 * contiguous runs, plus the arithmetic of the tile's pixels.
 *
 * OpenACC-style baseline:
 *
 *     #pragma acc parallel loop collapse(3) copyin(in[...]) copyout(out[...])
 *     for (n) for (c) for (y) {          // one output row of one channel per iteration
 *         copy the input rows (and columns) row y reads
 *         for (x) out[n][c][y][x] = interpolate;
 *     }
 */
#ifndef SCHEDULES_RESIZE_SCHEDULE_H
#define SCHEDULES_RESIZE_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace schedules {

struct ResizeStages {
    Halide::Func output, result, input;
    Halide::Var x, y, c, n;
};

struct ResizeShape {
    int batch, channels, in_height, in_width, out_height, out_width;
};

/** Input pixels a run of \p t output pixels along an axis of \p in -> \p out reads, at most
 * (every coordinate mode steps at most max(in / out, (in - 1) / (out - 1)) input pixels per
 * output pixel; two taps and a rounding margin). */
inline int resize_box(int t, int in, int out) {
    const double step =
        std::max(double(in) / out, out > 1 ? double(in - 1) / double(out - 1) : 0.0);
    return std::min(in, int(std::ceil((t - 1) * step)) + 3);
}

inline int64_t resize_ldm_bytes(const ResizeShape &s, const PixelTiles &t) {
    const int64_t box = int64_t(resize_box(t.tx, s.in_width, s.out_width)) *
                        resize_box(t.ty, s.in_height, s.out_height);
    return 4 * int64_t(t.tc) * (box + int64_t(t.tx) * t.ty);
}

/** Modelled seconds of the layer with tiles \p t: waves of 64 tiles, each the get of its input
 * box and the put of its output at the DMA curve's bandwidth for their contiguous runs, plus
 * about 24 cycles of arithmetic per output pixel (the coordinates and the taps, scalar). */
inline double resize_estimate(const ResizeShape &s, const PixelTiles &t, const sw::Machine &m) {
    const int64_t tiles = int64_t(ceil_div(s.out_width, t.tx)) * ceil_div(s.out_height, t.ty) *
                          ceil_div(s.channels, t.tc) * s.batch;
    const int64_t waves = (tiles + m.cpes_per_core_group - 1) / m.cpes_per_core_group;
    const int bw = resize_box(t.tx, s.in_width, s.out_width),
              bh = resize_box(t.ty, s.in_height, s.out_height);
    const PixelTiles box{bw, bh, t.tc};
    const double get_bytes = 4.0 * t.tc * bw * bh, put_bytes = 4.0 * t.tc * t.tx * t.ty;
    // Every CPE's DMA shares the core group's channel: a wave moves 64 tiles' bytes.
    const double cpes = double(std::min<int64_t>(tiles, m.cpes_per_core_group));
    const double dma =
        cpes * (get_bytes / (dma_gbps(m, contiguous_bytes(box, s.in_width, s.in_height)) * 1e9) +
                put_bytes / (dma_gbps(m, contiguous_bytes(t, s.out_width, s.out_height)) * 1e9));
    const double compute = 24.0 * t.tc * t.tx * t.ty / (m.clock_ghz * 1e9);
    return double(waves) * (dma + compute);
}

inline PixelTiles choose_resize_tiles(const ResizeShape &s, const sw::Machine &m) {
    PixelTiles best{1, 1, 1};
    double best_time = std::numeric_limits<double>::infinity();
    std::vector<int> txs = {s.out_width, 256, 128, 64, 32, 16, 8, 4, 2, 1};
    for (int tx : txs) {
        for (int ty : {64, 32, 16, 8, 4, 2, 1}) {
            for (int tc : {64, 32, 16, 8, 4, 2, 1}) {
                const PixelTiles t{std::min(tx, s.out_width), std::min(ty, s.out_height),
                                   std::min(tc, s.channels)};
                if (resize_ldm_bytes(s, t) > ldm_plan_budget(m, 2))
                    continue;
                const double e = resize_estimate(s, t, m);
                if (e < best_time) {
                    best_time = e;
                    best = t;
                }
            }
        }
    }
    return best;
}

inline void schedule_resize_tiles(ResizeStages &st, const PixelTiles &t) {
    const Halide::Var tile =
        spread_tiles_over_cpes(st.output, st.x, st.y, st.c, st.n, t.tx, t.ty, t.tc);
    st.result.compute_at(st.output, tile).store_in(sw::LDM);
    st.input.in().compute_at(st.output, tile).store_in(sw::LDM);
}

inline void schedule_resize_sunway(ResizeStages &st, const ResizeShape &s, const sw::Machine &m) {
    schedule_resize_tiles(st, choose_resize_tiles(s, m));
}

inline void schedule_resize_baseline(ResizeStages &st, const ResizeShape &s) {
    schedule_resize_tiles(st, {s.out_width, 1, 1});
}

inline void schedule_resize_cpu(ResizeStages &st) {
    using namespace Halide;
    Var par("par");
    st.output.compute_root().fuse(st.c, st.n, par).parallel(par);
    st.result.compute_at(st.output, par);
}

} // namespace schedules

#endif
