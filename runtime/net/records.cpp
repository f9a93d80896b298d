/** \file
 * What a run records: see records.h.
 */
#include "runtime/net/records.h"

#include <algorithm>

namespace sw_net {

std::string shape_string(const Shape &s) {
    std::string t;
    for (size_t i = 0; i < s.size(); i++)
        t += (i ? "x" : "") + std::to_string(s[i]);
    return t;
}

int64_t elements(const Shape &s) {
    int64_t n = 1;
    for (int64_t d : s)
        n *= d;
    return n;
}

double layer_gflop(const std::string &kind, const std::map<std::string, std::string> &params,
                   int64_t in_elements, int64_t out_elements) {
    auto p = [&](const std::string &key, int fallback) {
        auto it = params.find(key);
        return it == params.end() || it->second.empty() ? fallback : std::stoi(it->second);
    };
    const double out = double(out_elements);
    if (kind == "conv2d") {
        const int k = p("kernel", 3), ky = p("kernel_y", 0) ? p("kernel_y", 0) : k;
        const auto prologue = params.find("prologue");
        const double pre =
            prologue != params.end() && prologue->second != "none" ? double(in_elements) : 0;
        return (2.0 * double(p("in_channels", 3) / std::max(1, p("groups", 1))) * k * ky * out +
                pre) /
               1e9;
    }
    if (kind == "conv_transpose") { // each input value scatters into k * ky * (out / groups)
        const int k = p("kernel", 3), ky = p("kernel_y", 0) ? p("kernel_y", 0) : k;
        return 2.0 * double(in_elements) * k * ky *
               double(p("out_channels", 4) / std::max(1, p("groups", 1))) / 1e9;
    }
    if (kind == "dense")
        return 2.0 * p("in_features", 16) * out / 1e9;
    if (kind == "pool") {
        const int k = p("kernel", 1), ky = p("kernel_y", 0) ? p("kernel_y", 0) : k;
        return double(k) * ky * out / 1e9;
    }
    if (kind == "lrn")
        return (2.0 * p("size", 5) + 4.0) * out / 1e9;
    if (kind == "softmax")
        return 4.0 * double(in_elements) / 1e9;
    if (kind == "global_pool")
        return double(in_elements) / 1e9;
    if (kind == "batch_matmul") // a multiply-add per k for each output (alpha not counted)
        return 2.0 * p("k", 64) * out / 1e9;
    if (kind == "layer_norm") // per element: 1 for the mean, 3 for the variance, 4 to normalise
        return 8.0 * out / 1e9;
    if (kind == "attention") {
        // Per (batch, head): Q.K^T and P.V, 2 M N D each (a multiply-add is 2), and per score 5
        // (the scale or mask, the max, the subtraction and exp, the sum, the division).
        const double bh = double(p("batch", 1)) * p("heads", 1), m = p("seq_q", 64),
                     n = p("seq_k", 64), d = p("head_dim", 64);
        return bh * (4.0 * m * n * d + 5.0 * m * n) / 1e9;
    }
    // Pure data movement: no arithmetic on the values.
    if (kind == "transpose" || kind == "gather" || kind == "pad")
        return 0;
    if (kind ==
        "resize") { // nearest: a copy; linear: three interpolations of 3 (1 - l, 2 products)
        const auto m = params.find("mode");
        return m != params.end() && m->second == "linear" ? 9.0 * out / 1e9 : 0;
    }
    return out / 1e9;
}

} // namespace sw_net
