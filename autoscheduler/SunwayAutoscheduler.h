/** \file
 * The Sunway autoscheduler, the orchestrator: analyse the pipeline (Analysis.h), enumerate
 * plans (enumerate_plans), rank them by the cost model (CostModel.h), lower the best ones for
 * real until one passes the Sunway lowering (its LDM check included), apply it (ApplyPlan.h).
 * A copy pipeline (a concat: one update per input, no main stage) is planned update by update
 * (CopyUpdates.h).
 *
 * It is registered with Halide as the autoscheduler "Sunway" by the plugin
 * libsw_autoschedule.so (Plugin.cpp), so that generators run with
 *   -p libsw_autoschedule.so -s Sunway auto_schedule=true
 * are scheduled by it; the machine comes from Halide's MachineParams (parallelism = CPEs,
 * last_level_cache_size = LDM bytes, see sunway_machine_params in GeneratorSupport.h).
 */
#ifndef SW_AUTO_SUNWAY_AUTOSCHEDULER_H
#define SW_AUTO_SUNWAY_AUTOSCHEDULER_H

#include "Halide.h"
#include "autoscheduler/Analysis.h"
#include "autoscheduler/CostModel.h"
#include "autoscheduler/Plan.h"
#include "target_sw/Machine.h"

#include <functional>
#include <string>
#include <vector>

namespace sw_auto {

constexpr const char *autoscheduler_name = "Sunway";

struct Candidate {
    Plan plan;
    Estimate estimate;
};

struct Options {
    /** Which of the ranked candidates that lower to apply: 0 is the best by the model (the
     * tuner builds the others). The plugin reads it from $SW_AUTOSCHEDULE_PICK. The first
     * pick + 1 candidates of Result::ranked are the best that pass the lowering, in order. */
    int pick = 0;
    /** How many of the best candidates to keep in Result::ranked. */
    int keep = 8;
    /** The plan an earlier search of the same pipeline chose (Plan::describe(), e.g. from
     * the head of a schedule it wrote): with pick 0, only that plan is costed and checked by
     * the lowering (the same choice without the search); if the pipeline has no such plan,
     * or it does not fit or fails the lowering, the whole search runs as without it. The
     * plugin reads it from $SW_AUTOSCHEDULE_PLAN. */
    std::string plan;
};

struct Result {
    std::string schedule_source; ///< C++ of the applied schedule, with the prediction as a comment
    Candidate chosen;
    /** The best by the model, best first: the first `passed` were lowered and passed the
     * Sunway lowering, the rest (up to Options::keep) were not checked. */
    std::vector<Candidate> ranked;
    int passed = 0;
    int64_t considered = 0; ///< plans costed
    int lowered = 0;        ///< plans lowered to check them
    double seconds = 0;     ///< time taken
    PipelineInfo info;      ///< what the analysis saw
};

/** Schedules \p p for machine \p m (applies the schedule to its Funcs). Throws
 * sw::UserError when no plan fits the LDM, naming the smallest plan's buffers. */
Result autoschedule(const Halide::Pipeline &p, const sw::Machine &m, const Options &o = Options(),
                    const std::string &function_name = "pipeline");

/** The Sunway machine that Halide MachineParams describe (parallelism = CPEs per core group,
 * last_level_cache_size = LDM bytes); throws sw::UserError if none does. */
const sw::Machine &machine_for(const Halide::MachineParams &params);

/** The plans of the search space for \p info, in a fixed order. */
std::vector<Plan> enumerate_plans(const PipelineInfo &info, const sw::Machine &m);

} // namespace sw_auto

#endif
