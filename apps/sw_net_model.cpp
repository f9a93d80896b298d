/** \file
 * sw_net's one runtime: a graph (an ONNX model imported by graph/, or a built-in network
 * built by graph/Networks.h) lowered to layers, each distinct layer compiled ahead of time
 * through the persistent layer cache (graph/Executor.h; autoscheduled by default), run on
 * the emulated core group pass by pass, and reported per layer. --net and --model differ
 * only in where the graph comes from.
 */
#include "apps/fc_split.h"
#include "apps/sw_net.h"

#include "graph/Executor.h"
#include "graph/Export.h"
#include "graph/Import.h"
#include "graph/Lowering.h"
#include "graph/Networks.h"
#include "graph/ShapeInference.h"
#include "runtime/io/image.h"
#include "runtime/io/npy.h"
#include "runtime/io/weights.h"
#include "runtime/net/emulator_record.h"
#include "runtime/net/report.h"

#include <athread_emu.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

namespace sw_net_app {

namespace {

using sw_graph::shape_string;

/** Adds one pass's step records to the running totals (views have none; an in-place
 * concat has a row of zeros, "Concat (in place)", so that the table shows it). */
void accumulate(std::vector<sw_net::LayerRecord> &total, const sw_graph::ExecResult &r) {
    std::vector<sw_net::LayerRecord> pass;
    for (const sw_graph::StepResult &s : r.steps) {
        if (s.layer >= 0 || s.in_place)
            pass.push_back(s.record);
    }
    sw_net::accumulate(total, pass);
}

/** What graph/ConcatInPlace.h did with the model's concats. */
void print_concat_summary(const sw_graph::ConcatInPlaceStats &st, bool enabled) {
    if (st.concat_calls_before == 0 && st.concats == 0)
        return;
    if (!enabled) {
        std::printf("concat: %d concat layer calls copy %.2f MB (--concat-copies)\n",
                    st.concat_calls_before, double(st.copied_bytes_before) / 1e6);
        return;
    }
    std::printf("concat: %d of %d in place (%d of them views of a later concat's buffer), %d "
                "copying; concat "
                "layer calls %d -> %d, %d inputs copied into their slices, bytes copied %.2f MB -> "
                "%.2f MB\n",
                st.in_place, st.concats, st.views, st.copying, st.concat_calls_before,
                st.concat_calls_after, st.copied_inputs, double(st.copied_bytes_before) / 1e6,
                double(st.copied_bytes_after) / 1e6);
    for (const std::string &n : st.notes)
        std::printf("  concat %s\n", n.c_str());
}

/** How --fuse-prologue auto decided (graph/Lowering.h: PrologueChoice). */
void print_prologue_summary(const sw_graph::Executor &ex) {
    const sw_graph::PrologueCounts n =
        sw_graph::count_prologue_choices(ex.lowered().prologue_choices);
    if (n.candidates == 0)
        return;
    std::printf("prologue fusion: %d of %d BatchNorm (+ ReLU) -> Conv fused into the conv (%d "
                "decided by the autoscheduler's predictions, %d by the map-size rule); lowering "
                "and costing %.1f s\n",
                n.fused, n.candidates, n.costed, n.candidates - n.costed, ex.lowering_seconds());
}

std::string dims_of(const std::vector<int64_t> &shape) {
    return sw_io::shape_to_string(shape);
}

/** The graph input of every pass, streamed: from --input, a float32 .npy of the input's shape
 * (one pass), of (B, rest of the input's shape) for --batch B (B / the graph's batch passes,
 * read from the file one pass at a time; the images of this rank's passes are checked for
 * NaN before the run), or, with a graph batch of 1, of the input's shape without the batch;
 * or from a PNG (an (N, 3, S, S) input), preprocessed once and given to every image. Nothing
 * is kept per pass: memory does not grow with --batch. */
class Inputs {
public:
    /** Named mode: the graph's inputs from --input name=file.npy, one pass (a model of several
     * inputs, or of an int64 one: token ids and masks). */
    Inputs(const Options &o, const sw_graph::Graph &g) : named_(true) {
        std::map<std::string, std::string> files;
        for (const std::string &arg : o.named_inputs) {
            const size_t eq = arg.find('=');
            const std::string name = arg.substr(0, eq), file = arg.substr(eq + 1);
            if (!g.is_graph_input(name)) {
                throw g.error("--input " + arg + ": the model has no input '" + name +
                              "' (its inputs: " + input_list(g) + ")");
            }
            if (!files.emplace(name, file).second)
                throw g.error("--input: input '" + name + "' given twice");
        }
        if (files.empty() && !o.input.empty() && g.inputs.size() == 1)
            files[g.inputs[0]] = o.input;
        const sw_io::NonFinite nf =
            o.allow_nonfinite ? sw_io::NonFinite::Allow : sw_io::NonFinite::Refuse;
        for (const std::string &name : g.inputs) {
            const sw_graph::Tensor &t = g.tensor(name);
            auto it = files.find(name);
            if (it == files.end()) {
                throw g.error("input '" + name + "' (" + sw_graph::dtype_name(t.dtype) + " " +
                              shape_string(t.shape) +
                              ") has no data: give every input as --input " +
                              "name=file.npy (the model's inputs: " + input_list(g) + ")");
            }
            if (t.dtype == sw_graph::DType::Int64) {
                sw_io::NpyInts a = sw_io::load_npy_ints(it->second);
                if (a.shape != t.shape) {
                    throw sw_io::IoError(it->second + ": expected a tensor of shape " +
                                         dims_of(t.shape) + " for input '" + name + "', got " +
                                         dims_of(a.shape));
                }
                values_.i64[name] = std::move(a.data);
            } else if (t.dtype == sw_graph::DType::Float32) {
                values_.f32[name] = sw_io::load_npy_expect(it->second, t.shape, nf).data;
            } else {
                throw g.error("input '" + name + "' is " + sw_graph::dtype_name(t.dtype) +
                              " (float32 and int64 inputs are supported)");
            }
            source_ += (source_.empty() ? "" : ", ") + name + " " + sw_graph::dtype_name(t.dtype) +
                       " " + shape_string(t.shape) + " from " + it->second;
        }
        const sw_graph::Tensor &first = g.tensor(g.inputs.at(0));
        graph_batch_ = first.shape.empty() ? 1 : first.shape[0];
        if (o.batch && o.batch != graph_batch_) {
            throw std::runtime_error("--batch " + std::to_string(o.batch) +
                                     ": a model of several or int64 inputs runs the batch it is "
                                     "built for (" +
                                     std::to_string(graph_batch_) + ")");
        }
    }
    Inputs(const Options &o, const sw_graph::Tensor &in, const std::string &what)
        : shape_(in.shape) {
        graph_batch_ = shape_.empty() ? 1 : shape_[0];
        per_pass_ = std::max<int64_t>(1, in.elements());
        const int64_t batch = o.batch ? o.batch : graph_batch_;
        if (batch % graph_batch_ != 0) {
            throw std::runtime_error("--batch " + std::to_string(batch) +
                                     " is not a multiple of the batch " +
                                     std::to_string(graph_batch_) + " " + what + " is built for");
        }
        passes_ = int(batch / graph_batch_);
        if (!o.input.empty()) {
            const sw_io::NonFinite nf =
                o.allow_nonfinite ? sw_io::NonFinite::Allow : sw_io::NonFinite::Refuse;
            npy_ = std::make_unique<sw_io::NpyReader>(
                o.input, nf); // the header is checked against the file size
            const std::vector<int64_t> &got = npy_->shape();
            std::vector<int64_t> batched = shape_, single = shape_;
            if (!shape_.empty()) {
                batched[0] = batch;
                single.erase(single.begin());
            }
            const bool ok = (got == shape_ && passes_ == 1) ||
                            (!shape_.empty() && got == batched) ||
                            (!shape_.empty() && got == single && batch == 1);
            if (!ok) {
                throw sw_io::IoError(o.input + ": expected a tensor of shape " + dims_of(batched) +
                                     " for --batch " + std::to_string(batch) + ", got " +
                                     dims_of(got));
            }
            nonfinite_ = nf;
            source_ = o.input;
        } else {
            if (shape_.size() != 4 || shape_[1] != 3 || shape_[2] != shape_[3]) {
                throw std::runtime_error(what + ": input '" + in.name + "' has shape " +
                                         shape_string(shape_) +
                                         ", not (N, 3, S, S): give it as --input x.npy");
            }
            const sw_io::RgbImage rgb = sw_io::load_png_rgb(o.image);
            const std::vector<float> x = sw_io::preprocess_imagenet(rgb, int(shape_[3]));
            for (int64_t n = 0; n < graph_batch_; n++)
                png_.insert(png_.end(), x.begin(), x.end());
            source_ = o.image + " (" + std::to_string(rgb.width) + "x" +
                      std::to_string(rgb.height) + ", resized and centre-cropped to " +
                      std::to_string(shape_[3]) + ", ImageNet mean/std)";
        }
    }
    /** Refuses NaN and infinities in passes [first, last) before the run (not at pass n). */
    void check(int64_t first, int64_t last) {
        if (named_ || !npy_ || nonfinite_ == sw_io::NonFinite::Allow)
            return;
        std::vector<float> x;
        for (int64_t p = first; p < last; p++)
            pass(p, x);
    }
    int passes() const { return passes_; }
    int64_t graph_batch() const { return graph_batch_; }
    const std::string &source() const { return source_; }
    /** The inputs of pass p, into \p x (one buffer reused pass after pass). */
    void pass(int64_t p, sw_graph::InputValues &x, const std::string &name) const {
        if (named_)
            x = values_;
        else
            pass(p, x.f32[name]);
    }
    /** The input of pass p, into \p x (one buffer reused pass after pass). */
    void pass(int64_t p, std::vector<float> &x) const {
        if (!npy_) {
            x = png_;
            return;
        }
        x.resize(static_cast<size_t>(per_pass_));
        npy_->read(size_t(p) * size_t(per_pass_), x.size(), x.data());
    }

private:
    static std::string input_list(const sw_graph::Graph &g) {
        std::string list;
        for (const std::string &i : g.inputs)
            list += (list.empty() ? "'" : ", '") + i + "'";
        return list;
    }
    bool named_ = false;
    sw_graph::InputValues values_;
    std::vector<int64_t> shape_;
    int64_t graph_batch_ = 1, per_pass_ = 1;
    int passes_ = 1;
    std::unique_ptr<sw_io::NpyReader> npy_;
    sw_io::NonFinite nonfinite_ = sw_io::NonFinite::Refuse;
    std::vector<float> png_;
    std::string source_;
};

} // namespace

int run_graph(const Options &o, const sw_dist::Job &job,
              std::shared_ptr<const sw_graph::Graph> graph, const GraphRun &what) {
    const sw_graph::Graph &g = *graph;
    if (g.inputs.empty())
        throw g.error("the model has no input");
    const sw_graph::Tensor &in = g.tensor(g.inputs[0]);
    // Several inputs, an int64 one or --input name=file.npy: every input from its file, one
    // pass; else the one float32 input streamed pass by pass.
    const bool named =
        !o.named_inputs.empty() || g.inputs.size() != 1 || in.dtype != sw_graph::DType::Float32;
    if (named && o.image_given) {
        throw std::runtime_error("--image: the model's inputs (" + std::to_string(g.inputs.size()) +
                                 ", '" + in.name + "' " + sw_graph::dtype_name(in.dtype) +
                                 ") are given as --input name=file.npy");
    }
    sw_graph::lower_graph(g); // an operator without a layer fails here, before the input is read
    Inputs inputs = named ? Inputs(o, g) : Inputs(o, in, what.title);
    const int passes = inputs.passes();
    // With several ranks each runs a contiguous share of the passes (the first ranks one more
    // when they do not divide; a rank beyond the passes idles); with --fc-split every rank runs
    // every pass and the dense layers are split instead.
    const auto [first_pass, last_pass] = o.fc_split ? std::pair<int64_t, int64_t>{0, passes}
                                                    : sw_dist::share(passes, job.rank, job.size);
    inputs.check(first_pass, last_pass);

    sw_graph::ExecOptions eo;
    eo.schedule = o.schedule.empty() ? "auto" : o.schedule;
    eo.machine = o.machine;
    eo.jobs = o.jobs;
    eo.concat_in_place = !o.concat_copies;
    eo.fuse_prologue = sw_graph::parse_prologue_fusion(o.fuse_prologue);
    eo.cache_dir = o.no_cache             ? ""
                   : !o.cache_dir.empty() ? o.cache_dir
                                          : sw_graph::default_cache_dir();
    eo.progress = [](const sw_graph::BuildProgress &p) {
        std::fprintf(stderr, "[%*d/%d] %6.1f s  %-8s %s%s\n", p.total >= 10 ? 2 : 1, p.done,
                     p.total, p.elapsed_seconds, p.info->schedule.c_str(), p.layer->key().c_str(),
                     p.info->from_cache ? "  (cached)" : "");
        if (!p.info->note.empty())
            std::fprintf(stderr, "        %s\n", p.info->note.c_str());
    };
    // --fc-split: the dense layers are built per rank for its rows (apps/fc_split.h).
    if (o.fc_split)
        eo.skip_build = [](const sw_graph::LayerSpec &l) { return l.generator == "dense"; };
    const bool compare = o.compare && eo.schedule != "baseline";
    const char *schedules = eo.schedule == "auto"   ? "autoscheduled by the Sunway autoscheduler"
                            : eo.schedule == "hand" ? "hand Sunway schedules"
                                                    : "OpenACC-style baseline schedules";
    const sw::Machine &target = *sw::machine_by_name(o.machine);
    std::printf("%s on the emulated %s core group (%d CPEs, athread emulator), %s\n",
                what.title.c_str(), target.title().c_str(), target.cpes_per_core_group, schedules);
    if (target.crts_runtime) {
        std::printf("note: the SW26010-Pro timing model rests on unmeasured parameters (RMA, "
                    "instruction costs, fp32 peak taken equal to fp64; [U] in "
                    "target_sw/Machine.h): its figures are estimates, not measurements\n");
    }
    if (named) {
        std::printf("inputs: %s, batch %d, %d pass(es)\n", inputs.source().c_str(),
                    int(passes * inputs.graph_batch()), passes);
    } else {
        std::printf("input: '%s' %s from %s, batch %d, %d pass(es)\n", in.name.c_str(),
                    shape_string(in.shape).c_str(), inputs.source().c_str(),
                    int(passes * inputs.graph_batch()), passes);
    }
    if (!what.note.empty())
        std::printf("%s\n", what.note.c_str());
    std::printf("layer cache: %s\n",
                eo.cache_dir.empty() ? "none (--no-cache)" : eo.cache_dir.c_str());
    if (!o.fc_split)
        print_data_parallel(job, passes);
    std::fflush(stdout);

    // Every distinct layer built; with several ranks rank 0 first, then the others load them
    // from the cache (not every rank compiling the same layers at once).
    if (job.rank > 0) {
        eo.progress = nullptr;
        sw_dist::barrier(job);
    }
    sw_graph::Executor ex(graph, eo); // the graph shared, not copied (its weights are large)
    std::unique_ptr<FcSplit> fc;
    if (o.fc_split) {
        fc = std::make_unique<FcSplit>(ex, job, eo.schedule, eo.cache_dir);
        ex.set_layer_hook(fc->hook());
    }
    if (job.rank == 0)
        sw_dist::barrier(job);
    int cached = 0, hand = 0, built = 0;
    for (const sw_graph::LayerBuildInfo &b : ex.builds()) {
        if (b.schedule == "none")
            continue;
        built++;
        cached += b.from_cache;
        hand += eo.schedule == "auto" && b.schedule == "hand";
    }
    std::printf("compiled %d distinct layers for %zu steps in %.1f s (%d from the cache", built,
                ex.lowered().steps.size(), ex.build_seconds(), cached);
    if (hand) {
        std::printf(
            ", %d with their hand schedule: refused by the autoscheduler or faster by hand, "
            "the build lines say which",
            hand);
    }
    std::printf(")\n");
    if (fc) {
        std::printf("fc-split: the dense layers split by output rows over %d rank(s), one per core "
                    "group, then "
                    "allgathered; rank 0: %s\n",
                    job.size, fc->describe().c_str());
    }
    print_concat_summary(ex.concat_placement().stats, eo.concat_in_place);
    print_prologue_summary(ex);
    if (!o.export_dir.empty() && job.rank == 0) {
        const sw_graph::ExportSummary e = sw_graph::export_model(ex, what.title, o.export_dir);
        std::printf(
            "exported to %s: %d layers, %d steps, %lld weight floats, activations %lld bytes "
            "(%lld without reuse); build it with make (sw5cc) or make emu (here)\n",
            o.export_dir.c_str(), e.layers, e.steps, (long long)e.weight_floats,
            (long long)e.arena_bytes, (long long)e.unshared_bytes);
    }
    std::unique_ptr<sw_graph::Executor> baseline;
    if (compare) {
        sw_graph::ExecOptions bo = eo;
        bo.schedule = "baseline";
        bo.constants = ex.constants(); // one aligned copy of the weights for both
        // The same prologue fusions (the estimates kept, not made again): the same steps.
        bo.prologue_coster = ex.prologue_coster();
        baseline = std::make_unique<sw_graph::Executor>(graph, bo);
    }

    const std::string out_name = g.outputs.at(0);
    // --dump-output: the first output's path (streamed or gathered as before) and the others'.
    std::string first_dump;
    std::vector<std::pair<std::string, std::string>> extra_dumps; // (output, path)
    for (const std::string &d : o.dumps) {
        const size_t eq = d.find('=');
        std::string name = out_name, path = d;
        if (eq != std::string::npos && g.is_graph_output(d.substr(0, eq))) {
            name = d.substr(0, eq);
            path = d.substr(eq + 1);
        }
        bool twice = name == out_name && !first_dump.empty();
        for (const auto &e : extra_dumps)
            twice = twice || e.first == name;
        if (twice)
            throw std::runtime_error("--dump-output: output '" + name + "' is given twice");
        if (path.empty())
            throw std::runtime_error("--dump-output " + d + ": no path");
        if (job.rank == 0)
            sw_io::check_writable(path);
        if (name == out_name)
            first_dump = path;
        else
            extra_dumps.push_back({name, path});
    }
    if (!extra_dumps.empty() && job.multi() && !o.fc_split) {
        throw std::runtime_error("--dump-output " + extra_dumps[0].first +
                                 "=...: outputs other than the first are written by a run of one "
                                 "rank (or with --fc-split)");
    }
    // Streamed: of each pass's output only the top-k classes per image (a 2-D output) are kept;
    // --dump-output is written pass by pass. Memory does not grow with the passes.
    const bool gathered = job.multi() && !o.fc_split; // with --fc-split rank 0 has every output
    std::vector<int64_t> out_shape;
    std::unique_ptr<TopK> top;
    std::unique_ptr<sw_io::NpyWriter> dump;
    std::vector<std::unique_ptr<sw_io::NpyWriter>> extra_writers; // of extra_dumps, rank 0
    std::vector<float>
        rows; // with several ranks: this rank's outputs, written by rank 0 at the end
    std::vector<sw_net::LayerRecord> total, base_total;
    std::vector<sw_net::TraceSpan> spans;
    double dense_seconds = 0; // --fc-split: this rank's dense layers
    const auto t0 = std::chrono::steady_clock::now();
    try {
        sw_graph::InputValues x; // one input buffer for every pass
        for (int64_t pass = first_pass; pass < last_pass; pass++) {
            inputs.pass(pass, x, in.name);
            const sw_graph::ExecResult r =
                ex.run(x, !o.trace.empty() && pass == first_pass ? &spans : nullptr);
            const sw_graph::Tensor &y = r.outputs.at(out_name);
            if (pass == first_pass) {
                out_shape = y.shape;
                if (!out_shape.empty())
                    out_shape[0] *= passes;
                else if (passes > 1)
                    out_shape = {passes};
                if (out_shape.size() == 2)
                    top = std::make_unique<TopK>(out_shape[1], o.top);
                if (!first_dump.empty() && !gathered && job.rank == 0) {
                    dump = std::make_unique<sw_io::NpyWriter>(first_dump, out_shape);
                }
                for (const auto &[name, path] : extra_dumps) {
                    if (job.rank > 0)
                        break;
                    std::vector<int64_t> shape = r.outputs.at(name).shape;
                    if (!shape.empty())
                        shape[0] *= passes;
                    else if (passes > 1)
                        shape = {passes};
                    extra_writers.push_back(std::make_unique<sw_io::NpyWriter>(path, shape));
                }
            }
            if (top)
                top->add(y.f32.data(), y.shape.empty() ? 1 : y.shape[0]);
            if (dump)
                dump->write(y.f32.data(), y.f32.size());
            for (size_t k = 0; k < extra_writers.size(); k++) {
                const std::vector<float> &v = r.outputs.at(extra_dumps[k].first).f32;
                extra_writers[k]->write(v.data(), v.size());
            }
            if (!first_dump.empty() && gathered)
                rows.insert(rows.end(), y.f32.begin(), y.f32.end());
            accumulate(total, r);
            for (const sw_graph::StepResult &s : r.steps)
                dense_seconds += s.generator == "dense" ? s.record.modelled_seconds : 0;
            if (baseline) {
                const sw_graph::ExecResult rb = baseline->run(x);
                const std::vector<float> &yb = rb.outputs.at(out_name).f32;
                for (size_t i = 0; i < y.f32.size(); i++) {
                    if (!(std::fabs(y.f32[i] - yb[i]) <= 1e-4f + 1e-3f * std::fabs(y.f32[i])) &&
                        !(std::isnan(y.f32[i]) && std::isnan(yb[i]))) {
                        throw std::runtime_error(
                            "the " + eo.schedule + " and baseline schedules disagree on output '" +
                            out_name + "' element " + std::to_string(i) + ": " +
                            std::to_string(y.f32[i]) + " vs " + std::to_string(yb[i]));
                    }
                }
                accumulate(base_total, rb);
            }
        }
    } catch (...) {
        if (dump)
            remove_partial_output(first_dump);
        for (size_t k = 0; k < extra_writers.size(); k++)
            remove_partial_output(extra_dumps[k].second);
        throw;
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double mine = sw_net::modelled_seconds(total);
    std::vector<sw_dist::RankFigures> ranks;
    std::vector<std::vector<double>> split_times;
    if (o.fc_split) {
        split_times = sw_dist::gather(job, std::vector<double>{mine});
    } else {
        ranks = gather_data_parallel(job, top.get(), rows, out_shape, first_dump,
                                     (last_pass - first_pass) * inputs.graph_batch(), mine);
    }

    std::printf("output: '%s' %s\n", out_name.c_str(), shape_string(out_shape).c_str());
    if (top) {
        std::vector<std::string> labels;
        if (!o.labels.empty()) {
            labels = sw_io::load_labels(o.labels);
        } else if (out_shape[1] == 1000 && !o.default_labels.empty()) {
            labels = sw_io::load_labels(o.default_labels); // ImageNet's classes
        }
        top->print(labels, what.probabilities ? "probability" : "value");
    } else if (o.top_given) {
        std::printf("(--top applies to a 2-D (batch, classes) output only)\n");
    }
    const sw::Machine &machine = *sw::machine_by_name(athread_emu_machine_name());
    if (job.multi()) {
        std::printf(
            o.fc_split
                ? "\nper-layer table of rank 0 (every image; its rows of each dense layer):\n"
                : "\nper-layer table of rank 0's share of the passes:\n");
    }
    sw_net::print_table(total, compare ? &base_total : nullptr, machine);
    if (job.mpi && !o.fc_split)
        sw_dist::print_job(ranks, sw_dist::data_parallel(ranks, machine), machine, stdout);
    if (fc && job.rank == 0) {
        double slowest = 0;
        for (const std::vector<double> &t : split_times)
            slowest = std::max(slowest, t[0]);
        std::printf("fc-split over %d core group(s): modelled %.3f ms for %d image(s) (slowest "
                    "rank %.3f ms, its "
                    "dense layers on rank 0 %.3f ms, + allgathers %.3f ms)\n",
                    job.size, (slowest + fc->comm_seconds()) * 1e3,
                    int(passes * inputs.graph_batch()), slowest * 1e3, dense_seconds * 1e3,
                    fc->comm_seconds() * 1e3);
    }
    std::printf("\nwall time on this machine: %.2f s for %d pass(es)%s\n", secs, passes,
                compare ? (" (" + eo.schedule + " and baseline schedules)").c_str() : "");
    if (!o.report.empty() && job.rank == 0) { // rank 0 writes every output
        sw_net::write_report(o.report, what.title, total, compare ? &base_total : nullptr, machine);
        std::printf("per-layer report written to %s\n", o.report.c_str());
    }
    if (!o.trace.empty() && job.rank == 0) {
        sw_net::write_trace(o.trace, spans, machine);
        std::printf("trace of the first pass written to %s (open it in ui.perfetto.dev)\n",
                    o.trace.c_str());
    }
    if (dump)
        dump->close();
    if (!first_dump.empty())
        std::printf("output '%s' written to %s\n", out_name.c_str(), first_dump.c_str());
    for (size_t k = 0; k < extra_writers.size(); k++) {
        extra_writers[k]->close();
        std::printf("output '%s' written to %s\n", extra_dumps[k].first.c_str(),
                    extra_dumps[k].second.c_str());
    }
    return 0;
}

int run_model(const Options &o, const sw_dist::Job &job) {
    if (job.rank == 0) { // rank 0 writes every output
        check_outputs(o);
        if (!o.export_dir.empty())
            sw_graph::check_export_dir(o.export_dir);
    }
    sw_graph::ImportOptions io;
    for (const std::string &s : o.input_shapes)
        sw_graph::add_input_shape(s, io.inference);
    return run_graph(o, job,
                     std::make_shared<const sw_graph::Graph>(sw_graph::import_onnx(o.model, io)),
                     GraphRun{o.model, false, ""});
}

int run_net(const Options &options, const sw_dist::Job &job) {
    Options o = options;
    if (o.batch == 0)
        o.batch = 1;
    if (job.rank == 0) { // rank 0 writes every output
        check_outputs(o);
        if (!o.export_dir.empty())
            sw_graph::check_export_dir(o.export_dir);
    }
    sw_graph::NetworkConfig c;
    c.name = o.net;
    c.channel_div = o.channel_div;
    c.input = o.input_size;
    c.classes = o.classes;
    std::string note, title = o.net;
    if (c.channel_div != 1 || c.input != 0 || c.classes != 1000) {
        title += " (channels / " + std::to_string(c.channel_div) + ", input " +
                 std::to_string(c.input ? c.input : sw_graph::default_input_size(c.name)) + ", " +
                 std::to_string(c.classes) + " classes)";
    }
    sw_graph::Graph g;
    if (o.weights.empty()) {
        g = sw_graph::network_graph(
            c, [](const std::string &layer, const std::string &w, const std::vector<int64_t> &s) {
                return w == "weight" ? sw_io::deterministic_weights(layer, s)
                                     : sw_io::deterministic_bias(layer, s[0]);
            });
        note = "deterministic seeded weights (no --weights given): the classes below are not "
               "meaningful";
    } else {
        const sw_io::WeightStore store(o.weights, o.allow_nonfinite ? sw_io::NonFinite::Allow
                                                                    : sw_io::NonFinite::Refuse);
        g = sw_graph::network_graph(
            c, [&](const std::string &layer, const std::string &w, const std::vector<int64_t> &s) {
                return w == "weight" ? store.weight(layer, s) : store.bias(layer, s[0]);
            });
        note = "weights from " + o.weights;
    }
    return run_graph(o, job, std::make_shared<const sw_graph::Graph>(std::move(g)),
                     GraphRun{title, true, note});
}

} // namespace sw_net_app
