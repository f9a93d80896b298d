/** \file
 * Schedules of the data-movement generators of the transformers: transpose (any permutation
 * of a 4-D tensor) and gather (an embedding lookup, rows of a large table by index).
 *
 * transpose, hand Sunway schedule: output tiles over the CPEs (all four output dims split,
 * the outer parts fused into one block index). Each tile stages the input box it needs by
 * DMA (InjectDma: the input's contiguous rows as the blocks of strided requests), permutes it
 * in LDM into the result tile, and puts the result back by DMA (contiguous rows of the
 * output). The tile is grown first along the two dims that are contiguous in memory (the
 * output's innermost dim, and the output dim that reads the input's innermost dim; one dim
 * when the permutation keeps the innermost dim, e.g. (B, S, H, D) -> (B, H, S, D)), up to 16
 * each at least, then while every CPE keeps a tile, then along the other dims while every CPE
 * keeps a tile and it fits the LDM (the staging and the result: two buffers of the tile).
 *
 * transpose, OpenACC-style baseline:
 *
 *     #pragma acc parallel loop collapse(3) copyin(in[...]) copyout(out[...])
 *     for (o0) for (o1) for (o2) {   // one output row per iteration (chunks of 1024)
 *         copy the input elements of that row (strided where the innermost dim moves)
 *         for (o3) out[o0][o1][o2][o3] = in[permuted];
 *     }
 *
 * gather, hand Sunway schedule: tiles of TN indices x TD elements of a row over the CPEs; the
 * tile's indices are staged in LDM (int64) by one DMA; per index, the row's TD elements are
 * fetched by one DMA get, straight into the result tile in LDM, from an address the CPE
 * computes from the staged index (data-dependent, affine within the row: InjectDma makes it
 * one contiguous request per row); the tile goes back by one DMA put. The table is never
 * staged whole (GPT-2's is 50257 x 768 floats). The baseline is the same with one index per
 * iteration (TN = 1): `#pragma acc parallel loop` over the indices, each copying its row in
 * and out.
 *
 * CPU schedules: the output in parallel over the outer dims, 8-wide vectors along the inner.
 */
#ifndef SCHEDULES_TRANSPOSE_SCHEDULE_H
#define SCHEDULES_TRANSPOSE_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>
#include <array>
#include <vector>

namespace schedules {

struct TransposeStages {
    Halide::Func output, result, input;
    std::vector<Halide::Var> v; ///< the output's four dims, innermost first
};

struct TransposeShape {
    std::array<int, 4> out;    ///< the output's extents (Halide order, innermost first)
    std::array<int, 4> source; ///< out dim j reads the input's Halide dim source[j]
};

inline int64_t transpose_tiles(const TransposeShape &s, const std::array<int, 4> &t) {
    int64_t n = 1;
    for (int j = 0; j < 4; j++)
        n *= ceil_div(s.out[size_t(j)], t[size_t(j)]);
    return n;
}

inline int64_t transpose_points(const std::array<int, 4> &t) {
    return int64_t(t[0]) * t[1] * t[2] * t[3];
}

/** The hand schedule's tile (see the file comment). */
inline std::array<int, 4> choose_transpose_tiles(const TransposeShape &s, const sw::Machine &m) {
    const int64_t most = ldm_plan_budget(m, 2) / 8; // staging + result, floats
    const int64_t cpes = m.cpes_per_core_group;
    std::array<int, 4> t = {1, 1, 1, 1};
    int b = 0;
    for (int j = 0; j < 4; j++)
        if (s.source[size_t(j)] == 0)
            b = j;
    std::vector<int> primary = {0};
    if (b != 0)
        primary.push_back(b);
    // Grows dim j by doubling (clamped to its extent) if \p ok of the grown tile.
    auto grow = [&](int j, auto ok) {
        std::array<int, 4> u = t;
        u[size_t(j)] = std::min(2 * t[size_t(j)], s.out[size_t(j)]);
        if (u[size_t(j)] == t[size_t(j)] || transpose_points(u) > most || !ok(u))
            return false;
        t = u;
        return true;
    };
    for (bool more = true; more;) {
        more = false;
        for (int j : primary)
            more |= grow(j, [&](const std::array<int, 4> &u) {
                return u[size_t(j)] <= 16 || transpose_tiles(s, u) >= cpes;
            });
    }
    for (int j = 1; j < 4; j++) {
        if (std::find(primary.begin(), primary.end(), j) != primary.end())
            continue;
        while (grow(j, [&](const std::array<int, 4> &u) { return transpose_tiles(s, u) >= cpes; }))
            ;
    }
    return t;
}

inline void schedule_transpose_tiles(TransposeStages &st, const std::array<int, 4> &t) {
    using namespace Halide;
    std::vector<Var> outer, inner;
    for (int j = 0; j < 4; j++) {
        outer.emplace_back("o" + std::to_string(j));
        inner.emplace_back("i" + std::to_string(j));
        st.output.split(st.v[size_t(j)], outer.back(), inner.back(), t[size_t(j)]);
    }
    Var tile("tile");
    st.output
        .reorder(inner[0], inner[1], inner[2], inner[3], outer[0], outer[1], outer[2], outer[3])
        .fuse(outer[0], outer[1], tile)
        .fuse(tile, outer[2], tile)
        .fuse(tile, outer[3], tile)
        .gpu_blocks(tile, DeviceAPI::Host);
    st.result.compute_at(st.output, tile).store_in(sw::LDM);
    st.input.in().compute_at(st.output, tile).store_in(sw::LDM);
}

inline void schedule_transpose_sunway(TransposeStages &st, const TransposeShape &s,
                                      const sw::Machine &m) {
    schedule_transpose_tiles(st, choose_transpose_tiles(s, m));
}

/** The OpenACC-style baseline: one output row (chunks of 1024) per iteration. */
inline void schedule_transpose_baseline(TransposeStages &st, const TransposeShape &s) {
    schedule_transpose_tiles(st, {std::min(s.out[0], 1024), 1, 1, 1});
}

inline void schedule_transpose_cpu(TransposeStages &st) {
    using namespace Halide;
    Var par("par");
    st.output.compute_root()
        .fuse(st.v[2], st.v[3], par)
        .parallel(par)
        .vectorize(st.v[0], 8, TailStrategy::GuardWithIf);
}

struct GatherStages {
    Halide::Func output, result;
    Halide::Func fetched; ///< fetched(d, n) = table(d, row of index n); inline in these schedules
    Halide::Func indices;
    Halide::Var d, n;
};

struct GatherShape {
    int rows, vocab, size;
};

struct GatherTiles {
    int tn, td;
};

/** LDM bytes of a tile: the result and the indices (int64). */
inline int64_t gather_ldm_bytes(const GatherTiles &t) {
    return 4 * int64_t(t.tn) * t.td + 8 * int64_t(t.tn);
}

/** Whole rows if they fit (else halves, quarters, ... of a row), then as many
 * indices per tile as fit while every CPE keeps a tile. */
inline GatherTiles choose_gather_tiles(const GatherShape &s, const sw::Machine &m) {
    const int64_t budget = ldm_plan_budget(m, 2);
    GatherTiles t{1, s.size};
    while (gather_ldm_bytes(t) > budget && t.td > 1)
        t.td = (t.td + 1) / 2;
    const int64_t cpes = m.cpes_per_core_group;
    auto tiles = [&](const GatherTiles &u) {
        return int64_t(ceil_div(s.rows, u.tn)) * ceil_div(s.size, u.td);
    };
    while (true) {
        GatherTiles u{std::min(2 * t.tn, s.rows), t.td};
        if (u.tn == t.tn || gather_ldm_bytes(u) > budget || tiles(u) < cpes)
            break;
        t = u;
    }
    return t;
}

inline void schedule_gather_tiles(GatherStages &st, const GatherTiles &t) {
    using namespace Halide;
    Var dout("dout"), din("din"), nout("nout"), nin("nin"), tile("tile");
    st.output.split(st.d, dout, din, t.td)
        .split(st.n, nout, nin, t.tn)
        .reorder(din, nin, dout, nout)
        .fuse(dout, nout, tile)
        .gpu_blocks(tile, DeviceAPI::Host);
    st.result.compute_at(st.output, tile).store_in(sw::LDM);
    st.indices.in().compute_at(st.output, tile).store_in(sw::LDM);
    // fetched stays inline: the result tile is copied from the table row by row, a copy
    // that is affine in d but not in n (the row comes from a staged index), which InjectDma
    // lowers as one contiguous get per row straight into the tile. (table.in() staged instead
    // would be bounded by the whole table: Halide's bounds inference does not know a loaded
    // index's value.)
}

inline void schedule_gather_sunway(GatherStages &st, const GatherShape &s, const sw::Machine &m) {
    schedule_gather_tiles(st, choose_gather_tiles(s, m));
}

inline void schedule_gather_baseline(GatherStages &st, const GatherShape &s, const sw::Machine &m) {
    GatherTiles t = choose_gather_tiles(s, m);
    schedule_gather_tiles(st, {1, t.td});
}

inline void schedule_gather_cpu(GatherStages &st) {
    using namespace Halide;
    st.output.compute_root().parallel(st.n).vectorize(st.d, 8, TailStrategy::GuardWithIf);
}

} // namespace schedules

#endif
