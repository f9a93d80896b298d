/** \file
 * Schedules for the attention generator (fused scaled dot-product attention): per batch b and
 * head h, dot = Q.K^T (M x N, reduction over D), scores = alpha * dot (+ mask, or a select of
 * the mask) inlined, softmax along n as softmax_generator computes it (max, exp, sum, divide),
 * out = P.V (M x D, reduction over N). Q, K, V and the output are row-major (B, S, H, D):
 * Halide dims (d, h, s, b), so one head's rows are D contiguous floats every H * D.
 *
 * Hand Sunway schedule: blocks of TM query rows of one (b, h) over the CPEs (the heads and
 * the row blocks fused into one block loop, the batch outer). A block keeps everything about
 * its rows in LDM: its Q rows (one strided get of TM rows of D), the score rows `dot`, the
 * exponentials `exps` and the probabilities `p` (three TM x N buffers: the score matrix never
 * goes to main memory), the row maxima and sums, the output rows `acc` (TM x D), and the
 * mask's rows (one when mask_rows = 1: BERT's padding mask). K and V of the block's head are
 * staged in chunks of NC rows (one strided get of NC rows of D each), double buffered when
 * there are several chunks: Q.K^T runs per K chunk (transposed in LDM, `kt`, so the product
 * is floatv4 along n with Q's values splatted: batch_matmul's transpose_b kernel, register
 * blocks of up to 4 vectors x 4 rows), then the softmax rows (the exponentials and the
 * probabilities on floatv4 four vectors at a time; the row's max and sum as floatv4 partials
 * where a row is whole groups of 16 scores; scalar with a select mask), then P.V per V chunk
 * (floatv4 along d, p's values splatted, V's rows as vectors, register blocks of up to 4 vectors x
 * 4 rows). The block's TM output rows go back by one strided put (TM blocks of D floats). On
 * floatv4 (N >= 4) the chunks are whole vectors and need not divide N: Q.K^T's last chunk is
 * rounded up (its rows past N read K's row N - 1, the generator clamps kt, and nothing reads those
 * scores), P.V's last chunk is guarded (Halide splits the loop, so V is then single buffered: two
 * double-buffered copies of the loop would declare its slots twice). ViT's prime N = 197 runs
 * in chunks of 16 rather than of one row. kt is scalar when the chunks do not divide N (the
 * clamped rows are no gather of 4 rows).
 *
 * Mesh plan (AttentionTiles::mesh = R > 0, when 8 R divides M: TM = M / (8 R)): the row blocks
 * of one (b, h) go in groups of 8, the innermost block loop, so that a group runs on the 8 CPEs
 * of one mesh row; K's and V's chunks are then the same along the row: each is broadcast to
 * the row by DMA (sw::Sharing::DmaRow: BCAST_MODE with the row's mask, issued in pieces by the
 * row's CPEs, one chunk ahead). Passed along the row by register communication instead
 * (Sharing::RegCommRow, about 5 cycles per floatv4 on every CPE), BERT-base's attention took
 * 0.312 ms (R = 1) and 0.321 ms (R = 2) on the emulator; by DMA 0.284 and 0.279 ms.
 *
 * What is re-read: without the mesh plan each block reads its head's whole K and V once (N x D
 * floats each), so K and V are read ceil(M / TM) times per head; with it, once per group of 8
 * blocks (M / (8 TM) = R times per head). Q and the output move once; the mask's row(s) once per
 * block. TM trades that re-reading (and the put blocks) against the CPEs kept busy;
 * `attention_cost` estimates each candidate phase by phase (the CPEs run in step): Q.K^T and
 * K's channel time, the softmax's work, P.V and V's channel time.
 *
 * LDM (attention_ldm_bytes): the generated kernel frees each buffer after its last use, so the
 * peak is the largest of its phases: Q.K^T (mask, Q, dot, K's chunk slots, kt), the max and
 * exponentials (mask, dot, max, exps), the sums and probabilities (exps, sum, p), P.V (p, acc, V's
 * chunk slots), each buffer rounded up to 128 bytes. BERT-base (N = 128, D = 64): K and V of a
 * head are 32 KB each and never both fit the 57,344 bytes of a CPE; with TM = 8 (mesh plan, R =
 * 2) and NC = 16 the Q.K^T phase is the peak: mask 512 + Q 2,048 + dot 4,096 + K 2 x 4,096 + kt
 * 4,096 = 18,944 bytes. Chunks are at most max(16, N / 8) rows: the first chunk's transfer is
 * not overlapped, and NC = 64 (55,808 bytes) modelled 0.616 ms against 0.587 ms for NC = 16.
 *
 * OpenACC-style baseline: one query row per iteration (TM = 1), scalar, the longest K and V
 * chunks that fit, single buffered (K and V read again for every row):
 *
 *     #pragma acc parallel loop collapse(3) copyin(q, k, v, mask) copyout(out)
 *     for (b) for (m) for (h) {
 *         float s[N], e[N], p[N], o[D] = 0;
 *         for (n0 = 0; n0 < N; n0 += NC) {   // tile(NC): what fits the LDM
 *             copy k[b][n0..n0+NC][h][:];
 *             for (n) s[n] = q[b][m][h] . k[b][n][h];
 *         }
 *         s = alpha * s (+ mask); p = softmax(s);
 *         for (n0 = 0; n0 < N; n0 += NC) {
 *             copy v[b][n0..n0+NC][h][:];
 *             for (n) o += p[n] * v[b][n][h];
 *         }
 *         out[b][m][h][:] = o;
 *     }
 *
 * CPU schedule: parallel over (b, m, h) rows, each row's stages computed there.
 */
#ifndef SCHEDULES_ATTENTION_SCHEDULE_H
#define SCHEDULES_ATTENTION_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/BroadcastDma.h"
#include "target_sw/DoubleBuffer.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace schedules {

struct AttentionStages {
    Halide::Func output, acc, p, sum, exps, maxv, scores, dot, kt, q, k, v, mask;
    Halide::Var d, h, m, n, b;
    Halide::RDom rd, rn;
    bool masked;
    /// mask=select: the scores hold a select (no floatv4 select on the CPE: exps scalar)
    bool select_mask = false;
};

struct AttentionShape {
    int batch, heads, m, n, d;
    int mask_rows; ///< 1 or m (only with a mask)
};

/** TM query rows per block, K and V in chunks of NC rows; simd_dot: Q.K^T on floatv4 along n
 * (K's chunk transposed in LDM), simd_pv: P.V on floatv4 along d; double buffering of the K and
 * V chunks when there are several. */
struct AttentionTiles {
    int tm = 1, nc = 1;
    bool simd_dot = false, simd_pv = false;
    /** The mesh plan when > 0: TM = M / (8 * mesh), the row blocks of one (b, h) in groups of
     * 8 on the 8 CPEs of a mesh row, K's and V's chunks broadcast to the row by DMA
     * (sw::Sharing::DmaRow). */
    int mesh = 0;
};

/** Columns of the CPE mesh (the mesh plan's row blocks). */
constexpr int kMeshColumns = 8;

/** Whether the softmax's row max and sum run as floatv4 partials: the scores of a row are
 * whole groups of 4 vectors and no select (the CPE code has no vector select). */
inline bool softmax_reductions_on_vectors(const AttentionShape &s, const AttentionTiles &t,
                                          bool select_mask, const sw::Machine &m) {
    return t.simd_pv && !select_mask && s.n % (4 * vector_lanes(m)) == 0;
}

inline int attention_slots(const AttentionShape &s, const AttentionTiles &t, bool double_buffer) {
    return double_buffer && ceil_div(s.n, t.nc) > 1 ? 2 : 1;
}

/** LDM bytes of one block at its peak (see the file comment): the buffers live in each phase
 * of the generated kernel (PlaceLdmBuffers frees each after its last use), each rounded up to
 * the machine's LDM alignment: Q.K^T (mask, Q, dot, K's chunk slots, kt), the max and the
 * exponentials (mask, dot, max, exps), the sums and probabilities (exps, sum, p), P.V (p, acc,
 * V's chunk slots). */
inline int64_t attention_ldm_bytes(const AttentionShape &s, const AttentionTiles &t, bool masked,
                                   bool double_buffer, const sw::Machine &m) {
    const int64_t tm = t.tm, n = s.n, d = s.d, nc = t.nc;
    const int slots = attention_slots(s, t, double_buffer);
    auto buf = [&](int64_t floats) {
        const int64_t bytes = 4 * floats, a = m.ldm_alignment;
        return floats > 0 ? (bytes + a - 1) / a * a : 0;
    };
    const int64_t mask = masked ? buf((s.mask_rows == 1 ? 1 : tm) * n) : 0;
    const int64_t rows = buf(tm * n), q = buf(tm * d), acc = buf(tm * d), row = buf(tm);
    // dot: rounded up to whole chunks (its last chunk computes past N on floatv4).
    const int64_t dot = t.simd_dot ? buf(tm * ceil_div(s.n, t.nc) * nc) : rows;
    const int64_t chunks = buf(slots * nc * d), kt = t.simd_dot ? buf(nc * d) : 0;
    // The max's and the sum's floatv4 partials (16 a row), where they may be taken.
    const int64_t part =
        softmax_reductions_on_vectors(s, t, false, m) ? buf(tm * 4 * vector_lanes(m)) : 0;
    return std::max({mask + q + dot + chunks + kt, mask + dot + rows + row + part,
                     2 * rows + row + part, rows + acc + chunks});
}

/** The LDM an attention plan may use: the machine's data budget. */
inline int64_t attention_budget(const sw::Machine &m) {
    return m.ldm_data_budget();
}

/** Estimated cycles of the hand schedule with tiles \p t, phase by phase (the CPEs run in
 * step, so their phases coincide): Q.K^T, the CPEs' floatv4 multiply-adds and K's
 * transposition, then the channel's time for K (once per block, or once per mesh row); the
 * softmax's work per score (no DMA to overlap); P.V as Q.K^T with V; then Q's gets and the
 * output's puts, and the DMA setups. The channel's time is added rather than overlapped: on
 * the emulator the CPEs wait for most of it (BERT-base with TM = 32, no mesh: 226k of the
 * slowest CPE's 453k cycles waiting for DMA, against 160k of channel time for K and V; the
 * chunks are short and the first of each phase is not overlapped). Only to compare tiles. */
inline double attention_cost(const AttentionShape &s, const AttentionTiles &t,
                             const sw::Machine &m) {
    const sw::DmaTiming &dt = m.dma_timing;
    const int64_t blocks = int64_t(s.batch) * s.heads * ceil_div(s.m, t.tm);
    const double waves = double((blocks + m.cpes_per_core_group - 1) / m.cpes_per_core_group);
    const double macs = double(t.tm) * s.n * s.d;
    const double dot = t.simd_dot ? macs / vector_lanes(m) + 9.0 * s.n * s.d / vector_lanes(m)
                                  : macs * m.fp_latency_cycles;
    const double pv = t.simd_pv ? macs / vector_lanes(m) : macs * m.fp_latency_cycles;
    // Per score: the exp's multiply-adds and the probability's multiplication on floatv4
    // (about 6 cycles a score) and the max and the sum on floatv4 partials (about 1) or scalar
    // (dependent operations), or all scalar (the baseline, a row shorter than 16).
    const bool simd_softmax = t.simd_pv && s.n >= 4 * vector_lanes(m);
    const double reductions =
        softmax_reductions_on_vectors(s, t, false, m) ? 1.0 : 2.0 * m.fp_latency_cycles;
    const double softmax =
        double(t.tm) * s.n *
        (simd_softmax ? 6.0 + reductions
                      : double(40 + 5 * m.fp_latency_cycles)); // the exp's polynomial, scalar
    const double line = std::ceil(4.0 * s.d / 128.0) * 128.0 / (4.0 * s.d);
    const double kv_reads = t.mesh ? double(blocks) / kMeshColumns : double(blocks);
    const double kv_channel = 4.0 * kv_reads * s.n * s.d * line / dt.get_bytes_per_cycle;
    const double qo_channel = 4.0 * blocks * t.tm * s.d * line / dt.get_bytes_per_cycle +
                              4.0 * blocks * t.tm * s.d * line / dt.put_bytes_per_cycle;
    const double chunks = double(ceil_div(s.n, t.nc));
    const double setups = (1 + 2 * chunks * t.nc) * dt.get_block_cycles +
                          (2 * chunks + 1) * dt.get_latency_cycles + t.tm * dt.put_block_cycles +
                          dt.put_latency_cycles;
    return waves * (dot + softmax + pv) + 2 * kv_channel + qo_channel + waves * setups;
}

/** The hand schedule's tiles: for each TM (and each mesh plan), the chunk NC that fits double
 * buffered (see below: at most a cap of rows; on floatv4 whole vectors, else a divisor of N);
 * the TM of the lowest estimate. Throws a UserError when nothing fits (a query row's scores,
 * exponentials and probabilities alone take 12 N bytes). */
inline AttentionTiles choose_attention_tiles(const AttentionShape &s, bool masked,
                                             const sw::Machine &m) {
    const bool simd_dot = s.n >= vector_lanes(m), simd_pv = s.d % vector_lanes(m) == 0;
    AttentionTiles best;
    double best_cost = std::numeric_limits<double>::infinity();
    std::vector<int> cands = {s.m, 128, 64, 32, 24, 16, 12, 8, 4, 2, 1};
    for (int r = 1; kMeshColumns * r <= s.m; r *= 2)
        cands.push_back(-r);
    for (int c : cands) {
        // -R: the mesh plan with TM = M / (8 R), when that divides M.
        const int mesh = c < 0 ? -c : 0;
        if (mesh && s.m % (kMeshColumns * mesh))
            continue;
        const int tm = mesh ? s.m / (kMeshColumns * mesh) : std::min(c, s.m);
        // Chunks of at most max(16, N / 8) rows (the whole of a short N): the first chunk's
        // transfer is not overlapped, so long chunks cost more than they save in setups
        // (BERT-base, NC = 64 against 16: 0.616 against 0.587 ms modelled). When N has no
        // divisor between cap / 2 and cap (a prime N such as ViT's 197), the longest chunk that
        // fits instead of rows one by one.
        const int cap = std::max(16, s.n / 8);
        int longest = 0, capped = 0;
        // On floatv4 the chunks need not divide N (multiples of 4; the last one shorter).
        std::vector<int> ncs = divisors_desc(s.n);
        if (simd_dot) {
            ncs = {ceil_div(s.n, vector_lanes(m)) * vector_lanes(m)};
            for (int v : {256, 128, 64, 32, 16, 8, 4})
                if (v < ncs.front())
                    ncs.push_back(v);
        }
        for (int nc : ncs) {
            if (simd_dot && nc % vector_lanes(m))
                continue;
            const AttentionTiles t{tm, nc, simd_dot, simd_pv, mesh};
            if (attention_ldm_bytes(s, t, masked, true, m) > attention_budget(m))
                continue;
            longest = std::max(longest, nc);
            if (nc <= cap || s.n <= 2 * cap) {
                capped = nc;
                break;
            }
        }
        const int nc = capped * 2 >= cap || capped == s.n ? capped : longest;
        if (nc == 0)
            continue;
        const AttentionTiles t{tm, nc, simd_dot, simd_pv, mesh};
        const double cost = attention_cost(s, t, m);
        if (cost < best_cost) {
            best_cost = cost;
            best = t;
        }
    }
    if (!std::isfinite(best_cost)) {
        throw sw::UserError("attention: no block fits the LDM of a " + std::string(m.name) +
                            " CPE (seq_k=" + std::to_string(s.n) +
                            ", head_dim=" + std::to_string(s.d) +
                            "): one query row's scores, exponentials and probabilities need " +
                            std::to_string(12 * int64_t(s.n)) + " bytes");
    }
    return best;
}

inline void schedule_attention_tiles(AttentionStages &st, const AttentionShape &s,
                                     const AttentionTiles &t, bool double_buffer,
                                     const sw::Machine &m) {
    using namespace Halide;
    Var mo("mo"), mi("mi"), tile("tile");
    if (t.mesh) {
        // Groups of 8 row blocks of one (b, h) innermost: a block's mesh column is `tile`, its
        // mesh row depends only on (mo, h, b) and the round, so K's and V's chunks are the same
        // along it.
        Var mt("mt"), hb("hb");
        st.output.split(st.m, mt, mi, t.tm)
            .split(mt, mo, tile, kMeshColumns)
            .reorder(st.d, mi, tile, mo, st.h, st.b)
            .fuse(st.h, st.b, hb)
            .gpu_blocks(tile, mo, hb, DeviceAPI::Host);
    } else {
        st.output.split(st.m, mo, mi, t.tm)
            .reorder(st.d, mi, st.h, mo, st.b)
            .fuse(st.h, mo, tile)
            .gpu_blocks(tile, st.b, DeviceAPI::Host);
    }
    for (Func f : {st.acc, st.p, st.sum, st.exps, st.maxv, st.dot})
        f.compute_at(st.output, tile).store_in(sw::LDM);
    st.q.in().compute_at(st.output, tile).store_in(sw::LDM);
    if (st.masked)
        st.mask.in().compute_at(st.output, tile).store_in(sw::LDM);
    const bool several = ceil_div(s.n, t.nc) > 1;
    const int bi = power_of_two_block(t.tm, 4);

    // Q.K^T per chunk of K's rows.
    if (t.simd_dot) {
        const int bj = power_of_two_block(t.nc / vector_lanes(m), 4);
        Var no("no"), ni("ni"), nb("nb"), nv("nv"), lane("lane"), mb("mb"), mr("mr");
        st.dot.vectorize(st.n, vector_lanes(m));
        // A last chunk past N computes dot on rows of K clamped to N - 1 (the generator's kt),
        // which nothing reads.
        st.dot.update(0)
            .split(st.n, no, ni, t.nc, TailStrategy::RoundUp)
            .split(ni, nb, nv, bj * vector_lanes(m))
            .split(nv, nv, lane, vector_lanes(m))
            .split(st.m, mb, mr, bi)
            .reorder(lane, nv, mr, st.rd.x, nb, mb, st.h, st.b, no)
            .vectorize(lane)
            .unroll(nv)
            .unroll(mr);
        st.kt.compute_at(st.dot, no).store_in(sw::LDM);
        if (s.n % t.nc == 0) // else the clamped rows make its vectors no gather of 4 rows
            st.kt.vectorize(st.n, vector_lanes(m));
        st.k.in().compute_at(st.dot, no).store_in(sw::LDM);
    } else {
        Var no("no"), ni("ni");
        st.dot.update(0).split(st.n, no, ni, t.nc).reorder(st.rd.x, ni, st.m, st.h, st.b, no);
        st.k.in().compute_at(st.dot, no).store_in(sw::LDM);
    }
    if (several && double_buffer)
        sw::double_buffer(st.k.in());

    // The softmax rows. The row's max and sum as floatv4 partials where the rows are whole
    // groups of four vectors (four independent vector accumulators, so that the max's
    // subtract-and-select and the adds do not wait on each other's latency), else scalar, one
    // dependent operation per score. The exponentials and the probabilities on floatv4 along
    // the row, four vectors at a time (the exp's chain of multiply-adds is long: four
    // independent ones fill the pipeline), where a row has 16 scores or more (the last group
    // shifted inwards onto scores already computed; a shorter row, a select mask's scores and
    // the baseline stay scalar).
    if (softmax_reductions_on_vectors(s, t, st.select_mask, m)) {
        for (Func f : {st.maxv, st.sum})
            schedule_vector_partials(f, st.rn.x, 4, st.output, tile, {st.m, st.h, st.b}, m);
    } else {
        for (Func f : {st.maxv, st.sum})
            f.update(0).unscheduled();
    }
    st.sum.update(1).unscheduled();
    if (t.simd_pv && !st.select_mask && s.n >= 4 * vector_lanes(m)) {
        for (Func f : {st.exps, st.p}) {
            Var ng("ng"), nv("nv"), lane("lane");
            f.split(st.n, ng, nv, 4 * vector_lanes(m))
                .split(nv, nv, lane, vector_lanes(m))
                .vectorize(lane)
                .unroll(nv);
        }
    }

    // P.V per chunk of V's rows.
    RVar ro("ro"), ri("ri");
    if (t.simd_pv) {
        const int bj = power_of_two_block(s.d / vector_lanes(m), 4);
        Var db("db"), dv("dv"), lane("lane"), mb("mb"), mr("mr");
        st.acc.vectorize(st.d, vector_lanes(m));
        st.acc.update(0)
            .split(st.rn.x, ro, ri, t.nc, TailStrategy::GuardWithIf)
            .split(st.d, db, dv, bj * vector_lanes(m))
            .split(dv, dv, lane, vector_lanes(m))
            .split(st.m, mb, mr, bi)
            .reorder(lane, dv, mr, ri, db, mb, st.h, st.b, ro)
            .vectorize(lane)
            .unroll(dv)
            .unroll(mr);
    } else {
        st.acc.update(0)
            .split(st.rn.x, ro, ri, t.nc, TailStrategy::GuardWithIf)
            .reorder(st.d, ri, st.m, st.h, st.b, ro);
    }
    st.v.in().compute_at(st.acc, ro).store_in(sw::LDM);
    // A shorter last chunk makes Halide split the chunk loop in two (GuardWithIf), and two
    // double-buffered loops would declare V's slots twice in the kernel: single buffered then.
    if (several && double_buffer && s.n % t.nc == 0)
        sw::double_buffer(st.v.in());
    if (t.mesh) {
        sw::broadcast(st.k.in(), sw::Sharing::DmaRow);
        sw::broadcast(st.v.in(), sw::Sharing::DmaRow);
    }
}

inline void schedule_attention_sunway(AttentionStages &st, const AttentionShape &s,
                                      const sw::Machine &m) {
    schedule_attention_tiles(st, s, choose_attention_tiles(s, st.masked, m), true, m);
}

/** One query row per block, scalar, the longest chunks that fit, single buffered (the
 * OpenACC-style loop of the file comment). */
inline void schedule_attention_baseline(AttentionStages &st, const AttentionShape &s,
                                        const sw::Machine &m) {
    for (int nc : divisors_desc(s.n)) {
        const AttentionTiles t{1, nc, false, false};
        if (attention_ldm_bytes(s, t, st.masked, false, m) <= attention_budget(m)) {
            schedule_attention_tiles(st, s, t, false, m);
            return;
        }
    }
    throw sw::UserError("attention: no baseline block fits the LDM of a " + std::string(m.name) +
                        " CPE (seq_k=" + std::to_string(s.n) + ")");
}

inline void schedule_attention_cpu(AttentionStages &st) {
    using namespace Halide;
    Var hm("hm"), par("par");
    st.output.compute_root().fuse(st.h, st.m, hm).fuse(hm, st.b, par).parallel(par);
    for (Func f : {st.acc, st.p, st.sum, st.exps, st.maxv, st.dot})
        f.compute_at(st.output, par);
}

} // namespace schedules

#endif
