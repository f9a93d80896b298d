/** \file
 * conv2d's prologue (prologue=scale_shift | scale_shift_relu: the conv reads
 * x * pre_scale[c] + pre_shift[c], then max(., 0), with the zero padding applied after it) on
 * the emulated core group, with the hand Sunway schedule, the OpenACC-style baseline and the
 * Sunway autoscheduler, against naive loops (reference/naive_layers.h: the affine, then the
 * convolution, which pads with zeros): odd channel counts, maps the tiles do not divide,
 * batch 2, 1x1 and 3x3 kernels, strides 1 and 2, groups and a depthwise conv, with and without
 * the ReLUs. The shifts are mostly positive, so that padding before the prologue (relu(shift)
 * at the border instead of 0) would differ, which each padded case checks of its reference.
 * The autoscheduled plans must compute the prologue once per staged element (the window
 * staged in LDM per chunk, not inlined into the taps) and, on DenseNet-sized layers, be
 * predicted within 15% of the emulator.
 */
#include "HalideBuffer.h"
#include "jit/jit_layer.h"
#include "reference/naive_layers.h"
#include "tests/support/layer_params.h"
#include "tests/support/random_data.h"

#include <athread_emu.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef SW_AUTOSCHEDULE_PLUGIN
#error "SW_AUTOSCHEDULE_PLUGIN (path of libsw_autoschedule.so) must be defined"
#endif

namespace {

using Buf = Halide::Runtime::Buffer<float>;
using Params = std::map<std::string, std::string>;
using reference::Conv2DParams;
using sw_test::random_values;

struct PrologueCase {
    std::string name;
    Conv2DParams conv;
    bool prologue_relu;
    /** A DenseNet-sized layer: the autoscheduler's prediction is checked against the
     * emulator. */
    bool check_prediction = false;
};

/** The inputs of a case: input, weights, bias, scale and shift (shift + 0.5: mostly positive). */
struct Data {
    std::vector<float> in, wt, bias, scale, shift;
};

Data data_of(const Conv2DParams &p) {
    Data d;
    d.in = random_values(size_t(p.batch) * p.in_c * p.h * p.w, 11);
    d.wt = random_values(size_t(p.out_c) * (p.in_c / p.groups) * p.kernel_x * p.kernel_y, 12);
    d.bias = random_values(p.out_c, 13);
    d.scale = random_values(p.in_c, 14);
    d.shift = random_values(p.in_c, 15);
    for (float &v : d.shift)
        v += 0.5f;
    return d;
}

/** The naive result: the affine (+ ReLU) of the input, then the convolution of that with its
 * zero padding. */
std::vector<float> expected(const PrologueCase &c, const Data &d) {
    const Conv2DParams &p = c.conv;
    const std::vector<float> pre = reference::channel_affine({p.batch, p.in_c, p.h, p.w}, d.in,
                                                             d.scale, d.shift, c.prologue_relu);
    return reference::conv2d(p, pre, d.wt, d.bias);
}

/** The wrong order: the input padded with zeros first, the affine (+ ReLU) applied to the
 * padding too, then an unpadded convolution. */
std::vector<float> padded_first(const PrologueCase &c, const Data &d) {
    Conv2DParams p = c.conv;
    const int h = p.h + p.pad_top + p.pad_bottom, w = p.w + p.pad_left + p.pad_right;
    std::vector<float> padded(size_t(p.batch) * p.in_c * h * w, 0.f);
    for (int n = 0; n < p.batch; n++)
        for (int ch = 0; ch < p.in_c; ch++)
            for (int y = 0; y < p.h; y++)
                for (int x = 0; x < p.w; x++) {
                    padded[((size_t(n) * p.in_c + ch) * h + y + p.pad_top) * w + x + p.pad_left] =
                        d.in[((size_t(n) * p.in_c + ch) * p.h + y) * p.w + x];
                }
    const std::vector<float> pre = reference::channel_affine({p.batch, p.in_c, h, w}, padded,
                                                             d.scale, d.shift, c.prologue_relu);
    p.h = h, p.w = w;
    p.pad_left = p.pad_right = p.pad_top = p.pad_bottom = 0;
    return reference::conv2d(p, pre, d.wt, d.bias);
}

int differing(const std::vector<float> &expected, const std::vector<float> &actual) {
    int bad = 0;
    for (size_t i = 0; i < expected.size(); i++) {
        const float e = expected[i], a = actual[i];
        if (!(std::fabs(e - a) <= 1e-4f + 1e-4f * std::fabs(e)) && bad++ < 3)
            ADD_FAILURE() << "element " << i << ": expected " << e << ", got " << a;
    }
    return bad;
}

Params params_of(const PrologueCase &c, const std::string &schedule) {
    Params params = sw_test::conv2d_params(c.conv);
    params["prologue"] = c.prologue_relu ? "scale_shift_relu" : "scale_shift";
    if (!schedule.empty())
        params["schedule"] = schedule;
    return params;
}

/** Runs \p layer on the case's data; the output, or empty if the call failed. */
/** \p v in a buffer that starts on a 128-byte DMA line, as sw_net allocates its tensors (the
 * cost model assumes so; a tensor elsewhere moves more lines). */
Buf line_aligned(const std::vector<float> &v, const std::vector<int> &extents) {
    Buf b(extents); // Halide::Runtime::Buffer allocates 128-byte aligned
    std::copy(v.begin(), v.end(), b.data());
    return b;
}

std::vector<float> run(const sw_jit::JitLayer &layer, const PrologueCase &c, const Data &d) {
    const Conv2DParams &p = c.conv;
    Buf bi = line_aligned(d.in, {p.w, p.h, p.in_c, p.batch});
    Buf bw = line_aligned(d.wt, {p.kernel_x, p.kernel_y, p.in_c / p.groups, p.out_c});
    Buf bb = line_aligned(d.bias, {p.out_c}), bs = line_aligned(d.scale, {p.in_c}),
        bt = line_aligned(d.shift, {p.in_c});
    Buf bo(std::vector<int>{p.out_w(), p.out_h(), p.out_c, p.batch});
    bo.fill(NAN);
    if (layer.call({bi.raw_buffer(), bw.raw_buffer(), bb.raw_buffer(), bs.raw_buffer(),
                    bt.raw_buffer(), bo.raw_buffer()}) != 0)
        return {};
    return std::vector<float>(bo.data(), bo.data() + bo.number_of_elements());
}

std::vector<PrologueCase> cases() {
    // batch in_c out_c h w kx ky sx sy pl pr pt pb groups relu
    return {
        {"k3_pad1_relu_odd", {2, 13, 7, 13, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}, true},
        {"k3_pad1_stride2_no_relu", {1, 37, 5, 13, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, false}, false},
        {"k3_pad1_stride2_relu", {2, 3, 13, 11, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, true}, true},
        {"k1_odd_width", {2, 13, 37, 11, 13, 1, 1, 1, 1, 0, 0, 0, 0, 1, false}, true},
        {"k1_stride2", {1, 37, 13, 13, 11, 1, 1, 2, 2, 0, 0, 0, 0, 1, true}, false},
        // A pointwise conv as the ONNX lowering sees it: the map as one row (here 16x16),
        // whole vectors, so the prologue may run on floatv4.
        {"k1_row_vectors", {2, 13, 24, 1, 256, 1, 1, 1, 1, 0, 0, 0, 0, 1, true}, true},
        {"k3_groups3", {1, 12, 6, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1, 3, true}, true},
        {"depthwise_k3", {2, 8, 8, 10, 7, 3, 3, 1, 1, 1, 1, 1, 1, 8, false}, true},
        // DenseNet-121's pre-activation layers (BN-ReLU-Conv), smaller maps: a 1x1 conv over
        // a 28x28 map seen as one row, and a 3x3 pad 1 conv.
        {"densenet_1x1", {1, 128, 32, 1, 784, 1, 1, 1, 1, 0, 0, 0, 0, 1, true}, true, true},
        {"densenet_3x3", {1, 128, 32, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 1, false}, true, true},
    };
}

bool padded(const Conv2DParams &p) {
    return p.pad_left || p.pad_right || p.pad_top || p.pad_bottom;
}

struct PrologueRun {
    PrologueCase c;
    std::string schedule; ///< sunway, baseline or auto
};

void PrintTo(const PrologueRun &r, std::ostream *os) {
    *os << r.c.name << " [" << r.schedule << "]";
}

class ConvPrologue : public testing::TestWithParam<PrologueRun> {};

TEST_P(ConvPrologue, EmulatedMatchesNaiveLoops) {
    const PrologueRun &r = GetParam();
    const bool autoscheduled = r.schedule == "auto";
    sw_jit::JitOptions o;
    if (autoscheduled) {
        o.extra_args = {"-p", SW_AUTOSCHEDULE_PLUGIN, "-s", "Sunway", "auto_schedule=true"};
        o.emit = "mpe,cpe,h,schedule";
    }
    const sw_jit::JitBuild b = sw_jit::jit_build_layer(
        SW_LAYERS_GENERATOR, "conv2d", params_of(r.c, autoscheduled ? "" : r.schedule), o);
    ASSERT_TRUE(b.ok()) << b.log;
    const Data d = data_of(r.c.conv);
    const std::vector<float> want = expected(r.c, d);
    if (padded(r.c.conv)) {
        // The test can tell the orders apart: padding first gives other values.
        const std::vector<float> wrong = padded_first(r.c, d);
        int differ = 0;
        for (size_t i = 0; i < want.size(); i++)
            differ += std::fabs(want[i] - wrong[i]) > 1e-3f;
        ASSERT_GT(differ, 0) << "the case cannot tell padding after the prologue from before";
    }
    athread_emu_stats_reset();
    const std::vector<float> got = run(*b.layer, r.c, d);
    ASSERT_EQ(got.size(), want.size()) << "the layer failed";
    EXPECT_EQ(differing(want, got), 0);
    if (!autoscheduled)
        return;
    // The prologue computed once per staged element: its window (padded) staged in LDM per
    // chunk, not inlined into the taps.
    std::ifstream f(b.layer->dir() + "/" + b.layer->function_name() + ".schedule.h");
    std::stringstream text;
    text << f.rdbuf();
    EXPECT_NE(text.str().find("padded.compute_at("), std::string::npos) << text.str();
    if (r.c.check_prediction) {
        double modelled = 0;
        for (int k = 0; k < athread_emu_stats_count(); k++)
            modelled += athread_emu_stats_get(k)->modelled_seconds;
        const sw_jit::LayerSchedule s = sw_jit::read_layer_schedule(*b.layer);
        ASSERT_GT(s.predicted_seconds, 0) << text.str();
        EXPECT_NEAR(s.predicted_seconds / modelled, 1.0, 0.15)
            << "predicted " << s.predicted_seconds * 1e3 << " ms, emulator " << modelled * 1e3
            << " ms: " << s.plan;
    }
}

std::vector<PrologueRun> runs() {
    std::vector<PrologueRun> out;
    for (const PrologueCase &c : cases()) {
        for (const char *s : {"sunway", "baseline", "auto"}) {
            if (c.check_prediction && std::string(s) == "baseline")
                continue; // slow, and nothing the other cases do not check
            out.push_back({c, s});
        }
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvPrologue, testing::ValuesIn(runs()),
                         [](const testing::TestParamInfo<PrologueRun> &i) {
                             return i.param.c.name + "_" + i.param.schedule;
                         });

TEST(ConvPrologue, UnknownPrologueIsRefused) {
    Params params = sw_test::conv2d_params(Conv2DParams::square(1, 3, 4, 8, 8, 3, 1, 1, true));
    params["prologue"] = "batchnorm";
    const sw_jit::JitBuild b = sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "conv2d", params);
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.log.find("conv2d: prologue must be none, scale_shift or scale_shift_relu, not "
                         "'batchnorm'"),
              std::string::npos)
        << b.log;
}

} // namespace
