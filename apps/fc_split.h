/** \file
 * --fc-split: model parallelism for the memory-bound fully connected layers. Every rank (one
 * per core group of a chip, dist/) runs the whole graph on the same images, except each
 * dense layer: rank r computes its share of the output rows (sw_dist::share) with a dense
 * layer generated for that many rows (JIT-built, jit/jit_layer.h, through the layer cache),
 * streaming only its rows of the weights from its own core group's memory; an allgather then
 * gives every rank the whole output. It runs as the executor's layer hook
 * (graph/Executor.h), for a built-in network (--net) and an ONNX model (--model) alike. The
 * allgathers' time comes from the job model (dist/JobModel.h).
 */
#ifndef SW_APPS_FC_SPLIT_H
#define SW_APPS_FC_SPLIT_H

#include "dist/Ranks.h"
#include "graph/Executor.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sw_net_app {

class FcSplit {
public:
    /** Builds this rank's share of every dense step of \p ex for \p schedule (auto, hand or
     * baseline; a share the autoscheduler refuses gets its hand schedule), through the layer
     * cache \p cache_dir ("" for none). Throws std::runtime_error naming the step if a build
     * fails. */
    FcSplit(const sw_graph::Executor &ex, const sw_dist::Job &job, const std::string &schedule,
            const std::string &cache_dir);
    ~FcSplit();

    /** The hook for Executor::set_layer_hook: runs the dense steps. */
    const sw_graph::LayerHook &hook() const { return hook_; }
    /** Modelled seconds of the allgathers so far (every rank the same). */
    double comm_seconds() const { return comm_seconds_; }
    /** The output rows of each dense step that this rank computes, and all of them. */
    std::string describe() const;

private:
    struct Part;
    sw_dist::Job job_;
    std::map<std::string, std::unique_ptr<Part>> parts_; ///< by step name
    std::vector<std::string> order_;                     ///< step names in graph order
    sw_graph::LayerHook hook_;
    double comm_seconds_ = 0;
};

} // namespace sw_net_app

#endif
