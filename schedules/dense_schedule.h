/** \file
 * Schedules for the dense (fully connected) generator.
 *
 * Hand Sunway schedule: each CPE block computes TO outputs for TN images; for each chunk of
 * CI inputs it stages the weights (TO rows of CI floats: one strided DMA) and the input
 * chunk of its images in LDM, and accumulates in LDM, four lanes at a time on floatv4. The layer
 * streams its weights once: it is DMA-bound, so tiles are chosen for long DMA blocks (CI) while
 * keeping every CPE busy. When one block holds every image (TN = batch), the input chunk is the
 * same for every block and is broadcast (sw::broadcast, BroadcastDma.h): CPE 0 fetches it once per
 * round of 64 blocks in BCAST_MODE instead of every CPE reading it for every tile, so the weights
 * are the only stream (at batch 1 the input used to be 25.7 of fc6's 437 MB). Generator parameter
 * sharing=regcomm shares it by register communication instead (sw::Sharing::RegComm: CPE 0's
 * get passed along the 8x8 mesh, no barriers).
 *
 * OpenACC-style baseline:
 *
 *     #pragma acc parallel loop copyin(w[...], in[...], b[...]) copyout(out[...])
 *     for (o = 0; o < OUT; o++) {                 // one output neuron per iteration
 *         float acc[N] = 0;
 *         for (i0 = 0; i0 < IN; i0 += CI) {       // tile(CI): what fits the LDM
 *             copy w[o][i0..i0+CI], in[0..N][i0..i0+CI]
 *             for (n) for (i) acc[n] += w[o][i] * in[n][i];
 *         }
 *         out[:][o] = relu(acc + b[o]);
 *     }
 *
 * Each iteration copies its weight row and the input again: the input is re-read for every
 * output, nothing is vectorised.
 */
#ifndef SCHEDULES_DENSE_SCHEDULE_H
#define SCHEDULES_DENSE_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/BroadcastDma.h"
#include "target_sw/DoubleBuffer.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>

namespace schedules {

struct DenseStages {
    Halide::Func output, acc, input, weights, bias;
    Halide::Var o, n;
    Halide::RDom r;
};

struct DenseShape {
    int batch, in_features, out_features;
};

struct DenseTiles {
    int to, tn, ci;
    bool broadcast = false; ///< the input chunk broadcast to every CPE (needs tn == batch)
    /** How a broadcast input reaches the CPEs: BCAST_MODE DMA, or CPE 0's get passed along the
     * mesh by register communication (sw::Sharing, BroadcastDma.h; SW26010 only). */
    sw::Sharing sharing = sw::Sharing::Dma;
};

/** Explicit choices (generator parameters tile_o, tile_n, tile_i, broadcast, sharing): 0 / -1 =
 * choose. */
struct DenseOverrides {
    int to = 0, tn = 0, ci = 0;
    int broadcast =
        -1; ///< -1: when legal (one image tile), 0: never, 1: always (an error where illegal)
    sw::Sharing sharing = sw::Sharing::Dma; ///< how a broadcast input is shared
};

/** LDM of one tile: weights and input chunks, accumulator, 4 lanes of partial sums, bias.
 * With the input broadcast the weights are double buffered (two chunks), and so is the input
 * (shared one chunk ahead, by DMA or register communication, BroadcastDma.h). */
inline int64_t dense_ldm_bytes(const DenseTiles &t) {
    const int slots = t.broadcast ? 2 : 1;
    return 4 * (slots * int64_t(t.to) * t.ci + slots * int64_t(t.ci) * t.tn +
                5 * int64_t(t.to) * t.tn + t.to);
}

/** Blocks of TO outputs x TN images; per chunk of CI inputs, weights and inputs staged in
 * LDM. With \p simd (CI a multiple of 4), the dot products run on floatv4: the reduction is
 * split into 4 lanes of partial sums (rfactor), accumulated in register blocks of up to 4
 * outputs x 4 images and added up at the end. */
inline void schedule_dense_tiles(DenseStages &st, const DenseTiles &t, bool simd,
                                 const sw::Machine &m) {
    using namespace Halide;
    Var oo("oo"), oi("oi"), no("no"), ni("ni"), tile("tile"), lane("lane");
    st.output.split(st.o, oo, oi, t.to)
        .split(st.n, no, ni, t.tn)
        .reorder(oi, ni, oo, no)
        .fuse(oo, no, tile)
        .gpu_blocks(tile, DeviceAPI::Host);
    st.acc.compute_at(st.output, tile).store_in(sw::LDM);
    st.bias.in().compute_at(st.output, tile).store_in(sw::LDM);
    RVar ro("ro"), ri("ri"), rio("rio"), rii("rii");
    Func staged_at = st.acc;
    if (simd && t.ci % vector_lanes(m) == 0) {
        st.acc.update(0).split(st.r.x, ro, ri, t.ci).split(ri, rio, rii, vector_lanes(m));
        Func partial = st.acc.update(0).rfactor(rii, lane);
        partial.compute_at(st.output, tile)
            .store_in(sw::LDM)
            .reorder_storage(lane, st.o, st.n)
            .vectorize(lane);
        // A register block of bo outputs x bn images (floatv4 partial sums over 4 lanes of
        // the inputs): per input vector, bo weight vectors and bn input vectors are loaded
        // once each (ShareOperands) for bo x bn FMAs, instead of two loads per FMA; the
        // partial sums stay in registers over the chunk (PromoteAccumulators).
        const int bo = power_of_two_block(t.to, 4), bn = power_of_two_block(t.tn, 4);
        Var oio("oio"), oii("oii"), nio("nio"), nii("nii");
        partial.update(0)
            .split(st.o, oio, oii, bo)
            .split(st.n, nio, nii, bn)
            .reorder(lane, oii, nii, rio, oio, nio, ro)
            .vectorize(lane)
            .unroll(oii)
            .unroll(nii);
        staged_at = partial;
    } else {
        st.acc.update(0).split(st.r.x, ro, ri, t.ci).reorder(ri, st.o, st.n, ro);
    }
    st.weights.in().compute_at(staged_at, ro).store_in(sw::LDM);
    st.input.in().compute_at(staged_at, ro).store_in(sw::LDM);
    if (t.broadcast) {
        // Every CPE works in step with the others (the broadcast's barriers, or the register
        // communication): the next weight and input chunks stream in while this one is
        // multiplied.
        sw::broadcast(st.input.in(), t.sharing);
        sw::double_buffer(st.weights.in());
        sw::double_buffer(st.input.in());
    }
    for (int u = 1; u < st.acc.num_update_definitions(); u++)
        st.acc.update(u).unscheduled();
}

/** Largest input chunk (a divisor of in_features) that fits with \p to outputs and \p tn images. */
inline int dense_chunk(const DenseShape &s, const sw::Machine &m, int to, int tn, int multiple = 1,
                       bool broadcast = false) {
    for (int ci : divisors_desc(s.in_features)) {
        if (ci % multiple)
            continue;
        // Broadcast: at least two chunks, so that the next weight chunk can stream in.
        if (broadcast && ci == s.in_features && s.in_features > multiple)
            continue;
        if (dense_ldm_bytes({to, tn, ci, broadcast}) <= ldm_plan_budget(m, 5))
            return ci;
    }
    return 1;
}

inline DenseTiles choose_dense_tiles(const DenseShape &s, const sw::Machine &m) {
    DenseTiles best{1, 1, 1};
    double best_score = -1;
    for (int tn : {s.batch, 16, 8, 4, 2, 1}) {
        tn = std::min(tn, s.batch);
        for (int to : {128, 64, 32, 16, 8, 4, 2, 1}) {
            to = std::min(to, s.out_features);
            const int64_t image_tiles = ceil_div(s.batch, tn);
            const int64_t tiles = int64_t(ceil_div(s.out_features, to)) * image_tiles;
            const int64_t rounds = ceil_div(tiles, int64_t(m.cpes_per_core_group));
            // One image tile: the input chunk is broadcast, once per round of 64 blocks.
            // (Output tiles must divide out_features: Halide would split off the edge tile in
            // a branch on the block, and the CPEs would not all meet the broadcast's barriers.)
            const bool broadcast = image_tiles == 1 && s.out_features % to == 0;
            const int ci =
                dense_chunk(s, m, to, tn,
                            s.in_features % vector_lanes(m) == 0 ? vector_lanes(m) : 1, broadcast);
            if (dense_ldm_bytes({to, tn, ci, broadcast}) > ldm_plan_budget(m, 5))
                continue;
            // Bytes moved per weight byte: the weights come again for every image tile, the
            // input chunk for every output tile (broadcast: for every round).
            const double traffic = double(image_tiles) + double(tn) *
                                                             double(broadcast ? rounds : tiles) /
                                                             double(s.out_features);
            const double score = cpe_occupancy(tiles, m) * dma_gbps(m, 4.0 * ci) / traffic;
            if (score > best_score) {
                best_score = score;
                best = {to, tn, ci, broadcast};
            }
        }
    }
    return best;
}

inline void schedule_dense_sunway(DenseStages &st, const DenseShape &s, const sw::Machine &m,
                                  const DenseOverrides &o = {}) {
    DenseTiles t = choose_dense_tiles(s, m);
    t.sharing = o.sharing;
    if (o.to > 0 || o.tn > 0 || o.ci > 0 || o.broadcast >= 0) {
        t.to = o.to > 0 ? std::min(o.to, s.out_features) : t.to;
        t.tn = o.tn > 0 ? std::min(o.tn, s.batch) : t.tn;
        t.broadcast =
            o.broadcast < 0 ? t.tn == s.batch && s.out_features % t.to == 0 : o.broadcast == 1;
        t.ci = o.ci > 0 ? std::min(o.ci, s.in_features)
                        : dense_chunk(s, m, t.to, t.tn,
                                      s.in_features % vector_lanes(m) == 0 ? vector_lanes(m) : 1,
                                      t.broadcast);
    }
    schedule_dense_tiles(st, t, true, m);
}

inline void schedule_dense_baseline(DenseStages &st, const DenseShape &s, const sw::Machine &m) {
    schedule_dense_tiles(st, {1, s.batch, dense_chunk(s, m, 1, s.batch)}, false, m);
}

inline void schedule_dense_cpu(DenseStages &st) {
    using namespace Halide;
    Var oo("oo"), oi("oi");
    st.output.compute_root().split(st.o, oo, oi, 64, TailStrategy::GuardWithIf).parallel(oo);
    st.acc.compute_at(st.output, oo);
}

} // namespace schedules

#endif
