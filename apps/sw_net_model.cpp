/** \file
 * sw_net --model FILE.onnx: imports the model (graph/), compiles each distinct layer ahead
 * of time through the persistent layer cache (graph/Executor.h; autoscheduled by default),
 * runs it on the emulated core group and reports per layer, as --net does.
 */
#include "apps/sw_net.h"

#include "runtime/io/image.h"
#include "runtime/io/npy.h"
#include "runtime/io/weights.h"
#include "runtime/net/emulator_record.h"
#include "runtime/net/report.h"

#ifdef SW_NET_WITH_MODEL
#include "graph/Executor.h"
#include "graph/Export.h"
#include "graph/Import.h"
#include "graph/Lowering.h"
#include "graph/ShapeInference.h"
#endif

#include <athread_emu.h>

#include <chrono>
#include <memory>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace sw_net_app {

#ifndef SW_NET_WITH_MODEL

int run_model(const Options &, const sw_dist::Job &) {
    throw std::runtime_error("--model: this sw_net was built without the ONNX importer (install libonnx-dev "
                             "and libprotobuf-dev, scripts/install_deps.sh, and rebuild)");
}

#else

namespace {

using sw_graph::shape_string;

/** Adds one pass's step records to the running totals (views have none; an in-place
 * concat has a row of zeros, "Concat (in place)", so that the table shows it). */
void accumulate(std::vector<sw_net::LayerRecord> &total, const sw_graph::ExecResult &r) {
    std::vector<sw_net::LayerRecord> pass;
    for (const sw_graph::StepResult &s : r.steps) {
        if (s.layer >= 0 || s.in_place) pass.push_back(s.record);
    }
    sw_net::accumulate(total, pass);
}

/** What graph/ConcatInPlace.h did with the model's concats. */
void print_concat_summary(const sw_graph::ConcatInPlaceStats &st, bool enabled) {
    if (st.concat_calls_before == 0 && st.concats == 0) return;
    if (!enabled) {
        std::printf("concat: %d concat layer calls copy %.2f MB (--concat-copies)\n", st.concat_calls_before,
                    double(st.copied_bytes_before) / 1e6);
        return;
    }
    std::printf("concat: %d of %d in place (%d of them views of a later concat's buffer), %d copying; concat "
                "layer calls %d -> %d, %d inputs copied into their slices, bytes copied %.2f MB -> %.2f MB\n",
                st.in_place, st.concats, st.views, st.copying, st.concat_calls_before, st.concat_calls_after,
                st.copied_inputs, double(st.copied_bytes_before) / 1e6, double(st.copied_bytes_after) / 1e6);
    for (const std::string &n : st.notes) std::printf("  concat %s\n", n.c_str());
}

/** The model's input, the same for every pass, and the number of passes: from --input (one
 * pass, exactly the input's shape) or from a PNG given to every image of the batch (--batch
 * a multiple of the model's batch; the passes reuse one input, nothing is copied per pass). */
std::vector<float> model_input(const Options &o, const sw_graph::Tensor &in, std::string *source, int *passes) {
    *passes = 1;
    const std::vector<int64_t> &shape = in.shape;
    const int64_t model_batch = shape.empty() ? 1 : shape[0];
    if (!o.input.empty()) {
        if (o.batch != 0 && o.batch != model_batch) {
            throw std::runtime_error("--batch " + std::to_string(o.batch) + ": with --input the batch is the model's (" +
                                     std::to_string(model_batch) + ")");
        }
        sw_io::NpyArray a = sw_io::load_npy_expect(
            o.input, shape, o.allow_nonfinite ? sw_io::NonFinite::Allow : sw_io::NonFinite::Refuse);
        *source = o.input;
        return std::move(a.data);
    }
    if (shape.size() != 4 || shape[1] != 3 || shape[2] != shape[3]) {
        throw std::runtime_error(o.model + ": input '" + in.name + "' has shape " + shape_string(shape) +
                                 ", not (N, 3, S, S): give it as --input x.npy");
    }
    const int batch = o.batch ? o.batch : int(model_batch);
    if (batch % model_batch != 0) {
        throw std::runtime_error("--batch " + std::to_string(batch) + " is not a multiple of the model's batch " +
                                 std::to_string(model_batch));
    }
    const sw_io::RgbImage rgb = sw_io::load_png_rgb(o.image);
    const std::vector<float> x = sw_io::preprocess_imagenet(rgb, int(shape[3]));
    std::vector<float> pass;
    for (int64_t n = 0; n < model_batch; n++) pass.insert(pass.end(), x.begin(), x.end());
    *source = o.image + " (" + std::to_string(rgb.width) + "x" + std::to_string(rgb.height) +
              ", resized and centre-cropped to " + std::to_string(shape[3]) + ", ImageNet mean/std)";
    *passes = int(batch / model_batch);
    return pass;
}

}  // namespace

int run_model(const Options &o, const sw_dist::Job &job) {
    if (job.rank == 0) {  // rank 0 writes every output
        check_outputs(o);
        if (!o.export_dir.empty()) sw_graph::check_export_dir(o.export_dir);
    }
    sw_graph::ImportOptions io;
    for (const std::string &s : o.input_shapes) sw_graph::add_input_shape(s, io.inference);
    const sw_graph::Graph g = sw_graph::import_onnx(o.model, io);
    if (g.inputs.size() != 1) {
        throw g.error("the model has " + std::to_string(g.inputs.size()) +
                      " inputs; sw_net --model runs models with one input");
    }
    const sw_graph::Tensor &in = g.tensor(g.inputs[0]);
    if (in.dtype != sw_graph::DType::Float32) {
        throw g.error("input '" + in.name + "' is " + sw_graph::dtype_name(in.dtype) + " (float32 only)");
    }
    sw_graph::lower_graph(g);  // an operator without a layer fails here, before the input is read
    std::string source;
    int passes = 1;
    const std::map<std::string, std::vector<float>> inputs = {{in.name, model_input(o, in, &source, &passes)}};

    sw_graph::ExecOptions eo;
    eo.schedule = o.schedule.empty() ? "auto" : o.schedule;
    eo.jobs = o.jobs;
    eo.concat_in_place = !o.concat_copies;
    eo.cache_dir = o.no_cache ? "" : !o.cache_dir.empty() ? o.cache_dir : sw_graph::default_cache_dir();
    eo.progress = [](const sw_graph::BuildProgress &p) {
        std::fprintf(stderr, "[%*d/%d] %6.1f s  %-8s %s%s\n", p.total >= 10 ? 2 : 1, p.done, p.total,
                     p.elapsed_seconds, p.info->schedule.c_str(), p.layer->key().c_str(),
                     p.info->from_cache ? "  (cached)" : "");
        if (!p.info->note.empty()) std::fprintf(stderr, "        %s\n", p.info->note.c_str());
    };
    const bool compare = o.compare && eo.schedule != "baseline";
    const char *what = eo.schedule == "auto" ? "autoscheduled by the Sunway autoscheduler"
                       : eo.schedule == "hand" ? "hand Sunway schedules"
                                               : "OpenACC-style baseline schedules";
    std::printf("%s on the emulated SW26010 core group (64 CPEs, athread emulator), %s\n", o.model.c_str(), what);
    std::printf("input: '%s' %s from %s, %d pass(es)\n", in.name.c_str(), shape_string(in.shape).c_str(),
                source.c_str(), passes);
    std::printf("layer cache: %s\n", eo.cache_dir.empty() ? "none (--no-cache)" : eo.cache_dir.c_str());
    print_data_parallel(job, passes);
    std::fflush(stdout);

    // Every distinct layer built; with several ranks rank 0 first, then the others load them
    // from the cache (not every rank compiling the same layers at once).
    if (job.rank > 0) {
        eo.progress = nullptr;
        sw_dist::barrier(job);
    }
    sw_graph::Executor ex(g, eo);
    if (job.rank == 0) sw_dist::barrier(job);
    int cached = 0, refused = 0;
    for (const sw_graph::LayerBuildInfo &b : ex.builds()) {
        cached += b.from_cache;
        refused += !b.note.empty();
    }
    std::printf("compiled %d distinct layers for %zu steps in %.1f s (%d from the cache", (int)ex.builds().size(),
                ex.lowered().steps.size(), ex.build_seconds(), cached);
    if (refused) std::printf(", %d with their hand schedule where the autoscheduler refused", refused);
    std::printf(")\n");
    print_concat_summary(ex.concat_placement().stats, eo.concat_in_place);
    if (!o.export_dir.empty() && job.rank == 0) {
        const sw_graph::ExportSummary e = sw_graph::export_model(ex, o.model, o.export_dir);
        std::printf("exported to %s: %d layers, %d steps, %lld weight floats, activations %lld bytes "
                    "(%lld without reuse); build it with make (sw5cc) or make emu (here)\n",
                    o.export_dir.c_str(), e.layers, e.steps, (long long)e.weight_floats, (long long)e.arena_bytes,
                    (long long)e.unshared_bytes);
    }
    std::unique_ptr<sw_graph::Executor> baseline;
    if (compare) {
        sw_graph::ExecOptions bo = eo;
        bo.schedule = "baseline";
        baseline = std::make_unique<sw_graph::Executor>(g, bo);
    }

    const std::string out_name = g.outputs.at(0);
    // Streamed: of each pass's output only the top-k classes per image (a 2-D output) are kept;
    // --dump-output is written pass by pass. Memory does not grow with the passes.
    std::vector<int64_t> out_shape;
    std::unique_ptr<TopK> top;
    std::unique_ptr<sw_io::NpyWriter> dump;
    std::vector<float> rows;  // with several ranks: this rank's outputs, written by rank 0 at the end
    std::vector<sw_net::LayerRecord> total, base_total;
    std::vector<sw_net::TraceSpan> spans;
    const auto [first_pass, last_pass] = sw_dist::share(passes, job.rank, job.size);
    const auto t0 = std::chrono::steady_clock::now();
    try {
        for (int64_t pass = first_pass; pass < last_pass; pass++) {
            const sw_graph::ExecResult r = ex.run(inputs, !o.trace.empty() && pass == first_pass ? &spans : nullptr);
            const sw_graph::Tensor &y = r.outputs.at(out_name);
            if (pass == first_pass) {
                out_shape = y.shape;
                if (!out_shape.empty()) out_shape[0] *= passes;
                else if (passes > 1) out_shape = {passes};
                if (out_shape.size() == 2) top = std::make_unique<TopK>(out_shape[1], o.top);
                if (!o.dump.empty() && !job.multi()) dump = std::make_unique<sw_io::NpyWriter>(o.dump, out_shape);
            }
            if (top) top->add(y.f32.data(), y.shape[0]);
            if (dump) dump->write(y.f32.data(), y.f32.size());
            if (!o.dump.empty() && job.multi()) rows.insert(rows.end(), y.f32.begin(), y.f32.end());
            accumulate(total, r);
            if (baseline) {
                const sw_graph::ExecResult rb = baseline->run(inputs);
                const std::vector<float> &yb = rb.outputs.at(out_name).f32;
                for (size_t i = 0; i < y.f32.size(); i++) {
                    if (!(std::fabs(y.f32[i] - yb[i]) <= 1e-4f + 1e-3f * std::fabs(y.f32[i])) &&
                        !(std::isnan(y.f32[i]) && std::isnan(yb[i]))) {
                        throw std::runtime_error("the " + eo.schedule + " and baseline schedules disagree on output '" +
                                                 out_name + "' element " + std::to_string(i) + ": " +
                                                 std::to_string(y.f32[i]) + " vs " + std::to_string(yb[i]));
                    }
                }
                accumulate(base_total, rb);
            }
        }
    } catch (...) {
        if (dump) remove_partial_output(o.dump);
        throw;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double mine = sw_net::modelled_seconds(total);
    const int64_t model_batch = in.shape.empty() ? 1 : in.shape[0];
    const std::vector<sw_dist::RankFigures> ranks = gather_data_parallel(
        job, top.get(), rows, out_shape, o.dump, (last_pass - first_pass) * model_batch, mine);

    std::printf("output: '%s' %s\n", out_name.c_str(), shape_string(out_shape).c_str());
    if (out_shape.size() == 2) {
        std::vector<std::string> labels;
        if (!o.labels.empty()) {
            labels = sw_io::load_labels(o.labels);
        } else if (out_shape[1] == 1000 && !o.default_labels.empty()) {
            labels = sw_io::load_labels(o.default_labels);  // ImageNet's classes
        }
        top->print(labels, "value");
    } else if (o.top_given) {
        std::printf("(--top applies to a 2-D (batch, classes) output only)\n");
    }
    const sw::Machine &machine = *sw::machine_by_name(athread_emu_machine_name());
    if (job.multi()) std::printf("\nper-layer table of rank 0's share of the passes:\n");
    sw_net::print_table(total, compare ? &base_total : nullptr, machine);
    if (job.mpi) sw_dist::print_job(ranks, sw_dist::data_parallel(ranks, machine), machine, stdout);
    std::printf("\nwall time on this machine: %.2f s for %d pass(es)%s\n", secs, passes,
                compare ? (" (" + eo.schedule + " and baseline schedules)").c_str() : "");
    if (!o.report.empty() && job.rank == 0) {  // rank 0 writes every output
        sw_net::write_report(o.report, o.model, total, compare ? &base_total : nullptr, machine);
        std::printf("per-layer report written to %s\n", o.report.c_str());
    }
    if (!o.trace.empty() && job.rank == 0) {
        sw_net::write_trace(o.trace, spans);
        std::printf("trace of the first pass written to %s (open it in ui.perfetto.dev)\n", o.trace.c_str());
    }
    if (dump) dump->close();
    if (!o.dump.empty()) std::printf("output '%s' written to %s\n", out_name.c_str(), o.dump.c_str());
    return 0;
}

#endif

}  // namespace sw_net_app
