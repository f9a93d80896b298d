/** \file
 * --fc-split: model parallelism for the memory-bound fully connected layers. Every rank (one
 * per core group of a chip, dist/) runs the whole network on the same images, except each
 * dense layer: rank r computes its share of the output rows (sw_dist::share) with a dense
 * layer generated for that many rows (JIT-built, jit/jit_layer.h), streaming only its rows of
 * the weights from its own core group's memory; an allgather then gives every rank the whole
 * output. The allgathers' time comes from the job model (dist/JobModel.h).
 */
#ifndef SW_APPS_FC_SPLIT_H
#define SW_APPS_FC_SPLIT_H

#include "runtime/net/network.h"
#include "dist/Ranks.h"

#include <memory>
#include <string>
#include <vector>

namespace sw_net_app {

class FcSplit {
public:
    /** Builds this rank's share of every dense layer of \p net for \p schedule (sunway,
     * baseline or auto). Throws std::runtime_error naming the layer if a build fails. */
    FcSplit(const sw_net::Network &net, const sw_dist::Job &job, const std::string &schedule);
    ~FcSplit();

    /** The hook for Network::run. */
    const sw_net::Network::DenseHook &hook() const { return hook_; }
    /** Modelled seconds of the allgathers so far (every rank the same). */
    double comm_seconds() const { return comm_seconds_; }
    /** Output rows of dense layer i that this rank computes, and all of them. */
    std::string describe() const;

private:
    struct Layer;
    const sw_net::Network &net_;
    sw_dist::Job job_;
    std::vector<std::unique_ptr<Layer>> layers_;  ///< by network layer index (null: not dense)
    sw_net::Network::DenseHook hook_;
    double comm_seconds_ = 0;
};

}  // namespace sw_net_app

#endif
