/** \file
 * The CPU schedules (Halide's own x86 build) of the ONNX operator generators — eltwise,
 * channel_affine, channel_shuffle, activation, global_pool, concat, dilated conv2d, conv2d with
 * a prologue, batch_matmul, layer_norm, attention, resize, conv_transpose —
 * against the naive references, on odd shapes with batch > 1.
 */
#include "HalideBuffer.h"
#include "cpu_activation_gelu.h"
#include "cpu_activation_hard_swish.h"
#include "cpu_activation_sigmoid.h"
#include "cpu_attention.h"
#include "cpu_batch_matmul_shared_a.h"
#include "cpu_batch_matmul_transposed.h"
#include "cpu_channel_affine.h"
#include "cpu_channel_shuffle.h"
#include "cpu_concat.h"
#include "cpu_conv_dilated.h"
#include "cpu_conv_hard_swish.h"
#include "cpu_conv_prologue.h"
#include "cpu_conv_transpose.h"
#include "cpu_dense_gelu_tanh.h"
#include "cpu_eltwise_bcast.h"
#include "cpu_eltwise_div.h"
#include "cpu_gather.h"
#include "cpu_global_max_pool.h"
#include "cpu_layer_norm.h"
#include "cpu_pad.h"
#include "cpu_resize_linear.h"
#include "cpu_transpose.h"
#include "reference/naive_layers.h"
#include "tests/support/random_data.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using Buf = Halide::Runtime::Buffer<float>;
using reference::Shape4;
using sw_test::random_values;

void expect_close(const std::vector<float> &expected, const std::vector<float> &actual) {
    ASSERT_EQ(expected.size(), actual.size());
    for (size_t i = 0; i < expected.size(); i++) {
        ASSERT_NEAR(actual[i], expected[i], 1e-4 + 1e-4 * std::fabs(expected[i]))
            << "element " << i;
    }
}

Buf view(std::vector<float> &v, const Shape4 &s) {
    return Buf(v.data(), s.w, s.h, s.c, s.n);
}

// Shapes: the PARAMS of the add_halide_library calls in tests/CMakeLists.txt.
TEST(CpuOpSchedules, MulBroadcastRelu) {
    const Shape4 out{2, 5, 7, 9}, as{2, 1, 7, 9}, bs{1, 5, 1, 1};
    std::vector<float> a = random_values(as.size(), 1), b = random_values(bs.size(), 2),
                       o(out.size());
    Buf ba = view(a, as), bb = view(b, bs), bo = view(o, out);
    ASSERT_EQ(cpu_eltwise_bcast(ba, bb, bo), 0);
    expect_close(reference::eltwise(out, as, a, bs, b, true, true), o);
}

TEST(CpuOpSchedules, Gelu) {
    std::vector<float> in = random_values(1001, 7, 8.f), o(1001);
    Buf bi(in.data(), 1001), bo(o.data(), 1001);
    ASSERT_EQ(cpu_activation_gelu(bi, bo), 0);
    expect_close(reference::gelu(in), o);
}

TEST(CpuOpSchedules, DenseGeluTanh) {
    std::vector<float> in = random_values(3 * 37, 8), w = random_values(19 * 37, 9),
                       b = random_values(19, 10), o(3 * 19);
    Buf bi(in.data(), 37, 3), bw(w.data(), 37, 19), bb(b.data(), 19), bo(o.data(), 19, 3);
    ASSERT_EQ(cpu_dense_gelu_tanh(bi, bw, bb, bo), 0);
    expect_close(reference::gelu_tanh(reference::dense(3, 37, 19, in, w, b, false)), o);
}

TEST(CpuOpSchedules, DivBroadcast) {
    const Shape4 out{2, 5, 7, 9}, as{2, 1, 7, 9}, bs{1, 5, 1, 1};
    std::vector<float> a = random_values(as.size(), 11), b = random_values(bs.size(), 12),
                       o(out.size());
    for (float &v : b)
        v = v < 0 ? v - 0.5f : v + 0.5f;
    Buf ba = view(a, as), bb = view(b, bs), bo = view(o, out);
    ASSERT_EQ(cpu_eltwise_div(ba, bb, bo), 0);
    expect_close(reference::eltwise_op(out, as, a, bs, b, "div", false), o);
}

TEST(CpuOpSchedules, TransposeKeyT) {
    const std::vector<int> dims = {2, 3, 5, 7}, perm = {0, 2, 3, 1};
    std::vector<float> in = random_values(210, 13), o(210);
    Buf bi(in.data(), 7, 5, 3, 2), bo(o.data(), 3, 7, 5, 2);
    ASSERT_EQ(cpu_transpose(bi, bo), 0);
    expect_close(reference::transpose(dims, perm, in), o);
}

TEST(CpuOpSchedules, ResizeLinear) {
    reference::ResizeParams r{2, 3, 5, 7, 11, 16};
    r.mode = "linear";
    std::vector<float> in = random_values(2 * 3 * 5 * 7, 15), o(2 * 3 * 11 * 16);
    Buf bi(in.data(), 7, 5, 3, 2), bo(o.data(), 16, 11, 3, 2);
    ASSERT_EQ(cpu_resize_linear(bi, bo), 0);
    expect_close(reference::resize(r, in), o);
}

TEST(CpuOpSchedules, ConvTransposeStride2Groups) {
    const reference::ConvTransposeParams p{2, 6, 4, 5, 5, 3, 3, 2, 2, 1, 1, 1, 0, 1, 0, 1, 1, 2};
    std::vector<float> in = random_values(2 * 6 * 5 * 5, 16), w = random_values(6 * 2 * 3 * 3, 17),
                       b = random_values(4, 18);
    std::vector<float> o(size_t(2) * 4 * p.out_h() * p.out_w());
    Buf bi(in.data(), 5, 5, 6, 2), bw(w.data(), 3, 3, 2, 6), bb(b.data(), 4),
        bo(o.data(), p.out_w(), p.out_h(), 4, 2);
    ASSERT_EQ(cpu_conv_transpose(bi, bw, bb, bo), 0);
    expect_close(reference::conv_transpose2d(p, in, w, b), o);
}

TEST(CpuOpSchedules, PadReflectOnEveryPaddedAxis) {
    const std::vector<int> dims = {2, 3, 5, 7}, pads = {0, 1, 2, 3, 1, 0, 4, 2};
    std::vector<float> in = random_values(210, 15), o(3 * 4 * 11 * 12);
    Buf bi(in.data(), 7, 5, 3, 2), bo(o.data(), 12, 11, 4, 3);
    ASSERT_EQ(cpu_pad(bi, bo), 0);
    expect_close(reference::pad(dims, pads, "reflect", 0.f, in), o);
}

TEST(CpuOpSchedules, GatherNegativeIndices) {
    std::vector<float> table = random_values(7 * 9, 14), o(11 * 9);
    std::vector<int64_t> idx = {0, 6, -1, -7, 3, 2, -3, 5, 1, 4, -2};
    Buf bt(table.data(), 9, 7), bo(o.data(), 9, 11);
    Halide::Runtime::Buffer<int64_t> bi(idx.data(), 11);
    ASSERT_EQ(cpu_gather(bt, bi, bo), 0);
    expect_close(reference::gather(7, 9, table, idx), o);
}

TEST(CpuOpSchedules, ChannelAffineRelu) {
    const Shape4 s{2, 7, 5, 9};
    std::vector<float> in = random_values(s.size(), 3), sc = random_values(7, 4),
                       sh = random_values(7, 5), o(s.size());
    Buf bi = view(in, s), bs(sc.data(), 7), bh(sh.data(), 7), bo = view(o, s);
    ASSERT_EQ(cpu_channel_affine(bi, bs, bh, bo), 0);
    expect_close(reference::channel_affine(s, in, sc, sh, true), o);
}

TEST(CpuOpSchedules, ChannelShuffle) {
    const Shape4 s{2, 12, 5, 7};
    std::vector<float> in = random_values(s.size(), 6), o(s.size());
    Buf bi = view(in, s), bo = view(o, s);
    ASSERT_EQ(cpu_channel_shuffle(bi, bo), 0);
    expect_close(reference::channel_shuffle(s, in, 3), o);
}

TEST(CpuOpSchedules, Sigmoid) {
    std::vector<float> in = random_values(1001, 7, 8.f), o(1001);
    Buf bi(in.data(), 1001), bo(o.data(), 1001);
    ASSERT_EQ(cpu_activation_sigmoid(bi, bo), 0);
    expect_close(reference::sigmoid(in), o);
}

TEST(CpuOpSchedules, HardSwish) {
    std::vector<float> in = random_values(1001, 7, 8.f), o(1001);
    Buf bi(in.data(), 1001), bo(o.data(), 1001);
    ASSERT_EQ(cpu_activation_hard_swish(bi, bo), 0);
    expect_close(reference::hard_swish(in, 0.16666667f, 0.5f), o);
}

TEST(CpuOpSchedules, DepthwiseConvHardSwish) {
    reference::Conv2DParams p{2, 6, 6, 11, 9, 3, 3, 1, 1, 1, 1, 1, 1, 6, false};
    std::vector<float> in = random_values(size_t(2) * 6 * 11 * 9, 1);
    std::vector<float> wt = random_values(6 * 9, 2), b = random_values(6, 3);
    std::vector<float> o(size_t(2) * 6 * 11 * 9);
    Buf bi(in.data(), 9, 11, 6, 2), bw(wt.data(), 3, 3, 1, 6), bb(b.data(), 6);
    Buf bo(o.data(), 9, 11, 6, 2);
    ASSERT_EQ(cpu_conv_hard_swish(bi, bw, bb, bo), 0);
    expect_close(reference::hard_swish(reference::conv2d(p, in, wt, b), 0.16666667f, 0.5f), o);
}

TEST(CpuOpSchedules, GlobalMaxPool) {
    const Shape4 s{2, 13, 7, 6};
    std::vector<float> in = random_values(s.size(), 8), o(2 * 13);
    Buf bi = view(in, s), bo(o.data(), 1, 1, 13, 2);
    ASSERT_EQ(cpu_global_max_pool(bi, bo), 0);
    expect_close(reference::global_pool(s, in, true), o);
}

TEST(CpuOpSchedules, ConcatThree) {
    const std::vector<int> cs = {3, 5, 2};
    std::vector<std::vector<float>> in;
    for (int k = 0; k < 3; k++)
        in.push_back(random_values(size_t(2) * cs[k] * 5 * 7, 9 + k));
    std::vector<float> o(size_t(2) * 10 * 5 * 7);
    Buf b0(in[0].data(), 7, 5, 3, 2), b1(in[1].data(), 7, 5, 5, 2), b2(in[2].data(), 7, 5, 2, 2),
        bo(o.data(), 7, 5, 10, 2);
    ASSERT_EQ(cpu_concat(b0, b1, b2, bo), 0);
    expect_close(reference::concat(2, 5, 7, cs, in), o);
}

TEST(CpuOpSchedules, DilatedConv) {
    reference::Conv2DParams p{2, 6, 4, 12, 11, 3, 3, 2, 1, 1, 2, 0, 1, 2, false};
    p.dilation_x = 2;
    p.dilation_y = 3;
    std::vector<float> in = random_values(size_t(p.batch) * p.in_c * p.h * p.w, 12);
    std::vector<float> w = random_values(size_t(p.out_c) * (p.in_c / p.groups) * 9, 13),
                       b = random_values(p.out_c, 14);
    std::vector<float> o(size_t(p.batch) * p.out_c * p.out_h() * p.out_w());
    Buf bi(in.data(), p.w, p.h, p.in_c, p.batch), bw(w.data(), 3, 3, p.in_c / p.groups, p.out_c),
        bb(b.data(), p.out_c);
    Buf bo(o.data(), p.out_w(), p.out_h(), p.out_c, p.batch);
    ASSERT_EQ(cpu_conv_dilated(bi, bw, bb, bo), 0);
    expect_close(reference::conv2d(p, in, w, b), o);
}

// conv2d with prologue=scale_shift_relu (the PARAMS of cpu_conv_prologue): the affine and ReLU
// of the input, then the convolution with zero padding (the padding after the prologue).
TEST(CpuOps, ConvPrologueStride2Padded) {
    const reference::Conv2DParams p{2, 13, 7, 11, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, true};
    std::vector<float> in = random_values(size_t(p.batch) * p.in_c * p.h * p.w, 31),
                       w = random_values(size_t(p.out_c) * p.in_c * 9, 32),
                       b = random_values(p.out_c, 33), scale = random_values(p.in_c, 34),
                       shift = random_values(p.in_c, 35);
    for (float &v : shift)
        v += 0.5f; // mostly positive: a border of relu(shift) instead of 0 would show
    std::vector<float> o(size_t(p.batch) * p.out_c * p.out_h() * p.out_w());
    Buf bi(in.data(), p.w, p.h, p.in_c, p.batch), bw(w.data(), 3, 3, p.in_c, p.out_c),
        bb(b.data(), p.out_c), bs(scale.data(), p.in_c), bt(shift.data(), p.in_c);
    Buf bo(o.data(), p.out_w(), p.out_h(), p.out_c, p.batch);
    ASSERT_EQ(cpu_conv_prologue(bi, bw, bb, bs, bt, bo), 0);
    const std::vector<float> pre =
        reference::channel_affine({p.batch, p.in_c, p.h, p.w}, in, scale, shift, true);
    expect_close(reference::conv2d(p, pre, w, b), o);
}

TEST(CpuOpSchedules, BatchMatMulSharedA) {
    std::vector<float> a = random_values(5 * 3, 30), b = random_values(3 * 3 * 7, 31), o(3 * 5 * 7);
    Buf ba(a.data(), 3, 5, 1), bb(b.data(), 7, 3, 3), bo(o.data(), 7, 5, 3);
    ASSERT_EQ(cpu_batch_matmul_shared_a(ba, bb, bo), 0);
    expect_close(reference::batch_matmul(3, 5, 7, 3, 1, 3, false, 0.5f, a, b), o);
}

TEST(CpuOpSchedules, BatchMatMulTransposed) {
    std::vector<float> a = random_values(2 * 9 * 12, 32), b = random_values(2 * 10 * 12, 33),
                       o(2 * 9 * 10);
    Buf ba(a.data(), 12, 9, 2), bb(b.data(), 12, 10, 2), bo(o.data(), 10, 9, 2);
    ASSERT_EQ(cpu_batch_matmul_transposed(ba, bb, bo), 0);
    expect_close(reference::batch_matmul(2, 9, 10, 12, 2, 2, true, 1.f, a, b), o);
}

TEST(CpuOpSchedules, LayerNormOdd) {
    std::vector<float> in = random_values(5 * 13, 34, 3.f), sc = random_values(13, 35),
                       bi = random_values(13, 36), o(5 * 13);
    Buf b_in(in.data(), 13, 5), b_sc(sc.data(), 13), b_bi(bi.data(), 13), bo(o.data(), 13, 5);
    ASSERT_EQ(cpu_layer_norm(b_in, b_sc, b_bi, bo), 0);
    expect_close(reference::layer_norm(5, 13, in, sc, bi, 0.001f), o);
}

TEST(CpuOpSchedules, AttentionMaskAdd) {
    const int B = 2, H = 3, M = 19, N = 23, D = 12;
    std::vector<float> q = random_values(size_t(B) * M * H * D, 37, 2.f),
                       k = random_values(size_t(B) * N * H * D, 38, 2.f),
                       v = random_values(size_t(B) * N * H * D, 39),
                       mask = random_values(size_t(B) * M * N, 40, 3.f), o(size_t(B) * M * H * D);
    Buf bq(q.data(), D, H, M, B), bk(k.data(), D, H, N, B), bv(v.data(), D, H, N, B),
        bm(mask.data(), N, M, 1, B), bo(o.data(), D, H, M, B);
    ASSERT_EQ(cpu_attention(bq, bk, bv, bm, bo), 0);
    expect_close(reference::attention(B, H, M, N, D, 0.25f, "add", 0.f, B, 1, M, q, k, v, mask), o);
}

} // namespace
