/** \file
 * A built-in network (graph/Networks.h) run once on the emulated core group through graph/'s
 * executor, as sw_net --net runs it: the seeded deterministic weights of runtime/io/weights.h,
 * a seeded random input, every distinct layer built through the layer cache (the default
 * directory, graph/Executor.h). For the benchmarks that need only each layer's record.
 */
#ifndef SW_BENCH_NETWORK_RUNS_H
#define SW_BENCH_NETWORK_RUNS_H

#include "graph/Executor.h"
#include "graph/Networks.h"
#include "runtime/io/weights.h"
#include "runtime/net/records.h"

#include <random>
#include <string>
#include <vector>

namespace sw_bench {

/** One layer step of a run: its generator (conv2d, dense, ...) and what the emulator recorded. */
struct LayerRun {
    std::string generator;
    sw_net::LayerRecord record;
};

/** Network \p name at batch \p batch with schedule auto, hand or baseline: one record per layer
 * step, in graph order (views have none). Throws on a failed build or run. */
inline std::vector<LayerRun> run_network(const std::string &name, int batch, const std::string &schedule) {
    sw_graph::NetworkConfig c;
    c.name = name;
    c.batch = batch;
    const sw_graph::Graph g =
        sw_graph::network_graph(c, [](const std::string &layer, const std::string &what, const std::vector<int64_t> &s) {
            return what == "weight" ? sw_io::deterministic_weights(layer, s) : sw_io::deterministic_bias(layer, s[0]);
        });
    sw_graph::ExecOptions o;
    o.schedule = schedule;
    o.cache_dir = sw_graph::default_cache_dir();
    sw_graph::Executor ex(g, o);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-2.f, 2.f);
    std::vector<float> x(size_t(g.tensor(g.inputs.at(0)).elements()));
    for (float &v : x) v = dist(rng);
    const sw_graph::ExecResult r = ex.run({{g.inputs.at(0), x}});
    std::vector<LayerRun> runs;
    for (const sw_graph::StepResult &s : r.steps) {
        if (s.layer >= 0) runs.push_back({s.generator, s.record});
    }
    return runs;
}

/** The records of \p runs. */
inline std::vector<sw_net::LayerRecord> records_of(const std::vector<LayerRun> &runs) {
    std::vector<sw_net::LayerRecord> r;
    for (const LayerRun &l : runs) r.push_back(l.record);
    return r;
}

}  // namespace sw_bench

#endif
