/** \file
 * model_bench: the eight torchvision models of the model tests (graph/tests/models_test.cpp) at
 * 224x224, batch 1, and ResNet-50 and MobileNetV2 also at batch 8, through the path of
 * `sw_net --model` with the Sunway autoscheduler: imported from ONNX, every distinct layer
 * scheduled, generated and compiled into an empty layer cache (cold), the model run once on the
 * emulated core group and its logits compared with PyTorch's. Per model:
 *
 *   ms/img     modelled SW26010 time per image (the emulator's timing model)
 *   bound      sum of the layers' roofline bounds per image (target_sw/Roofline.h: per layer
 *              max(flops / peak, inputs once / get plateau + output once / put plateau))
 *   roof       bound / ms: the model's roofline fraction over its layers as lowered
 *   whole      the model's bound as one fused program (all flops; the input, every weight and
 *              the output once, no intermediate tensor) / ms: what fusing layers could reach
 *   %peak      analytic flops / (ms x peak)
 *   no-pair    ms / img if the compiler paired no P0/P1 instructions (the other end of the
 *              compute band, docs/timing-model.md; ms/img assumes every pair it can)
 *   layers     distinct layers; build s: scheduling, generating and compiling them, cold
 *              (with the costing of the prologue fusions, Lowering.h: a "[prologue]" line
 *              says how many candidates were fused and how long the lowering and costing took)
 *   cm err     the autoscheduler's cost model against the emulator: the largest
 *              |predicted / modelled - 1| over the model's autoscheduled layers (SUMMARY line:
 *              the largest over all models, and its layer and plan)
 *
 * Then VGG-19 (graph/Networks.h, autoscheduled) for its conv layers' share of peak, and
 *
 *   RESULT roofline_min=<x> roofline_geomean=<x> resnet50_ms=<ms> mobilenet_v2_ms=<ms>
 *          vgg19_conv_peak_fraction=<x> schedule_seconds_max=<s>
 *
 * With --machine sw26010-pro the same on the SW26010-Pro (its line starts RESULT_PRO, after a
 * note that the Pro model's figures rest on unmeasured parameters); with --machine both, both
 * machines and then each model's roofline fraction on each side by side.
 *
 * over the batch-1 runs (ms per image at batch 1; schedule_seconds_max the longest cold build).
 * Exit status 1 with "error: ..." when a model cannot be exported or its output differs from
 * PyTorch's (the figures of a wrong model mean nothing).
 *
 *   cmake --build build --target model_bench && build/apps/bench/model_bench
 *   options: --models-dir DIR (exported models, default build/apps/bench/torchvision_models),
 *            --only NAME (repeatable), --no-batch8, --no-vgg19, --report-dir DIR (each model's
 *            per-layer report as CSV, the columns of sw_net --report), --fuse-prologue
 *            auto|rule|always|never (rule: the map-size rule instead of the autoscheduler's
 *            predictions, for comparisons)
 * The models are exported on first use by scripts/export_torchvision.py (python3-torch and
 * python3-torchvision, scripts/install_deps.sh --tests).
 */
#include "apps/bench/network_runs.h"
#include "graph/Executor.h"
#include "graph/Import.h"
#include "runtime/io/npy.h"
#include "runtime/net/report.h"
#include "target_sw/Machine.h"
#include "target_sw/Roofline.h"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#ifndef SW_TORCH_PYTHON
#define SW_TORCH_PYTHON "/usr/bin/python3"
#endif
#ifndef SW_EXPORT_SCRIPT
#define SW_EXPORT_SCRIPT "scripts/export_torchvision.py"
#endif
#ifndef SW_MODEL_BENCH_DIR
#define SW_MODEL_BENCH_DIR "torchvision_models"
#endif

namespace fs = std::filesystem;

namespace {

struct Case {
    std::string name;
    int batch;
};

struct Figures {
    Case c;
    double ms_per_image = 0, bound_ms = 0, whole_bound_ms = 0, gflop = 0, build_seconds = 0;
    /** The same run if the compiler paired no P0/P1 instructions (the compute band's other
     * end, docs/timing-model.md), per image. */
    double unpaired_ms_per_image = 0;
    double max_logit_diff = 0;
    /** The autoscheduler's cost model against the emulator over the model's autoscheduled
     * layers: the largest |predicted / modelled - 1|, and that layer. */
    double model_error = 0;
    std::string model_error_layer;
    int distinct_layers = 0;
    double roof() const { return bound_ms / ms_per_image; }
    double whole() const { return whole_bound_ms / ms_per_image; }
};

[[noreturn]] void fail(const std::string &what) {
    std::fprintf(stderr, "error: %s\n", what.c_str());
    std::exit(1);
}

/** DIR/s224b<batch>/<name>.onnx, exported first if it is not there. */
std::string exported(const std::string &dir, const Case &c) {
    const std::string sub = dir + "/s224b" + std::to_string(c.batch);
    const std::string base = sub + "/" + c.name;
    if (fs::exists(base + ".onnx") && fs::exists(base + ".input.npy") &&
        fs::exists(base + ".logits.npy"))
        return base;
    std::error_code ec;
    fs::create_directories(sub, ec);
    if (ec)
        fail("cannot create " + sub + ": " + ec.message());
    const std::string log = sub + "/" + c.name + ".export.log";
    const std::string cmd = std::string("'") + SW_TORCH_PYTHON + "' '" + SW_EXPORT_SCRIPT +
                            "' --model " + c.name + " --batch " + std::to_string(c.batch) +
                            " --out '" + sub + "' > '" + log + "' 2>&1";
    std::printf("exporting %s at batch %d (%s) ...\n", c.name.c_str(), c.batch, log.c_str());
    std::fflush(stdout);
    const int rc = std::system(cmd.c_str());
    if (rc != 0 || !fs::exists(base + ".onnx")) {
        fail("exporting " + c.name + " failed (see " + log +
             "; it needs python3-torch and python3-torchvision: scripts/install_deps.sh --tests)");
    }
    return base;
}

Figures run_model(const std::string &dir, const Case &c, const sw::Machine &m,
                  const std::string &report_dir, const std::string &fuse_prologue) {
    const std::string base = exported(dir, c);
    const sw_graph::Graph g = sw_graph::import_onnx(base + ".onnx");
    if (g.inputs.size() != 1 || g.outputs.size() != 1)
        fail(base + ".onnx: expected one input and one output");
    const sw_io::NpyArray x =
        sw_io::load_npy_expect(base + ".input.npy", g.tensor(g.inputs[0]).shape);
    const sw_io::NpyArray logits =
        sw_io::load_npy_expect(base + ".logits.npy", g.tensor(g.outputs[0]).shape);

    // Cold: every layer scheduled, generated and compiled into an empty cache.
    const std::string cache = dir + "/layer_cache_bench." + std::to_string(getpid());
    fs::remove_all(cache);
    sw_graph::ExecOptions o;
    o.schedule = "auto";
    o.machine = m.name;
    o.cache_dir = cache;
    // "rule": Auto with every cost unknown, so that the map-size rule decides (the lowering's
    // fallback without a coster); the others as sw_net --fuse-prologue.
    o.fuse_prologue =
        sw_graph::parse_prologue_fusion(fuse_prologue == "rule" ? "auto" : fuse_prologue);
    if (fuse_prologue == "rule") {
        o.prologue_coster = [](const std::vector<sw_graph::LayerSpec> &layers) {
            return std::vector<double>(layers.size(), 0.0);
        };
    }
    const auto t0 = std::chrono::steady_clock::now();
    sw_graph::Executor ex(g, o);
    Figures f;
    f.c = c;
    f.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const sw_graph::PrologueCounts n =
        sw_graph::count_prologue_choices(ex.lowered().prologue_choices);
    if (n.candidates > 0) {
        std::printf("  [prologue] %d candidates (%zu distinct layers), %d fused (%d costed by "
                    "the autoscheduler); lowering and costing %.1f s of the build\n",
                    n.candidates, n.distinct_layers, n.fused, n.costed, ex.lowering_seconds());
    }
    for (const sw_graph::LayerBuildInfo &b : ex.builds()) {
        if (!b.note.empty())
            std::printf("  [build] %s\n", b.note.c_str());
    }
    const sw_graph::ExecResult r = ex.run({{g.inputs[0], x.data}});
    fs::remove_all(cache);

    const std::vector<float> &out = r.outputs.at(g.outputs[0]).f32;
    double max_ref = 0;
    for (size_t i = 0; i < logits.data.size() && i < out.size(); i++) {
        const double d = std::fabs(double(out[i]) - logits.data[i]);
        f.max_logit_diff = std::isnan(d) ? INFINITY : std::max(f.max_logit_diff, d);
        max_ref = std::max(max_ref, std::fabs(double(logits.data[i])));
    }
    if (out.size() != logits.data.size() || !(f.max_logit_diff <= 1e-3 * std::max(1.0, max_ref))) {
        fail(c.name + " at batch " + std::to_string(c.batch) +
             ": the logits differ from PyTorch's by " + std::to_string(f.max_logit_diff));
    }

    // Per layer step: its roofline bound; the whole model: every constant it reads once.
    double seconds = 0, bound = 0, read_bytes = 0;
    std::set<std::string> constants;
    std::set<int> reported; // layers whose cost-model error was printed
    const sw_graph::LoweredGraph &lw = ex.lowered();
    for (size_t i = 0; i < r.steps.size(); i++) {
        const sw_graph::StepResult &s = r.steps[i];
        if (s.layer < 0)
            continue;
        const sw_net::LayerRecord &rec = s.record;
        const sw_graph::LayerBuildInfo &b = ex.builds()[size_t(s.layer)];
        if (b.predicted_seconds > 0 && rec.modelled_seconds > 0) {
            const double err = std::fabs(b.predicted_seconds / rec.modelled_seconds - 1);
            if (err > 0.15 && reported.insert(s.layer).second) {
                std::printf(
                    "  [cost model] %s: predicted %.4f ms, emulator %.4f ms (%+.0f%%): %s\n",
                    rec.name.c_str(), b.predicted_seconds * 1e3, rec.modelled_seconds * 1e3,
                    100 * (b.predicted_seconds / rec.modelled_seconds - 1), b.plan.c_str());
            }
            if (err > f.model_error) {
                f.model_error = err;
                f.model_error_layer = rec.name + " (" + b.plan + ")";
            }
        }
        seconds += rec.modelled_seconds;
        f.unpaired_ms_per_image += rec.modelled_unpaired_seconds * 1e3 / c.batch;
        f.gflop += rec.gflop;
        // A fused layer's bound is the sum of the unfused layers' (report.h): the sum stays
        // the unfused model's, and the fusion shows as a gain over it.
        bound += sw_net::layer_roofline(rec, m).bound_seconds;
        for (const sw_graph::LayerArg &a : lw.steps[i].inputs) {
            const sw_graph::Tensor *t = g.find(a.tensor);
            const bool constant = (t && t->is_constant) || lw.extra_constants.count(a.tensor) != 0;
            if (constant && constants.insert(a.tensor).second) {
                double n = 1;
                for (int e : a.extents)
                    n *= e;
                read_bytes += 4 * n;
            }
        }
    }
    read_bytes += 4.0 * double(g.tensor(g.inputs[0]).elements());
    const double write_bytes = 4.0 * double(g.tensor(g.outputs[0]).elements());
    const double whole = sw::roofline(f.gflop, read_bytes, write_bytes, seconds, m).bound_seconds;
    if (!report_dir.empty()) {
        std::vector<sw_net::LayerRecord> records;
        for (const sw_graph::StepResult &s : r.steps) {
            if (s.layer >= 0)
                records.push_back(s.record);
        }
        const std::string path = report_dir + "/" + c.name + "_b" + std::to_string(c.batch) +
                                 (m.crts_runtime ? "_pro" : "") + ".csv";
        sw_net::write_report(path, c.name, records, nullptr, m);
    }
    f.ms_per_image = seconds * 1e3 / c.batch;
    f.bound_ms = bound * 1e3 / c.batch;
    f.whole_bound_ms = whole * 1e3 / c.batch;
    f.gflop /= c.batch;
    f.distinct_layers = r.distinct_layers;
    return f;
}

/** VGG-19's conv layers, autoscheduled: their flops / (their modelled time x peak). */
double vgg19_conv_peak_fraction(const sw::Machine &m) {
    double gflop = 0, seconds = 0;
    for (const sw_bench::LayerRun &l : sw_bench::run_network("vgg19", 1, "auto", nullptr, m.name)) {
        if (l.generator != "conv2d")
            continue;
        gflop += l.record.gflop;
        seconds += l.record.modelled_seconds;
    }
    return gflop / seconds / m.cg_peak_gflops();
}

/** The figures of one machine's runs (RESULT line). */
struct Summary {
    const sw::Machine *machine = nullptr;
    std::vector<Figures> figs;
    double roof_min = 0, roof_geomean = 0, resnet50_ms = 0, mobilenet_ms = 0, vgg = 0,
           build_max = 0;
};

/** Runs \p cases (and VGG-19 unless \p no_vgg19) on \p m and prints their table. */
Summary bench_machine(const sw::Machine &m, const std::vector<Case> &cases, const std::string &dir,
                      const std::string &report_dir, const std::string &fuse_prologue,
                      bool no_vgg19) {
    std::printf("model_bench on %s (peak %.1f GFLOPS, get plateau %.2f GB/s, put plateau %.2f "
                "GB/s); models in %s\n",
                m.name.c_str(), m.cg_peak_gflops(), m.dma_get_plateau_gbps(),
                m.dma_put_plateau_gbps(), dir.c_str());
    std::vector<Figures> figs;
    for (const Case &c : cases) {
        std::printf("%s batch %d ...\n", c.name.c_str(), c.batch);
        std::fflush(stdout);
        try {
            figs.push_back(run_model(dir, c, m, report_dir, fuse_prologue));
        } catch (const std::exception &e) {
            fail(c.name + " at batch " + std::to_string(c.batch) + ": " + e.what());
        }
    }
    std::printf("\n%-20s %5s %9s %9s %6s %6s %6s %9s %7s %8s %10s %7s\n", "model", "batch",
                "ms/img", "bound ms", "roof", "whole", "%peak", "no-pair", "layers", "build s",
                "|dlogit|", "cm err");
    double log_sum = 0, roof_min = INFINITY, build_max = 0, resnet50_ms = 0, mobilenet_ms = 0;
    Figures worst; // the largest cost-model error
    int n1 = 0;
    for (const Figures &f : figs) {
        std::printf("%-20s %5d %9.3f %9.3f %6.3f %6.3f %5.1f%% %9.3f %7d %8.1f %10.2e %6.1f%%\n",
                    f.c.name.c_str(), f.c.batch, f.ms_per_image, f.bound_ms, f.roof(), f.whole(),
                    100 * f.gflop / (f.ms_per_image * 1e-3) / m.cg_peak_gflops(),
                    f.unpaired_ms_per_image, f.distinct_layers, f.build_seconds, f.max_logit_diff,
                    100 * f.model_error);
        if (f.model_error > worst.model_error)
            worst = f;
        if (f.c.batch != 1)
            continue;
        n1++;
        log_sum += std::log(f.roof());
        roof_min = std::min(roof_min, f.roof());
        build_max = std::max(build_max, f.build_seconds);
        if (f.c.name == "resnet50")
            resnet50_ms = f.ms_per_image;
        if (f.c.name == "mobilenet_v2")
            mobilenet_ms = f.ms_per_image;
    }
    double vgg = 0;
    if (!no_vgg19) {
        std::printf("\nvgg19 (built-in network, batch 1) ...\n");
        std::fflush(stdout);
        try {
            vgg = vgg19_conv_peak_fraction(m);
        } catch (const std::exception &e) {
            fail(std::string("vgg19: ") + e.what());
        }
        std::printf("vgg19 conv layers: %.1f%% of peak\n", 100 * vgg);
    }
    std::printf("\nSUMMARY %s cost_model_vs_emulator_max_err=%.3f (%s, batch %d: %s)\n",
                m.name.c_str(), worst.model_error, worst.c.name.c_str(), worst.c.batch,
                worst.model_error_layer.c_str());
    Summary s;
    s.machine = &m;
    s.figs = figs;
    s.roof_min = n1 ? roof_min : 0.0;
    s.roof_geomean = n1 ? std::exp(log_sum / n1) : 0.0;
    s.resnet50_ms = resnet50_ms;
    s.mobilenet_ms = mobilenet_ms;
    s.vgg = vgg;
    s.build_max = build_max;
    return s;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"model_bench: the torchvision models at 224x224 through sw_net --model's path, "
                 "autoscheduled, against their roofline"};
    std::string dir = SW_MODEL_BENCH_DIR;
    std::vector<std::string> only;
    std::string report_dir;
    bool no_batch8 = false, no_vgg19 = false;
    std::string fuse_prologue = "auto", machine = "sw26010";
    app.add_option("--models-dir", dir, "exported models (made on first use)");
    app.add_option("--machine", machine,
                   "sw26010 (default), sw26010-pro or both (then the roofline fractions side by "
                   "side; the Pro's figures rest on unmeasured parameters)")
        ->check(CLI::IsMember({"sw26010", "sw26010-pro", "both"}));
    app.add_option("--only", only, "run only these models (repeatable)");
    app.add_option("--report-dir", report_dir,
                   "also write each model's per-layer report there (<model>_b<batch>.csv, "
                   "<model>_b<batch>_pro.csv on the Pro, the columns of sw_net --report)");
    app.add_flag("--no-batch8", no_batch8, "skip the batch-8 runs of ResNet-50 and MobileNetV2");
    app.add_flag("--no-vgg19", no_vgg19, "skip VGG-19 (vgg19_conv_peak_fraction)");
    app.add_option("--fuse-prologue", fuse_prologue,
                   "fuse a BatchNorm (+ ReLU) left unfolded into the Conv that reads it: auto "
                   "(where the autoscheduler predicts it faster), rule (auto without the "
                   "predictions: on maps of 56x56 and more), always or never (graph/Lowering.h; "
                   "default auto)")
        ->check(CLI::IsMember({"auto", "rule", "always", "never"}));
    CLI11_PARSE(app, argc, argv);

    const std::vector<std::string> names = {"resnet18",           "resnet50",  "mobilenet_v2",
                                            "squeezenet1_1",      "googlenet", "densenet121",
                                            "shufflenet_v2_x1_0", "vgg16_bn"};
    for (const std::string &n : only) {
        if (std::find(names.begin(), names.end(), n) == names.end())
            fail("--only " + n + ": not one of the benchmark's models");
    }
    std::vector<Case> cases;
    for (const std::string &n : names) {
        if (only.empty() || std::find(only.begin(), only.end(), n) != only.end())
            cases.push_back({n, 1});
    }
    for (const std::string &n : {"resnet50", "mobilenet_v2"}) {
        if (!no_batch8 && (only.empty() || std::find(only.begin(), only.end(), n) != only.end()))
            cases.push_back({n, 8});
    }
    if (!report_dir.empty()) {
        std::error_code ec;
        fs::create_directories(report_dir, ec);
        if (ec || !fs::is_directory(report_dir))
            fail("--report-dir " + report_dir + ": cannot create the directory");
    }
    std::vector<const sw::Machine *> machines;
    if (machine == "sw26010" || machine == "both")
        machines.push_back(&sw::sw26010());
    if (machine == "sw26010-pro" || machine == "both")
        machines.push_back(&sw::sw26010_pro());
    std::vector<Summary> summaries;
    for (const sw::Machine *m : machines)
        summaries.push_back(bench_machine(*m, cases, dir, report_dir, fuse_prologue, no_vgg19));
    if (summaries.size() == 2) {
        // The two machines' roofline fractions side by side (each against its own roofline).
        std::printf("\n%-20s %5s %10s %10s %9s %9s\n", "model", "batch", "roof SW", "roof Pro",
                    "ms SW", "ms Pro");
        for (size_t i = 0; i < summaries[0].figs.size(); i++) {
            const Figures &a = summaries[0].figs[i], &b = summaries[1].figs[i];
            std::printf("%-20s %5d %10.3f %10.3f %9.3f %9.3f\n", a.c.name.c_str(), a.c.batch,
                        a.roof(), b.roof(), a.ms_per_image, b.ms_per_image);
        }
    }
    for (const Summary &s : summaries) {
        const bool pro = s.machine->crts_runtime;
        if (pro) {
            std::printf("note: the SW26010-Pro figures rest on unmeasured parameters of its "
                        "timing model (RMA, instruction costs, fp32 peak = fp64; [U] in "
                        "target_sw/Machine.h)\n");
        }
        std::printf("%s roofline_min=%.3f roofline_geomean=%.3f resnet50_ms=%.3f "
                    "mobilenet_v2_ms=%.3f vgg19_conv_peak_fraction=%.4f "
                    "schedule_seconds_max=%.1f\n",
                    pro ? "RESULT_PRO" : "RESULT", s.roof_min, s.roof_geomean, s.resnet50_ms,
                    s.mobilenet_ms, s.vgg, s.build_max);
    }
    return 0;
}
