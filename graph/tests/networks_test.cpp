/** \file
 * The built-in networks as graphs (graph/Networks.h): reduced AlexNet and VGG-19 (channels /
 * 8, small inputs, batch 2, 10 classes) through the executor, hand, baseline and
 * autoscheduled, against the naive reference layers (reference/naive_layers.h) chained in
 * plain C++ from the lowered steps; the full-size graphs against the published architectures
 * and the layer parameters sw_net's per-layer CMake tables had; and sw_net --net as a user
 * runs it: a reduced AlexNet's probabilities against the same reference, and a reduced
 * VGG-19 exported (--export), built with make emu and reproducing sw_net's output bit for bit.
 */
#include "graph/Executor.h"
#include "graph/Lowering.h"
#include "graph/Networks.h"
#include "graph/tests/cli_run.h"
#include "reference/naive_layers.h"
#include "runtime/io/npy.h"
#include "runtime/io/weights.h"
#include "runtime/net/records.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>

namespace {

namespace fs = std::filesystem;
using sw_graph::Graph;
using sw_graph::NetworkConfig;
using sw_graph_test::run_shell;

std::vector<float> seeded(const std::string &layer, const std::string &what,
                          const std::vector<int64_t> &s) {
    return what == "weight" ? sw_io::deterministic_weights(layer, s)
                            : sw_io::deterministic_bias(layer, s[0]);
}

/** A parameter source that only counts (zeros of the asked shapes). */
struct Counter {
    int64_t params = 0;
    sw_graph::ParameterSource source() {
        return [this](const std::string &, const std::string &, const std::vector<int64_t> &s) {
            int64_t n = 1;
            for (int64_t d : s)
                n *= d;
            params += n;
            return std::vector<float>(size_t(n));
        };
    }
};

NetworkConfig reduced(const std::string &name) {
    NetworkConfig c;
    c.name = name;
    c.channel_div = 8;
    c.input = name == "alexnet" ? 67 : 32;
    c.batch = 2;
    c.classes = 10;
    return c;
}

int ip(const std::map<std::string, std::string> &p, const std::string &key, int fallback) {
    auto it = p.find(key);
    return it == p.end() ? fallback : std::stoi(it->second);
}

/** The lowered graph computed with reference/naive_layers.h only, step by step from the layer
 * parameters and the graph's constants. */
std::vector<float> reference_run(const Graph &g, const sw_graph::LoweredGraph &lg,
                                 const std::vector<float> &input) {
    std::map<std::string, std::vector<float>> t = {{g.inputs.at(0), input}};
    auto data = [&](const std::string &name) -> const std::vector<float> & {
        auto it = t.find(name);
        if (it != t.end())
            return it->second;
        return g.tensor(name).f32;
    };
    for (const sw_graph::Step &s : lg.steps) {
        if (s.layer < 0) {
            t[s.output.tensor] = data(s.inputs.at(0).tensor);
            continue;
        }
        const sw_graph::LayerSpec &l = lg.layers[size_t(s.layer)];
        const auto &p = l.params;
        const int n = ip(p, "batch", 1);
        const std::vector<float> &x = data(s.inputs.at(0).tensor);
        std::vector<float> y;
        const bool relu = p.count("relu") && p.at("relu") == "true";
        if (l.generator == "conv2d") {
            const int k = ip(p, "kernel", 1), st = ip(p, "stride", 1), pad = ip(p, "pad", 0);
            reference::Conv2DParams c{n,
                                      ip(p, "in_channels", 1),
                                      ip(p, "out_channels", 1),
                                      ip(p, "height", 1),
                                      ip(p, "width", 1),
                                      k,
                                      k,
                                      st,
                                      st,
                                      pad,
                                      pad,
                                      pad,
                                      pad,
                                      ip(p, "groups", 1),
                                      relu};
            y = reference::conv2d(c, x, data(s.inputs.at(1).tensor), data(s.inputs.at(2).tensor));
        } else if (l.generator == "dense") {
            y = reference::dense(n, ip(p, "in_features", 1), ip(p, "out_features", 1), x,
                                 data(s.inputs.at(1).tensor), data(s.inputs.at(2).tensor), relu);
        } else if (l.generator == "pool") {
            const int k = ip(p, "kernel", 1), st = ip(p, "stride", 1), pad = ip(p, "pad", 0);
            reference::PoolParams pp{n,
                                     ip(p, "channels", 1),
                                     ip(p, "height", 1),
                                     ip(p, "width", 1),
                                     k,
                                     k,
                                     st,
                                     st,
                                     pad,
                                     pad,
                                     pad,
                                     pad,
                                     false,
                                     p.at("type") != "avg",
                                     false};
            y = reference::pool2d(pp, x);
        } else if (l.generator == "lrn") {
            y = reference::lrn(n, ip(p, "channels", 1), ip(p, "height", 1), ip(p, "width", 1), x,
                               ip(p, "size", 5), std::stod(p.at("alpha")), std::stod(p.at("beta")),
                               std::stod(p.at("k")));
        } else if (l.generator == "softmax") {
            y = reference::softmax(n, ip(p, "classes", 1), x);
        } else {
            ADD_FAILURE() << "no reference for " << l.generator;
        }
        t[s.output.tensor] = std::move(y);
    }
    return t.at(g.outputs.at(0));
}

std::vector<float> random_input(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-2.f, 2.f);
    std::vector<float> v(n);
    for (float &x : v)
        x = dist(rng);
    return v;
}

std::string test_dir(const std::string &name) {
    const fs::path d = fs::path(::testing::TempDir()) / ("sw_networks_" + name);
    fs::remove_all(d);
    fs::create_directories(d);
    return d.string();
}

/** The layer cache of these tests (kept between runs of the test: the same layers each time). */
std::string cache_dir() {
    return (fs::path(::testing::TempDir()) / "sw_networks_cache").string();
}

struct NetRun {
    const char *name, *net, *schedule;
};

void PrintTo(const NetRun &r, std::ostream *os) {
    *os << r.name;
}

class ReducedNetwork : public testing::TestWithParam<NetRun> {};

TEST_P(ReducedNetwork, MatchesTheNaiveReferenceChain) {
    const Graph g = sw_graph::network_graph(reduced(GetParam().net), seeded);
    const sw_graph::Tensor &in = g.tensor(g.inputs.at(0));
    ASSERT_EQ(in.shape[0], 2); // batch 2
    const std::vector<float> x = random_input(size_t(in.elements()), 7);
    sw_graph::ExecOptions o;
    o.schedule = GetParam().schedule;
    o.cache_dir = cache_dir();
    sw_graph::Executor ex(g, o);
    const sw_graph::ExecResult r = ex.run({{in.name, x}});
    const std::vector<float> &out = r.outputs.at("prob").f32;
    const std::vector<float> ref = reference_run(g, ex.lowered(), x);
    ASSERT_EQ(out.size(), ref.size());
    ASSERT_EQ(out.size(), 20u);
    for (size_t i = 0; i < ref.size(); i++) {
        EXPECT_NEAR(out[i], ref[i], 1e-4 + 1e-3 * std::fabs(ref[i])) << "probability " << i;
    }
    // The two images differ, so their class distributions must too.
    double diff = 0;
    for (size_t c = 0; c < 10; c++)
        diff += std::fabs(out[c] - out[10 + c]);
    EXPECT_GT(diff, 1e-6);
    for (const sw_graph::StepResult &s : r.steps) {
        if (s.layer < 0)
            continue;
        EXPECT_GT(s.record.dma_requests, 0) << s.node;
        EXPECT_GT(s.record.ldm_peak_bytes, 0) << s.node;
    }
}

INSTANTIATE_TEST_SUITE_P(Nets, ReducedNetwork,
                         testing::Values(NetRun{"alexnet_hand", "alexnet", "hand"},
                                         NetRun{"alexnet_baseline", "alexnet", "baseline"},
                                         NetRun{"alexnet_auto", "alexnet", "auto"},
                                         NetRun{"vgg19_hand", "vgg19", "hand"},
                                         NetRun{"vgg19_baseline", "vgg19", "baseline"},
                                         NetRun{"vgg19_auto", "vgg19", "auto"}),
                         [](const testing::TestParamInfo<NetRun> &i) {
                             return std::string(i.param.name);
                         });

/** Each step: name -> "generator k=v ..." of its layer. */
std::map<std::string, std::string> layer_keys(const Graph &g) {
    const sw_graph::LoweredGraph lg = sw_graph::lower_graph(g);
    std::map<std::string, std::string> keys;
    for (const sw_graph::Step &s : lg.steps) {
        if (s.layer >= 0)
            keys[s.name] = lg.layers[size_t(s.layer)].key();
    }
    return keys;
}

TEST(FullSizeNetworks, AlexNetIsCaffesBvlcAlexNet) {
    Counter count;
    NetworkConfig c;
    c.name = "alexnet";
    const Graph g = sw_graph::network_graph(c, count.source());
    EXPECT_EQ(g.tensor("data").shape, (std::vector<int64_t>{1, 3, 227, 227}));
    const std::map<std::string, std::vector<int64_t>> expect = {
        {"relu1", {1, 96, 55, 55}},  {"pool1", {1, 96, 27, 27}},  {"relu2", {1, 256, 27, 27}},
        {"pool2", {1, 256, 13, 13}}, {"relu3", {1, 384, 13, 13}}, {"relu5", {1, 256, 13, 13}},
        {"pool5", {1, 256, 6, 6}},   {"relu_fc6", {1, 4096}},     {"fc8", {1, 1000}},
        {"prob", {1, 1000}}};
    for (const auto &[name, shape] : expect)
        EXPECT_EQ(g.tensor(name).shape, shape) << name;
    // 60,965,224 parameters (Caffe's bvlc_alexnet, groups of 2 in conv2/4/5).
    EXPECT_EQ(count.params, 60965224);
    // The layers sw_net's per-layer CMake tables generated (cmake/SunwayNetworks.cmake before
    // the networks became graphs), with the pool's defaults spelled out (kernel_y, stride_y,
    // pad, ceil_mode) and dense's alpha and beta.
    const std::map<std::string, std::string> keys = layer_keys(g);
    const std::map<std::string, std::string> tables = {
        {"conv1", "conv2d batch=1 height=227 in_channels=3 kernel=11 out_channels=96 pad=0 "
                  "relu=true stride=4 "
                  "width=227"},
        {"norm1", "lrn alpha=0.0001 batch=1 beta=0.75 channels=96 height=55 k=1 size=5 width=55"},
        {"pool1", "pool batch=1 ceil_mode=false channels=96 height=55 kernel=3 kernel_y=3 pad=0 "
                  "stride=2 stride_y=2 "
                  "type=max width=55"},
        {"conv2", "conv2d batch=1 groups=2 height=27 in_channels=96 kernel=5 out_channels=256 "
                  "pad=2 relu=true "
                  "stride=1 width=27"},
        {"conv4", "conv2d batch=1 groups=2 height=13 in_channels=384 kernel=3 out_channels=384 "
                  "pad=1 relu=true "
                  "stride=1 width=13"},
        {"fc6", "dense alpha=1 batch=1 beta=1 in_features=9216 out_features=4096 relu=true"},
        {"fc8", "dense alpha=1 batch=1 beta=1 in_features=4096 out_features=1000 relu=false"},
        {"prob", "softmax batch=1 classes=1000"}};
    for (const auto &[name, key] : tables)
        EXPECT_EQ(keys.at(name), key) << name;
    EXPECT_EQ(keys.size(), 14u); // 5 conv, 2 LRN, 3 pool, 3 FC, softmax
}

TEST(FullSizeNetworks, Vgg19IsConfigurationE) {
    Counter count;
    NetworkConfig c;
    c.name = "vgg19";
    const Graph g = sw_graph::network_graph(c, count.source());
    EXPECT_EQ(g.tensor("data").shape, (std::vector<int64_t>{1, 3, 224, 224}));
    EXPECT_EQ(count.params, 143667240); // torchvision vgg19: 143,667,240 parameters
    const sw_graph::LoweredGraph lg = sw_graph::lower_graph(g);
    int convs = 0;
    double gflop = 0;
    for (const sw_graph::Step &s : lg.steps) {
        if (s.layer < 0)
            continue;
        const sw_graph::LayerSpec &l = lg.layers[size_t(s.layer)];
        convs += l.generator == "conv2d";
        if (l.generator == "conv2d" || l.generator == "dense") {
            int64_t in = 1, out = 1;
            for (int e : s.inputs[0].extents)
                in *= e;
            for (int e : s.output.extents)
                out *= e;
            gflop += sw_net::layer_gflop(l.generator, l.params, in, out);
        }
    }
    EXPECT_EQ(convs, 16);
    EXPECT_NEAR(gflop, 39.28, 0.05); // 19.6 G multiply-adds
    EXPECT_EQ(layer_keys(g).at("conv5_4"), "conv2d batch=1 height=14 in_channels=512 kernel=3 "
                                           "out_channels=512 pad=1 relu=true stride=1 width=14");
}

TEST(FullSizeNetworks, Vgg16IsConfigurationD) {
    Counter count;
    NetworkConfig c;
    c.name = "vgg16";
    const Graph g = sw_graph::network_graph(c, count.source());
    EXPECT_EQ(count.params, 138357544); // torchvision vgg16: 138,357,544 parameters
}

TEST(Networks, BadConfigurationsAreErrors) {
    NetworkConfig c;
    c.name = "resnet";
    EXPECT_THROW(sw_graph::network_graph(c, seeded), sw_graph::Error);
    c.name = "alexnet";
    c.input = 20; // conv1's 11x11/4 leaves 3x3; pool1 1x1; pool2 has nothing
    EXPECT_THROW(sw_graph::network_graph(c, seeded), sw_graph::Error);
}

// ---- sw_net --net as a user runs it.

/** sw_net --net NET as a reduced variant (channels / 8, 10 classes) with this test's cache. */
std::string sw_net(const std::string &net, const std::string &args) {
    return std::string(SW_NET) + " --net " + net + " --channel-div 8 --classes 10 --input-size " +
           (net == "alexnet" ? "67" : "32") + " --cache-dir " + cache_dir() + " " + args;
}

TEST(SwNetNet, ReducedAlexNetMatchesTheReference) {
    const std::string dir = test_dir("alexnet");
    const std::vector<float> x = random_input(2 * 3 * 67 * 67, 3);
    sw_io::save_npy(dir + "/x.npy", {2, 3, 67, 67}, x);
    const sw_graph_test::CliRun r =
        run_shell(sw_net("alexnet", "--schedule hand --batch 2 --top 3 --input " + dir +
                                        "/x.npy --dump-output " + dir + "/y.npy"));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(
        r.out.rfind(
            "alexnet (channels / 8, input 67, 10 classes) on the emulated SW26010 core group (64 "
            "CPEs, athread emulator), hand Sunway schedules\n",
            0),
        0u)
        << r.out;
    EXPECT_NE(r.out.find("deterministic seeded weights"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("image 1: top-3 (probability)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("speedup"), std::string::npos) << r.out; // the baseline ran and agreed
    for (const char *row : {"conv1 ", "norm1 ", "pool5 ", "fc6 ", "prob "}) {
        EXPECT_NE(r.out.find(std::string("\n") + row), std::string::npos) << row << "\n" << r.out;
    }
    // The reference: the same graph (batch 1, as sw_net builds it), image by image.
    NetworkConfig c = reduced("alexnet");
    c.batch = 1;
    const Graph g = sw_graph::network_graph(c, seeded);
    const sw_graph::LoweredGraph lg = sw_graph::lower_graph(g);
    const size_t per = 3 * 67 * 67;
    std::vector<float> ref;
    for (size_t n = 0; n < 2; n++) {
        const std::vector<float> y = reference_run(
            g, lg, std::vector<float>(x.begin() + long(n * per), x.begin() + long((n + 1) * per)));
        ref.insert(ref.end(), y.begin(), y.end());
    }
    const sw_io::NpyArray y = sw_io::load_npy(dir + "/y.npy");
    EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 10}));
    ASSERT_EQ(y.data.size(), ref.size());
    for (size_t i = 0; i < ref.size(); i++)
        EXPECT_NEAR(y.data[i], ref[i], 1e-4 + 1e-3 * std::fabs(ref[i])) << i;
    fs::remove_all(dir);
}

TEST(SwNetNet, ReducedVgg19ExportBuildsWithMakeEmuAndReproducesTheOutput) {
    const std::string dir = test_dir("vgg19_export");
    sw_io::save_npy(dir + "/x.npy", {1, 3, 32, 32}, random_input(3 * 32 * 32, 5));
    const std::string out = dir + "/export";
    sw_graph_test::CliRun r =
        run_shell(sw_net("vgg19", "--no-compare --input " + dir + "/x.npy --dump-output " + dir +
                                      "/y.npy --export " + out));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(r.out.rfind("vgg19 (channels / 8, input 32, 10 classes) on the emulated SW26010 core "
                          "group (64 CPEs, "
                          "athread emulator), autoscheduled by the Sunway autoscheduler\n",
                          0),
              0u)
        << r.out;
    EXPECT_NE(r.out.find("exported to " + out), std::string::npos) << r.out;
    r = run_shell("make -C " + out + " emu");
    ASSERT_EQ(r.status, 0) << r.out;
    r = run_shell(out + "/sw_model_emu " + out + "/weights.bin " + dir + "/x.npy " + dir +
                  "/y_export.npy");
    ASSERT_EQ(r.status, 0) << r.out;
    const sw_io::NpyArray a = sw_io::load_npy(dir + "/y.npy"),
                          e = sw_io::load_npy(dir + "/y_export.npy");
    EXPECT_EQ(e.shape, (std::vector<int64_t>{1, 10}));
    EXPECT_EQ(a.shape, e.shape);
    ASSERT_EQ(a.data.size(), e.data.size());
    for (size_t i = 0; i < a.data.size(); i++)
        EXPECT_EQ(a.data[i], e.data[i]) << i;
    fs::remove_all(dir);
}

/** sw_net --machine sw26010-pro: the layers generated for the SW26010-Pro (floatv8, CRTS DMA;
 * docs/sw26010-pro.md) match the reference; the run says the Pro model rests on unmeasured
 * parameters; the exported folder (a Makefile for swgcc) builds with make emu against the
 * emulator's Pro headers and reproduces the output bit for bit. */
TEST(SwNetNet, ReducedVgg19OnTheProMatchesTheReferenceAndItsExportReproducesIt) {
    const std::string dir = test_dir("vgg19_pro");
    const std::vector<float> x = random_input(3 * 32 * 32, 7);
    sw_io::save_npy(dir + "/x.npy", {1, 3, 32, 32}, x);
    const std::string out = dir + "/export";
    sw_graph_test::CliRun r =
        run_shell(sw_net("vgg19", "--machine sw26010-pro --no-compare --input " + dir + "/x.npy " +
                                      "--dump-output " + dir + "/y.npy --export " + out));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(r.out.rfind("vgg19 (channels / 8, input 32, 10 classes) on the emulated SW26010-Pro "
                          "core group (64 CPEs, athread emulator)",
                          0),
              0u)
        << r.out;
    EXPECT_NE(r.out.find("rests on unmeasured parameters"), std::string::npos) << r.out;
    NetworkConfig c = reduced("vgg19");
    c.batch = 1; // as sw_net builds it
    const Graph g = sw_graph::network_graph(c, seeded);
    const std::vector<float> ref = reference_run(g, sw_graph::lower_graph(g), x);
    const sw_io::NpyArray y = sw_io::load_npy(dir + "/y.npy");
    ASSERT_EQ(y.data.size(), ref.size());
    for (size_t i = 0; i < ref.size(); i++)
        EXPECT_NEAR(y.data[i], ref[i], 1e-4 + 1e-3 * std::fabs(ref[i])) << i;
    std::ifstream mf(out + "/Makefile");
    const std::string makefile((std::istreambuf_iterator<char>(mf)),
                               std::istreambuf_iterator<char>());
    EXPECT_NE(makefile.find("SLAVECC ?= swgcc -mslave -msimd"), std::string::npos) << makefile;
    r = run_shell("make -C " + out + " emu");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("-D__sw_slave__"), std::string::npos) << r.out;
    r = run_shell(out + "/sw_model_emu " + out + "/weights.bin " + dir + "/x.npy " + dir +
                  "/y_export.npy");
    ASSERT_EQ(r.status, 0) << r.out;
    const sw_io::NpyArray e = sw_io::load_npy(dir + "/y_export.npy");
    ASSERT_EQ(y.data.size(), e.data.size());
    for (size_t i = 0; i < y.data.size(); i++)
        EXPECT_EQ(y.data[i], e.data[i]) << i;
    fs::remove_all(dir);
}

TEST(SwNetNet, OptionErrors) {
    sw_graph_test::CliRun r =
        run_shell(std::string(SW_NET) + " --net alexnet --input-size 20 --no-compare");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("input is too small"), std::string::npos) << r.out;
    r = run_shell(std::string(SW_NET) + " --fc-split --no-compare --export /tmp/x --net alexnet");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("--fc-split and --export exclude each other"), std::string::npos) << r.out;
}

} // namespace
