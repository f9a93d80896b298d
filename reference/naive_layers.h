/** \file
 * Naive reference implementations of the layers, written from their textbook
 * definitions with plain loops and double accumulation, independent of Halide and of our
 * generators. Tensors are dense NCHW float32 in std::vector, x fastest.
 */
#ifndef REFERENCE_NAIVE_LAYERS_H
#define REFERENCE_NAIVE_LAYERS_H

#include <cstddef>
#include <vector>

namespace reference {

struct Conv2DParams {
    int batch, in_c, out_c, h, w, k, stride, pad;
    bool relu;
    int out_h() const { return (h + 2 * pad - k) / stride + 1; }
    int out_w() const { return (w + 2 * pad - k) / stride + 1; }
};

/** out[n][o][y][x] = bias[o] + sum_{i,ky,kx} w[o][i][ky][kx] * in[n][i][y*s+ky-p][x*s+kx-p]
 * (zero outside the input), then max(., 0) if relu. Weights in OIHW. */
inline std::vector<float> conv2d(const Conv2DParams &c, const std::vector<float> &in,
                                 const std::vector<float> &wt, const std::vector<float> &bias) {
    const int oh = c.out_h(), ow = c.out_w();
    std::vector<float> out(size_t(c.batch) * c.out_c * oh * ow);
    for (int n = 0; n < c.batch; n++)
        for (int o = 0; o < c.out_c; o++)
            for (int y = 0; y < oh; y++)
                for (int x = 0; x < ow; x++) {
                    double acc = bias[o];
                    for (int i = 0; i < c.in_c; i++)
                        for (int ky = 0; ky < c.k; ky++)
                            for (int kx = 0; kx < c.k; kx++) {
                                const int ix = x * c.stride + kx - c.pad;
                                const int iy = y * c.stride + ky - c.pad;
                                if (ix < 0 || iy < 0 || ix >= c.w || iy >= c.h) continue;
                                acc += double(wt[((size_t(o) * c.in_c + i) * c.k + ky) * c.k + kx]) *
                                       in[((size_t(n) * c.in_c + i) * c.h + iy) * c.w + ix];
                            }
                    out[((size_t(n) * c.out_c + o) * oh + y) * ow + x] =
                        float(c.relu && acc < 0 ? 0 : acc);
                }
    return out;
}

}  // namespace reference

#endif
