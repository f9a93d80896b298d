/** \file
 * Schedules for the row-wise and element-wise generators (softmax, relu).
 *
 * softmax, hand and baseline alike: one row (an image's class scores) per CPE block; the
 * row is staged in LDM by one DMA, its max, exponentials and sum computed there, and the
 * result written back by one DMA. This is also what an OpenACC programmer writes
 * (`#pragma acc parallel loop` over rows with the row copied in and out): a row-wise
 * reduction leaves nothing else to tile.
 *
 * relu: chunks of consecutive elements per CPE block, staged in and written back by DMA.
 * The hand schedule takes the largest chunks that keep every CPE busy; the baseline stands
 * for `#pragma acc parallel loop tile(256)` over the elements: 256 per iteration.
 */
#ifndef SCHEDULES_ELEMENTWISE_SCHEDULE_H
#define SCHEDULES_ELEMENTWISE_SCHEDULE_H

#include "Halide.h"
#include "schedules/ScheduleSupport.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>

namespace schedules {

struct SoftmaxStages {
    Halide::Func output, result, exps, maxv, sum, input;
    Halide::Var c, n;
};

inline void schedule_softmax_sunway(SoftmaxStages &st) {
    using namespace Halide;
    st.output.gpu_blocks(st.n, DeviceAPI::Host);
    for (Func f : {st.result, st.exps, st.maxv, st.sum}) {
        f.compute_at(st.output, st.n).store_in(sw::LDM);
        for (int u = 0; u < f.num_update_definitions(); u++)
            f.update(u).unscheduled();
    }
    st.input.in().compute_at(st.output, st.n).store_in(sw::LDM);
}

inline void schedule_softmax_cpu(SoftmaxStages &st) {
    st.output.compute_root().parallel(st.n);
    for (Halide::Func f : {st.result, st.exps, st.maxv, st.sum})
        f.compute_at(st.output, st.n);
}

/** Bytes of LDM the softmax schedule needs per row. */
inline int64_t softmax_ldm_bytes(int classes) {
    return 4 * (3 * int64_t(classes) + 2);
}

struct ReluStages {
    Halide::Func output, result, input;
    Halide::Var i;
};

inline void schedule_relu_chunks(ReluStages &st, int size, int chunk) {
    using namespace Halide;
    Var io("io"), ii("ii");
    st.output.split(st.i, io, ii, std::min(chunk, size)).gpu_blocks(io, DeviceAPI::Host);
    st.result.compute_at(st.output, io).store_in(sw::LDM);
    st.input.in().compute_at(st.output, io).store_in(sw::LDM);
}

/** \p compute_bound: an activation whose arithmetic outweighs its DMA (GELU, erf, tanh: an
 * exp or tanh and a division per element), for which the chunks are balanced over the CPEs:
 * the power-of-two chunk with the fewest elements on the busiest CPE (waves x chunk, plus 64
 * elements' worth per chunk for its DMA), the larger on a tie. Otherwise the chunks are as
 * long as possible while every CPE gets work. */
inline void schedule_relu_sunway(ReluStages &st, int size, const sw::Machine &m,
                                 bool compute_bound = false) {
    // Two LDM buffers of the chunk.
    const int64_t most = ldm_plan_budget(m, 2) / 8;
    int chunk = 16;
    if (compute_bound) {
        int64_t best = -1;
        for (int c = 16; c <= most; c *= 2) {
            const int64_t waves =
                (ceil_div(size, c) + m.cpes_per_core_group - 1) / m.cpes_per_core_group;
            const int64_t cost = waves * (int64_t(std::min(c, size)) + 64);
            if (best < 0 || cost <= best) {
                best = cost;
                chunk = c;
            }
            if (c >= size)
                break;
        }
    } else {
        while (chunk * 2 <= most && int64_t(chunk) * 2 * m.cpes_per_core_group <= size)
            chunk *= 2;
    }
    schedule_relu_chunks(st, size, chunk);
}

inline void schedule_relu_baseline(ReluStages &st, int size) {
    schedule_relu_chunks(st, size, 256);
}

inline void schedule_relu_cpu(ReluStages &st) {
    st.output.compute_root().vectorize(st.i, 8, Halide::TailStrategy::GuardWithIf);
}

} // namespace schedules

#endif
