/** \file
 * Schedules for the global_pool generator (GlobalAveragePool, GlobalMaxPool, spatial
 * ReduceMean).
 *
 * Hand Sunway schedule: tiles of TC channels of one image over the CPEs; each reduces its
 * channels' planes into TC values in LDM, staging TC x ROWS x width of the input per chunk
 * of ROWS rows (the whole plane when it fits: one DMA per tile), and writes the TC results
 * back by DMA. TC keeps every CPE busy where there are enough channels, ROWS is the largest
 * divisor of the height that fits the LDM.
 *
 * OpenACC-style baseline:
 *
 *     #pragma acc parallel loop collapse(2) copyin(in[...]) copyout(out[...])
 *     for (n) for (c) {                 // one channel of one image per iteration
 *         for (rows in chunks that fit) { copy in[n][c][rows][all x]; acc op= ...; }
 *         out[n][c] = acc (/ H*W);
 *     }
 *
 * Both read each input element once; they differ by the size of their DMA requests.
 */
#ifndef SCHEDULES_GLOBAL_POOL_SCHEDULE_H
#define SCHEDULES_GLOBAL_POOL_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>

namespace schedules {

struct GlobalPoolStages {
    Halide::Func output, pool, input;
    Halide::Var x, y, c, n;
    Halide::RDom r; ///< r.x along the width, r.y along the height
};

struct GlobalPoolShape {
    int batch, channels, height, width;
};

struct GlobalPoolTiles {
    int tc;   ///< channels per tile
    int rows; ///< input rows staged at once (divides the height)
};

inline int64_t global_pool_ldm_bytes(const GlobalPoolShape &s, const GlobalPoolTiles &t) {
    return 4 * (int64_t(t.tc) * t.rows * s.width + 2 * int64_t(t.tc));
}

inline void schedule_global_pool_tiles(GlobalPoolStages &st, const GlobalPoolShape &s,
                                       const GlobalPoolTiles &t) {
    using namespace Halide;
    const Var tile = spread_tiles_over_cpes(st.output, st.x, st.y, st.c, st.n, 1, 1, t.tc);
    st.pool.compute_at(st.output, tile).store_in(sw::LDM);
    RVar ryo("ryo"), ryi("ryi");
    st.pool.update(0).split(st.r.y, ryo, ryi, t.rows).reorder(st.r.x, ryi, st.c, ryo, st.n);
    st.input.in().compute_at(st.pool, ryo).store_in(sw::LDM);
}

/** Channels per tile: as many as keep every CPE busy (at most 64); rows: the largest
 * divisor of the height whose chunk fits the LDM. */
inline GlobalPoolTiles choose_global_pool_tiles(const GlobalPoolShape &s, const sw::Machine &m) {
    const int64_t budget = ldm_plan_budget(m, 3);
    GlobalPoolTiles best{1, 1};
    double best_score = -1;
    for (int tc : {64, 32, 16, 8, 4, 2, 1}) {
        const int t = std::min(tc, s.channels);
        for (int rows : divisors_desc(s.height)) {
            const GlobalPoolTiles cand{t, rows};
            if (global_pool_ldm_bytes(s, cand) > budget)
                continue;
            const int64_t tiles = int64_t(ceil_div(s.channels, t)) * s.batch;
            const double score = cpe_occupancy(tiles, m) *
                                 dma_gbps(m, 4.0 * rows * s.width * (rows == s.height ? t : 1));
            if (score > best_score) {
                best_score = score;
                best = cand;
            }
            break; // the most rows that fit for this tc
        }
    }
    return best;
}

inline void schedule_global_pool_sunway(GlobalPoolStages &st, const GlobalPoolShape &s,
                                        const sw::Machine &m) {
    schedule_global_pool_tiles(st, s, choose_global_pool_tiles(s, m));
}

inline void schedule_global_pool_baseline(GlobalPoolStages &st, const GlobalPoolShape &s,
                                          const sw::Machine &m) {
    GlobalPoolTiles t{1, 1};
    for (int rows : divisors_desc(s.height)) {
        t.rows = rows;
        if (global_pool_ldm_bytes(s, t) <= ldm_plan_budget(m, 3))
            break;
    }
    schedule_global_pool_tiles(st, s, t);
}

inline void schedule_global_pool_cpu(GlobalPoolStages &st) {
    using namespace Halide;
    Var par("par");
    st.output.compute_root().fuse(st.c, st.n, par).parallel(par);
    st.pool.compute_at(st.output, par);
}

} // namespace schedules

#endif
