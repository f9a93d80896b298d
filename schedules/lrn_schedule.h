/** \file
 * Schedules for the lrn generator (local response normalisation across channels).
 *
 * Hand Sunway schedule: tiles of TX x TY pixels x TC channels over the CPEs; each stages its
 * input with the channel halo (TC + size - 1 channels) by DMA, computes the normaliser and
 * the result in LDM, and writes the tile back by DMA.
 *
 * OpenACC-style baseline:
 *
 *     #pragma acc parallel loop collapse(3) copyin(in[...]) copyout(out[...])
 *     for (n) for (c) for (y) {        // one row of one channel per iteration
 *         copy in[n][c-2 .. c+2][y][all x]
 *         for (x) out[n][c][y][x] = in / pow(k + alpha/size * sum sq, beta);
 *     }
 *
 * Each row of the input is fetched again by every channel whose window covers it.
 */
#ifndef SCHEDULES_LRN_SCHEDULE_H
#define SCHEDULES_LRN_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>

namespace schedules {

struct LrnStages {
    Halide::Func output, result, norm, input;
    Halide::Var x, y, c, n;
};

struct LrnShape {
    int batch, channels, height, width, size;
};

using LrnTiles = PixelTiles;

inline int64_t lrn_ldm_bytes(const LrnShape &s, const LrnTiles &t) {
    const int64_t px = int64_t(t.tx) * t.ty;
    return 4 * px * ((t.tc + s.size - 1) + 2 * t.tc);
}

inline void schedule_lrn_tiles(LrnStages &st, const LrnTiles &t) {
    using namespace Halide;
    const Var tile = spread_tiles_over_cpes(st.output, st.x, st.y, st.c, st.n, t.tx, t.ty, t.tc);
    st.result.compute_at(st.output, tile).store_in(sw::LDM);
    st.norm.compute_at(st.output, tile).store_in(sw::LDM);
    for (int u = 0; u < st.norm.num_update_definitions(); u++)
        st.norm.update(u).unscheduled();
    st.input.in().compute_at(st.output, tile).store_in(sw::LDM);
}

inline LrnTiles choose_lrn_tiles(const LrnShape &s, const sw::Machine &m) {
    return search_pixel_tiles(s.width, s.height, s.channels, s.batch, m,
                              [&](const LrnTiles &t, double occupancy) {
                                  if (lrn_ldm_bytes(s, t) > ldm_plan_budget(m, 3))
                                      return -1.0;
                                  const double reuse = double(t.tc) / (t.tc + s.size - 1);
                                  return occupancy * reuse * dma_gbps(m, 4.0 * t.tx);
                              },
                              {64, 32, 16, 8, 4, 2, 1}, {16, 8, 4, 2, 1});
}

inline void schedule_lrn_sunway(LrnStages &st, const LrnShape &s, const sw::Machine &m) {
    schedule_lrn_tiles(st, choose_lrn_tiles(s, m));
}

inline void schedule_lrn_baseline(LrnStages &st, const LrnShape &s, const sw::Machine &) {
    schedule_lrn_tiles(st, {s.width, 1, 1});
}

inline void schedule_lrn_cpu(LrnStages &st) {
    using namespace Halide;
    Var par("par");
    st.output.compute_root().fuse(st.c, st.n, par).parallel(par);
    st.result.compute_at(st.output, par);
    st.norm.compute_at(st.output, par);
}

} // namespace schedules

#endif
