/** \file
 * Applies a plan (Plan.h) to the Funcs of a pipeline and writes the same directives as C++
 * source that can be pasted into schedules/: one place decides both, so the printed schedule
 * is the applied one.
 */
#ifndef SW_AUTO_APPLY_PLAN_H
#define SW_AUTO_APPLY_PLAN_H

#include "autoscheduler/Analysis.h"
#include "autoscheduler/Plan.h"
#include "target_sw/Directives.h"

#include <array>
#include <map>
#include <string>
#include <vector>

namespace sw_auto {

/** A plan applied to a pipeline: what the lowering and a generator's .schedule.h need. */
struct AppliedPlan {
    /** The schedule as C++ statements on `pipeline` (a ::Halide::Pipeline): the body Halide
     * puts in a generator's .schedule.h (AutoSchedulerResults::schedule_source), with Func,
     * Var, RVar and TailStrategy in scope. */
    std::string source;
    /** The Sunway directives it marked (also marked on the Funcs), for lower_to_sunway. */
    sw::Directives directives;
};

/** Schedules the Functions of \p env (the pipeline analysed as \p info, or a deep copy of
 * it) by \p plan, and returns that schedule as source and its Sunway directives. */
AppliedPlan apply_plan(const PipelineInfo &info, const Plan &plan,
                       const std::map<std::string, Halide::Internal::Function> &env);

/** Schedules a copy pipeline (CopyUpdates.h): update k of the output (copy dimension 2 of
 * x, y, c, n) in tiles of tiles[k] = {x, y, channels} of one image, spread over the CPEs
 * (edge tiles guarded: an update cannot shift them inwards), its input's tile staged in LDM
 * and put into the output's slice by DMA; the same directives as source, as apply_plan. */
std::string apply_copy_plan(const PipelineInfo &info, const std::vector<std::string> &inputs,
                            const std::vector<std::array<int, 3>> &tiles,
                            const std::map<std::string, Halide::Internal::Function> &env);

/** \p body (from apply_plan) as a function
 *   inline void apply_schedule_<name>(::Halide::Pipeline pipeline, ::Halide::Target target). */
std::string schedule_function(const std::string &body, const std::string &name);

} // namespace sw_auto

#endif
