/** \file
 * Executor: runs a lowered graph (Lowering.h) on the emulated SW26010 core group. Each
 * distinct layer is generated, compiled and loaded once (jit/jit_layer.h: layers.generator,
 * cc on the generated C, dlopen), scheduled by the Sunway autoscheduler (the default; a
 * layer it refuses gets its hand schedule, and the build says so) or by the hand Sunway or
 * baseline schedules, optionally through a persistent on-disk cache (a second run of the
 * same model loads the compiled layers); independent layers build in parallel. The steps
 * run in topological order on float32 buffers (constants as weights / bias inputs, views
 * share their input's buffer, and the concats ConcatInPlace.h makes in place cost nothing:
 * their inputs' producers write into slices of the concat's buffer, a pointer and an offset
 * into it). Each step's record is what the emulator measured for its
 * call (runtime/net/emulator_record.h), as the built-in networks report it.
 *
 * The executable must link the emulator as a whole archive and export its symbols (the
 * loaded layers take athread_* from it): sw_graph_add_exec(target) in graph/CMakeLists.txt.
 */
#ifndef SW_GRAPH_EXECUTOR_H
#define SW_GRAPH_EXECUTOR_H

#include "graph/ConcatInPlace.h"
#include "graph/Graph.h"
#include "graph/Lowering.h"
#include "runtime/net/records.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct halide_buffer_t;

namespace sw_graph {

/** How one distinct layer was built. */
struct LayerBuildInfo {
    std::string schedule; ///< "auto", "hand" or "baseline": what the layer really got
    bool from_cache = false;
    double seconds = 0; ///< generation and compilation (or cache load) wall time
    std::string note;   ///< e.g. why the autoscheduler's schedule was not used
    /** schedule "auto": the autoscheduler's plan (Plan::describe) and the time its cost model
     * predicted for one call, from the schedule header the build emits; 0 if unknown. */
    std::string plan;
    double predicted_seconds = 0;
};

/** Reported after each layer build (from the building thread, serialised). */
struct BuildProgress {
    int done = 0, total = 0;
    const LayerSpec *layer = nullptr;
    const LayerBuildInfo *info = nullptr;
    double elapsed_seconds = 0; ///< since the builds started
};

/** The float constants a graph's steps read, each copied once onto 128-byte lines (as a
 * Sunway program's tensors are: DMA moves whole lines) at its first read. The executors of one
 * graph (e.g. the schedule run and the baseline) can share them: ExecOptions::constants. */
class ConstantCache;

struct ExecOptions {
    /** layers.generator; empty: found at run time (runtime/locate.h: the build or installed
     * tree of the running executable, or $SW_LAYERS_GENERATOR). */
    std::string generator;
    /** "auto" (the Sunway autoscheduler, hand schedule where it refuses a layer), "hand" or
     * "baseline" (the OpenACC-style schedules). */
    std::string schedule = "auto";
    /** The machine the layers are generated for and emulated as: "sw26010" or "sw26010-pro"
     * (target_sw/Machine.h). */
    std::string machine = "sw26010";
    /** libsw_autoschedule.so; empty: found at run time (runtime/locate.h, or
     * $SW_AUTOSCHEDULE_PLUGIN). */
    std::string autoschedule_plugin;
    /** Persistent layer cache directory (jit/jit_layer.h); empty: build in temporary
     * directories removed at exit. */
    std::string cache_dir;
    /** Layers built at once; 0: one per hardware thread. */
    int jobs = 0;
    /** Concats without copies where the producers can write into slices of one buffer
     * (ConcatInPlace.h); false keeps every concat a copying layer (for comparisons). */
    bool concat_in_place = true;
    /** Where a ChannelScaleShift (+ Relu) is fused into the conv that reads it
     * (Lowering.h). */
    PrologueFusion fuse_prologue = PrologueFusion::Auto;
    /** PrologueFusion::Auto: the costs that decide each candidate (LowerOptions::coster);
     * empty: autoscheduler_coster(*this), the Sunway autoscheduler's predictions. Another
     * executor's coster (Executor::prologue_coster()) reuses its estimates. */
    LayerCoster prologue_coster;
    /** Check each CPE source as strict C99 (slower builds). */
    bool strict_cpe_check = false;
    std::function<void(const BuildProgress &)> progress;
    /** Layers not to build (e.g. the dense layers when a hook runs them split over several
     * core groups, apps/fc_split.h); a step of such a layer needs Executor::set_layer_hook. */
    std::function<bool(const LayerSpec &)> skip_build;
    /** The aligned constants of another executor of the same graph (Executor::constants());
     * null: its own. */
    std::shared_ptr<ConstantCache> constants;
};

struct StepResult {
    std::string node, op_type, generator; ///< generator "" for a view
    int layer = -1;
    /** A concat made in place (op_type kConcatInPlaceOp): no layer call; its record has the
     * name, kind and output shape and zero cost, so that tables show the concat. */
    bool in_place = false;
    /** The emulator's figures of the call (name = node name, kind = operator); empty for a
     * view. */
    sw_net::LayerRecord record;
};

/** A graph's input data by name: float32 inputs and int64 ones. */
struct InputValues {
    std::map<std::string, std::vector<float>> f32;
    std::map<std::string, std::vector<int64_t>> i64;
};

struct ExecResult {
    /** Graph outputs by name: shape and row-major data. */
    std::map<std::string, Tensor> outputs;
    std::vector<StepResult> steps;
    double modelled_seconds = 0; ///< sum over steps
    int distinct_layers = 0;
};

/** The default persistent cache directory: $SW_NET_CACHE_DIR, else $XDG_CACHE_HOME/sw_net,
 * else $HOME/.cache/sw_net, else "" (no cache). */
std::string default_cache_dir();

/** A LayerCoster (Lowering.h) that asks the Sunway autoscheduler for the time it predicts
 * for one call of each layer, without building it (sw_jit::jit_estimate_layer: the generator
 * autoschedules the layer and stops, neither lowering nor compiling it), options.jobs layers at
 * once, through options.generator and options.autoschedule_plugin (found at run time when
 * empty, as for the builds). Each distinct layer is estimated once for the life of the coster
 * and its copies (its estimates are shared), and kept on disk under options.cache_dir. A layer
 * it cannot estimate (the autoscheduler refuses it, the plugin is not found) is unknown: the
 * lowering's map-size rule decides that candidate. The executor's own coster also hands each
 * estimated layer's plan to its build ($SW_AUTOSCHEDULE_PLAN, sw_auto::Options::plan): the
 * build applies the plan the estimate chose instead of searching again. The same predictions
 * whatever options.schedule is, so that an autoscheduled run and its baseline comparison lower the
 * same steps (for the hand schedules the autoscheduler's predictions are only a guide). */
LayerCoster autoscheduler_coster(const ExecOptions &options);

/** Runs a step in place of its generated layer: given the step, its layer and the buffers
 * the layer would take (inputs in the generator's order, then the output), sets *status to
 * what the layer would return and returns true, or returns false to let the layer run. What
 * the emulator records during the call is the step's record. */
using LayerHook = std::function<bool(const Step &step, const LayerSpec &layer,
                                     const std::vector<halide_buffer_t *> &buffers, int *status)>;

/** A lowered graph with its layers built, ready to run many times. */
class Executor {
public:
    /** Lowers g (throws Error naming a node without a layer) and builds each distinct layer
     * (throws Error with the generator's or compiler's log on failure). */
    explicit Executor(const Graph &g, const ExecOptions &options = {});
    /** The same, sharing \p g (not copied: an ONNX model's or a network's weights are large). */
    explicit Executor(std::shared_ptr<const Graph> g, const ExecOptions &options = {});
    ~Executor();
    Executor(const Executor &) = delete;
    Executor &operator=(const Executor &) = delete;

    /** Runs the graph; `inputs` maps each graph input's name to row-major data of its
     * inferred shape. Appends the emulator's trace spans to *trace if given. Throws Error on
     * a missing or wrongly sized input or a failing layer. */
    ExecResult run(const std::map<std::string, std::vector<float>> &inputs,
                   std::vector<sw_net::TraceSpan> *trace = nullptr);
    /** The same with int64 inputs too (token ids, masks): each graph input's data from the map
     * of its type. The indices of a Gather (an embedding lookup) are checked against the
     * table's rows before its layer runs (Error naming the node and the index). */
    ExecResult run(const InputValues &inputs, std::vector<sw_net::TraceSpan> *trace = nullptr);

    /** Runs the steps \p hook takes (LayerHook) in place of their layers, from the next run. */
    void set_layer_hook(LayerHook hook);

    const LoweredGraph &lowered() const { return lowered_; }
    /** The machine the layers were generated for (ExecOptions::machine). */
    const std::string &machine() const { return machine_; }
    /** Which tensors live in slices of an in-place concat's buffer (ConcatInPlace.h). */
    const ConcatPlacement &concat_placement() const { return placement_; }
    const Graph &graph() const { return *graph_; }
    /** The aligned constants (to share with another executor of the same graph). */
    const std::shared_ptr<ConstantCache> &constants() const { return constants_; }
    /** How each of lowered().layers was built. */
    const std::vector<LayerBuildInfo> &builds() const { return builds_; }
    double build_seconds() const { return build_seconds_; } ///< wall time of all builds
    /** Wall time of the lowering, the costing of the prologue fusions included
     * (lowered().prologue_choices), before the builds. */
    double lowering_seconds() const { return lowering_seconds_; }
    /** The coster the lowering used (ExecOptions::prologue_coster or the executor's own);
     * empty unless PrologueFusion::Auto. */
    const LayerCoster &prologue_coster() const { return prologue_coster_; }
    /** Layer i's generated files (<dir>/<function>.mpe.c, .cpe.c, .h, .sw_args.h) and C
     * function name, while this Executor lives. */
    std::string layer_directory(int i) const;
    std::string layer_function(int i) const;

private:
    struct Impl;
    std::shared_ptr<const Graph> graph_;
    std::shared_ptr<ConstantCache> constants_;
    LoweredGraph lowered_;
    ConcatPlacement placement_;
    std::vector<LayerBuildInfo> builds_;
    double build_seconds_ = 0, lowering_seconds_ = 0;
    LayerCoster prologue_coster_;
    std::string machine_;
    Impl *impl_ = nullptr;
};

} // namespace sw_graph

#endif
