/** \file
 * sw_net: runs a network end to end on the emulated SW26010 core group and prints the top
 * classes and a per-layer table of what the emulator measured:
 * - --net alexnet|vgg19|vgg16: the built-in networks, built as graphs (graph/Networks.h);
 * - --model FILE.onnx: any supported ONNX model.
 * Both run through one runtime (sw_net_model.cpp: graph/'s executor, each distinct layer
 * generated and compiled ahead of time through a persistent cache) with the autoscheduler's
 * schedules (the default), the hand Sunway schedules or the OpenACC-style baseline. With the
 * hand or the autoscheduled schedules it also runs the baseline and reports the speedup per
 * layer (--no-compare skips that). Options: sw_net --help.
 */
#include "apps/sw_net.h"

#include "dist/JobModel.h"
#include "runtime/io/npy.h"
#include "runtime/io/output_file.h"

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

namespace sw_net_app {

TopK::TopK(int64_t classes, int k) : classes_(classes), k_(int(std::min<int64_t>(k, classes))) {}

void TopK::add(const float *values, int64_t rows) {
    // A heap of the k best so far (its top the worst of them): O(k) memory per image, however
    // many classes (a model's 2-D output may have millions).
    using Entry = std::pair<float, int64_t>;
    auto before = [](const Entry &a, const Entry &b) { // a ranks before b; ties: the lower class
        if (std::isnan(a.first) != std::isnan(b.first))
            return std::isnan(a.first);
        if (!std::isnan(a.first) && a.first != b.first)
            return a.first > b.first;
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
    for (const auto &e : best_)
        v.push_back(double(e.first));
    return v;
}

std::vector<int64_t> TopK::classes() const {
    std::vector<int64_t> v;
    for (const auto &e : best_)
        v.push_back(e.second);
    return v;
}

void TopK::append(const std::vector<double> &values, const std::vector<int64_t> &classes) {
    for (size_t i = 0; i < values.size() && i < classes.size(); i++)
        best_.push_back({float(values[i]), classes[i]});
}

void print_data_parallel(const sw_dist::Job &job, int passes) {
    if (!job.multi())
        return;
    std::printf(
        "data parallel: %d ranks, one per emulated core group; each runs a contiguous share of the "
        "passes\n",
        job.size);
    if (job.size > passes) {
        std::printf("note: %d ranks for %d pass(es): ranks %d-%d idle\n", job.size, passes, passes,
                    job.size - 1);
    }
}

std::vector<sw_dist::RankFigures> gather_data_parallel(const sw_dist::Job &job, TopK *top,
                                                       const std::vector<float> &rows,
                                                       const std::vector<int64_t> &dump_shape,
                                                       const std::string &dump, int64_t images,
                                                       double modelled_seconds) {
    std::vector<sw_dist::RankFigures> ranks;
    if (!job.mpi)
        return ranks;
    const std::vector<double> values = top ? top->values() : std::vector<double>();
    const std::vector<std::vector<double>> all_values = sw_dist::gather(job, values);
    const std::vector<std::vector<int64_t>> all_classes =
        sw_dist::gather(job, top ? top->classes() : std::vector<int64_t>());
    const double result_bytes =
        double(values.size()) * 12 + double(rows.size()) * 4; // float + int64 per pair
    const std::vector<std::vector<double>> figures =
        sw_dist::gather(job, std::vector<double>{double(images), modelled_seconds, result_bytes});
    const std::vector<std::vector<float>> all_rows = sw_dist::gather(job, rows);
    if (job.rank != 0)
        return ranks;
    // Rank 0 holds the first share: the others' images follow in rank order.
    for (size_t r = 1; top && r < all_values.size(); r++)
        top->append(all_values[r], all_classes[r]);
    for (const std::vector<double> &f : figures)
        ranks.push_back({int64_t(f[0]), f[1], int64_t(f[2])});
    if (!dump.empty() && job.multi()) { // one rank streamed it itself
        sw_io::NpyWriter w(dump, dump_shape);
        for (const std::vector<float> &r : all_rows)
            w.write(r.data(), r.size());
        w.close();
    }
    return ranks;
}

void remove_partial_output(const std::string &path) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec))
        std::filesystem::remove(path, ec);
}

void check_outputs(const Options &o) {
    for (const std::string &path : {o.report, o.trace}) {
        if (!path.empty())
            sw_io::check_writable(path);
    }
    // NAME=PATH: the path (a path with '=' in it is checked again once the outputs are known).
    for (const std::string &d : o.dumps) {
        const size_t eq = d.find('=');
        sw_io::check_writable(eq == std::string::npos ? d : d.substr(eq + 1));
    }
}

} // namespace sw_net_app

int main(int argc, char **argv) {
    using sw_net_app::Options;
    // Under mpirun: one rank per emulated core group (dist/Ranks.h); only rank 0 prints.
    const sw_dist::Job job = sw_dist::start(&argc, &argv);
    if (job.rank > 0 && !std::freopen("/dev/null", "w", stdout))
        sw_dist::abort_job(job, "cannot silence stdout");
    const int status = sw_net_app::main_of_rank(argc, argv, job);
    sw_dist::finish(job);
    return status;
}

int sw_net_app::main_of_rank(int argc, char **argv, const sw_dist::Job &job) {
    Options o;
    o.image = SW_SAMPLE_IMAGE;
    o.default_labels = SW_LABELS;
    CLI::App app{"sw_net: runs a network on the emulated SW26010 core group (64 CPEs, athread "
                 "emulator) and\n"
                 "prints the top classes and a per-layer table of the modelled SW26010 time."};
    app.get_formatter()->column_width(34);
    app.add_option("--net", o.net, "built-in network: alexnet, vgg19 or vgg16 (default vgg19)")
        ->check(CLI::IsMember({"alexnet", "vgg19", "vgg16"}));
    app.add_option("--machine", o.machine,
                   "the machine the layers are generated for and modelled as: sw26010 (default) "
                   "or sw26010-pro (one core group of each; the Pro's timing model rests on "
                   "unmeasured parameters)")
        ->check(CLI::IsMember({"sw26010", "sw26010-pro"}));
    app.add_option("--channel-div", o.channel_div,
                   "--net: a reduced variant: every channel count divided by D")
        ->check(CLI::Range(1, 64));
    app.add_option("--input-size", o.input_size,
                   "--net: a reduced variant: input of S x S (default 227 or 224)")
        ->check(CLI::Range(1, 4096));
    app.add_option("--classes", o.classes, "--net: a reduced variant: K classes (default 1000)")
        ->check(CLI::Range(1, 1 << 20));
    app.add_option(
           "--model", o.model,
           "an ONNX model (float32, NCHW): each distinct layer is generated and compiled ahead of "
           "time (cached), then the model runs")
        ->check(CLI::ExistingFile);
    app.add_option(
           "--input-shape", o.input_shapes,
           "with --model: static shape of an input with dynamic dims, name=NxCxHxW (repeatable)")
        ->take_all();
    auto *image = app.add_option("--image", o.image, "a PNG image (default: the bundled sample)");
    std::vector<std::string> input_args;
    auto *input = app.add_option(
        "--input", input_args,
        "a float32 .npy input: the input's shape, or (N, ...) for --batch N (streamed); with "
        "--model also name=file.npy, repeatable: each input of a model of several inputs or of "
        "int64 ones (token ids, masks: int64 or int32 .npy)");
    input->excludes(image);
    app.add_option(
        "--weights", o.weights,
        "--net: directory of <layer>.weight.npy / <layer>.bias.npy (PyTorch layout); default: "
        "deterministic seeded weights");
    app.add_option("--labels", o.labels,
                   "class names, one per line (default: ImageNet's for 1000 classes)");
    app.add_option("--batch", o.batch,
                   "images to run, streamed pass by pass (a multiple of the model's batch; "
                   "default: its batch)")
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--schedule", o.schedule,
                   "hand, baseline (OpenACC-style) or auto (the Sunway autoscheduler); default "
                   "auto (the output "
                   "says which ran)")
        ->check(CLI::IsMember({"hand", "baseline", "auto"}));
    app.add_flag("!--no-compare", o.compare,
                 "do not run the baseline schedules for the speedup column");
    auto *top = app.add_option("--top", o.top, "classes to print per image (default 5)")
                    ->check(CLI::Range(1, 1 << 20));
    app.add_option("--dump-output", o.dumps,
                   "write an output as .npy: PATH the first (--net: the probabilities; --model: "
                   "the model's first output as it computes it), NAME=PATH the output NAME "
                   "(repeatable)");
    app.add_option("--report", o.report, "write the per-layer figures as .csv or .json");
    app.add_option("--trace", o.trace, "write a Chrome/Perfetto trace of the first pass (.json)");
    app.add_option("--cache-dir", o.cache_dir,
                   "the compiled-layer cache (default $SW_NET_CACHE_DIR, $XDG_CACHE_HOME/sw_net or "
                   "~/.cache/sw_net)");
    app.add_option("--export", o.export_dir,
                   "also write a self-contained folder for sw5cc (layers, host program, weights, "
                   "Makefile; `make emu` builds it here against the emulator)");
    app.add_flag("--no-cache", o.no_cache, "build every layer in a temporary directory");
    app.add_flag(
        "--concat-copies", o.concat_copies,
        "--model: every Concat copies its inputs with concat layers (default: producers write into "
        "slices of the concat's buffer where they can, graph/ConcatInPlace.h)");
    app.add_option("--fuse-prologue", o.fuse_prologue,
                   "--model: fuse a BatchNorm (+ ReLU) left unfolded into the Conv that alone "
                   "reads it: auto (where the autoscheduler predicts the fused conv faster than "
                   "the two layers), always or never (graph/Lowering.h)")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    app.add_option("--jobs", o.jobs, "layers compiled at once (default: one per core)")
        ->check(CLI::Range(1, 256));
    app.add_flag(
        "--fc-split", o.fc_split,
        "under mpirun: every rank runs the same images and each dense layer is split by output "
        "rows over the ranks (one per core group), then allgathered");
    app.add_flag("--allow-nonfinite", o.allow_nonfinite,
                 "accept NaN and infinite values in inputs and weights");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        if (job.rank == 0)
            std::fprintf(stderr, "error: %s\n(sw_net --help lists the options)\n", e.what());
        return 1;
    }
    o.image_given = image->count() > 0;
    for (const std::string &a : input_args) {
        const size_t eq = a.find('=');
        if (eq == std::string::npos && input_args.size() == 1) {
            o.input = a;
        } else if (eq == std::string::npos || eq == 0 || eq + 1 == a.size()) {
            if (job.rank == 0) {
                std::fprintf(stderr,
                             "error: --input %s: with several --input each is "
                             "name=file.npy\n",
                             a.c_str());
            }
            return 1;
        } else {
            o.named_inputs.push_back(a);
        }
    }
    o.top_given = top->count() > 0;
    try {
        if (o.schedule.empty())
            o.schedule = "auto"; // the first line of the output names what ran
        if (o.fc_split && o.compare) {
            throw std::runtime_error(
                "--fc-split: add --no-compare (the baseline comparison runs unsplit)");
        }
        if (o.fc_split && !o.export_dir.empty()) {
            throw std::runtime_error(
                "--fc-split and --export exclude each other (an export runs on one core group)");
        }
        if (!o.model.empty()) {
            if (app.count("--net"))
                throw std::runtime_error("--net and --model exclude each other");
            if (!o.weights.empty())
                throw std::runtime_error("--weights: a model's weights are in its ONNX file");
            if (app.count("--channel-div") || app.count("--input-size") || app.count("--classes")) {
                throw std::runtime_error(
                    "--channel-div, --input-size and --classes apply to --net only");
            }
            return sw_net_app::run_model(o, job);
        }
        if (!o.input_shapes.empty())
            throw std::runtime_error("--input-shape applies to --model only");
        if (!o.named_inputs.empty())
            throw std::runtime_error("--input name=file.npy applies to --model only");
        return sw_net_app::run_net(o, job);
    } catch (const std::bad_alloc &) {
        if (job.multi())
            sw_dist::abort_job(job, "out of memory");
        std::fprintf(stderr, "error: out of memory\n");
        return 1;
    } catch (const std::exception &e) {
        const std::string what = e.what();
        // With several ranks a failing rank ends the whole job with its message (no rank is
        // left waiting for it in a collective step).
        if (job.multi())
            sw_dist::abort_job(job, what);
        std::fprintf(stderr, "%s%s\n",
                     what.rfind("error: ", 0) == 0 ? "" : "error: ", what.c_str());
        return 1;
    }
}
