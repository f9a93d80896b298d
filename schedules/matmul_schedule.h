/** \file
 * Schedules for the matmul generator: C = A x B, A of m x k, B of k x n, C of m x n, all
 * row-major (Halide dims: A(kk, i), B(j, kk), C(j, i)).
 *
 * Hand Sunway schedule, a register-communication GEMM (the data flow of swGEMM / RC-GEMM on
 * SW26010): the 8x8 mesh is the C matrix's grid. Block (ti, c) computes a TM x TN tile of C
 * on the CPE of mesh column c = j-tile mod 8 and mesh row = i-tile mod 8 (its innermost block
 * loop has the 8 mesh columns, target_sw/BroadcastDma.h "mesh blocks"). For each chunk of TK
 * along the reduction:
 *   - the A chunk of its rows (TM x TK) is the same for the 8 CPEs of its mesh row: the CPE in
 *     column 0 fetches it by DMA and passes it along the row by register communication
 *     (sw::broadcast(a, Sharing::RegCommRow));
 *   - the B chunk of its columns (TK x TN) is the same for the 8 CPEs of its mesh column: the
 *     CPE in row 0 fetches it and passes it down the column
 *     (sw::broadcast(b, Sharing::RegCommColumn));
 *   - every CPE multiplies them on floatv4: B's rows are vectors along j, A's values splatted,
 *     a register block of up to 4 vectors x 4 rows of C stays in registers over the chunk;
 *   - both chunks are double buffered: the source CPEs fetch chunk i + 1 while chunk i is
 *     passed on and multiplied.
 * A and B are each read from memory once per mesh column (row) of tiles instead of once per
 * tile: 8x fewer bytes than the same tiles without sharing (sharing=none, the comparison).
 * sharing=dmarow: the A chunk broadcast to its mesh row by DMA (BCAST_MODE with the row's
 * mask, issued in pieces by the row's CPEs, sw::Sharing::DmaRow) instead of passed along it;
 * B as above.
 * Conditions (checked, an error otherwise): n a multiple of 8 * TN with TN a multiple of 4,
 * and m / TM a multiple of 8 (every CPE of a row or column takes part in every round); the
 * same tiles serve sharing=none. Other shapes: the autoscheduler.
 *
 * What it lacks against the published register-communication GEMMs (88-95% of peak, hand
 * assembly): the shared vectors are stored in LDM and loaded again instead of being used from
 * the register they arrive in, passing them on stops the multiply, the source CPE does not
 * rotate with the chunk, and the inner loop is plain C for sw5cc to schedule.
 */
#ifndef SCHEDULES_MATMUL_SCHEDULE_H
#define SCHEDULES_MATMUL_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/BroadcastDma.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>

namespace schedules {

struct MatMulStages {
    Halide::Func output, acc, a, b;
    Halide::Var j, i;
    Halide::RDom r;
};

struct MatMulShape {
    int m, n, k;
};

/** TM rows x TN columns of C per block, TK of the reduction per chunk; regcomm: A and B
 * shared along the mesh rows and columns (else each CPE fetches its own); row_dma (with
 * regcomm): A's chunk broadcast to each mesh row by DMA instead (Sharing::DmaRow), B's still
 * passed down the columns. */
struct MatMulTiles {
    int tm = 1, tn = 4, tk = 1;
    bool regcomm = true;
    bool row_dma = false;
};

/** LDM of one block: the A and B chunks, two of each (double buffered), and the C tile. */
inline int64_t matmul_ldm_bytes(const MatMulTiles &t) {
    return 4 * (2 * (int64_t(t.tm) * t.tk + int64_t(t.tk) * t.tn) + int64_t(t.tm) * t.tn);
}

/** The tiles of the register-communication GEMM: TN a multiple of 4 dividing n / 8, TM a
 * divisor of m / 8, TK the largest divisor of k that then fits the LDM, preferring C tiles
 * with the most multiply-adds per shared byte (TM x TN / (TM + TN)), then long chunks. Throws
 * a UserError when the shape has none. */
inline MatMulTiles choose_matmul_tiles(const MatMulShape &s, const sw::Machine &m) {
    const int cols = m.cpe_mesh_cols, rows = m.cpe_mesh_rows;
    if (s.n % (cols * vector_lanes(m)) != 0 || s.m % rows != 0) {
        throw sw::UserError("error: matmul: the hand schedule needs n a multiple of " +
                            std::to_string(cols * vector_lanes(m)) + " and m a multiple of " +
                            std::to_string(rows) + " (n=" + std::to_string(s.n) +
                            ", m=" + std::to_string(s.m) +
                            "); the autoscheduler (auto_schedule=true) takes any shape");
    }
    MatMulTiles best;
    int64_t best_score = -1;
    const int64_t budget = ldm_plan_budget(m, 3);
    for (int tn : divisors_desc(s.n / cols)) {
        if (tn % vector_lanes(m))
            continue;
        for (int tm : divisors_desc(s.m / rows)) {
            for (int tk : divisors_desc(s.k)) {
                const MatMulTiles t{tm, tn, tk, true};
                if (matmul_ldm_bytes(t) > budget)
                    continue;
                // Multiply-adds per byte shared, then long chunks.
                const int64_t score = int64_t(tm) * tn * 4096 / (tm + tn) * 64 + std::min(tk, 64);
                if (score > best_score) {
                    best_score = score;
                    best = t;
                }
                break; // the largest chunk that fits
            }
        }
    }
    if (best_score < 0)
        throw sw::UserError("error: matmul: no tile of 4 columns fits the LDM");
    return best;
}

inline void schedule_matmul_tiles(MatMulStages &st, const MatMulTiles &t, const sw::Machine &m) {
    const int mesh_cols = m.cpe_mesh_cols;
    using namespace Halide;
    Var jo("jo"), jt("jt"), jc("jc"), ji("ji"), io("io"), ii("ii");
    // C tiles: j -> (jo, jc: the 8 mesh columns, ji: TN), i -> (io, ii: TM). The blocks, outer
    // to inner: jo, io, jc; jc innermost so that a block's mesh column is jc.
    st.output.split(st.j, jo, jt, t.tn * mesh_cols)
        .split(jt, jc, ji, t.tn)
        .split(st.i, io, ii, t.tm)
        .reorder(ji, ii, jc, io, jo)
        .gpu_blocks(jc, io, jo, DeviceAPI::Host);
    st.acc.compute_at(st.output, jc).store_in(sw::LDM);
    // The multiply: chunks of TK; per k, a register block of bj vectors x bi rows.
    RVar ko("ko"), ki("ki");
    st.acc.update(0).split(st.r.x, ko, ki, t.tk);
    schedule_register_block_kernel(st.acc.update(0), st.j, st.i, ki, ko, t.tn, t.tm, m);
    st.acc.vectorize(st.j, vector_lanes(m));
    st.a.in().compute_at(st.acc, ko).store_in(sw::LDM);
    st.b.in().compute_at(st.acc, ko).store_in(sw::LDM);
    // The next chunk is fetched while this one is multiplied (and, shared, passed on first).
    sw::double_buffer(st.a.in());
    sw::double_buffer(st.b.in());
    if (t.regcomm) {
        sw::broadcast(st.a.in(), t.row_dma ? sw::Sharing::DmaRow : sw::Sharing::RegCommRow);
        sw::broadcast(st.b.in(), sw::Sharing::RegCommColumn);
    }
}

/** The register-communication GEMM (\p given.regcomm; else the same tiles, each CPE fetching
 * its own chunks) with the tiles of \p given, those 0 chosen by choose_matmul_tiles. Given
 * tiles are checked (an error naming the parameter): tile_n a multiple of 4 dividing n / 8,
 * tile_m dividing m, tile_k dividing k, and the three fitting the LDM. */
inline void schedule_matmul_sunway(MatMulStages &st, const MatMulShape &s, const sw::Machine &m,
                                   const MatMulTiles &given) {
    MatMulTiles t = choose_matmul_tiles(s, m);
    t.regcomm = given.regcomm;
    t.row_dma = given.row_dma;
    auto check = [](bool ok, const std::string &what) {
        if (!ok)
            throw sw::UserError("error: matmul: " + what);
    };
    if (given.tn > 0) {
        check(given.tn % vector_lanes(m) == 0 && (s.n / m.cpe_mesh_cols) % given.tn == 0,
              "tile_n=" + std::to_string(given.tn) + " must be a multiple of " +
                  std::to_string(vector_lanes(m)) + " dividing n / " +
                  std::to_string(m.cpe_mesh_cols) + " = " + std::to_string(s.n / m.cpe_mesh_cols));
        t.tn = given.tn;
    }
    if (given.tm > 0) {
        check(s.m % given.tm == 0,
              "tile_m=" + std::to_string(given.tm) + " must divide m=" + std::to_string(s.m));
        t.tm = given.tm;
    }
    if (given.tk > 0) {
        check(s.k % given.tk == 0,
              "tile_k=" + std::to_string(given.tk) + " must divide k=" + std::to_string(s.k));
        t.tk = given.tk;
    }
    check(matmul_ldm_bytes(t) <= ldm_plan_budget(m, 3),
          "tiles " + std::to_string(t.tm) + " x " + std::to_string(t.tn) + " x " +
              std::to_string(t.tk) + " need " + std::to_string(matmul_ldm_bytes(t)) +
              " bytes of LDM, more than the " + std::to_string(ldm_plan_budget(m, 3)) +
              " a plan may use");
    schedule_matmul_tiles(st, t, m);
}

inline void schedule_matmul_cpu(MatMulStages &st) {
    using namespace Halide;
    st.output.compute_root().parallel(st.i).vectorize(st.j, 8, TailStrategy::GuardWithIf);
    st.acc.compute_at(st.output, st.i);
}

} // namespace schedules

#endif
