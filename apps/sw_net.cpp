/** \file
 * sw_net: runs AlexNet or VGG-19 end to end on the emulated SW26010 core group, with the
 * hand Sunway schedules, the OpenACC-style baseline or the schedules of the Sunway
 * autoscheduler, and prints the top classes and a per-layer table of what the emulator
 * measured.
 *
 *   sw_net [--net alexnet|vgg19] [--image file.png | --input x.npy] [--weights dir]
 *          [--labels file] [--batch N] [--schedule hand|baseline|auto] [--no-compare]
 *          [--top K] [--dump-output out.npy] [--report layers.csv|.json] [--trace trace.json]
 *
 * With the hand or the autoscheduled schedules it also runs the baseline and reports the
 * speedup per layer (--no-compare skips that).
 */
#include "apps/io/image.h"
#include "apps/io/npy.h"
#include "apps/io/weights.h"
#include "apps/net/network.h"
#include "apps/net/report.h"

#include <athread_emu.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

const sw_net::NetworkTable &alexnet_table();
const sw_net::NetworkTable &vgg19_table();

namespace {

const char *usage =
    "usage: sw_net [--net alexnet|vgg19] [--image file.png | --input x.npy] [--weights dir]\n"
    "              [--labels file] [--batch N] [--schedule hand|baseline|auto] [--no-compare] [--top K]\n"
    "              [--dump-output out.npy] [--report layers.csv|layers.json] [--trace trace.json]\n"
    "Schedules: hand (the hand Sunway schedules), baseline (OpenACC-style), auto (the Sunway\n"
    "autoscheduler's); hand and auto are compared with the baseline unless --no-compare.\n"
    "Weights: <dir>/<layer>.weight.npy and <layer>.bias.npy (PyTorch layout: conv OIHW, fc [out, in]),\n"
    "layers named conv1..conv5, fc6..fc8 (AlexNet) or conv1_1..conv5_4, fc6..fc8 (VGG-19).\n"
    "Without --weights, deterministic seeded weights are used.\n";

struct Options {
    std::string net = "vgg19", image = SW_SAMPLE_IMAGE, input, weights, labels = SW_LABELS,
                schedule = "sunway", dump, report, trace;
    int batch = 1, top = 5;
    bool compare = true;
};

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::runtime_error("option " + a + " needs a value\n" + usage);
            return argv[++i];
        };
        auto number = [&](const std::string &v) {
            size_t used = 0;
            int n = 0;
            try {
                n = std::stoi(v, &used);
            } catch (const std::exception &) {
                used = 0;
            }
            if (used != v.size()) throw std::runtime_error("option " + a + " takes a whole number, not '" + v + "'");
            return n;
        };
        if (a == "--net") o.net = value();
        else if (a == "--image") o.image = value();
        else if (a == "--input") o.input = value();
        else if (a == "--weights") o.weights = value();
        else if (a == "--labels") o.labels = value();
        else if (a == "--schedule") o.schedule = value();
        else if (a == "--dump-output") o.dump = value();
        else if (a == "--report") o.report = value();
        else if (a == "--trace") o.trace = value();
        else if (a == "--no-compare") o.compare = false;
        else if (a == "--batch") o.batch = number(value());
        else if (a == "--top") o.top = number(value());
        else if (a == "-h" || a == "--help") {
            std::cout << usage;
            std::exit(0);
        } else {
            throw std::runtime_error("unknown argument '" + a + "'\n" + usage);
        }
    }
    if (o.batch < 1) throw std::runtime_error("--batch must be at least 1, not " + std::to_string(o.batch));
    if (o.top < 1) throw std::runtime_error("--top must be at least 1");
    if (o.schedule == "hand") o.schedule = "sunway";
    if (o.net != "alexnet" && o.net != "vgg19") throw std::runtime_error("--net must be alexnet or vgg19, not '" + o.net + "'");
    if (o.schedule != "sunway" && o.schedule != "baseline" && o.schedule != "auto") {
        throw std::runtime_error("--schedule must be hand, baseline or auto, not '" + o.schedule + "'");
    }
    return o;
}

/** The images, each C x H x W, normalised: from a PNG (repeated batch times) or an .npy. */
std::vector<std::vector<float>> load_images(const Options &o, const sw_net::Shape &in, std::string *source) {
    const int64_t per_image = sw_net::elements(in) / in[0];
    std::vector<std::vector<float>> images;
    if (!o.input.empty()) {
        sw_io::NpyArray a = sw_io::load_npy(o.input);
        const std::vector<int64_t> one = {in[1], in[2], in[3]};
        std::vector<int64_t> expected = {int64_t(o.batch), in[1], in[2], in[3]};
        if (a.shape == one && o.batch == 1) a.shape = expected;
        if (a.shape != expected) {
            throw sw_io::IoError(o.input + ": expected a tensor of shape " + sw_io::shape_to_string(expected) +
                                 " for --batch " + std::to_string(o.batch) + ", got " +
                                 sw_io::shape_to_string(a.shape));
        }
        for (int n = 0; n < o.batch; n++) {
            images.emplace_back(a.data.begin() + n * per_image, a.data.begin() + (n + 1) * per_image);
        }
        *source = o.input;
    } else {
        const sw_io::RgbImage rgb = sw_io::load_png_rgb(o.image);
        const std::vector<float> x = sw_io::preprocess_imagenet(rgb, int(in[3]));
        images.assign(o.batch, x);
        *source = o.image + " (" + std::to_string(rgb.width) + "x" + std::to_string(rgb.height) +
                  ", resized and centre-cropped to " + std::to_string(in[3]) + ", ImageNet mean/std)";
    }
    return images;
}

/** Adds one pass's records to the running totals. */
void accumulate(std::vector<sw_net::LayerRecord> &total, const std::vector<sw_net::LayerRecord> &records) {
    if (total.empty()) {
        total = records;
        return;
    }
    for (size_t i = 0; i < records.size(); i++) {
        total[i].gflop += records[i].gflop;
        total[i].counted_gflop += records[i].counted_gflop;
        total[i].wall_seconds += records[i].wall_seconds;
        total[i].modelled_seconds += records[i].modelled_seconds;
        total[i].dma_requests += records[i].dma_requests;
        total[i].dma_bytes += records[i].dma_bytes;
        total[i].dma_line_bytes += records[i].dma_line_bytes;
    }
}

int run(const Options &o) {
    const sw_net::Network net(o.net == "alexnet" ? alexnet_table() : vgg19_table());
    const sw_net::Shape in = net.input_shape();
    const int compiled_batch = int(in[0]);
    if (o.batch % compiled_batch != 0) {
        throw std::runtime_error("this build compiles " + o.net + " for batch " + std::to_string(compiled_batch) +
                                 "; --batch must be a multiple of it");
    }
    std::string source;
    const std::vector<std::vector<float>> images = load_images(o, in, &source);

    sw_net::Network loaded = net;
    std::string weights_note;
    if (o.weights.empty()) {
        loaded.load_parameters([](const std::string &layer, const std::string &what, const sw_net::Shape &s) {
            return what == "weight" ? sw_io::deterministic_weights(layer, s) : sw_io::deterministic_bias(layer, s[0]);
        });
        weights_note = "deterministic seeded weights (no --weights given): the classes below are not meaningful";
    } else {
        const sw_io::WeightStore store(o.weights);
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
    std::printf("input: %s, batch %d (network compiled for batch %d: %d pass(es))\n", source.c_str(), o.batch,
                compiled_batch, o.batch / compiled_batch);
    std::printf("%s\n", weights_note.c_str());

    const int64_t classes = net.output_shape()[1];
    const bool compare = o.compare && o.schedule != "baseline";
    const std::string compared = o.schedule == "auto" ? "autoscheduled" : "hand";
    std::vector<float> probabilities;
    std::vector<sw_net::LayerRecord> total, baseline;
    std::vector<sw_net::TraceSpan> spans;
    const auto t0 = std::chrono::steady_clock::now();
    for (int pass = 0; pass < o.batch / compiled_batch; pass++) {
        std::vector<float> x;
        for (int n = 0; n < compiled_batch; n++) {
            const auto &img = images[size_t(pass * compiled_batch + n)];
            x.insert(x.end(), img.begin(), img.end());
        }
        std::vector<sw_net::LayerRecord> records;
        const std::vector<float> y =
            loaded.run(x, o.schedule, &records, !o.trace.empty() && pass == 0 ? &spans : nullptr);
        probabilities.insert(probabilities.end(), y.begin(), y.end());
        accumulate(total, records);
        if (compare) {
            std::vector<sw_net::LayerRecord> base_records;
            const std::vector<float> yb = loaded.run(x, "baseline", &base_records);
            for (size_t i = 0; i < y.size(); i++) {
                if (!(std::fabs(y[i] - yb[i]) <= 1e-4f + 1e-3f * std::fabs(y[i]))) {
                    throw std::runtime_error("the " + compared + " and baseline schedules disagree on output " +
                                             std::to_string(i));
                }
            }
            accumulate(baseline, base_records);
        }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    for (int n = 0; n < o.batch; n++) {
        const float *p = probabilities.data() + size_t(n) * classes;
        std::vector<int> order(static_cast<size_t>(classes));
        std::iota(order.begin(), order.end(), 0);
        const int k = std::min<int>(o.top, int(classes));
        std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) { return p[a] > p[b]; });
        std::printf("\nimage %d: top-%d\n", n, k);
        for (int j = 0; j < k; j++) {
            const int c = order[size_t(j)];
            std::printf("  %6.4f  class %4d  %s\n", p[c], c, size_t(c) < labels.size() ? labels[size_t(c)].c_str() : "");
        }
    }
    const sw::Machine &machine = *sw::machine_by_name(athread_emu_machine_name());
    sw_net::print_table(total, compare ? &baseline : nullptr, machine);
    std::printf("\nwall time on this machine: %.2f s for %d image(s)%s\n", secs, o.batch,
                compare ? (" (" + compared + " and baseline schedules)").c_str() : "");
    if (!o.report.empty()) {
        sw_net::write_report(o.report, o.net, total, compare ? &baseline : nullptr, machine);
        std::printf("per-layer report written to %s\n", o.report.c_str());
    }
    if (!o.trace.empty()) {
        sw_net::write_trace(o.trace, spans);
        std::printf("trace of the first pass written to %s (open it in ui.perfetto.dev)\n", o.trace.c_str());
    }
    if (!o.dump.empty()) {
        sw_io::save_npy(o.dump, {int64_t(o.batch), classes}, probabilities);
        std::printf("probabilities written to %s\n", o.dump.c_str());
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        return run(parse(argc, argv));
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
