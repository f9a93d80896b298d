/** \file
 * The autoscheduler's plans for copy pipelines: an output with no pure values (undef) and
 * one update per input, each copying its input whole into a slice of the output along one
 * dimension, `out(x, y, offset_k + r, n) = in_k(x, y, r, n)` (the concat generator). Such a
 * pipeline has no main stage for the family of Analysis.h: each update is a kernel of its
 * own whose only work is DMA.
 *
 * Each update is planned as the copy it is: its cost is that of the point-wise copy
 * `out_k(x, y, c, n) = in_k(x, y, c, n)` over its slice, a real pipeline of that shape
 * analysed, enumerated and costed by the same Analysis, search and CostModel as every other
 * pipeline (tiles over the pixels and channels of one image; the plan a copy's put needs
 * to be whole tiles of DMA); the best tile of each update is applied by apply_copy_plan
 * (ApplyPlan.h: tiles spread over the CPEs, the input tile staged in LDM and put into its
 * slice by DMA, as the concat generator's hand schedule does with tiles of its own choice).
 */
#ifndef SW_AUTO_COPY_UPDATES_H
#define SW_AUTO_COPY_UPDATES_H

#include "Halide.h"
#include "autoscheduler/Analysis.h"
#include "autoscheduler/SunwayAutoscheduler.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sw_auto {

/** One update of a copy pipeline. */
struct CopyUpdate {
    std::string input;            ///< the Func it reads (an input buffer's)
    int64_t offset = 0;           ///< of its slice along the copy dimension
    std::vector<int64_t> extents; ///< of the input (the slice)
};

/** The updates of \p p if it is a copy pipeline along dimension 2 of a 4-D output (x, y, c,
 * n); empty otherwise. \p out_extents are the output's constant extents. */
std::vector<CopyUpdate> copy_updates(const Halide::Pipeline &p,
                                     const std::vector<int64_t> &out_extents);

/** Schedules the copy pipeline \p p (copy_updates not empty): per update the tile of the
 * best plan of its copy by the cost model. The estimate is the sum of the updates'. */
Result autoschedule_copies(const Halide::Pipeline &p, const PipelineInfo &info,
                           const std::vector<CopyUpdate> &updates, const sw::Machine &m,
                           const std::string &function_name);

} // namespace sw_auto

#endif
