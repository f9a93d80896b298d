/** \file
 * Executor: see Executor.h.
 */
#include "graph/Executor.h"

#include "jit/jit_layer.h"
#include "runtime/locate.h"
#include "runtime/net/aligned.h"
#include "runtime/net/emulator_record.h"
#include "target_sw/Machine.h"

#include "HalideBuffer.h"
#include <athread_emu.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace sw_graph {

namespace {

/** The first line of a build log that says what went wrong (else its first line). */
std::string first_error_line(const std::string &log) {
    std::istringstream in(log);
    std::string line, first;
    while (std::getline(in, line)) {
        if (first.empty() && !line.empty())
            first = line;
        if (line.find("rror") != std::string::npos &&
            line.find("generator failed") == std::string::npos) {
            return line;
        }
    }
    return first;
}

int64_t elements(const std::vector<int> &ext) {
    int64_t n = 1;
    for (int e : ext)
        n *= e;
    return n;
}

} // namespace

std::string default_cache_dir() {
    auto env = [](const char *name) {
        const char *v = std::getenv(name);
        return std::string(v && *v ? v : "");
    };
    if (!env("SW_NET_CACHE_DIR").empty())
        return env("SW_NET_CACHE_DIR");
    if (!env("XDG_CACHE_HOME").empty())
        return env("XDG_CACHE_HOME") + "/sw_net";
    if (!env("HOME").empty())
        return env("HOME") + "/.cache/sw_net";
    return "";
}

namespace {

/** work(0) .. work(n - 1), each once, on up to \p jobs threads (<= 0: one per hardware
 * thread), the calling thread among them. */
void parallel_for(size_t n, int jobs, const std::function<void(size_t)> &work) {
    if (n == 0)
        return;
    int threads_wanted = jobs > 0 ? jobs : int(std::thread::hardware_concurrency());
    threads_wanted = std::max(1, int(std::min<size_t>(size_t(threads_wanted), n)));
    std::atomic<size_t> next{0};
    auto worker = [&]() {
        for (size_t i = next++; i < n; i = next++)
            work(i);
    };
    std::vector<std::thread> threads;
    for (int t = 1; t < threads_wanted; t++)
        threads.emplace_back(worker);
    worker();
    for (std::thread &t : threads)
        t.join();
}

/** The Sunway autoscheduler's estimates of layers (autoscheduler_coster): each distinct
 * layer's predicted seconds and the plan the autoscheduler chose for it, by LayerSpec::key
 * (0 and "": no estimate). */
class AutoschedulerEstimates {
public:
    explicit AutoschedulerEstimates(const ExecOptions &o)
        : generator_(o.generator), plugin_(o.autoschedule_plugin), cache_dir_(o.cache_dir),
          machine_(o.machine), jobs_(o.jobs) {}

    /** The seconds of each layer, estimating the ones not known yet, jobs_ at once. */
    std::vector<double> cost(const std::vector<LayerSpec> &layers) {
        std::vector<Known> result(layers.size());
        std::vector<size_t> missing;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (size_t i = 0; i < layers.size(); i++) {
                auto it = known_.find(layers[i].key());
                if (it != known_.end())
                    result[i] = it->second;
                else
                    missing.push_back(i);
            }
        }
        if (!missing.empty())
            estimate(layers, missing, result);
        std::vector<double> seconds;
        for (const Known &k : result)
            seconds.push_back(k.seconds);
        return seconds;
    }

    /** The plan the autoscheduler chose for \p layer when it estimated it; "" if it did not. */
    std::string plan(const LayerSpec &layer) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = known_.find(layer.key());
        return it != known_.end() ? it->second.plan : std::string();
    }

private:
    struct Known {
        double seconds = 0;
        std::string plan;
    };

    void estimate(const std::vector<LayerSpec> &layers, const std::vector<size_t> &missing,
                  std::vector<Known> &result) {
        sw_jit::JitOptions o;
        o.cache_dir = cache_dir_;
        o.target = machine_;
        std::string gen;
        try {
            gen = generator_.empty() ? sw::find_tool(sw::kLayersGenerator) : generator_;
            o.extra_args = {"-p",
                            plugin_.empty() ? sw::find_tool(sw::kAutoschedulePlugin) : plugin_,
                            "-s", "Sunway", "auto_schedule=true"};
        } catch (const std::exception &) {
            return; // no autoscheduler: every cost unknown (the map-size rule decides)
        }
        parallel_for(missing.size(), jobs_, [&](size_t k) {
            const LayerSpec &l = layers[missing[k]];
            try {
                const sw_jit::JitEstimate e =
                    sw_jit::jit_estimate_layer(gen, l.generator, l.params, o);
                if (e.ok)
                    result[missing[k]] = {e.schedule.predicted_seconds, e.schedule.plan};
            } catch (const std::exception &) {
                // unknown
            }
        });
        std::lock_guard<std::mutex> lock(mutex_);
        for (size_t i : missing)
            known_[layers[i].key()] = result[i];
    }

    const std::string generator_, plugin_, cache_dir_, machine_;
    const int jobs_;
    std::mutex mutex_;
    std::map<std::string, Known> known_;
};

LayerCoster coster_of(const std::shared_ptr<AutoschedulerEstimates> &estimates) {
    return [estimates](const std::vector<LayerSpec> &layers) { return estimates->cost(layers); };
}

} // namespace

LayerCoster autoscheduler_coster(const ExecOptions &options) {
    return coster_of(std::make_shared<AutoschedulerEstimates>(options));
}

struct Executor::Impl {
    std::vector<std::shared_ptr<sw_jit::JitLayer>> layers; ///< null: not built (skip_build)
    LayerHook hook;
};

class ConstantCache {
public:
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<sw_net::AlignedFloats>> data;
};

Executor::Executor(const Graph &g, const ExecOptions &options)
    : Executor(std::make_shared<const Graph>(g), options) {}

Executor::Executor(std::shared_ptr<const Graph> g, const ExecOptions &options)
    : graph_(std::move(g)),
      constants_(options.constants ? options.constants : std::make_shared<ConstantCache>()),
      machine_(options.machine) {
    if (options.schedule != "auto" && options.schedule != "hand" &&
        options.schedule != "baseline") {
        throw graph_->error("unknown schedule '" + options.schedule + "' (auto, hand or baseline)");
    }
    if (!sw::machine_by_name(options.machine))
        throw graph_->error("unknown machine '" + options.machine + "' (sw26010 or sw26010-pro)");
    const auto lowering_start = std::chrono::steady_clock::now();
    LowerOptions lo;
    lo.fuse_prologue = options.fuse_prologue;
    // The executor's own estimates also give the builds of the layers they cover the plan
    // the autoscheduler chose for each (not searched again: $SW_AUTOSCHEDULE_PLAN).
    std::shared_ptr<AutoschedulerEstimates> estimates;
    if (options.fuse_prologue == PrologueFusion::Auto) {
        if (!options.prologue_coster)
            estimates = std::make_shared<AutoschedulerEstimates>(options);
        prologue_coster_ = estimates ? coster_of(estimates) : options.prologue_coster;
        lo.coster = prologue_coster_;
    }
    lowered_ = lower_graph(*graph_, lo);
    lowering_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - lowering_start).count();
    placement_ = options.concat_in_place ? place_concats_in_place(*graph_, lowered_)
                                         : no_concat_placement(lowered_);
    // Found at run time beside the running executable's build or installed tree, or through
    // $SW_LAYERS_GENERATOR / $SW_AUTOSCHEDULE_PLUGIN (runtime/locate.h); the plugin only for
    // the autoscheduler.
    const std::string gen =
        options.generator.empty() ? sw::find_tool(sw::kLayersGenerator) : options.generator;
    const std::string plugin = !options.autoschedule_plugin.empty() ? options.autoschedule_plugin
                               : options.schedule == "auto" ? sw::find_tool(sw::kAutoschedulePlugin)
                                                            : std::string();
    sw_jit::JitOptions base;
    base.strict_cpe_check = options.strict_cpe_check;
    base.cache_dir = options.cache_dir;
    base.target = options.machine;

    const int total = (int)lowered_.layers.size();
    std::vector<std::shared_ptr<sw_jit::JitLayer>> built(static_cast<size_t>(total));
    std::vector<std::string> failures(static_cast<size_t>(total));
    builds_.assign(size_t(total), LayerBuildInfo());
    std::mutex progress_mutex;
    int done = 0;
    const auto t0 = std::chrono::steady_clock::now();
    auto seconds_since = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };

    auto build_one = [&](int i) {
        LayerSpec spec = lowered_.layers[size_t(i)];
        LayerBuildInfo &info = builds_[size_t(i)];
        const auto start = std::chrono::steady_clock::now();
        sw_jit::JitBuild b;
        if (options.skip_build && options.skip_build(spec)) {
            info.schedule = "none";
            info.note = "not built: run by a hook";
            std::lock_guard<std::mutex> lock(progress_mutex);
            done++;
            return;
        }
        bool autoschedule = options.schedule == "auto";
        if (autoschedule && !spec.hand_reason.empty()) {
            b = sw_jit::jit_build_layer(gen, spec.generator, spec.params, base);
            info.schedule = "hand";
            info.note = "hand schedule: " + spec.hand_reason;
            // A hand schedule that refuses the shape (a LayerNorm row larger than the LDM):
            // the autoscheduler's plan instead.
            autoschedule = b.status == sw_jit::JitBuild::GeneratorFailed;
            if (autoschedule)
                info.note = "hand schedule: " + first_error_line(b.log) + "; autoscheduled";
        }
        if (autoschedule) {
            sw_jit::JitOptions ao = base;
            ao.extra_args = {"-p", plugin, "-s", "Sunway", "auto_schedule=true"};
            ao.emit += ",schedule"; // the plan and its predicted time (read_layer_schedule)
            const std::string plan = estimates ? estimates->plan(spec) : std::string();
            if (!plan.empty())
                ao.env["SW_AUTOSCHEDULE_PLAN"] = plan;
            b = sw_jit::jit_build_layer(gen, spec.generator, spec.params, ao);
            info.schedule = "auto";
            if (b.ok()) {
                const sw_jit::LayerSchedule schedule = sw_jit::read_layer_schedule(*b.layer);
                info.plan = schedule.plan;
                info.predicted_seconds = schedule.predicted_seconds;
            }
            if (b.status == sw_jit::JitBuild::GeneratorFailed && spec.hand_reason.empty()) {
                // The autoscheduler refused this layer: its hand schedule instead.
                info.note = "autoscheduler: " + first_error_line(b.log) + "; hand schedule used";
                b = sw_jit::jit_build_layer(gen, spec.generator, spec.params, base);
                info.schedule = "hand";
            }
        } else if (options.schedule != "auto") {
            if (options.schedule == "baseline")
                spec.params["schedule"] = "baseline";
            b = sw_jit::jit_build_layer(gen, spec.generator, spec.params, base);
            info.schedule = options.schedule;
        }
        info.from_cache = b.from_cache;
        info.seconds = seconds_since(start);
        if (b.ok()) {
            built[size_t(i)] = b.layer;
        } else {
            failures[size_t(i)] = b.log;
        }
        std::lock_guard<std::mutex> lock(progress_mutex);
        done++;
        if (options.progress) {
            BuildProgress p;
            p.done = done;
            p.total = total;
            p.layer = &lowered_.layers[size_t(i)];
            p.info = &info;
            p.elapsed_seconds = seconds_since(t0);
            options.progress(p);
        }
    };
    parallel_for(size_t(total), options.jobs, [&](size_t i) { build_one(int(i)); });
    build_seconds_ = seconds_since(t0);

    for (int i = 0; i < total; i++) {
        if (!built[size_t(i)] && builds_[size_t(i)].schedule != "none") {
            throw graph_->error("building layer " + lowered_.layers[size_t(i)].key() +
                                " failed: " + failures[size_t(i)]);
        }
    }
    impl_ = new Impl;
    impl_->layers = std::move(built);
}

Executor::~Executor() {
    delete impl_;
}

void Executor::set_layer_hook(LayerHook hook) {
    impl_->hook = std::move(hook);
}

std::string Executor::layer_directory(int i) const {
    if (!impl_->layers.at(size_t(i)))
        throw graph_->error("layer " + lowered_.layers.at(size_t(i)).key() + " was not built");
    return impl_->layers[size_t(i)]->dir();
}

std::string Executor::layer_function(int i) const {
    if (!impl_->layers.at(size_t(i)))
        throw graph_->error("layer " + lowered_.layers.at(size_t(i)).key() + " was not built");
    return impl_->layers[size_t(i)]->function_name();
}

namespace {

/** A tensor's storage while the graph runs: `size` floats at `offset` in a shared buffer
 * (a tensor of its own, a view of another's, or a slice of an in-place concat's buffer). The
 * buffers start on 128-byte lines, as a Sunway program's tensors do (DMA moves whole lines:
 * a tensor off a line boundary would cost every block of a request one more line). */
/** A tensor's data: a range of a float buffer. An int64 tensor (a graph input of token ids,
 * a mask) keeps its values in a float buffer of two floats per value; offset and size count
 * its elements. */
struct Storage {
    std::shared_ptr<sw_net::AlignedFloats> buffer;
    int64_t offset = 0, size = 0;
    bool int64 = false;

    static Storage copy_of(const std::vector<float> &values) {
        Storage s;
        s.size = (int64_t)values.size();
        s.buffer = std::make_shared<sw_net::AlignedFloats>(values.begin(), values.end());
        return s;
    }
    static Storage zeros(int64_t n) {
        Storage s;
        s.size = n;
        s.buffer = std::make_shared<sw_net::AlignedFloats>(size_t(n), 0.f);
        return s;
    }
    static Storage copy_of(const std::vector<int64_t> &values) {
        Storage s;
        s.size = (int64_t)values.size();
        s.int64 = true;
        s.buffer = std::make_shared<sw_net::AlignedFloats>(2 * values.size());
        if (!values.empty())
            std::memcpy(s.buffer->data(), values.data(), values.size() * sizeof(int64_t));
        return s;
    }
    float *data() const { return buffer->data() + offset * (int64 ? 2 : 1); }
    const int64_t *ints() const { return reinterpret_cast<const int64_t *>(data()); }
    halide_type_t type() const {
        return int64 ? halide_type_of<int64_t>() : halide_type_of<float>();
    }
};

/** A gather step's indices all in [-vocab, vocab), ONNX Gather's range (the layer clamps them
 * for memory safety only): else an error naming the node, the index and the tensor. */
void check_indices(const Graph &g, const Step &s, const LayerSpec &spec, const Storage &idx) {
    const int64_t vocab = std::stoll(spec.params.at("vocab"));
    for (int64_t k = 0; k < idx.size; k++) {
        const int64_t v = idx.ints()[k];
        if (v < -vocab || v >= vocab) {
            throw g.error(s.node + ": index " + std::to_string(v) + " (element " +
                          std::to_string(k) + " of '" + s.inputs.at(1).tensor +
                          "') is out of range for a table of " + std::to_string(vocab) + " rows");
        }
    }
}

} // namespace

ExecResult Executor::run(const std::map<std::string, std::vector<float>> &inputs,
                         std::vector<sw_net::TraceSpan> *trace) {
    return run(InputValues{inputs, {}}, trace);
}

ExecResult Executor::run(const InputValues &inputs, std::vector<sw_net::TraceSpan> *trace) {
    std::map<std::string, Storage> store;
    for (const std::string &name : graph_->inputs) {
        const Tensor &t = graph_->tensor(name);
        const bool ints = t.dtype == DType::Int64;
        if (t.dtype != DType::Float32 && !ints) {
            throw graph_->error("graph input '" + name + "' is " + dtype_name(t.dtype) +
                                " (float32 and int64 inputs are supported)");
        }
        const auto fit = inputs.f32.find(name);
        const auto iit = inputs.i64.find(name);
        if (ints ? iit == inputs.i64.end() : fit == inputs.f32.end()) {
            throw graph_->error("no " + std::string(dtype_name(t.dtype)) +
                                " data for graph input '" + name + "'");
        }
        const size_t given = ints ? iit->second.size() : fit->second.size();
        if ((int64_t)given != t.elements()) {
            throw graph_->error("graph input '" + name + "' has shape " + shape_string(t.shape) +
                                " (" + std::to_string(t.elements()) + " values), got " +
                                std::to_string(given) + " values");
        }
        store[name] = ints ? Storage::copy_of(iit->second) : Storage::copy_of(fit->second);
    }
    auto get = [&](const std::string &name) -> Storage {
        auto it = store.find(name);
        if (it != store.end())
            return it->second;
        std::lock_guard<std::mutex> lock(constants_->mutex);
        std::shared_ptr<sw_net::AlignedFloats> &c = constants_->data[name];
        if (!c) {
            auto e = lowered_.extra_constants.find(name);
            const Tensor *t = graph_->find(name);
            if (e != lowered_.extra_constants.end()) {
                c = std::make_shared<sw_net::AlignedFloats>(e->second.begin(), e->second.end());
            } else if (t && t->is_constant && t->dtype == DType::Float32) {
                c = std::make_shared<sw_net::AlignedFloats>(t->f32.begin(), t->f32.end());
            } else if (t && t->is_constant && t->dtype == DType::Int64) {
                // Indices left unfolded (a Gather of a large table): two floats per value.
                c = Storage::copy_of(t->i64).buffer;
            }
        }
        if (c) {
            Storage st;
            st.buffer = c;
            const Tensor *t = graph_->find(name);
            st.int64 = t && t->dtype == DType::Int64;
            st.size = int64_t(c->size()) / (st.int64 ? 2 : 1);
            return store[name] = st;
        }
        constants_->data.erase(name);
        throw graph_->error("tensor '" + name +
                            "' has no data when it is read (not produced yet?)");
    };
    // The buffers of in-place concats, allocated when the first slice is written.
    std::map<std::string, std::shared_ptr<sw_net::AlignedFloats>> roots;
    auto placed_storage = [&](const LayerArg &t) {
        const TensorSlice sl = placement_.slice_of(t.tensor);
        std::shared_ptr<sw_net::AlignedFloats> &root = roots[sl.root];
        if (!root)
            root =
                std::make_shared<sw_net::AlignedFloats>(size_t(placement_.roots.at(sl.root)), 0.f);
        Storage st;
        st.buffer = root;
        st.offset = sl.offset;
        st.size = elements(t.extents);
        if (st.offset + st.size > (int64_t)root->size()) {
            throw graph_->error("tensor '" + t.tensor +
                                "' does not fit its slice of concat buffer '" + sl.root + "'");
        }
        return st;
    };

    ExecResult r;
    r.distinct_layers = (int)lowered_.layers.size();
    athread_emu_set_trace(trace ? 1 : 0);
    // Each tensor's last reader: a step's inputs are dropped after their last reader (their
    // buffers freed unless a view or a graph output still holds them), so that a run holds
    // the live tensors only, not every intermediate tensor of the graph.
    std::map<std::string, size_t> last_read;
    for (size_t k = 0; k < lowered_.steps.size(); k++) {
        for (const LayerArg &a : lowered_.steps[k].inputs)
            last_read[a.tensor] = k;
    }
    size_t step_index = 0;
    auto drop_dead = [&](const Step &s) {
        for (const LayerArg &a : s.inputs) {
            if (last_read[a.tensor] == step_index && !graph_->is_graph_output(a.tensor))
                store.erase(a.tensor);
        }
        step_index++;
    };
    for (const Step &s : lowered_.steps) {
        StepResult sr;
        sr.node = s.node;
        sr.op_type = s.op_type;
        sr.layer = s.layer;
        if (s.layer < 0) {
            if (placement_.placed(s.output.tensor)) {
                // An in-place concat: its inputs are in its buffer already.
                store[s.output.tensor] = placed_storage(s.output);
                sr.in_place = true;
                sr.record.name = s.name;
                sr.record.kind = s.op_type;
                if (const Tensor *ot = graph_->find(s.output.tensor))
                    sr.record.output = ot->shape;
            } else {
                // A view: the input's storage, or (a slice) a range of it.
                Storage st = get(s.inputs.at(0).tensor);
                st.offset += s.view_offset;
                st.size = elements(s.output.extents);
                store[s.output.tensor] = st;
            }
            r.steps.push_back(sr);
            drop_dead(s);
            continue;
        }
        const LayerSpec &spec = lowered_.layers[size_t(s.layer)];
        sr.generator = spec.generator;
        std::vector<Halide::Runtime::Buffer<>> bufs;
        for (const LayerArg &a : s.inputs) {
            const Storage d = get(a.tensor);
            if (d.size != elements(a.extents)) {
                throw graph_->error(s.node + ": tensor '" + a.tensor + "' has " +
                                    std::to_string(d.size) + " values, its layer expects " +
                                    std::to_string(elements(a.extents)));
            }
            bufs.emplace_back(d.type(), static_cast<void *>(d.data()), a.extents);
        }
        if (spec.generator == "gather")
            check_indices(*graph_, s, spec, get(s.inputs.at(1).tensor));
        // The output: a slice of an in-place concat's buffer, or a buffer of its own.
        const Storage out = placement_.placed(s.output.tensor)
                                ? placed_storage(s.output)
                                : Storage::zeros(elements(s.output.extents));
        const Tensor *ot = graph_->find(s.output.tensor);
        if (ot && ot->has_shape && ot->elements() != out.size) {
            throw graph_->error(s.node + ": output '" + s.output.tensor + "' has " +
                                std::to_string(ot->elements()) + " values, the layer writes " +
                                std::to_string(out.size));
        }
        bufs.emplace_back(out.type(), static_cast<void *>(out.data()), s.output.extents);
        std::vector<halide_buffer_t *> raw;
        for (auto &b : bufs)
            raw.push_back(b.raw_buffer());
        athread_emu_stats_reset();
        athread_emu_trace_reset();
        const auto t0 = std::chrono::steady_clock::now();
        int rc = 0;
        if (!(impl_->hook && impl_->hook(s, spec, raw, &rc))) {
            if (!impl_->layers[size_t(s.layer)]) {
                throw graph_->error(s.node + ": layer " + spec.key() +
                                    " was not built and no hook runs it");
            }
            rc = impl_->layers[size_t(s.layer)]->call(raw);
        }
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (rc != 0) {
            throw graph_->error(s.node + ": layer " + spec.key() + " failed with status " +
                                std::to_string(rc));
        }
        sw_net::LayerRecord &rec = sr.record;
        rec.name = s.name;
        rec.kind = s.op_type;
        if (ot && ot->has_shape)
            rec.output = ot->shape;
        rec.gflop =
            sw_net::layer_gflop(spec.generator, spec.params,
                                s.inputs.empty() ? 0 : elements(s.inputs[0].extents), out.size);
        // The roofline's bytes: each distinct input tensor once (a gather's table: the rows it
        // reads), the output once.
        std::set<std::string> read;
        for (size_t k = 0; k < s.inputs.size(); k++) {
            const LayerArg &a = s.inputs[k];
            if (!read.insert(a.tensor).second)
                continue;
            // A gather (an embedding) reads one row of its table per index, not the table.
            const int64_t n = spec.generator == "gather" && k == 0 ? out.size : elements(a.extents);
            rec.read_bytes += int64_t(bufs[k].type().bytes()) * n;
        }
        rec.write_bytes = 4 * out.size;
        for (const Step::UnfusedPart &p : s.unfused) {
            rec.unfused.push_back(
                {sw_net::layer_gflop(p.generator, p.params, p.in_elements, p.write_elements),
                 4 * p.read_elements, 4 * p.write_elements});
        }
        rec.wall_seconds = wall;
        sw_net::add_emulator_records(rec, r.modelled_seconds, trace);
        athread_emu_stats_reset();
        r.modelled_seconds += rec.modelled_seconds;
        store[s.output.tensor] = out;
        r.steps.push_back(sr);
        drop_dead(s);
    }
    athread_emu_set_trace(0);
    for (const std::string &name : graph_->outputs) {
        Tensor t = graph_->tensor(name);
        const Storage d = get(name);
        if (d.int64)
            t.i64.assign(d.ints(), d.ints() + d.size);
        else
            t.f32.assign(d.data(), d.data() + d.size);
        t.is_constant = false;
        r.outputs[name] = std::move(t);
    }
    return r;
}

} // namespace sw_graph
