/** \file
 * Executor: see Executor.h.
 */
#include "graph/Executor.h"

#include "tests/support/jit_layer.h"

#include "HalideBuffer.h"
#include <athread_emu.h>

#include <memory>

#ifndef SW_GRAPH_LAYERS_GENERATOR
#define SW_GRAPH_LAYERS_GENERATOR "layers.generator"
#endif

namespace sw_graph {

struct Executor::Impl {
    std::vector<std::shared_ptr<sw_test::JitLayer>> layers;
};

Executor::Executor(const Graph &g, const ExecOptions &options) : graph_(g) {
    lowered_ = lower_graph(graph_);
    impl_ = new Impl;
    sw_test::JitOptions jo;
    jo.strict_cpe_check = options.strict_cpe_check;
    const std::string gen = options.generator.empty() ? SW_GRAPH_LAYERS_GENERATOR : options.generator;
    for (const LayerSpec &spec : lowered_.layers) {
        sw_test::JitBuild b = sw_test::jit_build_layer(gen, spec.generator, spec.params, jo);
        if (!b.ok()) {
            delete impl_;
            impl_ = nullptr;
            throw graph_.error("building layer " + spec.key() + " failed: " + b.log);
        }
        impl_->layers.push_back(b.layer);
    }
}

Executor::~Executor() { delete impl_; }

ExecResult Executor::run(const std::map<std::string, std::vector<float>> &inputs) {
    using Storage = std::shared_ptr<std::vector<float>>;
    std::map<std::string, Storage> store;
    for (const std::string &name : graph_.inputs) {
        const Tensor &t = graph_.tensor(name);
        auto it = inputs.find(name);
        if (it == inputs.end()) throw graph_.error("no data for graph input '" + name + "'");
        if ((int64_t)it->second.size() != t.elements()) {
            throw graph_.error("graph input '" + name + "' has shape " + shape_string(t.shape) + " (" +
                               std::to_string(t.elements()) + " values), got " +
                               std::to_string(it->second.size()) + " values");
        }
        store[name] = std::make_shared<std::vector<float>>(it->second);
    }
    auto get = [&](const std::string &name) -> Storage {
        auto it = store.find(name);
        if (it != store.end()) return it->second;
        auto e = lowered_.extra_constants.find(name);
        if (e != lowered_.extra_constants.end()) {
            return store[name] = std::make_shared<std::vector<float>>(e->second);
        }
        const Tensor *t = graph_.find(name);
        if (t && t->is_constant && t->dtype == DType::Float32) {
            return store[name] = std::make_shared<std::vector<float>>(t->f32);
        }
        throw graph_.error("tensor '" + name + "' has no data when it is read (not produced yet?)");
    };
    auto elements = [](const std::vector<int> &ext) {
        int64_t n = 1;
        for (int e : ext) n *= e;
        return n;
    };

    ExecResult r;
    r.distinct_layers = (int)lowered_.layers.size();
    for (const Step &s : lowered_.steps) {
        StepResult sr;
        sr.node = s.node;
        sr.op_type = s.op_type;
        sr.layer = s.layer;
        if (s.layer < 0) {
            store[s.output.tensor] = get(s.inputs.at(0).tensor);
            r.steps.push_back(sr);
            continue;
        }
        sr.generator = lowered_.layers[s.layer].generator;
        std::vector<Halide::Runtime::Buffer<float>> bufs;
        for (const LayerArg &a : s.inputs) {
            Storage d = get(a.tensor);
            if ((int64_t)d->size() != elements(a.extents)) {
                throw graph_.error(s.node + ": tensor '" + a.tensor + "' has " + std::to_string(d->size()) +
                                   " values, its layer expects " + std::to_string(elements(a.extents)));
            }
            bufs.emplace_back(d->data(), a.extents);
        }
        Storage out = std::make_shared<std::vector<float>>(size_t(elements(s.output.extents)), 0.f);
        const Tensor *ot = graph_.find(s.output.tensor);
        if (ot && ot->has_shape && ot->elements() != (int64_t)out->size()) {
            throw graph_.error(s.node + ": output '" + s.output.tensor + "' has " + std::to_string(ot->elements()) +
                               " values, the layer writes " + std::to_string(out->size()));
        }
        bufs.emplace_back(out->data(), s.output.extents);
        std::vector<halide_buffer_t *> raw;
        for (auto &b : bufs) raw.push_back(b.raw_buffer());
        athread_emu_stats_reset();
        const int rc = impl_->layers[s.layer]->call(raw);
        if (rc != 0) {
            throw graph_.error(s.node + ": layer " + lowered_.layers[s.layer].key() + " failed with status " +
                               std::to_string(rc));
        }
        for (int k = 0; k < athread_emu_stats_count(); k++) {
            sr.modelled_seconds += athread_emu_stats_get(k)->modelled_seconds;
            sr.kernels++;
        }
        athread_emu_stats_reset();
        r.modelled_seconds += sr.modelled_seconds;
        store[s.output.tensor] = out;
        r.steps.push_back(sr);
    }
    for (const std::string &name : graph_.outputs) {
        Tensor t = graph_.tensor(name);
        t.f32 = *get(name);
        t.is_constant = false;
        r.outputs[name] = std::move(t);
    }
    return r;
}

} // namespace sw_graph
