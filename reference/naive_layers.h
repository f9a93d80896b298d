/** \file
 * Naive reference implementations of the layers, written from their textbook
 * definitions with plain loops and double accumulation, independent of Halide and of our
 * generators. Tensors are dense NCHW float32 in std::vector, x fastest.
 */
#ifndef REFERENCE_NAIVE_LAYERS_H
#define REFERENCE_NAIVE_LAYERS_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace reference {

/** A 2-D convolution: rectangular kernel, per-axis stride, per-side padding, groups. */
struct Conv2DParams {
    int batch, in_c, out_c, h, w;
    int kernel_x, kernel_y, stride_x, stride_y;
    int pad_left, pad_right, pad_top, pad_bottom;
    int groups;
    bool relu;
    int dilation_x = 1, dilation_y = 1; ///< kernel taps this many pixels apart
    int out_h() const {
        return (h + pad_top + pad_bottom - (kernel_y - 1) * dilation_y - 1) / stride_y + 1;
    }
    int out_w() const {
        return (w + pad_left + pad_right - (kernel_x - 1) * dilation_x - 1) / stride_x + 1;
    }

    /** Square kernel k x k, the same stride and padding on every side, one group. */
    static Conv2DParams square(int batch, int in_c, int out_c, int h, int w, int k, int stride,
                               int pad, bool relu) {
        return {batch, in_c, out_c, h, w, k, k, stride, stride, pad, pad, pad, pad, 1, relu};
    }
};

/** out[n][o][y][x] = bias[o] + sum_{i,ky,kx} w[o][i][ky][kx] *
 *                   in[n][g*I + i][y*sy + ky*dy - pad_top][x*sx + kx*dx - pad_left]
 * (zero outside the input), plus residual[n][o][y][x] if \p residual is given, then
 * max(., 0) if relu. Weights in OIHW with I = in_c/groups input channels each; output
 * channel o belongs to group g = o / (out_c/groups). */
inline std::vector<float> conv2d(const Conv2DParams &c, const std::vector<float> &in,
                                 const std::vector<float> &wt, const std::vector<float> &bias,
                                 const std::vector<float> *residual = nullptr) {
    const int oh = c.out_h(), ow = c.out_w();
    const int in_per_group = c.in_c / c.groups, out_per_group = c.out_c / c.groups;
    std::vector<float> out(size_t(c.batch) * c.out_c * oh * ow);
    for (int n = 0; n < c.batch; n++)
        for (int o = 0; o < c.out_c; o++) {
            const int first_in = (o / out_per_group) * in_per_group;
            for (int y = 0; y < oh; y++)
                for (int x = 0; x < ow; x++) {
                    double acc = bias[o];
                    for (int i = 0; i < in_per_group; i++)
                        for (int ky = 0; ky < c.kernel_y; ky++)
                            for (int kx = 0; kx < c.kernel_x; kx++) {
                                const int ix = x * c.stride_x + kx * c.dilation_x - c.pad_left;
                                const int iy = y * c.stride_y + ky * c.dilation_y - c.pad_top;
                                if (ix < 0 || iy < 0 || ix >= c.w || iy >= c.h)
                                    continue;
                                acc +=
                                    double(wt[((size_t(o) * in_per_group + i) * c.kernel_y + ky) *
                                                  c.kernel_x +
                                              kx]) *
                                    in[((size_t(n) * c.in_c + first_in + i) * c.h + iy) * c.w + ix];
                            }
                    const size_t at = ((size_t(n) * c.out_c + o) * oh + y) * ow + x;
                    if (residual)
                        acc += double(residual->at(at));
                    out[at] = float(c.relu && acc < 0 ? 0 : acc);
                }
        }
    return out;
}

/** Fully connected: out[n][o] = alpha * sum_i in[n][i] * w[o][i] + beta * bias[o], then
 * max(., 0) if relu. Weights in PyTorch's [out_f][in_f] layout. */
inline std::vector<float> dense(int batch, int in_f, int out_f, const std::vector<float> &in,
                                const std::vector<float> &wt, const std::vector<float> &bias,
                                bool relu, double alpha = 1, double beta = 1) {
    std::vector<float> out(size_t(batch) * out_f);
    for (int n = 0; n < batch; n++)
        for (int o = 0; o < out_f; o++) {
            double acc = 0;
            for (int i = 0; i < in_f; i++)
                acc += double(in[size_t(n) * in_f + i]) * wt[size_t(o) * in_f + i];
            const double v = alpha * acc + beta * bias[o];
            out[size_t(n) * out_f + o] = float(relu && v < 0 ? 0 : v);
        }
    return out;
}

/** 2-D max or average pooling, as PyTorch's MaxPool2d / AvgPool2d (and ONNX's). */
struct PoolParams {
    int batch, channels, h, w;
    int kernel_x, kernel_y, stride_x, stride_y;
    int pad_left, pad_right, pad_top, pad_bottom;
    bool ceil_mode, is_max, count_include_pad;

    /** Number of windows along one axis: floor (or ceil) of (size + pads - kernel) / stride,
     * plus 1; in ceil mode the last window is dropped if it starts at or beyond the end of
     * the input plus the leading padding (PyTorch's rule). */
    static int out_size(int size, int kernel, int stride, int pad_lo, int pad_hi, bool ceil_mode) {
        const int span = size + pad_lo + pad_hi - kernel;
        int n = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
        if (ceil_mode && (n - 1) * stride >= size + pad_lo)
            n--;
        return n;
    }
    int out_h() const { return out_size(h, kernel_y, stride_y, pad_top, pad_bottom, ceil_mode); }
    int out_w() const { return out_size(w, kernel_x, stride_x, pad_left, pad_right, ceil_mode); }
};

/** Max: the largest input element in the window (padding never wins; a window without any
 * real element gives -inf). Average: the sum of the real elements in the window divided by
 * the number of window positions inside the padded extent if count_include_pad, else by
 * the number inside the real input. */
inline std::vector<float> pool2d(const PoolParams &p, const std::vector<float> &in) {
    const int oh = p.out_h(), ow = p.out_w();
    std::vector<float> out(size_t(p.batch) * p.channels * oh * ow);
    for (int n = 0; n < p.batch; n++)
        for (int c = 0; c < p.channels; c++) {
            const float *plane = &in[(size_t(n) * p.channels + c) * p.h * p.w];
            for (int y = 0; y < oh; y++)
                for (int x = 0; x < ow; x++) {
                    double sum = 0, mx = -std::numeric_limits<double>::infinity();
                    int inside_real = 0, inside_padded = 0;
                    for (int ky = 0; ky < p.kernel_y; ky++)
                        for (int kx = 0; kx < p.kernel_x; kx++) {
                            const int iy = y * p.stride_y + ky - p.pad_top;
                            const int ix = x * p.stride_x + kx - p.pad_left;
                            if (iy >= -p.pad_top && iy < p.h + p.pad_bottom && ix >= -p.pad_left &&
                                ix < p.w + p.pad_right)
                                inside_padded++;
                            if (iy < 0 || ix < 0 || iy >= p.h || ix >= p.w)
                                continue;
                            inside_real++;
                            const double v = plane[size_t(iy) * p.w + ix];
                            sum += v;
                            mx = std::max(mx, v);
                        }
                    double v;
                    if (p.is_max) {
                        v = mx;
                    } else {
                        const int divisor = p.count_include_pad ? inside_padded : inside_real;
                        v = divisor > 0 ? sum / divisor : 0.0;
                    }
                    out[((size_t(n) * p.channels + c) * oh + y) * ow + x] = float(v);
                }
        }
    return out;
}

/** Local response normalisation across channels (Caffe, PyTorch, ONNX):
 * out = in / (k + alpha/size * sum_{c'} in[c']^2)^beta, with c' from c - floor((size-1)/2)
 * to c + ceil((size-1)/2); channels outside [0, channels) are skipped. */
inline std::vector<float> lrn(int batch, int channels, int h, int w, const std::vector<float> &in,
                              int size, double alpha, double beta, double k) {
    const int before = (size - 1) / 2, after = size - 1 - before;
    const size_t plane = size_t(h) * w;
    std::vector<float> out(in.size());
    for (int n = 0; n < batch; n++)
        for (int c = 0; c < channels; c++)
            for (size_t i = 0; i < plane; i++) {
                double sq = 0;
                for (int cc = std::max(0, c - before); cc <= std::min(channels - 1, c + after);
                     cc++) {
                    const double v = in[(size_t(n) * channels + cc) * plane + i];
                    sq += v * v;
                }
                const size_t at = (size_t(n) * channels + c) * plane + i;
                out[at] = float(in[at] / std::pow(k + alpha / size * sq, beta));
            }
    return out;
}

/** Softmax over the classes of each row: exp(v - max) / sum exp(v - max). */
inline std::vector<float> softmax(int rows, int classes, const std::vector<float> &in) {
    std::vector<float> out(size_t(rows) * classes);
    for (int r = 0; r < rows; r++) {
        const float *row = &in[size_t(r) * classes];
        double mx = -std::numeric_limits<double>::infinity();
        for (int j = 0; j < classes; j++)
            mx = std::max(mx, double(row[j]));
        double sum = 0;
        for (int j = 0; j < classes; j++)
            sum += std::exp(row[j] - mx);
        for (int j = 0; j < classes; j++)
            out[size_t(r) * classes + j] = float(std::exp(row[j] - mx) / sum);
    }
    return out;
}

/** max(v, 0) elementwise. */
inline std::vector<float> relu(std::vector<float> v) {
    for (float &x : v)
        x = x < 0 ? 0.f : x;
    return v;
}

/** An NCHW shape (n, c, h, w). */
struct Shape4 {
    int n, c, h, w;
    size_t size() const { return size_t(n) * c * h * w; }
};

/** out = a op b (op add, sub, mul, div or pow; then max(., 0) if relu) with numpy
 * broadcasting: each dimension of a and b is the output's or 1. */
inline std::vector<float> eltwise_op(const Shape4 &out, const Shape4 &as,
                                     const std::vector<float> &a, const Shape4 &bs,
                                     const std::vector<float> &b, const std::string &op,
                                     bool relu) {
    auto at = [](const Shape4 &s, const std::vector<float> &v, int n, int c, int y, int x) {
        return v[((size_t(s.n == 1 ? 0 : n) * s.c + (s.c == 1 ? 0 : c)) * s.h +
                  (s.h == 1 ? 0 : y)) *
                     s.w +
                 (s.w == 1 ? 0 : x)];
    };
    std::vector<float> r(out.size());
    size_t i = 0;
    for (int n = 0; n < out.n; n++)
        for (int c = 0; c < out.c; c++)
            for (int y = 0; y < out.h; y++)
                for (int x = 0; x < out.w; x++) {
                    const double va = at(as, a, n, c, y, x), vb = at(bs, b, n, c, y, x);
                    const float v = float(op == "add"   ? va + vb
                                          : op == "sub" ? va - vb
                                          : op == "mul" ? va * vb
                                          : op == "div" ? va / vb
                                                        : std::pow(va, vb));
                    r[i++] = relu && v < 0 ? 0.f : v;
                }
    return r;
}

/** out = a + b or a * b (then max(., 0) if relu), broadcasting as eltwise_op. */
inline std::vector<float> eltwise(const Shape4 &out, const Shape4 &as, const std::vector<float> &a,
                                  const Shape4 &bs, const std::vector<float> &b, bool mul,
                                  bool relu) {
    return eltwise_op(out, as, a, bs, b, mul ? "mul" : "add", relu);
}

/** out[n][c][y][x] = in[n][c][y][x] * scale[c] + shift[c], then max(., 0) if relu. */
inline std::vector<float> channel_affine(const Shape4 &s, const std::vector<float> &in,
                                         const std::vector<float> &scale,
                                         const std::vector<float> &shift, bool relu) {
    std::vector<float> r(in.size());
    const size_t plane = size_t(s.h) * s.w;
    for (size_t i = 0; i < in.size(); i++) {
        const int c = int((i / plane) % s.c);
        const double v = double(in[i]) * scale[c] + shift[c];
        r[i] = float(relu && v < 0 ? 0 : v);
    }
    return r;
}

/** Channels [begin, begin + channels) of an NCHW tensor (ONNX Slice along the channels, or
 * one output of Split). */
inline std::vector<float> channel_slice(const Shape4 &s, const std::vector<float> &in, int begin,
                                        int channels) {
    const size_t plane = size_t(s.h) * s.w;
    std::vector<float> r;
    for (int n = 0; n < s.n; n++)
        for (int c = begin; c < begin + channels; c++)
            for (size_t p = 0; p < plane; p++)
                r.push_back(in[(size_t(n) * s.c + c) * plane + p]);
    return r;
}

/** ShuffleNet's channel shuffle with g groups, written as the reshape (n, g, c/g, h, w),
 * transpose of the two channel axes and reshape back: out[n][i*g + j] = in[n][j*(c/g) + i]. */
inline std::vector<float> channel_shuffle(const Shape4 &s, const std::vector<float> &in, int g) {
    std::vector<float> r(in.size());
    const size_t plane = size_t(s.h) * s.w;
    const int per = s.c / g;
    for (int n = 0; n < s.n; n++)
        for (int j = 0; j < g; j++)       // the (n, g, c/g) view's group
            for (int i = 0; i < per; i++) // and channel within it
                for (size_t p = 0; p < plane; p++)
                    r[(size_t(n) * s.c + size_t(i) * g + j) * plane + p] =
                        in[(size_t(n) * s.c + size_t(j) * per + i) * plane + p];
    return r;
}

/** The mean (or the largest value) of each channel's plane: output (n, c, 1, 1). */
inline std::vector<float> global_pool(const Shape4 &s, const std::vector<float> &in, bool is_max) {
    std::vector<float> r(size_t(s.n) * s.c);
    const size_t plane = size_t(s.h) * s.w;
    for (size_t nc = 0; nc < r.size(); nc++) {
        double sum = 0, mx = -std::numeric_limits<double>::infinity();
        for (size_t p = 0; p < plane; p++) {
            sum += in[nc * plane + p];
            mx = std::max(mx, double(in[nc * plane + p]));
        }
        r[nc] = float(is_max ? mx : sum / double(plane));
    }
    return r;
}

/** Concatenation along the channels of tensors of n x c_k x h x w. */
inline std::vector<float> concat(int n, int h, int w, const std::vector<int> &channels,
                                 const std::vector<std::vector<float>> &in) {
    std::vector<float> r;
    const size_t plane = size_t(h) * w;
    for (int b = 0; b < n; b++)
        for (size_t k = 0; k < in.size(); k++)
            r.insert(r.end(), in[k].begin() + b * channels[k] * plane,
                     in[k].begin() + (b + 1) * channels[k] * plane);
    return r;
}

/** Clip to [lo, hi] (ONNX: min(max(v, lo), hi)). */
inline std::vector<float> clip(std::vector<float> v, float lo, float hi) {
    for (float &x : v)
        x = std::min(std::max(x, lo), hi);
    return v;
}

/** v < 0 ? alpha * v : v. */
inline std::vector<float> leaky_relu(std::vector<float> v, float alpha) {
    for (float &x : v)
        x = x < 0 ? alpha * x : x;
    return v;
}

/** 1 / (1 + exp(-v)). */
inline std::vector<float> sigmoid(std::vector<float> v) {
    for (float &x : v)
        x = float(1.0 / (1.0 + std::exp(-double(x))));
    return v;
}

/** ONNX HardSigmoid: max(0, min(1, alpha * v + beta)), in double. */
inline std::vector<float> hard_sigmoid(std::vector<float> v, float alpha, float beta) {
    for (float &x : v)
        x = float(std::max(0.0, std::min(1.0, double(alpha) * x + double(beta))));
    return v;
}

/** ONNX HardSwish (alpha = 1/6, beta = 0.5): v * hard_sigmoid(v), in double. */
inline std::vector<float> hard_swish(std::vector<float> v, float alpha = 1.f / 6.f,
                                     float beta = 0.5f) {
    for (float &x : v)
        x = float(double(x) * std::max(0.0, std::min(1.0, double(alpha) * x + double(beta))));
    return v;
}

/** C[b] = alpha * A[b] x B[b]: A of m x k, B of k x n (or, \p transpose_b, n x k), C of m x n,
 * all row-major; an operand with a batch extent \p a_batch / \p b_batch of 1 is shared by
 * every batch. In double. */
inline std::vector<float> batch_matmul(int batch, int m, int n, int k, int a_batch, int b_batch,
                                       bool transpose_b, float alpha, const std::vector<float> &a,
                                       const std::vector<float> &b) {
    std::vector<float> out(size_t(batch) * m * n);
    for (int t = 0; t < batch; t++) {
        const float *pa = &a[size_t(a_batch == 1 ? 0 : t) * m * k];
        const float *pb = &b[size_t(b_batch == 1 ? 0 : t) * k * n];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double acc = 0;
                for (int q = 0; q < k; q++) {
                    const double bv = transpose_b ? pb[size_t(j) * k + q] : pb[size_t(q) * n + j];
                    acc += double(pa[size_t(i) * k + q]) * bv;
                }
                out[(size_t(t) * m + i) * n + j] = float(double(alpha) * acc);
            }
    }
    return out;
}

/** ONNX LayerNormalization over the last axis: each row of \p size normalised by its mean
 * and variance, times scale[i] plus bias[i]. In double. */
inline std::vector<float> layer_norm(int rows, int size, const std::vector<float> &in,
                                     const std::vector<float> &scale,
                                     const std::vector<float> &bias, float epsilon) {
    std::vector<float> out(size_t(rows) * size);
    for (int r = 0; r < rows; r++) {
        const float *row = &in[size_t(r) * size];
        double mean = 0;
        for (int i = 0; i < size; i++)
            mean += row[i];
        mean /= size;
        double var = 0;
        for (int i = 0; i < size; i++)
            var += (row[i] - mean) * (row[i] - mean);
        var /= size;
        const double rstd = 1.0 / std::sqrt(var + double(epsilon));
        for (int i = 0; i < size; i++)
            out[size_t(r) * size + i] = float((row[i] - mean) * rstd * scale[i] + bias[i]);
    }
    return out;
}

/** tanh, in double. */
inline std::vector<float> tanh_of(std::vector<float> v) {
    for (float &x : v)
        x = float(std::tanh(double(x)));
    return v;
}

/** erf, in double. */
inline std::vector<float> erf_of(std::vector<float> v) {
    for (float &x : v)
        x = float(std::erf(double(x)));
    return v;
}

/** GELU, erf form (PyTorch's default): 0.5 v (1 + erf(v / sqrt 2)), in double. */
inline std::vector<float> gelu(std::vector<float> v) {
    for (float &x : v)
        x = float(0.5 * x * (1.0 + std::erf(double(x) / std::sqrt(2.0))));
    return v;
}

/** GELU, tanh form: 0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3))), in double. */
inline std::vector<float> gelu_tanh(std::vector<float> v) {
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    for (float &x : v) {
        const double d = x;
        x = float(0.5 * d * (1.0 + std::tanh(k * (d + 0.044715 * d * d * d))));
    }
    return v;
}

/** Transpose of a 4-D tensor of ONNX shape \p dims (outermost first, row-major): output
 * dim i is input dim perm[i] (ONNX Transpose). */
inline std::vector<float> transpose(const std::vector<int> &dims, const std::vector<int> &perm,
                                    const std::vector<float> &in) {
    int od[4], stride[4];
    stride[3] = 1;
    for (int k = 2; k >= 0; k--)
        stride[k] = stride[k + 1] * dims[size_t(k + 1)];
    for (int i = 0; i < 4; i++)
        od[i] = dims[size_t(perm[size_t(i)])];
    std::vector<float> out(in.size());
    size_t o = 0;
    for (int i0 = 0; i0 < od[0]; i0++)
        for (int i1 = 0; i1 < od[1]; i1++)
            for (int i2 = 0; i2 < od[2]; i2++)
                for (int i3 = 0; i3 < od[3]; i3++) {
                    const int idx[4] = {i0, i1, i2, i3};
                    size_t src = 0;
                    for (int i = 0; i < 4; i++)
                        src += size_t(idx[i]) * size_t(stride[perm[size_t(i)]]);
                    out[o++] = in[src];
                }
    return out;
}

/** ONNX Pad of a 4-D tensor of ONNX shape \p dims (outermost first, row-major) by \p pads
 * (the begins of the four dims, then their ends; negative crops): \p mode "constant" (the
 * elements outside the input are \p value), "reflect" (mirrored about the edge element, which
 * is not repeated) or "edge" (the edge element repeated). */
inline std::vector<float> pad(const std::vector<int> &dims, const std::vector<int> &pads,
                              const std::string &mode, float value, const std::vector<float> &in) {
    int od[4];
    for (int k = 0; k < 4; k++)
        od[k] = dims[size_t(k)] + pads[size_t(k)] + pads[size_t(4 + k)];
    std::vector<float> out;
    for (int i0 = 0; i0 < od[0]; i0++)
        for (int i1 = 0; i1 < od[1]; i1++)
            for (int i2 = 0; i2 < od[2]; i2++)
                for (int i3 = 0; i3 < od[3]; i3++) {
                    const int o[4] = {i0, i1, i2, i3};
                    size_t src = 0;
                    bool outside = false;
                    for (int k = 0; k < 4; k++) {
                        const int n = dims[size_t(k)];
                        int i = o[k] - pads[size_t(k)];
                        if (i < 0 || i >= n) {
                            if (mode == "constant")
                                outside = true;
                            else if (mode == "edge")
                                i = i < 0 ? 0 : n - 1;
                            else // reflect, as often as needed
                                while (i < 0 || i >= n)
                                    i = i < 0 ? -i : 2 * (n - 1) - i;
                        }
                        src = src * size_t(n) + size_t(outside ? 0 : i);
                    }
                    out.push_back(outside ? value : in[src]);
                }
    return out;
}

/** Gather along axis 0 of a row-major [vocab][size] table (an embedding lookup): row
 * indices[n] (negative: counted from the end), clamped to [0, vocab - 1]. */
inline std::vector<float> gather(int vocab, int size, const std::vector<float> &table,
                                 const std::vector<int64_t> &indices) {
    std::vector<float> out(indices.size() * size_t(size));
    for (size_t n = 0; n < indices.size(); n++) {
        int64_t i = indices[n] < 0 ? indices[n] + vocab : indices[n];
        i = std::min<int64_t>(std::max<int64_t>(i, 0), vocab - 1);
        for (int d = 0; d < size; d++)
            out[n * size_t(size) + size_t(d)] = table[size_t(i) * size_t(size) + size_t(d)];
    }
    return out;
}

/** Fused scaled dot-product attention (the attention generator): for each batch b and head h,
 * scores[m][n] = alpha * q[b][m][h] . k[b][n][h]; \p mask "add": plus mask[b'][h'][m'][n],
 * "select": mask[b'][h'][m'][n] != 0 ? scores : fill ("none": no mask); b' = b or 0 (\p
 * mask_batch 1), h' = h or 0, m' = m or 0; p = softmax of each row (max subtracted); out[b][m][h]
 * = sum_n p[m][n] v[b][n][h]. q (B, M, H, D), k and v (B, N, H, D), mask (mask_batch,
 * mask_heads, mask_rows, N), out (B, M, H, D), all row-major. In double. */
inline std::vector<float> attention(int batch, int heads, int m, int n, int d, float alpha,
                                    const std::string &mask_kind, float fill, int mask_batch,
                                    int mask_heads, int mask_rows, const std::vector<float> &q,
                                    const std::vector<float> &k, const std::vector<float> &v,
                                    const std::vector<float> &mask) {
    std::vector<float> out(size_t(batch) * m * heads * d);
    std::vector<double> s(static_cast<size_t>(n));
    for (int b = 0; b < batch; b++)
        for (int h = 0; h < heads; h++)
            for (int i = 0; i < m; i++) {
                const float *qr = &q[((size_t(b) * m + i) * heads + h) * d];
                double mx = -std::numeric_limits<double>::infinity();
                for (int j = 0; j < n; j++) {
                    const float *kr = &k[((size_t(b) * n + j) * heads + h) * d];
                    double acc = 0;
                    for (int t = 0; t < d; t++)
                        acc += double(qr[t]) * double(kr[t]);
                    acc *= double(alpha);
                    if (mask_kind != "none") {
                        const size_t at = ((size_t(mask_batch == 1 ? 0 : b) * mask_heads +
                                            (mask_heads == 1 ? 0 : h)) *
                                               mask_rows +
                                           (mask_rows == 1 ? 0 : i)) *
                                              n +
                                          j;
                        if (mask_kind == "add")
                            acc += double(mask[at]);
                        else if (mask[at] == 0.f)
                            acc = double(fill);
                    }
                    s[size_t(j)] = acc;
                    mx = std::max(mx, acc);
                }
                double sum = 0;
                for (int j = 0; j < n; j++) {
                    s[size_t(j)] = std::exp(s[size_t(j)] - mx);
                    sum += s[size_t(j)];
                }
                float *o = &out[((size_t(b) * m + i) * heads + h) * d];
                for (int t = 0; t < d; t++) {
                    double acc = 0;
                    for (int j = 0; j < n; j++)
                        acc += s[size_t(j)] / sum *
                               double(v[((size_t(b) * n + j) * heads + h) * d + t]);
                    o[t] = float(acc);
                }
            }
    return out;
}

/** A 2-D resize as ONNX Resize defines it (onnx.ai, operator Resize), NCHW, x fastest. Per
 * axis, output pixel o has the source coordinate
 *   half_pixel: (o + 0.5) / scale - 0.5;  pytorch_half_pixel: the same, 0 if length <= 1;
 *   align_corners: o * (in - 1) / (length - 1), 0 if length == 1;  asymmetric: o / scale;
 *   tf_half_pixel_for_nn: (o + 0.5) / scale
 * with scale = out / in unless given (> 0), length = out, or in * scale when a scale is given
 * (ONNX's length_resized, not rounded). nearest: the input pixel round_prefer_floor /
 * round_prefer_ceil / floor / ceil of it, clamped to the input; linear: the two pixels around
 * it (each clamped, the edge repeated) weighted by the distance, along x then y. */
struct ResizeParams {
    int batch, channels, in_h, in_w, out_h, out_w;
    std::string mode = "nearest", coordinate = "half_pixel", nearest_mode = "round_prefer_floor";
    double scale_y = 0, scale_x = 0;
};

inline double resize_source(const std::string &coordinate, int o, int in, int out, double scale) {
    // ONNX's length_resized: in * scale when a scale is given (not rounded), else out.
    const double length = scale > 0 ? in * scale : double(out);
    if (scale <= 0)
        scale = double(out) / in;
    if (coordinate == "align_corners")
        return length == 1 ? 0.0 : o * double(in - 1) / (length - 1);
    if (coordinate == "asymmetric")
        return o / scale;
    if (coordinate == "tf_half_pixel_for_nn")
        return (o + 0.5) / scale;
    if (coordinate == "pytorch_half_pixel" && length <= 1)
        return 0.0;
    return (o + 0.5) / scale - 0.5;
}

inline std::vector<float> resize(const ResizeParams &p, const std::vector<float> &in) {
    std::vector<float> out(size_t(p.batch) * p.channels * p.out_h * p.out_w);
    auto clampi = [](long v, int n) { return int(std::min<long>(std::max<long>(v, 0), n - 1)); };
    auto pick = [&](double s, int n) {
        // ONNX: round_prefer_floor rounds x.5 down, round_prefer_ceil up.
        const double f = std::floor(s);
        long k;
        if (p.nearest_mode == "floor")
            k = long(f);
        else if (p.nearest_mode == "ceil")
            k = long(std::ceil(s));
        else if (s - f == 0.5)
            k = long(p.nearest_mode == "round_prefer_floor" ? f : f + 1);
        else
            k = long(std::round(s));
        return clampi(k, n);
    };
    size_t i = 0;
    for (int n = 0; n < p.batch; n++)
        for (int c = 0; c < p.channels; c++) {
            const float *plane = in.data() + (size_t(n) * p.channels + c) * p.in_h * p.in_w;
            auto at = [&](int y, int x) { return double(plane[size_t(y) * p.in_w + x]); };
            for (int y = 0; y < p.out_h; y++) {
                const double sy = resize_source(p.coordinate, y, p.in_h, p.out_h, p.scale_y);
                for (int x = 0; x < p.out_w; x++) {
                    const double sx = resize_source(p.coordinate, x, p.in_w, p.out_w, p.scale_x);
                    if (p.mode == "nearest") {
                        out[i++] = float(at(pick(sy, p.in_h), pick(sx, p.in_w)));
                        continue;
                    }
                    const double fy = std::floor(sy), fx = std::floor(sx);
                    const double ly = sy - fy, lx = sx - fx;
                    const int y0 = clampi(long(fy), p.in_h), y1 = clampi(long(fy) + 1, p.in_h);
                    const int x0 = clampi(long(fx), p.in_w), x1 = clampi(long(fx) + 1, p.in_w);
                    const double top = (1 - lx) * at(y0, x0) + lx * at(y0, x1);
                    const double bottom = (1 - lx) * at(y1, x0) + lx * at(y1, x1);
                    out[i++] = float((1 - ly) * top + ly * bottom);
                }
            }
        }
    return out;
}

/** A 2-D transposed convolution as ONNX ConvTranspose defines it, written as its scatter:
 * every input pixel (ix, iy) of channel ci adds in * w[ci][o'][ky][kx] to output pixel
 * (ix * sx - pad_left + kx * dx, iy * sy - pad_top + ky * dy) of each output channel o of ci's
 * group (o' = o % (out_c / groups)), where that pixel is inside the output; plus the bias.
 * Weights (in_c, out_c / groups, kernel_y, kernel_x). */
struct ConvTransposeParams {
    int batch, in_c, out_c, h, w, kernel_x, kernel_y, stride_x, stride_y, dilation_x, dilation_y;
    int pad_left, pad_right, pad_top, pad_bottom, output_padding_x, output_padding_y, groups;
    int out_w() const {
        return stride_x * (w - 1) + output_padding_x + (kernel_x - 1) * dilation_x + 1 - pad_left -
               pad_right;
    }
    int out_h() const {
        return stride_y * (h - 1) + output_padding_y + (kernel_y - 1) * dilation_y + 1 - pad_top -
               pad_bottom;
    }
};

inline std::vector<float> conv_transpose2d(const ConvTransposeParams &p,
                                           const std::vector<float> &in,
                                           const std::vector<float> &wt,
                                           const std::vector<float> &bias) {
    const int oh = p.out_h(), ow = p.out_w(), cg = p.in_c / p.groups, mg = p.out_c / p.groups;
    std::vector<double> acc(size_t(p.batch) * p.out_c * oh * ow);
    for (int n = 0; n < p.batch; n++)
        for (int o = 0; o < p.out_c; o++)
            for (int i = 0; i < oh * ow; i++)
                acc[(size_t(n) * p.out_c + o) * oh * ow + i] = bias[size_t(o)];
    for (int n = 0; n < p.batch; n++)
        for (int c = 0; c < p.in_c; c++)
            for (int iy = 0; iy < p.h; iy++)
                for (int ix = 0; ix < p.w; ix++) {
                    const double v = in[((size_t(n) * p.in_c + c) * p.h + iy) * p.w + ix];
                    for (int m = 0; m < mg; m++) {
                        const int o = (c / cg) * mg + m;
                        for (int ky = 0; ky < p.kernel_y; ky++)
                            for (int kx = 0; kx < p.kernel_x; kx++) {
                                const int y = iy * p.stride_y - p.pad_top + ky * p.dilation_y;
                                const int x = ix * p.stride_x - p.pad_left + kx * p.dilation_x;
                                if (y < 0 || y >= oh || x < 0 || x >= ow)
                                    continue;
                                const double wv =
                                    wt[((size_t(c) * mg + m) * p.kernel_y + ky) * p.kernel_x + kx];
                                acc[((size_t(n) * p.out_c + o) * oh + y) * ow + x] += v * wv;
                            }
                    }
                }
    return std::vector<float>(acc.begin(), acc.end());
}

} // namespace reference

#endif
