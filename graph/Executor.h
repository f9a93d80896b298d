/** \file
 * Executor: runs a lowered graph (Lowering.h) on the emulated SW26010 core group. Each
 * distinct layer is generated, compiled and loaded once at run time (tests/support/jit_layer.h:
 * layers.generator, cc on the generated C, dlopen); the steps run in topological order on
 * float32 buffers (constants as weights / bias inputs, views share their input's buffer).
 * Each layer's modelled time is the sum of the emulator's kernel records
 * (athread_emu_kernel_stats::modelled_seconds) of its call, as apps/net reports it.
 *
 * The executable must link the emulator as a whole archive and export its symbols (the
 * loaded layers take athread_* from it):
 *   target_link_libraries(x PRIVATE sw_graph_exec "$<LINK_LIBRARY:WHOLE_ARCHIVE,athread_emu>")
 *   set_target_properties(x PROPERTIES ENABLE_EXPORTS ON)
 */
#ifndef SW_GRAPH_EXECUTOR_H
#define SW_GRAPH_EXECUTOR_H

#include "graph/Graph.h"
#include "graph/Lowering.h"

#include <map>
#include <string>
#include <vector>

namespace sw_graph {

struct ExecOptions {
    /** layers.generator; empty: the path CMake compiled in (SW_GRAPH_LAYERS_GENERATOR). */
    std::string generator;
    /** Check each CPE source as strict C99 (slower builds). */
    bool strict_cpe_check = false;
};

struct StepResult {
    std::string node, op_type, generator; ///< generator "" for a view
    int layer = -1;
    double modelled_seconds = 0;
    int kernels = 0; ///< emulator kernel launches of the call
};

struct ExecResult {
    /** Graph outputs by name: shape and row-major data. */
    std::map<std::string, Tensor> outputs;
    std::vector<StepResult> steps;
    double modelled_seconds = 0; ///< sum over steps
    int distinct_layers = 0;
};

/** A lowered graph with its layers built, ready to run many times. */
class Executor {
public:
    /** Lowers g (throws Error naming a node without a layer) and builds each distinct layer
     * (throws Error with the generator's or compiler's log on failure). */
    explicit Executor(const Graph &g, const ExecOptions &options = {});
    ~Executor();
    Executor(const Executor &) = delete;
    Executor &operator=(const Executor &) = delete;

    /** Runs the graph; `inputs` maps each graph input's name to row-major data of its
     * inferred shape. Throws Error on a missing or wrongly sized input or a failing layer. */
    ExecResult run(const std::map<std::string, std::vector<float>> &inputs);

    const LoweredGraph &lowered() const { return lowered_; }
    const Graph &graph() const { return graph_; }

private:
    struct Impl;
    Graph graph_;
    LoweredGraph lowered_;
    Impl *impl_ = nullptr;
};

} // namespace sw_graph

#endif
