/** \file
 * Seeded random inputs for the tests that compare layers with their references.
 */
#ifndef SW_TESTS_SUPPORT_RANDOM_DATA_H
#define SW_TESTS_SUPPORT_RANDOM_DATA_H

#include <random>
#include <vector>

namespace sw_test {

/** \p n values uniform in [-scale, scale), the same for the same seed. */
inline std::vector<float> random_values(size_t n, unsigned seed, float scale = 1.f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-scale, scale);
    std::vector<float> v(n);
    for (float &x : v)
        x = dist(rng);
    return v;
}

} // namespace sw_test

#endif
