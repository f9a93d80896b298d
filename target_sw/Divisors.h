/** \file
 * Divisors of a tile extent, for the hand schedules and the autoscheduler.
 */
#ifndef SW_DIVISORS_H
#define SW_DIVISORS_H

#include <cstdint>
#include <vector>

namespace sw {

/** Divisors of \p n (1 <= n < 2^62), largest first, found in O(sqrt(n)) steps: at most
 * 46341 for any int extent, so a layer of 2^31 - 1 input features is scheduled at once
 * rather than after a scan of every value below it. */
inline std::vector<int64_t> divisors_desc(int64_t n) {
    std::vector<int64_t> small, large;
    for (int64_t i = 1; i * i <= n; i++) {
        if (n % i)
            continue;
        small.push_back(i);
        if (i != n / i)
            large.push_back(n / i);
    }
    large.insert(large.end(), small.rbegin(), small.rend());
    return large;
}

} // namespace sw

#endif
