/** \file
 * Schedules for the layer_norm generator (ONNX LayerNormalization over the last axis):
 * for each row, mean = sum(x) / size, var = sum((x - mean)^2) / size,
 * y = (x - mean) / sqrt(var + epsilon) * scale + bias.
 *
 * Hand Sunway schedule: blocks of R whole rows over the CPEs (R rows are one contiguous
 * block of the input); each block stages its rows (one get), the scale and the bias in LDM
 * (those two the same for every block: broadcast, sw::broadcast, once per round of 64 blocks,
 * when R divides the rows),
 * computes the two reductions (the mean, then the variance about it: two passes over the
 * staged rows, no main-memory access) and the normalised rows there, and puts the rows
 * back by one DMA. When the size is a multiple of 4 all three run on floatv4: each reduction
 * as floatv4 partial sums (rfactor; with a multiple of 16, four independent accumulators so
 * that the adds do not wait on each other's latency), the lanes then added up; the
 * normalisation along the row with the mean and reciprocal deviation splatted. R (at most 8) keeps
 * the most CPEs busy, then the longest transfers, within the LDM budget. A row must fit: 16 bytes
 * per element (input and result rows, scale and bias); the generator refuses larger rows with an
 * error naming the size and the machine. When R does not divide the rows, the last block is shifted
 * inwards (recomputes rows of the block before it, which is harmless: every row is computed from
 * the input alone).
 *
 * OpenACC-style baseline: one row per iteration, scalar, the row, scale and bias copied in
 * and the result out (what `#pragma acc parallel loop copyin(...) copyout(...)` over the
 * rows does; a row-wise reduction leaves nothing else to tile, as for softmax).
 */
#ifndef SCHEDULES_LAYER_NORM_SCHEDULE_H
#define SCHEDULES_LAYER_NORM_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/BroadcastDma.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>

namespace schedules {

struct LayerNormStages {
    Halide::Func output, norm, mean, var, rstd, input, scale, bias;
    Halide::Var x, w;
    Halide::RDom r; ///< along the row (both reductions)
};

/** Bytes of LDM for \p rows rows of \p size: input and result rows, scale, bias, and the
 * mean, variance and reciprocal deviation of each row. */
inline int64_t layer_norm_ldm_bytes(int size, int rows) {
    return 4 * (2 * int64_t(rows) * size + 2 * int64_t(size) + 3 * int64_t(rows));
}

/** The LDM a layer_norm plan may use (7 buffers' alignment slack). */
inline int64_t layer_norm_budget(const sw::Machine &m) {
    return ldm_plan_budget(m, 7);
}

/** Rows per block: the most CPEs busy, then the most rows (at most 8) that fit. */
inline int choose_layer_norm_rows(int rows, int size, const sw::Machine &m) {
    int best = 1;
    double best_score = -1;
    for (int r : {1, 2, 4, 8}) {
        if (r > rows || layer_norm_ldm_bytes(size, r) > layer_norm_budget(m))
            break;
        const double score = cpe_occupancy(ceil_div(rows, r), m);
        if (score >= best_score - 1e-9) {
            best_score = score;
            best = r;
        }
    }
    return best;
}

/** Blocks of \p rows rows; \p simd (size a multiple of 4): the two reductions and the
 * normalisation on floatv4. */
inline void schedule_layer_norm_rows(LayerNormStages &st, int rows, int size, bool simd,
                                     const sw::Machine &m) {
    using namespace Halide;
    Var wo("wo"), wi("wi");
    st.output.split(st.w, wo, wi, rows).reorder(st.x, wi, wo).gpu_blocks(wo, DeviceAPI::Host);
    for (Func f : {st.mean, st.var, st.rstd, st.norm}) {
        f.compute_at(st.output, wo).store_in(sw::LDM);
        for (int u = 0; u < f.num_update_definitions(); u++)
            f.update(u).unscheduled();
    }
    if (simd) {
        // Each reduction as floatv4 partial sums (rfactor): with a multiple of 16, four
        // independent vector accumulators (unrolled, kept in registers), so the adds do not
        // wait on each other's latency; then the lanes added up.
        const int chains = size % (4 * vector_lanes(m)) == 0 ? 4 : 1;
        for (Func f : {st.mean, st.var})
            schedule_vector_partials(f, st.r.x, chains, st.output, wo, {st.w}, m);
        st.norm.vectorize(st.x, vector_lanes(m));
    }
    st.input.in().compute_at(st.output, wo).store_in(sw::LDM);
    st.scale.in().compute_at(st.output, wo).store_in(sw::LDM);
    st.bias.in().compute_at(st.output, wo).store_in(sw::LDM);
}

inline void schedule_layer_norm_sunway(LayerNormStages &st, int rows, int size,
                                       const sw::Machine &m) {
    const int r = choose_layer_norm_rows(rows, size, m);
    schedule_layer_norm_rows(st, r, size, size % vector_lanes(m) == 0, m);
    // The scale and the bias are the same for every block: fetched once per round of 64
    // blocks for the whole core group (BCAST_MODE) instead of by every CPE for every block.
    // Not when r does not divide the rows: Halide then splits off the last block in a branch
    // that only some CPEs take, and a broadcast's barriers must be reached by all (ViT-B/16's
    // 197 rows in blocks of 4: each block fetches its own).
    if (rows % r == 0) {
        sw::broadcast(st.scale.in());
        sw::broadcast(st.bias.in());
    }
}

inline void schedule_layer_norm_baseline(LayerNormStages &st, const sw::Machine &m) {
    schedule_layer_norm_rows(st, 1, 0, false, m);
}

inline void schedule_layer_norm_cpu(LayerNormStages &st) {
    using namespace Halide;
    st.output.compute_root().parallel(st.w).vectorize(st.x, 8, TailStrategy::GuardWithIf);
    for (Func f : {st.mean, st.var, st.rstd})
        f.compute_at(st.output, st.w);
}

} // namespace schedules

#endif
