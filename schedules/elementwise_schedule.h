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

inline void schedule_relu_sunway(ReluStages &st, int size, const sw::Machine &m) {
    // Two LDM buffers of the chunk; as long as possible while every CPE gets work.
    const int64_t most = ldm_plan_budget(m, 2) / 8;
    int chunk = 16;
    while (chunk * 2 <= most && int64_t(chunk) * 2 * m.cpes_per_core_group <= size)
        chunk *= 2;
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
