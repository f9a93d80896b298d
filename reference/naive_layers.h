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
#include <limits>
#include <vector>

namespace reference {

/** A 2-D convolution: rectangular kernel, per-axis stride, per-side padding, groups. */
struct Conv2DParams {
    int batch, in_c, out_c, h, w;
    int kernel_x, kernel_y, stride_x, stride_y;
    int pad_left, pad_right, pad_top, pad_bottom;
    int groups;
    bool relu;
    int out_h() const { return (h + pad_top + pad_bottom - kernel_y) / stride_y + 1; }
    int out_w() const { return (w + pad_left + pad_right - kernel_x) / stride_x + 1; }

    /** Square kernel k x k, the same stride and padding on every side, one group. */
    static Conv2DParams square(int batch, int in_c, int out_c, int h, int w, int k, int stride,
                               int pad, bool relu) {
        return {batch, in_c, out_c, h, w, k, k, stride, stride, pad, pad, pad, pad, 1, relu};
    }
};

/** out[n][o][y][x] = bias[o] + sum_{i,ky,kx} w[o][i][ky][kx] *
 *                   in[n][g*I + i][y*sy + ky - pad_top][x*sx + kx - pad_left]
 * (zero outside the input), then max(., 0) if relu. Weights in OIHW with I = in_c/groups
 * input channels each; output channel o belongs to group g = o / (out_c/groups). */
inline std::vector<float> conv2d(const Conv2DParams &c, const std::vector<float> &in,
                                 const std::vector<float> &wt, const std::vector<float> &bias) {
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
                                const int ix = x * c.stride_x + kx - c.pad_left;
                                const int iy = y * c.stride_y + ky - c.pad_top;
                                if (ix < 0 || iy < 0 || ix >= c.w || iy >= c.h) continue;
                                acc += double(wt[((size_t(o) * in_per_group + i) * c.kernel_y + ky) *
                                                     c.kernel_x + kx]) *
                                       in[((size_t(n) * c.in_c + first_in + i) * c.h + iy) * c.w + ix];
                            }
                    out[((size_t(n) * c.out_c + o) * oh + y) * ow + x] =
                        float(c.relu && acc < 0 ? 0 : acc);
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
        if (ceil_mode && (n - 1) * stride >= size + pad_lo) n--;
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
                            if (iy < 0 || ix < 0 || iy >= p.h || ix >= p.w) continue;
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
                for (int cc = std::max(0, c - before); cc <= std::min(channels - 1, c + after); cc++) {
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
        for (int j = 0; j < classes; j++) mx = std::max(mx, double(row[j]));
        double sum = 0;
        for (int j = 0; j < classes; j++) sum += std::exp(row[j] - mx);
        for (int j = 0; j < classes; j++)
            out[size_t(r) * classes + j] = float(std::exp(row[j] - mx) / sum);
    }
    return out;
}

/** max(v, 0) elementwise. */
inline std::vector<float> relu(std::vector<float> v) {
    for (float &x : v) x = x < 0 ? 0.f : x;
    return v;
}

}  // namespace reference

#endif
