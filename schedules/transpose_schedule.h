/** \file
 * Schedules of the data-movement generators of the transformers: transpose (any permutation
 * of a 4-D tensor) and gather (an embedding lookup, rows of a large table by index).
 *
 * transpose, hand Sunway schedule: output tiles over the CPEs (all four output dims split,
 * the outer parts fused into one block index). Each tile stages the input box it needs by
 * DMA (InjectDma: the input's contiguous rows as the blocks of strided requests), permutes it
 * in LDM into the result tile, and puts the result back by DMA (contiguous rows of the
 * output). The tile (choose_transpose_tiles, by the emulator's DMA model) favours long
 * contiguous runs on both sides, along the output's innermost dim and the output dim that
 * reads the input's innermost dim (one dim when the permutation keeps the innermost, e.g.
 * (B, S, H, D) -> (B, H, S, D)), against the waves of tiles; it must fit the LDM twice (the
 * staging and the result).
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
#include <cmath>
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

/** Bytes of float32 of the first contiguous run of a box of extents \p t in a dense tensor
 * of extents \p e (innermost first): the innermost extent, times the next while the box spans
 * whole dims. */
inline double transpose_contiguous_bytes(const std::array<int, 4> &t, const std::array<int, 4> &e) {
    double bytes = 4.0 * t[0];
    for (size_t k = 1; k < 4 && t[k - 1] == e[k - 1]; k++)
        bytes *= t[k];
    return bytes;
}

/** The hand schedule's tile: of the tiles whose sizes are powers of two or whole dims and
 * which fit the LDM (the staging and the result), the one with the least estimated time, by
 * the emulator's DMA model (Machine.h, DmaTiming): per tile, its get (a setup per contiguous
 * block, its line bytes at an equal share of the channel among the active CPEs, at most one
 * CPE's cap, and the latency), the permutation in LDM (about 4 cycles per element) and its
 * put, over the waves of tiles; the larger tile on a tie. */
inline std::array<int, 4> choose_transpose_tiles(const TransposeShape &s, const sw::Machine &m) {
    const int64_t most = ldm_plan_budget(m, 2) / 8; // staging + result, floats
    const double cycles_per_element = 4.0;
    const sw::DmaTiming &dma = m.dma_timing;
    const double line = double(m.dma_line_bytes);
    std::array<std::vector<int>, 4> sizes;
    for (size_t j = 0; j < 4; j++) {
        for (int v = 1; v < s.out[j]; v *= 2)
            sizes[j].push_back(v);
        sizes[j].push_back(s.out[j]);
    }
    std::array<int, 4> in_extents{};
    for (size_t j = 0; j < 4; j++)
        in_extents[size_t(s.source[j])] = s.out[j];
    // Cycles of one request of \p bytes in blocks of \p block bytes at \p rate line bytes per
    // cycle.
    auto request = [&](double bytes, double block, double rate, double block_cycles,
                       double latency) {
        const double blocks = bytes / block;
        return blocks * block_cycles + blocks * std::ceil(block / line) * line / rate + latency;
    };
    std::array<int, 4> best = {1, 1, 1, 1};
    double best_time = -1;
    int64_t best_points = 0;
    for (int a : sizes[0])
        for (int b : sizes[1])
            for (int c : sizes[2])
                for (int d : sizes[3]) {
                    const std::array<int, 4> t = {a, b, c, d};
                    const int64_t points = transpose_points(t);
                    if (points > most)
                        continue;
                    std::array<int, 4> in_tile{};
                    for (size_t j = 0; j < 4; j++)
                        in_tile[size_t(s.source[j])] = t[j];
                    const int64_t tiles = transpose_tiles(s, t);
                    const double active = double(std::min<int64_t>(tiles, m.cpes_per_core_group));
                    const double bytes = 4.0 * double(points);
                    const double get = request(
                        bytes, transpose_contiguous_bytes(in_tile, in_extents),
                        std::min(dma.cpe_cap_bytes_per_cycle, dma.get_bytes_per_cycle / active),
                        dma.get_block_cycles, dma.get_latency_cycles);
                    const double put = request(
                        bytes, transpose_contiguous_bytes(t, s.out),
                        std::min(dma.cpe_cap_bytes_per_cycle, dma.put_bytes_per_cycle / active),
                        dma.put_block_cycles, dma.put_latency_cycles);
                    const int64_t waves =
                        (tiles + m.cpes_per_core_group - 1) / m.cpes_per_core_group;
                    const double time =
                        double(waves) * (get + put + double(points) * cycles_per_element);
                    if (best_time < 0 || time < best_time * (1 - 1e-9) ||
                        (time <= best_time * (1 + 1e-9) && points > best_points)) {
                        best = t;
                        best_time = time;
                        best_points = points;
                    }
                }
    return best;
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
