/** \file
 * Schedules for the batch_matmul generator: C[b] = alpha * A[b] x B[b], A of m x k, B of k x n
 * (or, transpose_b, n x k: B^T stored row-major), C of m x n, all row-major (Halide dims:
 * A(kk, i, b), B(j, kk, b) or B(kk, j, b), C(j, i, b)); a batch extent of 1 in A or B is
 * shared by every batch. With transpose_b the generator reads B through `bt(j, kk, b)`, a
 * plain transposition (inlined except where a schedule stages it).
 *
 * Hand Sunway schedule: the C tiles (TM rows x TN columns of one batch) over the CPEs, the
 * batch outermost. Each tile accumulates in LDM over chunks of TK of the reduction; per chunk
 * the A rows (TM x TK, one strided get) and the B chunk (TK rows of TN, or with transpose_b TN
 * rows of TK) are staged in LDM by DMA, double buffered when there are several chunks (the
 * next chunk arrives while this one is multiplied). The multiply runs on floatv4 along j
 * (B's rows are vectors, A's values splatted), in register blocks of up to 4 vectors x 4 rows
 * of C that stay in registers over the chunk (as matmul's GEMM). With transpose_b the staged
 * chunk is first transposed in LDM (`bt`, floatv4 vectors gathered from 4 rows), so that the
 * same kernel runs: TK x TN gathers per chunk against TM x TN x TK / 4 multiply-adds. Or
 * (BatchMatMulTiles::tc, where the estimate prefers it) the tile's columns are taken TC at a
 * time with the whole reduction: B^T's TC rows are one contiguous get (no 128-byte line half
 * wasted on short rows), double buffered and transposed per chunk, and A's TM rows are staged
 * once per tile. Needs n >= 4 and TN a multiple of 4 (the edge tile shifted inwards when TN
 * does not divide n); narrower C (n < 4) runs the same tiles in scalar code.
 *
 * Tiles: a closed-form estimate of the kernel's time picks them (`batch_matmul_cost`): per
 * CPE the waves of tiles times each tile's multiply-adds, transposition and DMA setups (a put
 * costs far more per contiguous block than a get on SW26010, so tiles of whole rows of C,
 * TN = n, are favoured: one block per put), plus half the channel time of all the bytes moved (A
 * re-read once per column of tiles, B once per row of tiles, short rows' line waste).
 * Generator parameters tile_m, tile_n and tile_k override the choice. The
 * register-communication sharing of matmul's hand schedule is not used: on attention's shapes
 * its per-CPE tiles would be put in many small blocks (docs/onnx.md).
 *
 * OpenACC-style baseline:
 *
 *     #pragma acc parallel loop collapse(2) copyin(a[...], b[...]) copyout(c[...])
 *     for (b) for (i) {                       // one row of C per iteration
 *         float acc[N] = 0;
 *         for (k0 = 0; k0 < K; k0 += CK) {    // tile(CK): what fits the LDM
 *             copy a[b][i][k0..k0+CK], b[b][k0..k0+CK][0..N] (or b[b][0..N][k0..k0+CK])
 *             for (kk) for (j) acc[j] += a[b][i][kk] * b[b][kk][j];   // (or b[b][j][kk])
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
#include <cmath>
#include <limits>
#include <string>

namespace schedules {

struct BatchMatMulStages {
    Halide::Func output, acc, a, b;
    Halide::Func bt; ///< B^T read as (j, kk, b) (transpose_b only; else undefined)
    Halide::Var j, i, bb;
    Halide::RDom r;
};

struct BatchMatMulShape {
    int batch, m, n, k;
    bool transpose_b;
};

/** TM rows x TN columns of C per block, TK of the reduction per chunk; simd: floatv4 along j
 * (with transpose_b, B's chunk transposed in LDM first); buffers: LDM slots per staged chunk
 * (2: double buffered). */
struct BatchMatMulTiles {
    int tm = 1, tn = 1, tk = 1;
    bool simd = false;
    int buffers = 2;
    /** transpose_b on floatv4 only, 0: none. Column chunks: the tile's columns taken TC at a
     * time with the whole reduction (tk = k): B^T's chunk is TC consecutive rows of k, one
     * contiguous get, staged (double buffered when there are several) and transposed per
     * chunk, A's rows staged once per tile. */
    int tc = 0;
};

/** Whether the hand schedule can use floatv4 on \p s (see the file comment). */
inline bool batch_matmul_simd(const BatchMatMulShape &s, const sw::Machine &m) {
    return s.n >= vector_lanes(m);
}

/** LDM of one block: the A and B chunks (each \p t.buffers times), the C tile, and with
 * transpose_b on floatv4 the transposed B chunk. */
inline int64_t batch_matmul_ldm_bytes(const BatchMatMulTiles &t, bool transpose_b) {
    if (t.tc > 0) { // A's rows once, B^T's chunk (twice with several chunks), bt, C
        const int slots = t.tn / t.tc > 1 ? 2 : 1;
        return 4 *
               (int64_t(t.tm) * t.tk + (slots + 1) * int64_t(t.tc) * t.tk + int64_t(t.tm) * t.tn);
    }
    const int64_t bt = transpose_b && t.simd ? int64_t(t.tk) * t.tn : 0;
    return 4 *
           (t.buffers * (int64_t(t.tm) * t.tk + int64_t(t.tk) * t.tn) + bt + int64_t(t.tm) * t.tn);
}
/** The LDM a plan of the batch_matmul schedules may use: A, B (twice each), B^T, C. */
inline int64_t batch_matmul_budget(const sw::Machine &m) {
    return ldm_plan_budget(m, 6);
}

/** Estimated cycles of the hand schedule with tiles \p t: per CPE, its waves of tiles, each
 * its multiply-adds (floatv4: a quarter, plus the transposition's gathers), its gets' and
 * put's setups and latencies (puts per contiguous block of C: one when TN = n); plus half the
 * DMA channel's time for every byte moved (A once per column of tiles, B once per row of
 * tiles, C once), at least that channel time. Only to compare tiles. */
inline double batch_matmul_cost(const BatchMatMulShape &s, const BatchMatMulTiles &t,
                                const sw::Machine &m) {
    const sw::DmaTiming &d = m.dma_timing;
    const int64_t row_tiles = ceil_div(s.m, t.tm), col_tiles = ceil_div(s.n, t.tn);
    const int64_t tiles = int64_t(s.batch) * row_tiles * col_tiles;
    const int64_t waves = (tiles + m.cpes_per_core_group - 1) / m.cpes_per_core_group;
    const double chunks = double(ceil_div(s.k, t.tk));
    const double macs = double(t.tm) * t.tn * s.k;
    double compute = t.simd ? macs / vector_lanes(m) : macs * m.fp_latency_cycles;
    if (s.transpose_b && t.simd)
        compute += 9.0 * double(s.k) * t.tn / vector_lanes(m); // gathered vectors
    compute += 3.0 * t.tm * t.tn;                              // init, alpha
    const double a_blocks = t.tk == s.k ? 1 : t.tm;
    const double b_blocks = s.transpose_b ? (t.tk == s.k && (t.tn == s.n || t.tc) ? 1 : t.tn)
                                          : (t.tn == s.n ? 1 : t.tk);
    // Column chunks: A once per tile, a B^T chunk per TC columns.
    const double a_gets = t.tc ? 1 : chunks, b_gets = t.tc ? double(t.tn / t.tc) : chunks;
    const double waits = t.tc ? (b_gets > 1 ? 2 : 1) : (t.buffers == 2 ? 1 : chunks);
    const double setups = (a_gets * a_blocks + b_gets * b_blocks) * d.get_block_cycles +
                          waits * d.get_latency_cycles +
                          (t.tn == s.n ? 1 : t.tm) * d.put_block_cycles + d.put_latency_cycles;
    // Line bytes per useful byte of a get of blocks of \p floats (each block's 128-byte lines).
    auto lines = [&](double floats) {
        const double bytes = 4.0 * floats, line = 128.0;
        return std::ceil(bytes / line) * line / bytes;
    };
    const double a_line = lines(a_blocks == 1 ? double(t.tm) * s.k : t.tk);
    const double b_line = lines(s.transpose_b ? (b_blocks == 1 ? double(t.tn) * s.k : t.tk)
                                              : (b_blocks == 1 ? double(t.tk) * s.n : t.tn));
    const double gets =
        4.0 * s.batch *
        (double(col_tiles) * s.m * s.k * a_line + double(row_tiles) * s.k * s.n * b_line);
    const double puts = 4.0 * s.batch * s.m * s.n;
    const double channel = gets / d.get_bytes_per_cycle + puts / d.put_bytes_per_cycle;
    // A CPE's DMA overlaps its compute only in part (each tile waits for its first chunk and
    // its put): half the channel time is added to the CPE's own work, the channel alone a
    // floor. On BERT's Q.K^T this ranks TM = 8..64 in the emulator's order (0.153 ms at 32 to
    // 0.346 ms at 8), each estimate about 0.8 of the emulated time.
    return std::max(double(waves) * (compute + setups) + 0.5 * channel, channel);
}

/** The hand schedule's tiles (see the file comment); \p given: tile_m, tile_n, tile_k (0:
 * chosen). Throws a UserError when no tile fits. */
inline BatchMatMulTiles choose_batch_matmul_tiles(const BatchMatMulShape &s, const sw::Machine &m,
                                                  const BatchMatMulTiles &given = {0, 0, 0}) {
    const bool simd = batch_matmul_simd(s, m);
    auto candidates = [](int extent, int multiple, int fixed) {
        std::vector<int> v;
        if (fixed > 0)
            return std::vector<int>{fixed};
        for (int t : {extent, 256, 128, 96, 64, 48, 32, 24, 16, 12, 8, 4, 2, 1}) {
            int c = std::min(t, extent);
            c -= c % multiple;
            if (c >= 1 && std::find(v.begin(), v.end(), c) == v.end())
                v.push_back(c);
        }
        return v;
    };
    const std::vector<int> tns = candidates(s.n, simd ? vector_lanes(m) : 1, given.tn);
    const std::vector<int> tms = candidates(s.m, 1, given.tm);
    const std::vector<int> tks = given.tk > 0 ? std::vector<int>{given.tk} : divisors_desc(s.k);
    BatchMatMulTiles best;
    double best_cost = std::numeric_limits<double>::infinity();
    // Keeps \p t if it fits the LDM and is the cheapest so far; whether it fits.
    auto consider = [&](const BatchMatMulTiles &t) {
        if (batch_matmul_ldm_bytes(t, s.transpose_b) > batch_matmul_budget(m))
            return false;
        const double cost = batch_matmul_cost(s, t, m);
        if (cost < best_cost) {
            best_cost = cost;
            best = t;
        }
        return true;
    };
    for (int tn : tns) {
        for (int tm : tms) {
            for (int tk : tks)
                consider({tm, tn, tk, simd, s.k / tk > 1 ? 2 : 1});
            if (!(s.transpose_b && simd) || (given.tk > 0 && given.tk != s.k))
                continue;
            // B^T in column chunks with the whole reduction: the widest chunk that fits.
            for (int tc : divisors_desc(tn / vector_lanes(m))) {
                if (consider({tm, tn, s.k, simd, 2, tc * vector_lanes(m)}))
                    break;
            }
        }
    }
    if (!std::isfinite(best_cost)) {
        throw sw::UserError("batch_matmul: no tile" +
                            std::string(given.tm || given.tn || given.tk ? " as given" : "") +
                            " fits the LDM of a " + std::string(m.name) +
                            " CPE (m=" + std::to_string(s.m) + ", n=" + std::to_string(s.n) +
                            ", k=" + std::to_string(s.k) + ")");
    }
    return best;
}

inline void schedule_batch_matmul_tiles(BatchMatMulStages &st, const BatchMatMulShape &s,
                                        const BatchMatMulTiles &t, const sw::Machine &m) {
    using namespace Halide;
    Var jo("jo"), ji("ji"), io("io"), ii("ii"), tile("tile");
    st.output.split(st.j, jo, ji, t.tn)
        .split(st.i, io, ii, t.tm)
        .reorder(ji, ii, jo, io, st.bb)
        .fuse(jo, io, tile)
        .gpu_blocks(tile, st.bb, DeviceAPI::Host);
    st.acc.compute_at(st.output, tile).store_in(sw::LDM);
    RVar ko("ko"), ki("ki");
    if (t.tc > 0) {
        // Column chunks of TC with the whole reduction: per chunk, B^T's TC rows (one
        // contiguous get) staged and transposed in LDM, then the floatv4 kernel over k.
        Var jc("jc"), jin("jin");
        st.acc.update(0).split(st.j, jc, jin, t.tc);
        schedule_register_block_kernel(st.acc.update(0), jin, st.i, st.r.x, jc, t.tc, t.tm, m);
        st.acc.vectorize(st.j, vector_lanes(m));
        st.bt.compute_at(st.acc, jc).store_in(sw::LDM).vectorize(st.j, vector_lanes(m));
        st.a.in().compute_at(st.output, tile).store_in(sw::LDM);
        st.b.in().compute_at(st.acc, jc).store_in(sw::LDM);
        if (t.tn / t.tc > 1)
            sw::double_buffer(st.b.in());
        for (int u = 1; u < st.acc.num_update_definitions(); u++)
            st.acc.update(u).vectorize(st.j, vector_lanes(m));
        return;
    }
    if (t.simd) {
        // floatv4 along j: B's rows are vectors, A's values splatted; a register block of bj
        // vectors x bi rows of C over the chunk (as matmul's GEMM).
        st.acc.update(0).split(st.r.x, ko, ki, t.tk);
        schedule_register_block_kernel(st.acc.update(0), st.j, st.i, ki, ko, t.tn, t.tm, m);
        st.acc.vectorize(st.j, vector_lanes(m));
        if (s.transpose_b) {
            // The staged B^T chunk transposed in LDM, 4 gathered values per vector.
            st.bt.compute_at(st.acc, ko).store_in(sw::LDM).vectorize(st.j, vector_lanes(m));
        }
    } else {
        st.acc.update(0).split(st.r.x, ko, ki, t.tk).reorder(ki, st.j, st.i, ko);
    }
    st.a.in().compute_at(st.acc, ko).store_in(sw::LDM);
    st.b.in().compute_at(st.acc, ko).store_in(sw::LDM);
    if (t.buffers == 2) {
        sw::double_buffer(st.a.in());
        sw::double_buffer(st.b.in());
    }
    for (int u = 1; u < st.acc.num_update_definitions(); u++) {
        if (t.simd)
            st.acc.update(u).vectorize(st.j, vector_lanes(m));
        else
            st.acc.update(u).unscheduled();
    }
}

/** The hand schedule with the tiles of \p given (tile_m, tile_n, tile_k; 0: chosen).
 * Given tiles are checked: tile_n a multiple of 4 (when n >= 4) at most n, tile_m at most m,
 * tile_k dividing k, and the LDM. */
inline void schedule_batch_matmul_sunway(BatchMatMulStages &st, const BatchMatMulShape &s,
                                         const sw::Machine &m,
                                         const BatchMatMulTiles &given = {0, 0, 0}) {
    auto check = [](bool ok, const std::string &what) {
        if (!ok)
            throw sw::UserError("batch_matmul: " + what);
    };
    check(given.tm <= s.m,
          "tile_m=" + std::to_string(given.tm) + " must be at most m=" + std::to_string(s.m));
    check(given.tn <= s.n && (!batch_matmul_simd(s, m) || given.tn % vector_lanes(m) == 0),
          "tile_n=" + std::to_string(given.tn) + " must be a multiple of " +
              std::to_string(vector_lanes(m)) + " (when n >= " + std::to_string(vector_lanes(m)) +
              ") and at most n=" + std::to_string(s.n));
    check(given.tk == 0 || s.k % given.tk == 0,
          "tile_k=" + std::to_string(given.tk) + " must divide k=" + std::to_string(s.k));
    schedule_batch_matmul_tiles(st, s, choose_batch_matmul_tiles(s, m, given), m);
}

/** One row of C per block (a part of it, halved until it fits, when a row with a chunk of
 * one does not), the longest chunk of the reduction that fits, scalar, single buffered (the
 * OpenACC-style loop of the file comment). */
inline void schedule_batch_matmul_baseline(BatchMatMulStages &st, const BatchMatMulShape &s,
                                           const sw::Machine &m) {
    for (int tn = s.n;; tn = ceil_div(tn, 2)) {
        for (int tk : divisors_desc(s.k)) {
            const BatchMatMulTiles t{1, tn, tk, false, 1};
            if (batch_matmul_ldm_bytes(t, s.transpose_b) <= batch_matmul_budget(m)) {
                schedule_batch_matmul_tiles(st, s, t, m);
                return;
            }
        }
        if (tn == 1)
            break;
    }
    throw sw::UserError("batch_matmul: no baseline tile fits the LDM of a " + std::string(m.name) +
                        " CPE");
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
