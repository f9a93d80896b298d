/** \file
 * A built-in network (graph/Networks.h) run once on the emulated core group through graph/'s
 * executor, as sw_net --net runs it: the seeded deterministic weights of runtime/io/weights.h,
 * a seeded random input, every distinct layer built through the layer cache (the default
 * directory, graph/Executor.h). For the benchmarks that need only each layer's record.
 */
#ifndef SW_BENCH_NETWORK_RUNS_H
#define SW_BENCH_NETWORK_RUNS_H

#include "graph/Executor.h"
#include "graph/Lowering.h"
#include "graph/Networks.h"
#include "runtime/io/weights.h"
#include "runtime/net/records.h"

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace sw_bench {

/** One layer step of a run: its generator (conv2d, dense, ...) and what the emulator recorded. */
struct LayerRun {
    std::string generator;
    std::map<std::string, std::string> params; ///< the layer's generator parameters
    int64_t input_elements = 0;                ///< of its first input
    sw_net::LayerRecord record;
};

/** Network \p name at batch \p batch with schedule auto, hand or baseline: one record per layer
 * step, in graph order (views have none); the network's output in *output if given. Throws on
 * a failed build or run. */
inline std::vector<LayerRun> run_network(const std::string &name, int batch,
                                         const std::string &schedule,
                                         std::vector<float> *output = nullptr,
                                         const std::string &machine = "sw26010") {
    sw_graph::NetworkConfig c;
    c.name = name;
    c.batch = batch;
    const sw_graph::Graph g = sw_graph::network_graph(
        c, [](const std::string &layer, const std::string &what, const std::vector<int64_t> &s) {
            return what == "weight" ? sw_io::deterministic_weights(layer, s)
                                    : sw_io::deterministic_bias(layer, s[0]);
        });
    sw_graph::ExecOptions o;
    o.schedule = schedule;
    o.machine = machine;
    o.cache_dir = sw_graph::default_cache_dir();
    sw_graph::Executor ex(g, o);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-2.f, 2.f);
    std::vector<float> x(size_t(g.tensor(g.inputs.at(0)).elements()));
    for (float &v : x)
        v = dist(rng);
    const sw_graph::ExecResult r = ex.run({{g.inputs.at(0), x}});
    std::vector<LayerRun> runs;
    for (size_t i = 0; i < r.steps.size(); i++) {
        const sw_graph::StepResult &s = r.steps[i];
        if (s.layer < 0)
            continue;
        const sw_graph::Step &step = ex.lowered().steps[i];
        int64_t in = 1;
        for (int e : step.inputs.at(0).extents)
            in *= e;
        runs.push_back({s.generator, ex.lowered().layers[size_t(s.layer)].params, in, s.record});
    }
    if (output)
        *output = r.outputs.at(g.outputs.at(0)).f32;
    return runs;
}

/** The layer steps of network \p name at batch 1 (lowered, nothing built): step name and layer. */
inline std::vector<std::pair<std::string, sw_graph::LayerSpec>>
network_layers(const std::string &name) {
    sw_graph::NetworkConfig c;
    c.name = name;
    const sw_graph::Graph g = sw_graph::network_graph(c, nullptr); // shapes only
    const sw_graph::LoweredGraph lg = sw_graph::lower_graph(g);
    std::vector<std::pair<std::string, sw_graph::LayerSpec>> layers;
    for (const sw_graph::Step &s : lg.steps) {
        if (s.layer >= 0)
            layers.push_back({s.name, lg.layers[size_t(s.layer)]});
    }
    return layers;
}

/** The records of \p runs. */
inline std::vector<sw_net::LayerRecord> records_of(const std::vector<LayerRun> &runs) {
    std::vector<sw_net::LayerRecord> r;
    for (const LayerRun &l : runs)
        r.push_back(l.record);
    return r;
}

} // namespace sw_bench

#endif
