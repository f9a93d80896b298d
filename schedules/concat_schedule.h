/** \file
 * Schedules for the concat generator: one update of the output per input, each copying
 * its input into its slice of channels.
 *
 * Hand Sunway schedule: per input, one kernel whose blocks are tiles of TX x TY pixels x TC
 * channels of one image; each stages its tile of the input by DMA and puts it into the
 * output's slice by DMA (no CPE arithmetic). Tiles are the largest that fit the LDM and keep
 * the CPEs busy, whole rows first (one contiguous block when TX is the width).
 *
 * OpenACC-style baseline, per input:
 *
 *     #pragma acc parallel loop collapse(3) copyin(in_k[...]) copyout(out[...])
 *     for (n) for (c) for (y)            // one row of one channel per iteration
 *         out[n][offset_k + c][y][:] = in_k[n][c][y][:];
 *
 * CPU schedule: each update over its channels and images in parallel, vectorised along x.
 */
#ifndef SCHEDULES_CONCAT_SCHEDULE_H
#define SCHEDULES_CONCAT_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>
#include <vector>

namespace schedules {

struct ConcatStages {
    Halide::Func output;
    std::vector<Halide::Func> inputs; ///< update k copies inputs[k]
    Halide::Var x, y, n;
};

struct ConcatShape {
    int batch, height, width;
    std::vector<int> channels; ///< of each input
};

/** Tiles of input \p k: the largest tile that fits (one LDM buffer) and keeps the CPEs
 * busy, scored like the point-wise tiles (DMA rate of the contiguous blocks x occupancy). */
inline PixelTiles choose_concat_tiles(const ConcatShape &s, int k, const sw::Machine &m) {
    return search_pixel_tiles(s.width, s.height, s.channels[k], s.batch, m,
                              [&](const PixelTiles &t, double occupancy) {
                                  if (4 * int64_t(t.tx) * t.ty * t.tc > ldm_plan_budget(m, 1))
                                      return -1.0;
                                  return occupancy *
                                         dma_gbps(m, contiguous_bytes(t, s.width, s.height));
                              },
                              {256, 128, 64, 32, 16, 8, 4, 2, 1}, {64, 32, 16, 8, 4, 2, 1},
                              {256, 128, 64, 32, 16, 8, 4, 2, 1});
}

/** Update k over tiles of \p t: blocks over the fused tile index (pixels and channel chunks,
 * the channel an RVar, which Halide lets run in parallel since each value writes its own
 * channel) and the images. */
inline void schedule_concat_update(ConcatStages &st, int k, const PixelTiles &t) {
    using namespace Halide;
    const std::string sfx = std::to_string(k);
    Stage s = st.output.update(k);
    Var xo("xo" + sfx), yo("yo" + sfx), xi("xi" + sfx), yi("yi" + sfx), xy("xy" + sfx);
    RVar r = RVar(st.output.function().update(k).schedule().rvars()[0].var);
    RVar ro("ro" + sfx), ri("ri" + sfx), tile("tile" + sfx);
    // Edge tiles are guarded (an update may not shift them inwards, and rounding up, its
    // default, would stage past the input's edges).
    s.split(st.x, xo, xi, t.tx, TailStrategy::GuardWithIf)
        .split(st.y, yo, yi, t.ty, TailStrategy::GuardWithIf)
        .split(r, ro, ri, t.tc, TailStrategy::GuardWithIf)
        .reorder(xi, yi, ri, xo, yo, ro, st.n)
        .fuse(xo, yo, xy)
        .fuse(xy, ro, tile)
        .gpu_blocks(tile, st.n, DeviceAPI::Host);
    st.inputs[k].in().compute_at(st.output, tile).store_in(sw::LDM);
}

inline void schedule_concat_sunway(ConcatStages &st, const ConcatShape &s, const sw::Machine &m) {
    for (size_t k = 0; k < s.channels.size(); k++)
        schedule_concat_update(st, int(k), choose_concat_tiles(s, int(k), m));
}

inline void schedule_concat_baseline(ConcatStages &st, const ConcatShape &s) {
    for (size_t k = 0; k < s.channels.size(); k++)
        schedule_concat_update(st, int(k), {s.width, 1, 1});
}

inline void schedule_concat_cpu(ConcatStages &st) {
    using namespace Halide;
    st.output.compute_root();
    for (int k = 0; k < st.output.num_update_definitions(); k++) {
        st.output.update(k).parallel(st.n).vectorize(st.x, 8, TailStrategy::GuardWithIf);
    }
}

} // namespace schedules

#endif
