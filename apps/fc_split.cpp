/** \file
 * FcSplit: see fc_split.h.
 */
#include "apps/fc_split.h"

#include "dist/JobModel.h"
#include "jit/jit_layer.h"
#include "runtime/locate.h"

#include "HalideBuffer.h"
#include <athread_emu.h>

#include <stdexcept>
#include <tuple>

namespace sw_net_app {

struct FcSplit::Part {
    int64_t first = 0, last = 0, out = 0, in = 0; ///< this rank's rows [first, last) of out
    bool in_out = false; ///< weights_layout=in_out: the weights (in, out), a row per input
    std::shared_ptr<sw_jit::JitLayer> fn; ///< null when the share is empty
    std::vector<float> weights, bias;     ///< this rank's rows (in_out: their columns)
};

namespace {

/** The data of a step's constant argument: a constant of the graph or one the lowering added. */
const std::vector<float> &constant(const sw_graph::Executor &ex, const std::string &name) {
    auto e = ex.lowered().extra_constants.find(name);
    if (e != ex.lowered().extra_constants.end())
        return e->second;
    const sw_graph::Tensor *t = ex.graph().find(name);
    if (!t || !t->is_constant || t->dtype != sw_graph::DType::Float32) {
        throw std::runtime_error("--fc-split: '" + name +
                                 "' is not a float32 constant (a dense layer's weights "
                                 "must be constants to be split)");
    }
    return t->f32;
}

} // namespace

FcSplit::FcSplit(const sw_graph::Executor &ex, const sw_dist::Job &job, const std::string &schedule,
                 const std::string &cache_dir)
    : job_(job) {
    sw_jit::JitOptions base;
    base.cache_dir = cache_dir;
    base.strict_cpe_check = false;
    sw_jit::JitOptions autos = base;
    if (schedule == "auto") {
        autos.extra_args = {"-p", sw::find_tool(sw::kAutoschedulePlugin), "-s", "Sunway",
                            "auto_schedule=true"};
    }
    std::string generator; // found at the first dense share: none without one
    for (const sw_graph::Step &s : ex.lowered().steps) {
        if (s.layer < 0)
            continue;
        const sw_graph::LayerSpec &spec = ex.lowered().layers[size_t(s.layer)];
        if (spec.generator != "dense" || parts_.count(s.name))
            continue;
        auto p = std::make_unique<Part>();
        p->out = std::stoll(spec.params.at("out_features"));
        p->in = std::stoll(spec.params.at("in_features"));
        std::tie(p->first, p->last) = sw_dist::share(p->out, job.rank, job.size);
        if (p->last > p->first) {
            std::map<std::string, std::string> params = spec.params;
            params["out_features"] = std::to_string(p->last - p->first);
            if (schedule == "baseline")
                params["schedule"] = "baseline";
            if (generator.empty())
                generator = sw::find_tool(sw::kLayersGenerator);
            sw_jit::JitBuild b = sw_jit::jit_build_layer(generator, "dense", params, autos);
            if (schedule == "auto" && b.status == sw_jit::JitBuild::GeneratorFailed) {
                b = sw_jit::jit_build_layer(generator, "dense", params,
                                            base); // the autoscheduler refused
            }
            if (!b.ok())
                throw std::runtime_error("--fc-split: building " + s.name +
                                         "'s share failed: " + b.log);
            p->fn = b.layer;
            // dense's weights are (out, in) rows, contiguous, or (in, out) with
            // weights_layout=in_out (this rank's columns of each row); its bias one value per
            // output.
            const std::vector<float> &w = constant(ex, s.inputs.at(1).tensor);
            const std::vector<float> &bias = constant(ex, s.inputs.at(2).tensor);
            if (int64_t(w.size()) != p->out * p->in || int64_t(bias.size()) != p->out) {
                throw std::runtime_error("--fc-split: " + s.name +
                                         ": weights or bias of the wrong size");
            }
            const auto layout = spec.params.find("weights_layout");
            p->in_out = layout != spec.params.end() && layout->second == "in_out";
            if (p->in_out) {
                for (int64_t k = 0; k < p->in; k++) {
                    p->weights.insert(p->weights.end(), w.begin() + k * p->out + p->first,
                                      w.begin() + k * p->out + p->last);
                }
            } else {
                p->weights.assign(w.begin() + p->first * p->in, w.begin() + p->last * p->in);
            }
            p->bias.assign(bias.begin() + p->first, bias.begin() + p->last);
        }
        order_.push_back(s.name);
        parts_[s.name] = std::move(p);
    }
    hook_ = [this](const sw_graph::Step &s, const sw_graph::LayerSpec &spec,
                   const std::vector<halide_buffer_t *> &bufs, int *status) -> bool {
        if (spec.generator != "dense")
            return false;
        const Part &p = *parts_.at(s.name);
        halide_buffer_t *in = bufs.at(0), *out = bufs.at(3);
        const int64_t batch = out->dim[1].extent, rows = p.last - p.first;
        std::vector<float> mine(size_t(batch * rows));
        if (rows > 0) {
            Halide::Runtime::Buffer<float> bw(const_cast<float *>(p.weights.data()),
                                              p.in_out ? std::vector<int>{int(rows), int(p.in)}
                                                       : std::vector<int>{int(p.in), int(rows)});
            Halide::Runtime::Buffer<float> bb(const_cast<float *>(p.bias.data()), {int(rows)});
            Halide::Runtime::Buffer<float> bo(mine.data(), {int(rows), int(batch)});
            *status = p.fn->call({in, bw.raw_buffer(), bb.raw_buffer(), bo.raw_buffer()});
            if (*status != 0)
                return true;
        }
        // Every rank's rows, into (batch, out) in rank order.
        const std::vector<std::vector<float>> all = sw_dist::allgather(job_, mine);
        float *y = reinterpret_cast<float *>(out->host);
        for (int r = 0; r < int(all.size()); r++) {
            const auto [f, t] = sw_dist::share(p.out, r, int(all.size()));
            for (int64_t n = 0; n < batch; n++) {
                for (int64_t o = f; o < t; o++)
                    y[n * p.out + o] = all[size_t(r)][size_t(n * (t - f) + (o - f))];
            }
        }
        comm_seconds_ +=
            sw_dist::allgather_seconds(*sw::machine_by_name(athread_emu_machine_name()), job_.size,
                                       batch * p.out * int64_t(sizeof(float)));
        *status = 0;
        return true;
    };
}

FcSplit::~FcSplit() = default;

std::string FcSplit::describe() const {
    std::string s;
    for (const std::string &name : order_) {
        const Part &p = *parts_.at(name);
        s += (s.empty() ? "" : ", ") + name + " rows " + std::to_string(p.first) + "-" +
             std::to_string(p.last - 1) + " of " + std::to_string(p.out);
    }
    return s;
}

} // namespace sw_net_app
