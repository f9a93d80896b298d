/** \file
 * sw_net: runs a network end to end on the emulated SW26010 core group and prints the top
 * classes and a per-layer table of what the emulator measured:
 * - --net alexnet|vgg19: the built-in networks, compiled with the project, with the hand
 *   Sunway schedules, the OpenACC-style baseline or the autoscheduler's (this file);
 * - --model FILE.onnx: any supported ONNX model, each distinct layer generated and compiled
 *   ahead of time through a persistent cache (sw_net_model.cpp).
 * With the hand or the autoscheduled schedules it also runs the baseline and reports the
 * speedup per layer (--no-compare skips that). Options: sw_net --help.
 */
#include "apps/sw_net.h"

#ifdef SW_NET_WITH_MODEL
#include "apps/fc_split.h"
#endif

#include "runtime/io/image.h"
#include "runtime/io/npy.h"
#include "runtime/io/weights.h"
#include "runtime/io/output_file.h"
#include "runtime/net/emulator_record.h"
#include "runtime/net/network.h"
#include "runtime/net/report.h"
#include "dist/JobModel.h"

#include <athread_emu.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

const sw_net::NetworkTable &alexnet_table();
const sw_net::NetworkTable &vgg19_table();

namespace sw_net_app {

namespace {

/** The images of the run, each C x H x W, normalised, streamed: the images of an .npy
 * (N, C, H, W), read from the file one pass at a time (the file is checked whole before the
 * run: its shape against its size, then every value for NaN and infinities, one image at a
 * time), or one PNG, preprocessed once and given to every image of the batch. Nothing is
 * kept per image: memory does not grow with --batch. */
class Images {
public:
    /** Images [first, last) are this run's (all of them but with several ranks): only they are
     * checked for NaN, so a rank fails on its own images. */
    Images(const Options &o, const sw_net::Shape &in, int64_t first, int64_t last)
        : per_image_(sw_net::elements(in) / in[0]) {
        const sw_io::NonFinite nf = o.allow_nonfinite ? sw_io::NonFinite::Allow : sw_io::NonFinite::Refuse;
        if (!o.input.empty()) {
            npy_ = std::make_unique<sw_io::NpyReader>(o.input, nf);  // the header is checked against the file size
            const std::vector<int64_t> one = {in[1], in[2], in[3]};
            const std::vector<int64_t> expected = {int64_t(o.batch), in[1], in[2], in[3]};
            const std::vector<int64_t> &shape = npy_->shape();
            if (shape != expected && !(shape == one && o.batch == 1)) {
                throw sw_io::IoError(o.input + ": expected a tensor of shape " + sw_io::shape_to_string(expected) +
                                     " for --batch " + std::to_string(o.batch) + ", got " +
                                     sw_io::shape_to_string(shape));
            }
            if (nf == sw_io::NonFinite::Refuse) {  // refused before the run, not at image n
                std::vector<float> x(static_cast<size_t>(per_image_));
                for (int64_t n = first; n < last; n++) npy_->read(size_t(n) * x.size(), x.size(), x.data());
            }
            source_ = o.input;
        } else {
            const sw_io::RgbImage rgb = sw_io::load_png_rgb(o.image);
            png_ = sw_io::preprocess_imagenet(rgb, int(in[3]));
            source_ = o.image + " (" + std::to_string(rgb.width) + "x" + std::to_string(rgb.height) +
                      ", resized and centre-cropped to " + std::to_string(in[3]) + ", ImageNet mean/std)";
        }
    }
    /** Appends image n to x. */
    void append(int n, std::vector<float> &x) const {
        if (npy_) {
            const size_t at = x.size();
            x.resize(at + size_t(per_image_));
            npy_->read(size_t(n) * size_t(per_image_), size_t(per_image_), x.data() + at);
        } else {
            x.insert(x.end(), png_.begin(), png_.end());
        }
    }
    const std::string &source() const { return source_; }

private:
    int64_t per_image_;
    std::unique_ptr<sw_io::NpyReader> npy_;
    std::vector<float> png_;
    std::string source_;
};

int run_net_checked(const Options &o, const sw_dist::Job &job) {
    const sw_net::Network net(o.net == "alexnet" ? alexnet_table() : vgg19_table());
    const sw_net::Shape in = net.input_shape();
    const int compiled_batch = int(in[0]);
    if (o.batch % compiled_batch != 0) {
        throw std::runtime_error("this build compiles " + o.net + " for batch " + std::to_string(compiled_batch) +
                                 "; --batch must be a multiple of it");
    }
    // With several ranks each runs a contiguous share of the passes (the first ranks one more
    // when they do not divide); a rank beyond the passes idles.
    const int passes = o.batch / compiled_batch;
    // With --fc-split every rank runs every pass (the dense layers are split instead).
    const auto [first_pass, last_pass] =
        o.fc_split ? std::pair<int64_t, int64_t>{0, passes} : sw_dist::share(passes, job.rank, job.size);
    const Images images(o, in, first_pass * compiled_batch, last_pass * compiled_batch);
    const sw_io::NonFinite nf = o.allow_nonfinite ? sw_io::NonFinite::Allow : sw_io::NonFinite::Refuse;

    sw_net::Network loaded = net;
    std::string weights_note;
    if (o.weights.empty()) {
        loaded.load_parameters([](const std::string &layer, const std::string &what, const sw_net::Shape &s) {
            return what == "weight" ? sw_io::deterministic_weights(layer, s) : sw_io::deterministic_bias(layer, s[0]);
        });
        weights_note = "deterministic seeded weights (no --weights given): the classes below are not meaningful";
    } else {
        const sw_io::WeightStore store(o.weights, nf);
        loaded.load_parameters([&](const std::string &layer, const std::string &what, const sw_net::Shape &s) {
            return what == "weight" ? store.weight(layer, s) : store.bias(layer, s[0]);
        });
        weights_note = "weights from " + o.weights;
    }
    std::vector<std::string> labels;
    if (!o.labels.empty()) labels = sw_io::load_labels(o.labels);

    const char *schedules = o.schedule == "sunway" ? "hand Sunway schedules"
                            : o.schedule == "auto" ? "autoscheduled by the Sunway autoscheduler"
                                                   : "OpenACC-style baseline schedules";
    std::printf("%s on the emulated SW26010 core group (64 CPEs, athread emulator), %s\n", o.net.c_str(),
                schedules);
    std::printf("input: %s, batch %d (network compiled for batch %d: %d pass(es))\n", images.source().c_str(),
                o.batch, compiled_batch, passes);
#ifdef SW_NET_WITH_MODEL
    std::unique_ptr<FcSplit> fc;
#endif
    const sw_net::Network::DenseHook *dense_hook = nullptr;
    if (o.fc_split) {
#ifdef SW_NET_WITH_MODEL
        fc = std::make_unique<FcSplit>(loaded, job, o.schedule);
        dense_hook = &fc->hook();
        std::printf("fc-split: the dense layers split by output rows over %d rank(s), one per core group, then "
                    "allgathered; rank 0: %s\n", job.size, fc->describe().c_str());
#else
        throw std::runtime_error("--fc-split: this sw_net was built without the run-time layer builds (jit/, "
                                 "which come with the ONNX importer: install libonnx-dev and rebuild)");
#endif
    } else {
        print_data_parallel(job, passes);
    }
    std::printf("%s\n", weights_note.c_str());

    const int64_t classes = net.output_shape()[1];
    const bool compare = o.compare && o.schedule != "baseline";
    const std::string compared = o.schedule == "auto" ? "autoscheduled" : "hand";
    // Streamed: per image only its top-k classes are kept; --dump-output is written pass by pass.
    TopK top(classes, o.top);
    // One rank streams its outputs into the file; with several, each keeps its own rows and
    // rank 0 writes them all in input order at the end.
    std::unique_ptr<sw_io::NpyWriter> dump;
    std::vector<float> rows;
    const bool gathered = job.multi() && !o.fc_split;  // with --fc-split rank 0 has every output
    if (!o.dump.empty() && !gathered && job.rank == 0) {
        dump = std::make_unique<sw_io::NpyWriter>(o.dump, std::vector<int64_t>{o.batch, classes});
    }
    std::vector<sw_net::LayerRecord> total, baseline;
    std::vector<sw_net::TraceSpan> spans;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        for (int64_t pass = first_pass; pass < last_pass; pass++) {
            std::vector<float> x;
            for (int n = 0; n < compiled_batch; n++) images.append(int(pass) * compiled_batch + n, x);
            std::vector<sw_net::LayerRecord> records;
            const std::vector<float> y =
                loaded.run(x, o.schedule, &records, !o.trace.empty() && pass == first_pass ? &spans : nullptr,
                           dense_hook);
            top.add(y.data(), compiled_batch);
            if (dump) dump->write(y.data(), y.size());
            if (!o.dump.empty() && gathered) rows.insert(rows.end(), y.begin(), y.end());
            sw_net::accumulate(total, records);
            if (compare) {
                std::vector<sw_net::LayerRecord> base_records;
                const std::vector<float> yb = loaded.run(x, "baseline", &base_records);
                for (size_t i = 0; i < y.size(); i++) {
                    if (!(std::fabs(y[i] - yb[i]) <= 1e-4f + 1e-3f * std::fabs(y[i])) &&
                        !(std::isnan(y[i]) && std::isnan(yb[i]))) {
                        throw std::runtime_error("the " + compared + " and baseline schedules disagree on output " +
                                                 std::to_string(i));
                    }
                }
                sw_net::accumulate(baseline, base_records);
            }
        }
    } catch (...) {
        if (dump) remove_partial_output(o.dump);
        throw;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const sw::Machine &machine = *sw::machine_by_name(athread_emu_machine_name());

    const double mine = sw_net::modelled_seconds(total);
    std::vector<sw_dist::RankFigures> ranks;
    std::vector<std::vector<double>> split_times;
    if (o.fc_split) {
        split_times = sw_dist::gather(job, std::vector<double>{mine});
    } else {
        ranks = gather_data_parallel(job, &top, rows, {o.batch, classes}, o.dump,
                                     (last_pass - first_pass) * compiled_batch, mine);
    }

    top.print(labels, "probability");
    if (job.multi()) {
        std::printf(o.fc_split ? "\nper-layer table of rank 0 (every image; its rows of each dense layer):\n"
                               : "\nper-layer table of rank 0's share of the batch:\n");
    }
    sw_net::print_table(total, compare ? &baseline : nullptr, machine);
    if (job.mpi && !o.fc_split) sw_dist::print_job(ranks, sw_dist::data_parallel(ranks, machine), machine, stdout);
#ifdef SW_NET_WITH_MODEL
    if (fc && job.rank == 0) {
        double slowest = 0, dense = 0;
        for (const std::vector<double> &t : split_times) slowest = std::max(slowest, t[0]);
        for (const sw_net::LayerRecord &r : total) dense += r.kind == "dense" ? r.modelled_seconds : 0;
        std::printf("fc-split over %d core group(s): modelled %.3f ms for %d image(s) (slowest rank %.3f ms, its "
                    "dense layers on rank 0 %.3f ms, + allgathers %.3f ms)\n",
                    job.size, (slowest + fc->comm_seconds()) * 1e3, o.batch, slowest * 1e3, dense * 1e3,
                    fc->comm_seconds() * 1e3);
    }
#endif
    std::printf("\nwall time on this machine: %.2f s for %d image(s)%s\n", secs, o.batch,
                compare ? (" (" + compared + " and baseline schedules)").c_str() : "");
    if (!o.report.empty() && job.rank == 0) {  // rank 0 writes every output
        sw_net::write_report(o.report, o.net, total, compare ? &baseline : nullptr, machine);
        std::printf("per-layer report written to %s\n", o.report.c_str());
    }
    if (!o.trace.empty() && job.rank == 0) {
        sw_net::write_trace(o.trace, spans);
        std::printf("trace of the first pass written to %s (open it in ui.perfetto.dev)\n", o.trace.c_str());
    }
    if (dump) dump->close();
    if (!o.dump.empty()) std::printf("probabilities written to %s\n", o.dump.c_str());
    return 0;
}

}  // namespace

TopK::TopK(int64_t classes, int k) : classes_(classes), k_(int(std::min<int64_t>(k, classes))) {}

void TopK::add(const float *values, int64_t rows) {
    // A heap of the k best so far (its top the worst of them): O(k) memory per image, however
    // many classes (a model's 2-D output may have millions).
    using Entry = std::pair<float, int64_t>;
    auto before = [](const Entry &a, const Entry &b) {  // a ranks before b; ties: the lower class
        if (std::isnan(a.first) != std::isnan(b.first)) return std::isnan(a.first);
        if (!std::isnan(a.first) && a.first != b.first) return a.first > b.first;
        return a.second < b.second;
    };
    std::vector<Entry> heap;
    for (int64_t n = 0; n < rows; n++) {
        const float *p = values + size_t(n) * size_t(classes_);
        heap.clear();
        for (int64_t c = 0; c < classes_; c++) {
            const Entry e{p[c], c};
            if (int(heap.size()) < k_) {
                heap.push_back(e);
                std::push_heap(heap.begin(), heap.end(), before);
            } else if (k_ > 0 && before(e, heap.front())) {
                std::pop_heap(heap.begin(), heap.end(), before);
                heap.back() = e;
                std::push_heap(heap.begin(), heap.end(), before);
            }
        }
        std::sort_heap(heap.begin(), heap.end(), before);
        best_.insert(best_.end(), heap.begin(), heap.end());
    }
}

void TopK::print(const std::vector<std::string> &labels, const char *what) const {
    for (size_t n = 0; k_ > 0 && n < best_.size() / size_t(k_); n++) {
        std::printf("\nimage %zu: top-%d (%s)\n", n, k_, what);
        for (int j = 0; j < k_; j++) {
            const auto &[value, c] = best_[n * size_t(k_) + size_t(j)];
            std::printf("  %10.4f  class %4lld  %s\n", value, (long long)c,
                        size_t(c) < labels.size() ? labels[size_t(c)].c_str() : "");
        }
    }
}

std::vector<double> TopK::values() const {
    std::vector<double> v;
    for (const auto &e : best_) v.push_back(double(e.first));
    return v;
}

std::vector<int64_t> TopK::classes() const {
    std::vector<int64_t> v;
    for (const auto &e : best_) v.push_back(e.second);
    return v;
}

void TopK::append(const std::vector<double> &values, const std::vector<int64_t> &classes) {
    for (size_t i = 0; i < values.size() && i < classes.size(); i++) best_.push_back({float(values[i]), classes[i]});
}

void print_data_parallel(const sw_dist::Job &job, int passes) {
    if (!job.multi()) return;
    std::printf("data parallel: %d ranks, one per emulated core group; each runs a contiguous share of the "
                "passes\n", job.size);
    if (job.size > passes) {
        std::printf("note: %d ranks for %d pass(es): ranks %d-%d idle\n", job.size, passes, passes, job.size - 1);
    }
}

std::vector<sw_dist::RankFigures> gather_data_parallel(const sw_dist::Job &job, TopK *top, const std::vector<float> &rows,
                                                      const std::vector<int64_t> &dump_shape, const std::string &dump,
                                                      int64_t images, double modelled_seconds) {
    std::vector<sw_dist::RankFigures> ranks;
    if (!job.mpi) return ranks;
    const std::vector<double> values = top ? top->values() : std::vector<double>();
    const std::vector<std::vector<double>> all_values = sw_dist::gather(job, values);
    const std::vector<std::vector<int64_t>> all_classes =
        sw_dist::gather(job, top ? top->classes() : std::vector<int64_t>());
    const double result_bytes = double(values.size()) * 12 + double(rows.size()) * 4;  // float + int64 per pair
    const std::vector<std::vector<double>> figures =
        sw_dist::gather(job, std::vector<double>{double(images), modelled_seconds, result_bytes});
    const std::vector<std::vector<float>> all_rows = sw_dist::gather(job, rows);
    if (job.rank != 0) return ranks;
    // Rank 0 holds the first share: the others' images follow in rank order.
    for (size_t r = 1; top && r < all_values.size(); r++) top->append(all_values[r], all_classes[r]);
    for (const std::vector<double> &f : figures) ranks.push_back({int64_t(f[0]), f[1], int64_t(f[2])});
    if (!dump.empty() && job.multi()) {  // one rank streamed it itself
        sw_io::NpyWriter w(dump, dump_shape);
        for (const std::vector<float> &r : all_rows) w.write(r.data(), r.size());
        w.close();
    }
    return ranks;
}

void remove_partial_output(const std::string &path) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) std::filesystem::remove(path, ec);
}

void check_outputs(const Options &o) {
    for (const std::string &path : {o.report, o.trace, o.dump}) {
        if (!path.empty()) sw_io::check_writable(path);
    }
}

int run_net(const Options &options, const sw_dist::Job &job) {
    Options o = options;
    if (o.batch == 0) o.batch = 1;
    if (o.labels.empty()) o.labels = o.default_labels;
    if (job.rank == 0) check_outputs(o);  // rank 0 writes every output
    return run_net_checked(o, job);
}

}  // namespace sw_net_app

int main(int argc, char **argv) {
    using sw_net_app::Options;
    // Under mpirun: one rank per emulated core group (dist/Ranks.h); only rank 0 prints.
    const sw_dist::Job job = sw_dist::start(&argc, &argv);
    if (job.rank > 0 && !std::freopen("/dev/null", "w", stdout)) sw_dist::abort_job(job, "cannot silence stdout");
    const int status = sw_net_app::main_of_rank(argc, argv, job);
    sw_dist::finish(job);
    return status;
}

int sw_net_app::main_of_rank(int argc, char **argv, const sw_dist::Job &job) {
    Options o;
    o.image = SW_SAMPLE_IMAGE;
    o.default_labels = SW_LABELS;
    CLI::App app{"sw_net: runs a network on the emulated SW26010 core group (64 CPEs, athread emulator) and\n"
                 "prints the top classes and a per-layer table of the modelled SW26010 time."};
    app.get_formatter()->column_width(34);
    app.add_option("--net", o.net, "built-in network: alexnet or vgg19 (default vgg19)")
        ->check(CLI::IsMember({"alexnet", "vgg19"}));
    app.add_option("--model", o.model,
                   "an ONNX model (float32, NCHW): each distinct layer is generated and compiled ahead of "
                   "time (cached), then the model runs")
        ->check(CLI::ExistingFile);
    app.add_option("--input-shape", o.input_shapes,
                   "with --model: static shape of an input with dynamic dims, name=NxCxHxW (repeatable)")
        ->take_all();
    auto *image = app.add_option("--image", o.image, "a PNG image (default: the bundled sample)");
    auto *input = app.add_option("--input", o.input,
                                 "a float32 .npy input: (N, 3, H, W) for --net; exactly the model input's shape "
                                 "for --model");
    input->excludes(image);
    app.add_option("--weights", o.weights,
                   "--net: directory of <layer>.weight.npy / <layer>.bias.npy (PyTorch layout); default: "
                   "deterministic seeded weights");
    app.add_option("--labels", o.labels, "class names, one per line (default: ImageNet's for 1000 classes)");
    app.add_option("--batch", o.batch, "images to run (--net: default 1; --model: a multiple of the model's batch)")
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--schedule", o.schedule,
                   "hand, baseline (OpenACC-style) or auto (the Sunway autoscheduler); default auto (the output "
                   "says which ran)")
        ->check(CLI::IsMember({"hand", "baseline", "auto"}));
    app.add_flag("!--no-compare", o.compare, "do not run the baseline schedules for the speedup column");
    auto *top = app.add_option("--top", o.top, "classes to print per image (default 5)")->check(CLI::Range(1, 1 << 20));
    app.add_option("--dump-output", o.dump, "write the output (--net: probabilities; --model: the model's "
                                            "output as it computes it) as .npy");
    app.add_option("--report", o.report, "write the per-layer figures as .csv or .json");
    app.add_option("--trace", o.trace, "write a Chrome/Perfetto trace of the first pass (.json)");
    app.add_option("--cache-dir", o.cache_dir,
                   "--model: the compiled-layer cache (default $SW_NET_CACHE_DIR, $XDG_CACHE_HOME/sw_net or "
                   "~/.cache/sw_net)");
    app.add_option("--export", o.export_dir,
                   "--model: also write a self-contained folder for sw5cc (layers, host program, weights, "
                   "Makefile; `make emu` builds it here against the emulator)");
    app.add_flag("--no-cache", o.no_cache, "--model: build every layer in a temporary directory");
    app.add_flag("--concat-copies", o.concat_copies,
                 "--model: every Concat copies its inputs with concat layers (default: producers write into "
                 "slices of the concat's buffer where they can, graph/ConcatInPlace.h)");
    app.add_option("--jobs", o.jobs, "--model: layers compiled at once (default: one per core)")
        ->check(CLI::Range(1, 256));
    app.add_flag("--fc-split", o.fc_split,
                 "--net under mpirun: every rank runs the same images and each dense layer is split by output "
                 "rows over the ranks (one per core group), then allgathered");
    app.add_flag("--allow-nonfinite", o.allow_nonfinite, "accept NaN and infinite values in inputs and weights");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        if (job.rank == 0) std::fprintf(stderr, "error: %s\n(sw_net --help lists the options)\n", e.what());
        return 1;
    }
    o.image_given = image->count() > 0;
    o.top_given = top->count() > 0;
    try {
        if (!o.model.empty()) {
            if (app.count("--net")) throw std::runtime_error("--net and --model exclude each other");
            if (!o.weights.empty()) throw std::runtime_error("--weights: a model's weights are in its ONNX file");
            if (o.fc_split) throw std::runtime_error("--fc-split applies to --net only");
            return sw_net_app::run_model(o, job);
        }
        if (!o.input_shapes.empty()) throw std::runtime_error("--input-shape applies to --model only");
        if (o.fc_split && o.compare) {
            throw std::runtime_error("--fc-split: add --no-compare (the baseline comparison runs unsplit)");
        }
        if (app.count("--cache-dir") || o.no_cache || app.count("--jobs") || app.count("--export") ||
            o.concat_copies) {
            throw std::runtime_error("--cache-dir, --no-cache, --jobs, --export and --concat-copies apply to --model only");
        }
        // The autoscheduled layers by default (VGG-19: 89.7 ms modelled against 147.4 with the
        // hand schedules); the first line of the output names the schedules that ran.
        if (o.schedule.empty()) o.schedule = "auto";
        if (o.schedule == "hand") o.schedule = "sunway";
        return sw_net_app::run_net(o, job);
    } catch (const std::bad_alloc &) {
        if (job.multi()) sw_dist::abort_job(job, "out of memory");
        std::fprintf(stderr, "error: out of memory\n");
        return 1;
    } catch (const std::exception &e) {
        const std::string what = e.what();
        // With several ranks a failing rank ends the whole job with its message (no rank is
        // left waiting for it in a collective step).
        if (job.multi()) sw_dist::abort_job(job, what);
        std::fprintf(stderr, "%s%s\n", what.rfind("error: ", 0) == 0 ? "" : "error: ", what.c_str());
        return 1;
    }
}
