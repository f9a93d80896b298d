/** \file
 * The plugin libsw_autoschedule.so: loading it registers the Sunway autoscheduler with
 * Halide under the name "Sunway" (Pipeline::add_autoscheduler), as Halide's own
 * autoscheduler plugins do. $SW_AUTOSCHEDULE_PICK=k applies the k-th best plan instead of
 * the best (the tuner uses it to build the runners-up); $SW_AUTOSCHEDULE_PLAN=DESCRIPTION
 * applies the plan an earlier search chose without searching again (Options::plan: the
 * executor's builds of layers it estimated, graph/Executor.h). $SW_AUTOSCHEDULE_SUMMARY=FILE writes
 * what the autoschedule CLI prints of the run to FILE (Summary.h; `autoschedule --generator`).
 */
#include "autoscheduler/Summary.h"
#include "autoscheduler/SunwayAutoscheduler.h"
#include "target_sw/Errors.h"

#include <cstdlib>
#include <fstream>

namespace {

void schedule_for_sunway(const Halide::Pipeline &p, const Halide::Target &target,
                         const Halide::MachineParams &params,
                         Halide::AutoSchedulerResults *results) {
    sw_auto::Options o;
    if (const char *pick = std::getenv("SW_AUTOSCHEDULE_PICK"))
        o.pick = std::atoi(pick);
    if (const char *plan = std::getenv("SW_AUTOSCHEDULE_PLAN"))
        o.plan = plan;
    const sw::Machine &m = sw_auto::machine_for(params);
    std::string name = p.outputs().empty() ? "pipeline" : p.outputs()[0].name();
    const sw_auto::Result r = sw_auto::autoschedule(p, m, o, name);
    if (const char *path = std::getenv("SW_AUTOSCHEDULE_SUMMARY")) {
        std::ofstream f(path);
        sw_auto::write_summary(sw_auto::summarize(r), f);
        f.close();
        if (!f)
            throw sw::UserError(std::string("cannot write the autoscheduler summary ") + path);
    }
    if (results) {
        results->scheduler_name = sw_auto::autoscheduler_name;
        results->target = target;
        results->machine_params_string = params.to_string();
        results->schedule_source = r.schedule_source;
    }
}

struct Register {
    Register() {
        Halide::Pipeline::add_autoscheduler(sw_auto::autoscheduler_name, schedule_for_sunway);
    }
} register_sunway;

} // namespace
