/** \file
 * The networks: reduced AlexNet and VGG-19 (channels / 8, small input, batch 2) end to end on
 * the emulated core group, hand, baseline and autoscheduled (Sunway autoscheduler), against
 * the naive reference layers chained in plain C++; and the full-size layer tables against
 * the published architectures.
 */
#include "runtime/io/weights.h"
#include "runtime/net/network.h"
#include "reference/naive_layers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

const sw_net::NetworkTable &alexnet_small_table();
const sw_net::NetworkTable &vgg19_small_table();
const sw_net::NetworkTable &alexnet_table();
const sw_net::NetworkTable &vgg19_table();

namespace {

using sw_net::Network;

std::vector<float> params_for(const std::string &layer, const std::string &what, const sw_net::Shape &s) {
    return what == "weight" ? sw_io::deterministic_weights(layer, s) : sw_io::deterministic_bias(layer, s[0]);
}

int ip(const Network &net, size_t i, const std::string &key, int fallback) {
    const std::string v = net.param(i, key);
    return v.empty() ? fallback : std::stoi(v);
}

/** The network computed with reference/naive_layers.h only, from the table's parameters. */
std::vector<float> reference_run(const Network &net, std::vector<float> x) {
    for (size_t i = 0; i < net.size(); i++) {
        const std::string &kind = net.layer(i).kind;
        const int n = ip(net, i, "batch", 1);
        if (kind == "conv2d") {
            const int k = ip(net, i, "kernel", 1), s = ip(net, i, "stride", 1), p = ip(net, i, "pad", 0);
            reference::Conv2DParams c{n, ip(net, i, "in_channels", 1), ip(net, i, "out_channels", 1),
                                      ip(net, i, "height", 1), ip(net, i, "width", 1), k, k, s, s, p, p, p, p,
                                      ip(net, i, "groups", 1), net.param(i, "relu") == "true"};
            const std::string name = net.layer(i).name;
            x = reference::conv2d(c, x, params_for(name, "weight", net.weight_shape(i)),
                                  params_for(name, "bias", net.bias_shape(i)));
        } else if (kind == "dense") {
            const std::string name = net.layer(i).name;
            x = reference::dense(n, ip(net, i, "in_features", 1), ip(net, i, "out_features", 1), x,
                                 params_for(name, "weight", net.weight_shape(i)),
                                 params_for(name, "bias", net.bias_shape(i)), net.param(i, "relu") == "true");
        } else if (kind == "pool") {
            const int k = ip(net, i, "kernel", 1), s = ip(net, i, "stride", 1), p = ip(net, i, "pad", 0);
            reference::PoolParams pp{n, ip(net, i, "channels", 1), ip(net, i, "height", 1), ip(net, i, "width", 1),
                                     k, k, s, s, p, p, p, p, false, net.param(i, "type") != "avg", false};
            x = reference::pool2d(pp, x);
        } else if (kind == "lrn") {
            x = reference::lrn(n, ip(net, i, "channels", 1), ip(net, i, "height", 1), ip(net, i, "width", 1), x,
                               ip(net, i, "size", 5), std::stod(net.param(i, "alpha")),
                               std::stod(net.param(i, "beta")), std::stod(net.param(i, "k")));
        } else if (kind == "softmax") {
            x = reference::softmax(n, ip(net, i, "classes", 1), x);
        } else {
            ADD_FAILURE() << "no reference for " << kind;
        }
    }
    return x;
}

struct NetRun {
    const char *name;
    const sw_net::NetworkTable &(*table)();
    const char *schedule;
};

void PrintTo(const NetRun &r, std::ostream *os) { *os << r.name; }

class ReducedNetwork : public testing::TestWithParam<NetRun> {};

TEST_P(ReducedNetwork, MatchesTheNaiveReferenceChain) {
    Network net(GetParam().table());
    net.load_parameters(params_for);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-2.f, 2.f);
    std::vector<float> input(size_t(sw_net::elements(net.input_shape())));
    for (float &v : input) v = dist(rng);
    ASSERT_EQ(net.input_shape()[0], 2);  // batch 2

    std::vector<sw_net::LayerRecord> records;
    const std::vector<float> out = net.run(input, GetParam().schedule, &records);
    const std::vector<float> ref = reference_run(net, input);
    ASSERT_EQ(out.size(), ref.size());
    for (size_t i = 0; i < ref.size(); i++) {
        EXPECT_NEAR(out[i], ref[i], 1e-4 + 1e-3 * std::fabs(ref[i])) << "probability " << i;
    }
    // The two images differ, so their class distributions must too.
    const size_t classes = out.size() / 2;
    double diff = 0;
    for (size_t c = 0; c < classes; c++) diff += std::fabs(out[c] - out[classes + c]);
    EXPECT_GT(diff, 1e-6);
    ASSERT_EQ(records.size(), net.size());
    for (const sw_net::LayerRecord &r : records) {
        EXPECT_GT(r.dma_requests, 0) << r.name;
        EXPECT_GT(r.ldm_peak_bytes, 0) << r.name;
    }
}

INSTANTIATE_TEST_SUITE_P(Nets, ReducedNetwork,
                         testing::Values(NetRun{"alexnet_hand", alexnet_small_table, "sunway"},
                                         NetRun{"alexnet_baseline", alexnet_small_table, "baseline"},
                                         NetRun{"alexnet_auto", alexnet_small_table, "auto"},
                                         NetRun{"vgg19_hand", vgg19_small_table, "sunway"},
                                         NetRun{"vgg19_baseline", vgg19_small_table, "baseline"},
                                         NetRun{"vgg19_auto", vgg19_small_table, "auto"}),
                         [](const testing::TestParamInfo<NetRun> &i) { return std::string(i.param.name); });

double total_gflop_of_weighted_layers(const Network &net) {
    double macs = 0;
    for (size_t i = 0; i < net.size(); i++) {
        const sw_net::Shape w = net.weight_shape(i);
        if (w.empty()) continue;
        macs += double(sw_net::elements(w)) / double(w[0]) * double(sw_net::elements(net.output_shape(i)));
    }
    return 2 * macs / 1e9;
}

TEST(FullSizeNetworks, AlexNetIsCaffesBvlcAlexNet) {
    Network net(alexnet_table());
    EXPECT_EQ(net.input_shape(), (sw_net::Shape{1, 3, 227, 227}));
    std::map<std::string, sw_net::Shape> expect = {
        {"conv1", {1, 96, 55, 55}}, {"pool1", {1, 96, 27, 27}}, {"conv2", {1, 256, 27, 27}},
        {"pool2", {1, 256, 13, 13}}, {"conv3", {1, 384, 13, 13}}, {"conv5", {1, 256, 13, 13}},
        {"pool5", {1, 256, 6, 6}}, {"fc6", {1, 4096}}, {"fc8", {1, 1000}}, {"prob", {1, 1000}}};
    for (size_t i = 0; i < net.size(); i++) {
        auto it = expect.find(net.layer(i).name);
        if (it != expect.end()) EXPECT_EQ(net.output_shape(i), it->second) << it->first;
    }
    // 60,965,224 parameters (Caffe's bvlc_alexnet, groups of 2 in conv2/4/5).
    int64_t params = 0;
    for (size_t i = 0; i < net.size(); i++) {
        if (!net.weight_shape(i).empty()) params += sw_net::elements(net.weight_shape(i)) + sw_net::elements(net.bias_shape(i));
    }
    EXPECT_EQ(params, 60965224);
}

TEST(FullSizeNetworks, Vgg19IsConfigurationE) {
    Network net(vgg19_table());
    EXPECT_EQ(net.input_shape(), (sw_net::Shape{1, 3, 224, 224}));
    int convs = 0;
    int64_t params = 0;
    for (size_t i = 0; i < net.size(); i++) {
        convs += net.layer(i).kind == "conv2d";
        if (!net.weight_shape(i).empty()) params += sw_net::elements(net.weight_shape(i)) + sw_net::elements(net.bias_shape(i));
    }
    EXPECT_EQ(convs, 16);
    EXPECT_EQ(params, 143667240);  // torchvision vgg19: 143,667,240 parameters
    EXPECT_NEAR(total_gflop_of_weighted_layers(net), 39.28, 0.05);  // 19.6 G multiply-adds
}

}  // namespace
