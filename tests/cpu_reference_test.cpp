/** \file
 * The CPU schedules (Halide's own x86 build of every layer generator, used as a reference)
 * against the naive references, on odd shapes with batch > 1.
 */
#include "HalideBuffer.h"
#include "cpu_dense.h"
#include "cpu_lrn.h"
#include "cpu_pool.h"
#include "cpu_relu.h"
#include "cpu_softmax.h"
#include "reference/naive_layers.h"
#include "tests/support/random_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

using Buf = Halide::Runtime::Buffer<float>;

using sw_test::random_values;

void expect_close(const std::vector<float> &expected, const std::vector<float> &actual) {
    ASSERT_EQ(expected.size(), actual.size());
    for (size_t i = 0; i < expected.size(); i++) {
        ASSERT_NEAR(actual[i], expected[i], 1e-4 + 1e-4 * std::fabs(expected[i]))
            << "element " << i;
    }
}

// Shapes: the PARAMS of the add_halide_library calls in tests/CMakeLists.txt.
TEST(CpuSchedules, Dense) {
    const int n = 3, in_f = 37, out_f = 19;
    std::vector<float> in = random_values(n * in_f, 1), w = random_values(out_f * in_f, 2),
                       b = random_values(out_f, 3);
    std::vector<float> out(n * out_f);
    Buf bi(in.data(), in_f, n), bw(w.data(), in_f, out_f), bb(b.data(), out_f),
        bo(out.data(), out_f, n);
    ASSERT_EQ(cpu_dense(bi, bw, bb, bo), 0);
    expect_close(reference::dense(n, in_f, out_f, in, w, b, true), out);
}

TEST(CpuSchedules, AveragePoolCeilModeWithPadding) {
    const reference::PoolParams p{2, 3, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, true, false, false};
    std::vector<float> in = random_values(size_t(p.batch) * p.channels * p.h * p.w, 4);
    std::vector<float> out(size_t(p.batch) * p.channels * p.out_h() * p.out_w());
    Buf bi(in.data(), p.w, p.h, p.channels, p.batch),
        bo(out.data(), p.out_w(), p.out_h(), p.channels, p.batch);
    ASSERT_EQ(cpu_pool(bi, bo), 0);
    expect_close(reference::pool2d(p, in), out);
}

TEST(CpuSchedules, Lrn) {
    const int n = 2, c = 7, h = 5, w = 6;
    std::vector<float> in = random_values(size_t(n) * c * h * w, 5, 40.f);
    std::vector<float> out(in.size());
    Buf bi(in.data(), w, h, c, n), bo(out.data(), w, h, c, n);
    ASSERT_EQ(cpu_lrn(bi, bo), 0);
    expect_close(reference::lrn(n, c, h, w, in, 5, 1e-4, 0.75, 1.0), out);
}

TEST(CpuSchedules, Softmax) {
    const int n = 3, classes = 13;
    std::vector<float> in = random_values(size_t(n) * classes, 6, 20.f);
    std::vector<float> out(in.size());
    Buf bi(in.data(), classes, n), bo(out.data(), classes, n);
    ASSERT_EQ(cpu_softmax(bi, bo), 0);
    expect_close(reference::softmax(n, classes, in), out);
}

TEST(CpuSchedules, Relu) {
    const int size = 1001;
    std::vector<float> in = random_values(size, 7);
    std::vector<float> out(in.size());
    Buf bi(in.data(), size), bo(out.data(), size);
    ASSERT_EQ(cpu_relu(bi, bo), 0);
    expect_close(reference::relu(in), out);
}

} // namespace
