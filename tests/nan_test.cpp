/** \file
 * NaN through the generated Sunway code on the emulator, against PyTorch's semantics:
 * torch.relu(nan) = nan, torch.clamp(nan, 0, 6) = nan (ReLU6), max_pool2d of a window
 * holding a NaN = nan, a ReLU after a dense layer whose input holds a NaN = nan. (The
 * generated C used to compute float max as `a > b ? a : b`, so ReLU(NaN) was 0.) The
 * expected values come from these rules, not from our code: a window with a NaN gives NaN,
 * any other gives its plain maximum.
 */
#include "HalideBuffer.h"
#include "nan_clip6.h"
#include "nan_dense_relu.h"
#include "nan_hard_swish.h"
#include "nan_maxpool.h"
#include "nan_maxpool_baseline.h"
#include "nan_relu.h"
#include "nan_relu_baseline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

using Buf = Halide::Runtime::Buffer<float>;
const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

/** 37 values: NaN at 0, 5 and 36 (first, middle, last lanes of any vector or tile), with
 * negative, zero, positive and infinite values around them. */
std::vector<float> activation_input() {
    std::vector<float> v(37);
    for (int i = 0; i < 37; i++)
        v[i] = float(i % 7) - 3.5f + (i % 3) * 2.0f;
    v[0] = v[5] = v[36] = kNan;
    v[9] = -kInf;
    v[10] = kInf;
    return v;
}

template <typename F> void check_activation(F f, float lo, float hi) {
    std::vector<float> in = activation_input();
    Buf bin(in.data(), 37), bout(37);
    ASSERT_EQ(f(bin.raw_buffer(), bout.raw_buffer()), 0);
    for (int i = 0; i < 37; i++) {
        if (std::isnan(in[i])) {
            EXPECT_TRUE(std::isnan(bout(i)))
                << "element " << i << ": " << bout(i) << " instead of NaN";
        } else {
            EXPECT_EQ(bout(i), std::min(std::max(in[i], lo), hi)) << "element " << i;
        }
    }
}

} // namespace

TEST(NaN, ReluPropagatesIt) {
    check_activation(nan_relu, 0.f, kInf);
    check_activation(nan_relu_baseline, 0.f, kInf);
}

TEST(NaN, Relu6PropagatesIt) {
    check_activation(nan_clip6, 0.f, 6.f);
}

// ONNX's (and PyTorch's) x * max(0, min(1, x / 6 + 0.5)): NaN in, NaN out; -inf * 0 is NaN too,
// +inf stays +inf.
TEST(NaN, HardSwishPropagatesIt) {
    std::vector<float> in = activation_input();
    Buf bin(in.data(), 37), bout(37);
    ASSERT_EQ(nan_hard_swish(bin.raw_buffer(), bout.raw_buffer()), 0);
    for (int i = 0; i < 37; i++) {
        const double x = in[i], want = x * std::max(0.0, std::min(1.0, x * (1.0 / 6) + 0.5));
        if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(bout(i)))
                << "element " << i << ": " << bout(i) << " instead of NaN";
        } else if (std::isinf(want)) {
            EXPECT_EQ(bout(i), want) << "element " << i;
        } else {
            EXPECT_NEAR(bout(i), want, 1e-6 * (1 + std::fabs(want))) << "element " << i;
        }
    }
    EXPECT_TRUE(std::isnan(bout(9))); // -inf
    EXPECT_EQ(bout(10), kInf);        // +inf
}

TEST(NaN, MaxPoolWindowWithANaNGivesNaN) {
    // 2 images x 3 channels x 9 x 9, 3x3 windows, stride 2, pad 1 (padding is -inf).
    const int W = 9, H = 9, C = 3, N = 2, K = 3, S = 2, P = 1, OW = 5, OH = 5;
    Buf in(W, H, C, N);
    in.for_each_element([&](int x, int y, int c, int n) {
        in(x, y, c, n) = float((x * 7 + y * 3 + c * 5 + n) % 11) - 5;
    });
    // Output o covers inputs 2o - 1 .. 2o + 1: an even coordinate is in one window, an odd
    // one in two.
    in(0, 0, 0, 0) = kNan; // in the corner window only
    in(3, 5, 1, 0) = kNan; // in 2 x 2 windows
    in(8, 3, 2, 1) = kNan; // on the last column: in 1 x 2 windows
    for (auto f : {nan_maxpool, nan_maxpool_baseline}) {
        Buf out(OW, OH, C, N);
        ASSERT_EQ(f(in.raw_buffer(), out.raw_buffer()), 0);
        int nans = 0;
        out.for_each_element([&](int ox, int oy, int c, int n) {
            bool any_nan = false;
            float m = -kInf;
            for (int ky = 0; ky < K; ky++)
                for (int kx = 0; kx < K; kx++) {
                    const int x = ox * S + kx - P, y = oy * S + ky - P;
                    if (x < 0 || y < 0 || x >= W || y >= H)
                        continue;
                    any_nan |= std::isnan(in(x, y, c, n));
                    m = std::max(m, in(x, y, c, n));
                }
            if (any_nan) {
                nans++;
                EXPECT_TRUE(std::isnan(out(ox, oy, c, n)))
                    << ox << "," << oy << "," << c << "," << n;
            } else {
                EXPECT_EQ(out(ox, oy, c, n), m) << ox << "," << oy << "," << c << "," << n;
            }
        });
        EXPECT_EQ(nans, 1 + 4 + 2);
    }
}

TEST(NaN, DenseReluOfANaNInputIsNaN) {
    // One image's input holds a NaN: every output of it is NaN after the ReLU (NaN * w
    // and any sum with it are NaN); the other image's outputs are finite.
    const int I = 24, O = 10, B = 2;
    Buf in(I, B), w(I, O), bias(O), out(O, B);
    in.for_each_element([&](int i, int n) { in(i, n) = float((i * 5 + n) % 9) - 4; });
    w.for_each_element([&](int i, int o) { w(i, o) = float((i + 3 * o) % 7) - 3; });
    bias.fill(0.5f);
    in(7, 1) = kNan;
    ASSERT_EQ(nan_dense_relu(in.raw_buffer(), w.raw_buffer(), bias.raw_buffer(), out.raw_buffer()),
              0);
    for (int o = 0; o < O; o++) {
        EXPECT_TRUE(std::isnan(out(o, 1))) << "output " << o;
        double acc = 0.5;
        for (int i = 0; i < I; i++)
            acc += double(in(i, 0)) * w(i, o);
        EXPECT_FLOAT_EQ(out(o, 0), float(std::max(acc, 0.0))) << "output " << o;
    }
}
