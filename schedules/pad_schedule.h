/** \file
 * Schedules of pad (ONNX Pad: constant, reflect or edge padding, or cropping, of a 4-D
 * tensor).
 *
 * Hand Sunway schedule: output tiles over the CPEs, whole output rows first (the x tile is the
 * whole output row when it fits), then rows, channels and images while every CPE keeps a tile
 * (choose_pad_tiles). Each tile stages the input box it reads by DMA (InjectDma: the input's
 * rows, the box bounded per tile by ConstantBounds, so a tile at the border stages only the
 * rows it reflects or repeats), fills the tile in LDM (the border from the constant value or
 * the staged rows, the interior copied) and puts it back by DMA: the tile staging of
 * schedule_transpose_tiles with the identity permutation.
 *
 * OpenACC-style baseline: one output row (chunks of 1024) per iteration:
 *
 *     #pragma acc parallel loop collapse(3) copyin(in[...]) copyout(out[...])
 *     for (n) for (c) for (y) {   // one output row per iteration
 *         copy the input row it reads
 *         for (x) out[n][c][y][x] = inside ? in[...] : value;   // or the reflected / edge element
 *     }
 *
 * CPU schedule: the output in parallel over the outer dims, 8-wide vectors along x.
 */
#ifndef SCHEDULES_PAD_SCHEDULE_H
#define SCHEDULES_PAD_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "schedules/transpose_schedule.h"

#include <algorithm>
#include <array>

namespace schedules {

struct PadShape {
    std::array<int, 4> in;         ///< the input's extents (Halide order, innermost first)
    std::array<int, 4> out;        ///< the output's extents
    std::array<int, 4> begin, end; ///< pads before and after along each dim (negative: crop)
};

/** Floats of LDM a tile \p t takes: the result tile and the input box it stages (along each
 * dim at most the tile and its pads, at most the input's extent). */
inline int64_t pad_tile_floats(const PadShape &s, const std::array<int, 4> &t) {
    int64_t result = 1, box = 1;
    for (size_t j = 0; j < 4; j++) {
        result *= t[j];
        const int grow = std::max(s.begin[j], 0) + std::max(s.end[j], 0);
        box *= std::min<int64_t>(s.in[j], int64_t(t[j]) + grow);
    }
    return result + box;
}

/** The hand schedule's tile: the whole output row along x (halved until it fits the LDM),
 * then doubled along y, z and w (whole dims at the end) while it fits and the tiles still
 * cover every CPE. */
inline std::array<int, 4> choose_pad_tiles(const PadShape &s, const sw::Machine &m) {
    const int64_t most = ldm_plan_budget(m, 2) / 4;
    std::array<int, 4> t = {s.out[0], 1, 1, 1};
    while (t[0] > 1 && pad_tile_floats(s, t) > most)
        t[0] = (t[0] + 1) / 2;
    auto tiles = [&](const std::array<int, 4> &u) {
        int64_t n = 1;
        for (size_t j = 0; j < 4; j++)
            n *= ceil_div(s.out[j], u[j]);
        return n;
    };
    for (size_t j = 1; j < 4 && t[j - 1] == s.out[j - 1]; j++) {
        while (t[j] < s.out[j]) {
            std::array<int, 4> u = t;
            u[j] = std::min(2 * t[j], s.out[j]);
            if (pad_tile_floats(s, u) > most || tiles(u) < m.cpes_per_core_group)
                return t;
            t = u;
        }
    }
    return t;
}

inline void schedule_pad_sunway(TransposeStages &st, const PadShape &s, const sw::Machine &m) {
    schedule_transpose_tiles(st, choose_pad_tiles(s, m));
}

/** The OpenACC-style baseline: one output row (chunks of 1024) per iteration. */
inline void schedule_pad_baseline(TransposeStages &st, const PadShape &s) {
    schedule_transpose_tiles(st, {std::min(s.out[0], 1024), 1, 1, 1});
}

inline void schedule_pad_cpu(TransposeStages &st) {
    schedule_transpose_cpu(st);
}

} // namespace schedules

#endif
