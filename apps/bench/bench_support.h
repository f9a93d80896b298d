/** \file
 * What the benchmarks share: a network with the seeded deterministic weights of
 * apps/io/weights.h and a seeded random input.
 */
#ifndef SW_BENCH_SUPPORT_H
#define SW_BENCH_SUPPORT_H

#include "apps/io/weights.h"
#include "apps/net/network.h"

#include <random>
#include <vector>

namespace sw_bench {

/** \p net with deterministic parameters loaded; returns a seeded random input for it. */
inline std::vector<float> prepare(sw_net::Network &net) {
    net.load_parameters([](const std::string &layer, const std::string &what, const sw_net::Shape &s) {
        return what == "weight" ? sw_io::deterministic_weights(layer, s) : sw_io::deterministic_bias(layer, s[0]);
    });
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-2.f, 2.f);
    std::vector<float> x(size_t(sw_net::elements(net.input_shape())));
    for (float &v : x) v = dist(rng);
    return x;
}

}  // namespace sw_bench

#endif
