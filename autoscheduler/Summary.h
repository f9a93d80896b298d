/** \file
 * What the autoschedule CLI needs of one autoscheduler run, in a form that also crosses a
 * process boundary: the plugin writes it to the file $SW_AUTOSCHEDULE_SUMMARY names (Plugin.cpp)
 * when the CLI schedules a generator executable of any project (`autoschedule --generator
 * PATH`); for the generators linked into the CLI it is taken from the Result directly.
 *
 * File format, one record a line, numbers in C locale:
 *   considered N / lowered N / passed N
 *   plan <estimate fields> <description>      (the chosen plan, then one `ranked` per plan)
 *   input NAME E0 E1 ...                      (inputs the pipeline reads, with dense extents)
 *   output E0 E1 ...
 *   flops F                                   (the pipeline's flops; absent: 0)
 *   schedule_source                           (last: the rest of the file is the source)
 */
#ifndef SW_AUTO_SUMMARY_H
#define SW_AUTO_SUMMARY_H

#include "autoscheduler/SunwayAutoscheduler.h"

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace sw_auto {

struct PlanSummary {
    std::string plan;  ///< Plan::describe()
    Estimate estimate; ///< the cost model's prediction (ldm_detail not kept)
};

struct Summary {
    PlanSummary chosen;
    std::vector<PlanSummary> ranked; ///< best first; the first `passed` passed the lowering
    int passed = 0;
    int64_t considered = 0;
    int lowered = 0;
    std::vector<std::pair<std::string, std::vector<int64_t>>> inputs; ///< buffer name, extents
    std::vector<int64_t> out_extents;
    double flops = 0; ///< the whole pipeline's, from the analysis's op counts (an FMA is 2)
    std::string schedule_source;
};

Summary summarize(const Result &r);
void write_summary(const Summary &s, std::ostream &out);
/** Throws sw::UserError naming \p what when \p in is not a summary. */
Summary read_summary(std::istream &in, const std::string &what);

} // namespace sw_auto

#endif
