/** \file
 * Schedules for the pool generator (max and average pooling).
 *
 * Hand Sunway schedule: output tiles (TX x TY pixels x TC channels of one image) over the
 * CPEs; each stages its input window (TC channels) by DMA, pools into an LDM tile and
 * writes it back by DMA. Tiles maximise the output per staged byte times CPE occupancy.
 *
 * OpenACC-style baseline:
 *
 *     #pragma acc parallel loop collapse(3) copyin(in[...]) copyout(out[...])
 *     for (n) for (c) for (y) {          // one output row of one channel per iteration
 *         copy in[n][c][rows y*s-p .. y*s-p+K-1][all x]
 *         for (x) out[n][c][y][x] = max/avg over the window;
 *     }
 *
 * Pooling has little reuse to exploit: the two differ by the size of their DMA requests
 * and how many rows overlapping windows fetch twice.
 */
#ifndef SCHEDULES_POOL_SCHEDULE_H
#define SCHEDULES_POOL_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>

namespace schedules {

struct PoolStages {
    Halide::Func output, pool, input;
    Halide::Var x, y, c, n;
};

struct PoolShape {
    int batch, channels, height, width, out_width, out_height;
    int kernel_x, kernel_y, stride_x, stride_y;
};

using PoolTiles = PixelTiles;

inline int64_t pool_ldm_bytes(const PoolShape &s, const PoolTiles &t) {
    const int64_t win =
        int64_t((t.tx - 1) * s.stride_x + s.kernel_x) * ((t.ty - 1) * s.stride_y + s.kernel_y);
    return 4 * int64_t(t.tc) * (win + int64_t(t.tx) * t.ty);
}

inline void schedule_pool_tiles(PoolStages &st, const PoolTiles &t) {
    using namespace Halide;
    const Var tile = spread_tiles_over_cpes(st.output, st.x, st.y, st.c, st.n, t.tx, t.ty, t.tc);
    st.pool.compute_at(st.output, tile).store_in(sw::LDM);
    for (int u = 0; u < st.pool.num_update_definitions(); u++)
        st.pool.update(u).unscheduled();
    st.input.in().compute_at(st.output, tile).store_in(sw::LDM);
}

inline PoolTiles choose_pool_tiles(const PoolShape &s, const sw::Machine &m) {
    return search_pixel_tiles(
        s.out_width, s.out_height, s.channels, s.batch, m,
        [&](const PoolTiles &t, double occupancy) {
            if (pool_ldm_bytes(s, t) > ldm_plan_budget(m, 2))
                return -1.0;
            return occupancy * double(t.tx) * t.ty * t.tc / double(pool_ldm_bytes(s, t));
        },
        {64, 32, 16, 8, 4, 2, 1}, {32, 16, 8, 4, 2, 1}, {64, 32, 16, 8, 4, 2, 1});
}

inline void schedule_pool_sunway(PoolStages &st, const PoolShape &s, const sw::Machine &m) {
    schedule_pool_tiles(st, choose_pool_tiles(s, m));
}

inline void schedule_pool_baseline(PoolStages &st, const PoolShape &s, const sw::Machine &) {
    schedule_pool_tiles(st, {s.out_width, 1, 1});
}

inline void schedule_pool_cpu(PoolStages &st) {
    using namespace Halide;
    Var par("par");
    st.output.compute_root().fuse(st.c, st.n, par).parallel(par);
    st.pool.compute_at(st.output, par);
}

} // namespace schedules

#endif
