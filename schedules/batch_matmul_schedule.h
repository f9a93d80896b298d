/** \file
 * Schedules for the batch_matmul generator: C[b] = alpha * A[b] x B[b], A of m x k, B of k x n
 * (or, transpose_b, n x k: B^T stored row-major), C of m x n, all row-major (Halide dims:
 * A(kk, i, b), B(j, kk, b) or B(kk, j, b), C(j, i, b)); a batch extent of 1 in A or B is
 * shared by every batch.
 *
 * Hand Sunway schedule: the C tiles (TM rows x TN columns of one batch) over the CPEs, the
 * batch outermost. Each tile accumulates in LDM over chunks of TK of the reduction; per chunk
 * the A rows (TM x TK, one strided get) and the B chunk are staged in LDM by DMA and double
 * buffered (the next chunk arrives while this one is multiplied).
 *   - B as k x n (transpose_b=false): B's chunk is TK rows of TN columns; the multiply runs on
 *     floatv4 along j (B's rows are vectors, A's values splatted), in register blocks of up to 4
 *     vectors x 4 rows of C that stay in registers over the chunk (as matmul's GEMM). Needs
 *     n >= 4; TN a multiple of 4 (the edge tile shifted inwards when TN does not divide n).
 *   - B^T as n x k (transpose_b=true, attention's Q.K^T): C(j, i) is a dot product of two rows
 *     contiguous along the reduction, as in the dense layer: B's chunk is TN rows of TK; the
 *     reduction is split into 4 lanes of floatv4 partial sums (rfactor), in register blocks of
 *     up to 4 columns x 4 rows, added up at the end. Needs k a multiple of 4.
 * Shapes that allow neither (n < 4, or k not a multiple of 4 with transpose_b) run the same
 * tiles in scalar code. Tiles are chosen from the LDM budget of the machine: the most
 * multiply-adds per staged byte (TM x TN / (TM + TN)) times the share of the CPEs kept busy,
 * then the longest chunk that divides k. The register-communication sharing of matmul's hand
 * schedule is not used here (its shape conditions rarely hold with a batch dimension); the
 * autoscheduler may find mesh plans.
 *
 * OpenACC-style baseline:
 *
 *     #pragma acc parallel loop collapse(2) copyin(a[...], b[...]) copyout(c[...])
 *     for (b) for (i) {                       // one row of C per iteration
 *         float acc[N] = 0;
 *         for (k0 = 0; k0 < K; k0 += CK) {    // tile(CK): what fits the LDM
 *             copy a[b][i][k0..k0+CK], b[b][k0..k0+CK][0..N] (or b[b][0..N][k0..k0+CK])
 *             for (kk) for (j) acc[j] += a[b][i][kk] * b[b][kk][j];
 *         }
 *         c[b][i][:] = alpha * acc;
 *     }
 *
 * B is read again for every row of C and nothing is vectorised.
 */
#ifndef SCHEDULES_BATCH_MATMUL_SCHEDULE_H
#define SCHEDULES_BATCH_MATMUL_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/DoubleBuffer.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>
#include <string>

namespace schedules {

struct BatchMatMulStages {
    Halide::Func output, acc, a, b;
    Halide::Var j, i, bb;
    Halide::RDom r;
};

struct BatchMatMulShape {
    int batch, m, n, k;
    bool transpose_b;
};

/** TM rows x TN columns of C per block, TK of the reduction per chunk; simd: floatv4 (along
 * j, or along the reduction with transpose_b); buffers: LDM slots per staged chunk (2: double
 * buffered). */
struct BatchMatMulTiles {
    int tm = 1, tn = 1, tk = 1;
    bool simd = false;
    int buffers = 2;
};

/** Whether the hand schedule can use floatv4 on \p s (see the file comment). */
inline bool batch_matmul_simd(const BatchMatMulShape &s) {
    return s.transpose_b ? s.k % kVectorLanes == 0 : s.n >= kVectorLanes;
}

/** LDM of one block: the A and B chunks (each \p t.buffers times), the C tile, and with the
 * rfactor (transpose_b, simd) the 4 lanes of partial sums. */
inline int64_t batch_matmul_ldm_bytes(const BatchMatMulTiles &t, bool transpose_b) {
    const int64_t c = int64_t(t.tm) * t.tn;
    const int64_t partial = transpose_b && t.simd ? kVectorLanes * c : 0;
    return 4 * (t.buffers * (int64_t(t.tm) * t.tk + int64_t(t.tk) * t.tn) + c + partial);
}

/** The LDM a plan of the batch_matmul schedules may use: A, B (twice each), C, partial. */
inline int64_t batch_matmul_budget(const sw::Machine &m) {
    return ldm_plan_budget(m, 6);
}

/** The hand schedule's tiles (see the file comment). Throws a UserError when no tile fits. */
inline BatchMatMulTiles choose_batch_matmul_tiles(const BatchMatMulShape &s, const sw::Machine &m) {
    const bool simd = batch_matmul_simd(s);
    std::vector<int> tns, tms;
    for (int t : {128, 64, 32, 16, 8, 4}) {
        const int c =
            simd && !s.transpose_b ? std::min(t, s.n - s.n % kVectorLanes) : std::min(t, s.n);
        if (std::find(tns.begin(), tns.end(), c) == tns.end())
            tns.push_back(c);
    }
    for (int t : {128, 64, 32, 16, 8, 4, 2, 1}) {
        const int c = std::min(t, s.m);
        if (std::find(tms.begin(), tms.end(), c) == tms.end())
            tms.push_back(c);
    }
    const int lanes = simd && s.transpose_b ? kVectorLanes : 1;
    BatchMatMulTiles best;
    double best_score = -1;
    for (int tn : tns) {
        for (int tm : tms) {
            for (int tk : divisors_desc(s.k)) {
                if (tk % lanes)
                    continue;
                const BatchMatMulTiles t{tm, tn, tk, simd, s.k / tk > 1 ? 2 : 1};
                if (batch_matmul_ldm_bytes(t, s.transpose_b) > batch_matmul_budget(m))
                    continue;
                const int64_t tiles =
                    int64_t(s.batch) * ceil_div(s.m, tm) * int64_t(ceil_div(s.n, tn));
                // Multiply-adds per staged byte, times the CPEs kept busy; then long chunks.
                const double score = cpe_occupancy(tiles, m) * double(tm) * tn / (tm + tn) *
                                     (1.0 + 1e-3 * std::min(tk, 256));
                if (score > best_score) {
                    best_score = score;
                    best = t;
                }
                break; // the longest chunk that fits
            }
        }
    }
    if (best_score < 0) {
        throw sw::UserError("batch_matmul: no tile fits the LDM of a " + std::string(m.name) +
                            " CPE (m=" + std::to_string(s.m) + ", n=" + std::to_string(s.n) +
                            ", k=" + std::to_string(s.k) + ")");
    }
    return best;
}

inline void schedule_batch_matmul_tiles(BatchMatMulStages &st, const BatchMatMulShape &s,
                                        const BatchMatMulTiles &t) {
    using namespace Halide;
    Var jo("jo"), ji("ji"), io("io"), ii("ii"), tile("tile");
    st.output.split(st.j, jo, ji, t.tn)
        .split(st.i, io, ii, t.tm)
        .reorder(ji, ii, jo, io, st.bb)
        .fuse(jo, io, tile)
        .gpu_blocks(tile, st.bb, DeviceAPI::Host);
    st.acc.compute_at(st.output, tile).store_in(sw::LDM);
    RVar ko("ko"), ki("ki"), kio("kio"), kii("kii");
    Func staged_at = st.acc;
    if (t.simd && s.transpose_b) {
        // Dot products of rows: 4 lanes of partial sums along the reduction (as dense).
        st.acc.update(0).split(st.r.x, ko, ki, t.tk).split(ki, kio, kii, kVectorLanes);
        Var lane("lane");
        Func partial = st.acc.update(0).rfactor(kii, lane);
        partial.compute_at(st.output, tile)
            .store_in(sw::LDM)
            .reorder_storage(lane, st.j, st.i, st.bb)
            .vectorize(lane);
        const int bj = power_of_two_block(t.tn, 4), bi = power_of_two_block(t.tm, 4);
        Var jb("jb"), jr("jr"), ib("ib"), ir("ir");
        partial.update(0)
            .split(st.j, jb, jr, bj)
            .split(st.i, ib, ir, bi)
            .reorder(lane, jr, ir, kio, jb, ib, ko)
            .vectorize(lane)
            .unroll(jr)
            .unroll(ir);
        staged_at = partial;
    } else if (t.simd) {
        // floatv4 along j: B's rows are vectors, A's values splatted; a register block of bj
        // vectors x bi rows of C over the chunk (as matmul's GEMM).
        const int bj = power_of_two_block(t.tn / kVectorLanes, 4), bi = power_of_two_block(t.tm, 4);
        Var jv("jv"), jb("jb"), lane("lane"), ib("ib"), ir("ir");
        st.acc.update(0)
            .split(st.r.x, ko, ki, t.tk)
            .split(st.j, jb, jv, bj * kVectorLanes)
            .split(jv, jv, lane, kVectorLanes)
            .split(st.i, ib, ir, bi)
            .reorder(lane, jv, ir, ki, jb, ib, ko)
            .vectorize(lane)
            .unroll(jv)
            .unroll(ir);
        st.acc.vectorize(st.j, kVectorLanes);
    } else {
        st.acc.update(0).split(st.r.x, ko, ki, t.tk).reorder(ki, st.j, st.i, ko);
    }
    st.a.in().compute_at(staged_at, ko).store_in(sw::LDM);
    st.b.in().compute_at(staged_at, ko).store_in(sw::LDM);
    if (t.buffers == 2) {
        sw::double_buffer(st.a.in());
        sw::double_buffer(st.b.in());
    }
    for (int u = 1; u < st.acc.num_update_definitions(); u++) {
        if (t.simd && !s.transpose_b)
            st.acc.update(u).vectorize(st.j, kVectorLanes);
        else
            st.acc.update(u).unscheduled();
    }
}

inline void schedule_batch_matmul_sunway(BatchMatMulStages &st, const BatchMatMulShape &s,
                                         const sw::Machine &m) {
    schedule_batch_matmul_tiles(st, s, choose_batch_matmul_tiles(s, m));
}

/** One row of C per block, the longest chunk of the reduction that fits, scalar, single
 * buffered (the OpenACC-style loop of the file comment). */
inline void schedule_batch_matmul_baseline(BatchMatMulStages &st, const BatchMatMulShape &s,
                                           const sw::Machine &m) {
    for (int tk : divisors_desc(s.k)) {
        const BatchMatMulTiles t{1, s.n, tk, false, 1};
        if (batch_matmul_ldm_bytes(t, s.transpose_b) <= batch_matmul_budget(m)) {
            schedule_batch_matmul_tiles(st, s, t);
            return;
        }
    }
    throw sw::UserError("batch_matmul: a row of C (n=" + std::to_string(s.n) +
                        ") does not fit the LDM of a " + std::string(m.name) +
                        " CPE for the baseline schedule");
}

inline void schedule_batch_matmul_cpu(BatchMatMulStages &st) {
    using namespace Halide;
    Var par("par");
    st.output.compute_root()
        .fuse(st.i, st.bb, par)
        .parallel(par)
        .vectorize(st.j, 8, TailStrategy::GuardWithIf);
    st.acc.compute_at(st.output, par);
}

} // namespace schedules

#endif
