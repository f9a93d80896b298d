/** \file
 * torchvision models checked against PyTorch (issue 11, "Models, checked against PyTorch").
 * Each test runs scripts/export_torchvision.py (Debian's python3-torch and
 * python3-torchvision, seeded random weights, no downloads) for one model at a reduced
 * input size, imports the ONNX file, runs it through sw_graph::Executor on the emulated
 * SW26010 core group with the autoscheduler (schedule "auto": each distinct layer
 * autoscheduled, its hand schedule where the autoscheduler refuses it; layers cached in
 * <build>/graph/tests/torchvision_models/layer_cache) and compares with the logits and
 * probabilities PyTorch computed for the same input: probabilities within 1e-4 absolute,
 * logits within 1e-3 of the logits' largest magnitude (a segmentation model's: its `out`
 * tensor, probabilities along the class axis of each pixel). Skipped (with the script's message)
 * only when torch cannot be imported. Prints a per-layer table and the modelled time.
 *
 * The DISABLED_FullSize suite runs every model at 224x224 (Inception-v3 at 299x299), batch 1,
 * and prints the figures of docs/user-guide.md "Models from PyTorch" and docs/results.md
 * (modelled time per image, share of peak, distinct layers, compile time cold, into an empty
 * layer cache, and cached):
 *   sw_graph_models_test --gtest_also_run_disabled_tests --gtest_filter='*FullSize*'
 */
#include "graph/Executor.h"
#include "graph/Import.h"
#include "graph/Stats.h"
#include "runtime/io/npy.h"
#include "runtime/net/report.h"
#include "target_sw/Machine.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#ifndef SW_TORCH_PYTHON
#define SW_TORCH_PYTHON "/usr/bin/python3"
#endif
#ifndef SW_EXPORT_SCRIPT
#define SW_EXPORT_SCRIPT "scripts/export_torchvision.py"
#endif
#ifndef SW_TRANSFORMER_SCRIPT
#define SW_TRANSFORMER_SCRIPT "scripts/export_transformer.py"
#endif
#ifndef SW_MODELS_DIR
#define SW_MODELS_DIR "torchvision_models"
#endif

namespace {

struct ModelCase {
    const char *name;
    int size;
    int batch;
    int opset = 13; ///< the export script's --opset
};

std::ostream &operator<<(std::ostream &os, const ModelCase &c) {
    return os << c.name << " " << c.size << "x" << c.size << " batch " << c.batch;
}

std::string read_text(const std::string &path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

/** Runs SW_TORCH_PYTHON with `args` (its output into `log_path`, then *log); returns the
 * exit status (127: the interpreter is missing). */
int run_python(const std::string &args, const std::string &log_path, std::string *log) {
    const std::string cmd = std::string("mkdir -p '") + SW_MODELS_DIR + "' && '" + SW_TORCH_PYTHON +
                            "' " + args + " > '" + log_path + "' 2>&1";
    const int rc = std::system(cmd.c_str());
    *log = read_text(log_path);
    return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

const std::string kScript = std::string("'") + SW_EXPORT_SCRIPT + "'";

/** Runs the export script for one model into `dir`. */
int export_model(const ModelCase &c, const std::string &dir, std::string *log) {
    return run_python(kScript + " --model " + c.name + " --size " + std::to_string(c.size) +
                          " --batch " + std::to_string(c.batch) + " --opset " +
                          std::to_string(c.opset) + " --out '" + dir + "'",
                      std::string(SW_MODELS_DIR) + "/" + c.name + "_" + std::to_string(c.size) +
                          ".export.log",
                      log);
}

struct Comparison {
    double max_abs = 0, max_ref = 0;
    size_t worst = 0;
};

Comparison compare(const std::vector<float> &got, const std::vector<float> &want) {
    Comparison r;
    for (size_t i = 0; i < want.size() && i < got.size(); i++) {
        const double d = std::fabs(double(got[i]) - want[i]);
        if (!(d <= r.max_abs)) { // NaN counts as the worst
            r.max_abs = std::isnan(d) ? INFINITY : d;
            r.worst = i;
        }
        r.max_ref = std::max(r.max_ref, std::fabs(double(want[i])));
    }
    return r;
}

/** Softmax over the class axis in double (probabilities from our logits): \p classes values
 * \p inner apart (1: the last axis of (batch, classes); H * W: axis 1 of a segmentation
 * model's (batch, classes, H, W)). */
std::vector<float> softmax_rows(const std::vector<float> &x, size_t classes, size_t inner = 1) {
    std::vector<float> p(x.size());
    const size_t block = classes * inner;
    for (size_t b = 0; b + block <= x.size(); b += block) {
        for (size_t j = 0; j < inner; j++) {
            const size_t r = b + j;
            double m = -INFINITY, s = 0;
            for (size_t i = 0; i < classes; i++)
                m = std::max(m, double(x[r + i * inner]));
            for (size_t i = 0; i < classes; i++)
                s += std::exp(double(x[r + i * inner]) - m);
            for (size_t i = 0; i < classes; i++)
                p[r + i * inner] = float(std::exp(double(x[r + i * inner]) - m) / s);
        }
    }
    return p;
}

/** A segmentation model (fcn_*): its output is (batch, 21, size, size), PyTorch's `out`. */
bool is_segmentation(const ModelCase &c) {
    return std::string(c.name).rfind("fcn_", 0) == 0;
}

/** The shape of the model's output: (batch, 1000) logits, or a segmentation model's
 * (batch, 21, size, size). */
std::vector<int64_t> output_shape(const ModelCase &c) {
    if (is_segmentation(c))
        return {c.batch, 21, c.size, c.size};
    return {c.batch, 1000};
}

struct RunFigures {
    double modelled_seconds = 0, compile_seconds = 0, gflop = 0;
    double bound_seconds = 0; ///< sum of the layers' roofline bounds (runtime/net/report.h)
    int distinct_layers = 0, steps = 0;
};

/** The run's sum of the layers' roofline bounds on the SW26010 (the per-layer table's). */
double bound_seconds(const sw_graph::ExecResult &r) {
    double b = 0;
    for (const sw_graph::StepResult &s : r.steps) {
        if (s.layer >= 0)
            b += sw_net::layer_roofline(s.record, sw::sw26010()).bound_seconds;
    }
    return b;
}

/** The autoscheduler (the hand schedule where it refuses a layer), layers cached in
 * `cache_dir`. */
sw_graph::ExecOptions auto_options(const std::string &cache_dir) {
    sw_graph::ExecOptions o;
    o.schedule = "auto";
    o.cache_dir = cache_dir;
    return o;
}

/** Exports, imports, runs (options) and compares one model; fills `fig`. */
void check_model(const ModelCase &c, const std::string &dir, const sw_graph::ExecOptions &options,
                 bool print_steps, RunFigures *fig) {
    std::string log;
    const int rc = export_model(c, dir, &log);
    if (rc == 2 || rc == 127) {
        GTEST_SKIP() << "torch / torchvision not importable with " << SW_TORCH_PYTHON
                     << " (install python3-torch and python3-torchvision): " << log;
    }
    ASSERT_EQ(rc, 0) << "export_torchvision.py failed for " << c << ":\n" << log;
    const std::string base = dir + "/" + c.name;

    sw_graph::Graph g = sw_graph::import_onnx(base + ".onnx");
    ASSERT_EQ(g.inputs.size(), 1u);
    ASSERT_EQ(g.outputs.size(), 1u);
    const sw_graph::Tensor &in = g.tensor(g.inputs[0]);
    const std::vector<int64_t> in_shape = {c.batch, 3, c.size, c.size};
    ASSERT_EQ(in.shape, in_shape);
    const sw_io::NpyArray x = sw_io::load_npy_expect(base + ".input.npy", in_shape);
    const std::vector<int64_t> out_shape = output_shape(c);
    const sw_io::NpyArray logits = sw_io::load_npy_expect(base + ".logits.npy", out_shape);
    const sw_io::NpyArray probs = sw_io::load_npy_expect(base + ".probs.npy", out_shape);
    // The probabilities along the class axis: 1000 classes last, or 21 of each pixel.
    const size_t classes = size_t(out_shape[1]),
                 inner = out_shape.size() == 4 ? size_t(out_shape[2] * out_shape[3]) : 1;

    const auto t0 = std::chrono::steady_clock::now();
    sw_graph::Executor ex(g, options);
    const auto t1 = std::chrono::steady_clock::now();
    int autoscheduled = 0, cached = 0;
    for (const sw_graph::LayerBuildInfo &b : ex.builds()) {
        autoscheduled += b.schedule == "auto";
        cached += b.from_cache;
        if (!b.note.empty())
            std::printf("[build] %s\n", b.note.c_str());
    }
    const sw_graph::ExecResult r = ex.run({{g.inputs[0], x.data}});
    const auto t2 = std::chrono::steady_clock::now();

    const sw_graph::Tensor &out = r.outputs.at(g.outputs[0]);
    ASSERT_EQ(out.shape, out_shape);
    const Comparison cl = compare(out.f32, logits.data);
    const std::vector<float> our_probs = softmax_rows(out.f32, classes, inner);
    const Comparison cp = compare(our_probs, probs.data);

    fig->modelled_seconds = r.modelled_seconds;
    fig->compile_seconds = std::chrono::duration<double>(t1 - t0).count();
    fig->gflop = 2.0 * double(sw_graph::graph_stats(g).macs) * 1e-9;
    fig->distinct_layers = r.distinct_layers;
    fig->bound_seconds = bound_seconds(r);
    fig->steps = int(r.steps.size());
    if (print_steps) {
        for (const sw_graph::StepResult &s : r.steps) {
            std::printf("[step] %-48s %-14s %-16s %9.4f ms\n", s.node.c_str(), s.op_type.c_str(),
                        s.layer < 0 ? "view" : s.generator.c_str(),
                        s.record.modelled_seconds * 1e3);
        }
    }
    std::printf(
        "[model] %s %dx%d batch %d: %d steps, %d distinct layers (%d autoscheduled, %d from the "
        "cache), "
        "compile %.1f s, run %.1f s, %.4f ms modelled, logits max |diff| %.3g (max |logit| %.3g), "
        "probs max |diff| %.3g\n",
        c.name, c.size, c.size, c.batch, fig->steps, fig->distinct_layers, autoscheduled, cached,
        fig->compile_seconds, std::chrono::duration<double>(t2 - t1).count(),
        r.modelled_seconds * 1e3, cl.max_abs, cl.max_ref, cp.max_abs);

    EXPECT_LE(cp.max_abs, 1e-4) << c << ": probability " << cp.worst << " is "
                                << our_probs[cp.worst] << ", PyTorch " << probs.data[cp.worst];
    EXPECT_LE(cl.max_abs, 1e-3 * std::max(1.0, cl.max_ref))
        << c << ": logit " << cl.worst << " is " << out.f32[cl.worst] << ", PyTorch "
        << logits.data[cl.worst];
    EXPECT_GT(r.modelled_seconds, 0.0);
}

// The script's exit statuses, which the model tests rely on: 1 and "error: ..." for bad
// options, 2 only when torch cannot be imported (here: python3 -S, without site-packages).
TEST(ExportScript, ExitStatuses) {
    std::string log;
    const std::string lp = std::string(SW_MODELS_DIR) + "/script_test.log";
    if (run_python("-c pass", lp, &log) != 0)
        GTEST_SKIP() << SW_TORCH_PYTHON << " cannot run: " << log;
    EXPECT_EQ(run_python(kScript + " --model nope", lp, &log), 1);
    EXPECT_NE(log.find("error: --model nope: unknown model"), std::string::npos) << log;
    EXPECT_EQ(run_python(kScript + " --model resnet18 --size abc", lp, &log), 1);
    EXPECT_NE(log.find("error: argument --size"), std::string::npos) << log;
    EXPECT_EQ(run_python(kScript + " --model resnet18 --batch 0", lp, &log), 1);
    EXPECT_EQ(run_python(kScript + " --model resnet18 --opset 9", lp, &log), 1);
    EXPECT_NE(log.find("error: --opset 9: must be in [11, 17]"), std::string::npos) << log;
    EXPECT_EQ(
        run_python("-S " + kScript + " --model resnet18 --out '" + SW_MODELS_DIR + "/no_torch'", lp,
                   &log),
        2);
    EXPECT_NE(log.find("not importable"), std::string::npos) << log;
}

class TorchvisionModel : public ::testing::TestWithParam<ModelCase> {};

TEST_P(TorchvisionModel, MatchesPyTorch) {
    const ModelCase c = GetParam();
    RunFigures fig;
    check_model(c,
                std::string(SW_MODELS_DIR) + "/s" + std::to_string(c.size) + "b" +
                    std::to_string(c.batch),
                auto_options(std::string(SW_MODELS_DIR) + "/layer_cache"), true, &fig);
}

// DenseNet-121 with every BatchNorm (+ ReLU) that a Conv alone reads fused into it as its
// prologue (PrologueFusion::Always): 61 fused steps (58 dense layers' conv1 and 3
// transitions), and still PyTorch's result. (Auto, in MatchesPyTorch, decides by the
// autoscheduler's predictions; the map-size rule alone would fuse none at this size, its maps
// are at most 8x8.)
TEST(TorchvisionModel, DenseNetWithEveryPrologueFusedMatchesPyTorch) {
    const ModelCase c{"densenet121", 32, 1};
    const std::string dir = std::string(SW_MODELS_DIR) + "/s32b1";
    sw_graph::ExecOptions o = auto_options(std::string(SW_MODELS_DIR) + "/layer_cache");
    o.fuse_prologue = sw_graph::PrologueFusion::Always;
    RunFigures fig;
    check_model(c, dir, o, false, &fig);
    if (testing::Test::IsSkipped() || testing::Test::HasFatalFailure())
        return;
    const sw_graph::Graph g = sw_graph::import_onnx(dir + "/densenet121.onnx");
    int fused = 0;
    for (const sw_graph::Step &s : sw_graph::lower_graph(g, {o.fuse_prologue}).steps)
        fused += s.op_type.rfind("ChannelScaleShift+Relu+Conv", 0) == 0;
    EXPECT_EQ(fused, 61);
}

// MobileNetV3-Small exported at opset 14, where torch.onnx writes each Hardswish as one ONNX
// HardSwish node (at 13: HardSigmoid and Mul, fused back by fuse_hard_swish): every HardSwish
// after a conv is fused into it, and still PyTorch's result. Batch 1: the layers are those of
// the opset-13 case (one layer cache).
TEST(TorchvisionModel, MobileNetV3SmallWithHardSwishNodesMatchesPyTorch) {
    const ModelCase c{"mobilenet_v3_small", 64, 1, 14};
    const std::string dir = std::string(SW_MODELS_DIR) + "/s64b1o14";
    RunFigures fig;
    check_model(c, dir, auto_options(std::string(SW_MODELS_DIR) + "/layer_cache"), false, &fig);
    if (testing::Test::IsSkipped() || testing::Test::HasFatalFailure())
        return;
    const sw_graph::Graph g = sw_graph::import_onnx(dir + "/mobilenet_v3_small.onnx");
    int nodes = 0, fused = 0, alone = 0;
    for (const sw_graph::Node &n : g.nodes) {
        nodes += n.op_type == "HardSwish" && n.domain.empty();
        EXPECT_FALSE(n.op_type == "HardSwish" && !n.domain.empty()) << "fused from a Mul";
    }
    for (const sw_graph::Step &s : sw_graph::lower_graph(g).steps) {
        fused += s.op_type == "Conv+HardSwish";
        alone += s.op_type == "HardSwish";
    }
    EXPECT_EQ(nodes, 19); // 18 after convs, 1 after the classifier's first Linear
    EXPECT_EQ(fused, 18);
    EXPECT_EQ(alone, 1);
}

/** Runs one model case against PyTorch (the model cache and layer cache of the parameterised
 * cases) and returns its imported graph, for tests that check what the importer or the lowering
 * made of it; false if skipped or failed. */
bool checked_graph(const ModelCase &c, const std::string &subdir, sw_graph::Graph *g) {
    const std::string dir = std::string(SW_MODELS_DIR) + "/" + subdir;
    RunFigures fig;
    check_model(c, dir, auto_options(std::string(SW_MODELS_DIR) + "/layer_cache"), false, &fig);
    if (testing::Test::IsSkipped() || testing::Test::HasFatalFailure())
        return false;
    *g = sw_graph::import_onnx(dir + "/" + c.name + ".onnx");
    return true;
}

/** How many lowered steps have each op_type. */
std::map<std::string, int> step_kinds(const sw_graph::Graph &g) {
    std::map<std::string, int> k;
    for (const sw_graph::Step &s : sw_graph::lower_graph(g).steps)
        k[s.op_type]++;
    return k;
}

// ConvNeXt's modules exported at opset 13, where each nn.LayerNorm is ReduceMean, Sub, Pow,
// ReduceMean, Add, Sqrt, Div, Mul, Add: fuse_layer_norm makes one LayerNormalization of each of
// the 6 (stem, 3 blocks, downsampling, classifier), and still PyTorch's result.
TEST(TorchvisionModel, ConvNextWithDecomposedLayerNormsMatchesPyTorch) {
    sw_graph::Graph g;
    if (!checked_graph({"convnext_reduced", 32, 1, 13}, "s32b1o13", &g))
        return;
    std::map<std::string, int> nodes;
    for (const sw_graph::Node &n : g.nodes)
        nodes[n.op_type]++;
    EXPECT_EQ(nodes["LayerNormalization"], 6);
    EXPECT_EQ(nodes["ReduceMean"], 0);
}

// ViT's nn.MultiheadAttention (Q scaled before Q.K^T, the (S, B*H, D) layout) is one fused
// attention step per encoder layer (Lowering: match_attention_rank3), and still PyTorch's
// result (the parameterised case runs the same model; this one checks the steps).
TEST(TorchvisionModel, VitSelfAttentionIsFused) {
    sw_graph::Graph g;
    if (!checked_graph({"vit_reduced", 48, 2, 17}, "s48b2", &g))
        return;
    std::map<std::string, int> steps = step_kinds(g);
    EXPECT_EQ(steps["Attention"], 2);
    EXPECT_EQ(steps["Softmax"], 0);
}

// Swin's window attention (q scaled before Q.K^T, K transposed twice: fuse_consecutive_transposes,
// the relative position bias an additive mask; in a shifted block the shift mask, added through
// a rank-5 view, folded into it) is one attention step in each of swin_reduced's 4 blocks (the
// first stage's second block shifted; batch 2, so the folded mask covers both images' windows).
// Still PyTorch's result.
TEST(TorchvisionModel, SwinWindowAttentionIsFused) {
    sw_graph::Graph g;
    if (!checked_graph({"swin_reduced", 32, 2, 17}, "s32b2", &g))
        return;
    std::map<std::string, int> steps = step_kinds(g);
    EXPECT_EQ(steps["Attention"], 4);
    EXPECT_EQ(steps["Softmax"], 0);
}

std::string case_name(const ::testing::TestParamInfo<ModelCase> &i) {
    return std::string(i.param.name) + "_" + std::to_string(i.param.size) + "_b" +
           std::to_string(i.param.batch);
}

// Reduced sizes: the smallest at which every stage still has a spatial extent >= 1, larger
// where that is cheap; VGG-16-BN only exports at 224 (its AdaptiveAvgPool2d((7, 7)) needs a
// feature map that is a multiple of 7 for torch.onnx, see docs/testing.md).
INSTANTIATE_TEST_SUITE_P(
    Models, TorchvisionModel,
    ::testing::Values(ModelCase{"resnet18", 64, 2}, ModelCase{"resnet50", 32, 1},
                      ModelCase{"mobilenet_v2", 32, 1}, ModelCase{"squeezenet1_1", 64, 1},
                      ModelCase{"googlenet", 32, 1}, ModelCase{"densenet121", 32, 1},
                      // Inception-v3's smallest input: its last maps are 1 x 1.
                      ModelCase{"inception_v3", 75, 1}, ModelCase{"shufflenet_v2_x1_0", 32, 2},
                      ModelCase{"vgg16_bn", 224, 1}, ModelCase{"mobilenet_v3_small", 64, 1},
                      ModelCase{"mobilenet_v3_large", 32, 1},
                      // ViT-B/16's modules, 2 layers: 3x3 patches and the class token (10
                      // tokens), batch 2; opset 17 (LayerNormalization nodes).
                      ModelCase{"vit_reduced", 48, 2, 17},
                      // ConvNeXt-T's modules, two stages of 16 and 32 channels, batch 2, opset
                      // 17: the 7x7 depthwise convs, LayerNorm over channels between two
                      // Transposes, the MLP on NHWC with GELU, the layer scale.
                      ModelCase{"convnext_reduced", 32, 2, 17},
                      // Swin-T's modules, embedding 32, two stages of 2 blocks, 4x4 windows,
                      // batch 2, opset 17: shifted windows (torch.roll as Slice + Concat), the
                      // shift mask and relative position bias folded from shape arithmetic,
                      // patch merging; the second stage's 4x4 map is one window, not shifted.
                      ModelCase{"swin_reduced", 32, 2, 17},
                      // FCN-ResNet50 (issue 24): the dilated backbone's 4x4 map (dilations 2
                      // and 4) upsampled x8 by a bilinear Resize to 21 x 32 x 32.
                      ModelCase{"fcn_resnet50", 32, 1}),
    case_name);

// ------------------------------------------------------------- transformers

/** A transformer of scripts/export_transformer.py (issue 24): bert (inputs ids and mask, output
 * hidden) or gpt2 (input ids, output logits), and its sizes. */
struct TransformerCase {
    const char *model;
    int layers, hidden, heads, ffn, vocab, seq, batch;
    std::string args() const {
        return std::string(" --model ") + model + " --layers " + std::to_string(layers) +
               " --hidden " + std::to_string(hidden) + " --heads " + std::to_string(heads) +
               " --ffn " + std::to_string(ffn) + " --vocab " + std::to_string(vocab) + " --seq " +
               std::to_string(seq) + " --batch " + std::to_string(batch);
    }
};

/** Exports the model into `dir`, runs it (int64 inputs) and compares its output with PyTorch's
 * float64 one: within 1e-3 of the output's largest magnitude. */
void check_transformer(const TransformerCase &c, const std::string &dir, const std::string &cache,
                       RunFigures *fig) {
    std::string log;
    const int rc = run_python(std::string("'") + SW_TRANSFORMER_SCRIPT + "'" + c.args() +
                                  " --out '" + dir + "'",
                              dir + ".export.log", &log);
    if (rc == 2 || rc == 127)
        GTEST_SKIP() << "torch not importable with " << SW_TORCH_PYTHON << ": " << log;
    ASSERT_EQ(rc, 0) << "export_transformer.py failed:\n" << log;
    const bool bert = std::string(c.model) == "bert";
    const std::string base = dir + "/" + c.model, output = bert ? "hidden" : "logits";
    sw_graph::Graph g = sw_graph::import_onnx(base + ".onnx");
    const std::vector<std::string> names =
        bert ? std::vector<std::string>{"ids", "mask"} : std::vector<std::string>{"ids"};
    ASSERT_EQ(g.inputs, names);
    sw_graph::InputValues in;
    for (const std::string &n : names) {
        sw_io::NpyInts v = sw_io::load_npy_ints(base + "." + n + ".npy");
        ASSERT_EQ(v.shape, (std::vector<int64_t>{c.batch, c.seq})) << n;
        in.i64[n] = std::move(v.data);
    }
    const std::vector<int64_t> out_shape = {c.batch, c.seq, bert ? c.hidden : c.vocab};
    const sw_io::NpyArray want = sw_io::load_npy_expect(base + "." + output + ".npy", out_shape);

    const auto t0 = std::chrono::steady_clock::now();
    sw_graph::Executor ex(g, auto_options(cache));
    const auto t1 = std::chrono::steady_clock::now();
    const sw_graph::ExecResult r = ex.run(in);
    const sw_graph::Tensor &out = r.outputs.at(output);
    ASSERT_EQ(out.shape, out_shape);
    const Comparison cmp = compare(out.f32, want.data);
    fig->modelled_seconds = r.modelled_seconds;
    fig->compile_seconds = std::chrono::duration<double>(t1 - t0).count();
    fig->gflop = 2.0 * double(sw_graph::graph_stats(g).macs) * 1e-9;
    fig->distinct_layers = r.distinct_layers;
    fig->bound_seconds = bound_seconds(r);
    fig->steps = int(r.steps.size());
    std::map<std::string, double> by_kind;
    for (const sw_graph::StepResult &s : r.steps)
        by_kind[s.layer < 0 ? "view" : s.generator] += s.record.modelled_seconds;
    for (const auto &[kind, secs] : by_kind)
        std::printf("[kind] %-14s %9.4f ms\n", kind.c_str(), secs * 1e3);
    std::printf("[model]%s: %d steps, %d distinct layers, compile %.1f s, %.4f ms modelled, "
                "%s max |diff| %.3g (max |%s| %.3g)\n",
                c.args().c_str(), fig->steps, fig->distinct_layers, fig->compile_seconds,
                r.modelled_seconds * 1e3, output.c_str(), cmp.max_abs, output.c_str(), cmp.max_ref);
    EXPECT_LE(cmp.max_abs, 1e-3 * std::max(1.0, cmp.max_ref))
        << output << " value " << cmp.worst << " is " << out.f32[cmp.worst] << ", PyTorch "
        << want.data[cmp.worst];
    EXPECT_GT(r.modelled_seconds, 0.0);
}

// Reduced: 2 layers, hidden 64, 4 heads, a sequence of 19 (no tile divides it), batch 2 (BERT:
// the second sequence's last 4 positions masked; GPT-2: causal).
TEST(TransformerModel, BertMatchesPyTorch) {
    RunFigures fig;
    check_transformer({"bert", 2, 64, 4, 128, 500, 19, 2},
                      std::string(SW_MODELS_DIR) + "/bert_reduced",
                      std::string(SW_MODELS_DIR) + "/layer_cache", &fig);
}

TEST(TransformerModel, Gpt2MatchesPyTorch) {
    RunFigures fig;
    check_transformer({"gpt2", 2, 64, 4, 128, 500, 19, 2},
                      std::string(SW_MODELS_DIR) + "/gpt2_reduced",
                      std::string(SW_MODELS_DIR) + "/layer_cache", &fig);
}

// Full sizes (figures for docs/results.md; cold compile into an empty cache): BERT-base (12
// layers, hidden 768, 12 heads, FFN 3072, sequence 128, vocabulary 30522) and GPT-2 small (the
// same with GPT-2's vocabulary of 50257), batch 1.
class TransformerFullSize : public ::testing::TestWithParam<const char *> {};

TEST_P(TransformerFullSize, Figures) {
    const std::string model = GetParam();
    const std::string dir = std::string(SW_MODELS_DIR) + "/" + model + "_base",
                      cache = dir + "_layer_cache";
    std::filesystem::remove_all(cache);
    RunFigures fig;
    check_transformer({GetParam(), 12, 768, 12, 3072, model == "bert" ? 30522 : 50257, 128, 1}, dir,
                      cache, &fig);
    std::filesystem::remove_all(cache);
    const double peak = sw::sw26010().cg_peak_gflops();
    std::printf("[figures] | %s | %.2f ms | %.1f%% | %.3f | %.2f | %d | %.1f s |\n", model.c_str(),
                fig.modelled_seconds * 1e3, 100.0 * fig.gflop / fig.modelled_seconds / peak,
                fig.bound_seconds / fig.modelled_seconds, fig.gflop, fig.distinct_layers,
                fig.compile_seconds);
}

INSTANTIATE_TEST_SUITE_P(DISABLED_Models, TransformerFullSize, ::testing::Values("bert", "gpt2"),
                         [](const ::testing::TestParamInfo<const char *> &i) {
                             return std::string(i.param);
                         });

// ------------------------------------------------------------- full-size figures

class FullSize : public ::testing::TestWithParam<const char *> {};

TEST_P(FullSize, Figures) {
    const std::string name = GetParam();
    const int size = name == "inception_v3" ? 299 : 224; // Inception-v3's own size
    const bool layer_norms =
        name.rfind("vit", 0) == 0 || name.rfind("convnext", 0) == 0 || name.rfind("swin", 0) == 0;
    const ModelCase c{GetParam(), size, 1, layer_norms ? 17 : 13};
    const std::string dir = std::string(SW_MODELS_DIR) + "/s" + std::to_string(size) + "b1",
                      cache = dir + "/layer_cache_" + c.name;
    std::filesystem::remove_all(cache); // cold: every layer generated and compiled
    RunFigures fig;
    check_model(c, dir, auto_options(cache), false, &fig);
    if (HasFatalFailure() || IsSkipped())
        return;
    // Cached: a new Executor loads every layer from the cache. (The cache directory named
    // differently, "<cache>/.": this process's own map of built layers is keyed by the
    // name, so the layers really come from the files.)
    const sw_graph::Graph g = sw_graph::import_onnx(dir + "/" + c.name + ".onnx");
    const auto t0 = std::chrono::steady_clock::now();
    sw_graph::Executor again(g, auto_options(cache + "/."));
    const double cached_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const sw_graph::LayerBuildInfo &b : again.builds())
        EXPECT_TRUE(b.from_cache);
    std::filesystem::remove_all(cache);
    const double peak = sw::sw26010().cg_peak_gflops();
    std::printf("[figures] | %s | %.2f ms | %.1f%% | %.3f | %.2f | %d | %.1f s | %.1f s |\n",
                c.name, fig.modelled_seconds * 1e3, 100.0 * fig.gflop / fig.modelled_seconds / peak,
                fig.bound_seconds / fig.modelled_seconds, fig.gflop, fig.distinct_layers,
                fig.compile_seconds, cached_seconds);
}

INSTANTIATE_TEST_SUITE_P(DISABLED_Models, FullSize,
                         ::testing::Values("resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1",
                                           "googlenet", "inception_v3", "densenet121",
                                           "shufflenet_v2_x1_0", "vgg16_bn", "mobilenet_v3_small",
                                           "mobilenet_v3_large", "vit_b_16", "convnext_tiny",
                                           "swin_t", "fcn_resnet50"),
                         [](const ::testing::TestParamInfo<const char *> &i) {
                             return std::string(i.param);
                         });

} // namespace
