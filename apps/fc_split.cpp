/** \file
 * FcSplit: see fc_split.h.
 */
#include "apps/fc_split.h"

#include "dist/JobModel.h"
#include "jit/jit_layer.h"
#include "runtime/locate.h"

#include "HalideBuffer.h"
#include <athread_emu.h>

#include <map>
#include <stdexcept>

namespace sw_net_app {

struct FcSplit::Layer {
    int64_t first = 0, last = 0, out = 0, in = 0;  ///< this rank's rows [first, last) of out
    std::shared_ptr<sw_jit::JitLayer> fn;          ///< null when the share is empty
    sw_net::Tensor weights, bias;                  ///< this rank's rows
};

FcSplit::FcSplit(const sw_net::Network &net, const sw_dist::Job &job, const std::string &schedule)
    : net_(net), job_(job) {
    layers_.resize(net.size());
    sw_jit::JitOptions jo;
    if (schedule == "auto") {
        jo.extra_args = {"-p", sw::find_tool(sw::kAutoschedulePlugin), "-s", "Sunway", "auto_schedule=true"};
    }
    std::string generator;  // found at the first dense share: none without one
    for (size_t i = 0; i < net.size(); i++) {
        const sw_net::LayerEntry &e = net.layer(i);
        if (e.kind != "dense") continue;
        auto l = std::make_unique<Layer>();
        l->out = std::stoll(net.param(i, "out_features"));
        l->in = std::stoll(net.param(i, "in_features"));
        std::tie(l->first, l->last) = sw_dist::share(l->out, job.rank, job.size);
        if (l->last > l->first) {
            std::map<std::string, std::string> params = net.params(i);
            params["out_features"] = std::to_string(l->last - l->first);
            if (schedule != "auto") params["schedule"] = schedule;
            if (generator.empty()) generator = sw::find_tool(sw::kLayersGenerator);
            const sw_jit::JitBuild b = sw_jit::jit_build_layer(generator, "dense", params, jo);
            if (!b.ok()) throw std::runtime_error("--fc-split: building " + e.name + "'s share failed: " + b.log);
            l->fn = b.layer;
            const sw_net::Tensor &w = net.weights(i), &bias = net.bias(i);  // (out, in) rows, contiguous
            l->weights.assign(w.begin() + l->first * l->in, w.begin() + l->last * l->in);
            l->bias.assign(bias.begin() + l->first, bias.begin() + l->last);
        }
        layers_[i] = std::move(l);
    }
    hook_ = [this](size_t i, halide_buffer_t *in, halide_buffer_t *out) -> int {
        const Layer &l = *layers_.at(i);
        const int64_t batch = out->dim[1].extent, rows = l.last - l.first;
        std::vector<float> mine(size_t(batch * rows));
        if (rows > 0) {
            Halide::Runtime::Buffer<float> bw(const_cast<float *>(l.weights.data()), {int(l.in), int(rows)});
            Halide::Runtime::Buffer<float> bb(const_cast<float *>(l.bias.data()), {int(rows)});
            Halide::Runtime::Buffer<float> bo(mine.data(), {int(rows), int(batch)});
            const int rc = l.fn->call({in, bw.raw_buffer(), bb.raw_buffer(), bo.raw_buffer()});
            if (rc != 0) return rc;
        }
        // Every rank's rows, into (batch, out) in rank order.
        const std::vector<std::vector<float>> all = sw_dist::allgather(job_, mine);
        float *y = reinterpret_cast<float *>(out->host);
        for (int r = 0; r < int(all.size()); r++) {
            const auto [f, t] = sw_dist::share(l.out, r, int(all.size()));
            for (int64_t n = 0; n < batch; n++) {
                for (int64_t o = f; o < t; o++) y[n * l.out + o] = all[size_t(r)][size_t(n * (t - f) + (o - f))];
            }
        }
        comm_seconds_ += sw_dist::allgather_seconds(*sw::machine_by_name(athread_emu_machine_name()), job_.size,
                                                    batch * l.out * int64_t(sizeof(float)));
        return 0;
    };
}

FcSplit::~FcSplit() = default;

std::string FcSplit::describe() const {
    std::string s;
    for (size_t i = 0; i < layers_.size(); i++) {
        if (!layers_[i]) continue;
        const Layer &l = *layers_[i];
        s += (s.empty() ? "" : ", ") + net_.layer(i).name + " rows " + std::to_string(l.first) + "-" +
             std::to_string(l.last - 1) + " of " + std::to_string(l.out);
    }
    return s;
}

}  // namespace sw_net_app
