/** \file
 * Small helpers that Sunway generators share: clear errors for bad generator parameters,
 * dense constant buffer shapes, the machine a schedule targets, and how that machine is
 * described to an autoscheduler.
 */
#ifndef SW_GENERATOR_SUPPORT_H
#define SW_GENERATOR_SUPPORT_H

#include "Halide.h"
#include "target_sw/Errors.h"
#include "target_sw/Machine.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace sw {

/** Throws a UserError with \p message unless \p ok. */
inline void check_param(bool ok, const std::string &message) {
    if (!ok)
        throw UserError(message);
}

/** The largest extent (batch, channels, height, width, features, ...) a shape parameter may
 * have: the elements of the largest float buffer Halide addresses (2^31 - 1 bytes). */
constexpr int kMaxExtentParam = (1 << 29) - 1;
/** The largest kernel, stride, dilation or pad: with it every window (dilation * (kernel -
 * 1) + 1) and padded extent stays far inside int, and no loop runs over an absurd window. */
constexpr int kMaxWindowParam = 4096;

/** Throws a UserError "GENERATOR: NAME=VALUE is larger than LIMIT (WHY)" for the first of
 * \p params above \p limit: O(1) per parameter, before any arithmetic on the values (the
 * generators' own checks give the lower bounds). */
inline void check_at_most(const std::string &generator,
                          std::initializer_list<std::pair<const char *, int>> params, int limit) {
    for (const auto &p : params) {
        if (p.second <= limit)
            continue;
        const char *why = limit == kMaxExtentParam
                              ? " (the elements of the largest float buffer Halide addresses)"
                          : limit == kMaxWindowParam
                              ? " (the largest kernel, stride, dilation or pad accepted)"
                              : "";
        throw UserError(generator + ": " + p.first + "=" + std::to_string(p.second) +
                        " is larger than " + std::to_string(limit) + why);
    }
}

/** Halide's buffer extents and strides are int32, and a buffer of more than 2^31 - 1 bytes
 * fails Halide's size check on every call of the generated function (no large_buffers on
 * the Sunway target): a shape beyond that must be an error when the generator runs, not a
 * function that cannot be called. Throws a UserError naming the buffer, its extents and
 * the generator parameters they come from (\p params, one per dimension, may be empty)
 * unless every extent is >= 0 and the element count and byte size fit in int32. */
inline void check_dense_shape_fits(const std::string &buffer, const std::vector<int> &extents,
                                   const std::vector<std::string> &params, int element_bytes) {
    const int64_t limit = INT32_MAX;
    int64_t elements = 1;
    bool overflow = false;
    std::string shape, names;
    std::vector<std::string> named;
    for (size_t d = 0; d < extents.size(); d++) {
        const std::string param = d < params.size() ? params[d] : "";
        shape += (d ? " x " : "") + std::to_string(extents[d]);
        if (!param.empty() && std::find(named.begin(), named.end(), param) == named.end()) {
            named.push_back(param);
            names += (names.empty() ? "" : ", ") + param;
        }
        if (extents[d] < 0) {
            throw UserError("the buffer '" + buffer + "' would have a negative extent (" + shape +
                            ")");
        }
        // Extents of up to 2^31 - 1 each: four of them overflow int64 too.
        overflow |= __builtin_mul_overflow(elements, int64_t(extents[d]), &elements);
    }
    int64_t bytes = 0;
    overflow |= __builtin_mul_overflow(elements, int64_t(element_bytes), &bytes);
    if (overflow || elements > limit || bytes > limit) {
        const std::string size =
            overflow ? "more than 2^63 bytes"
                     : std::to_string(elements) + " elements, " + std::to_string(bytes) + " bytes";
        throw UserError(
            "the buffer '" + buffer + "' (" + shape + ": " + size +
            ") overflows 32-bit arithmetic: Halide buffers have int32 extents and strides and "
            "at most 2^31 - 1 bytes" +
            (names.empty() ? std::string()
                           : " (its shape comes from the parameters " + names + ")"));
    }
}

/** Constrains a generator buffer to the dense row-major shape \p extents (x first),
 * with every min at 0: the generated code is specialised to it, and the host function
 * checks the buffers it is given against it. \p params names the generator parameter of
 * each dimension for the error a shape too large for 32-bit arithmetic gives
 * (check_dense_shape_fits). */
template <typename T>
void set_dense_shape(T &buffer, const std::vector<int> &extents,
                     const std::vector<std::string> &params = {}) {
    check_dense_shape_fits(buffer.name(), extents, params, buffer.type().bytes());
    int stride = 1;
    for (size_t d = 0; d < extents.size(); d++) {
        buffer.dim(int(d)).set_bounds(0, extents[d]).set_stride(stride);
        stride *= extents[d];
    }
}

/** The machine named by a generator's `machine` parameter. */
inline const Machine &machine_param(const std::string &name) {
    const Machine *m = machine_by_name(name);
    if (!m)
        throw UserError("unknown machine '" + name + "' (sw26010 or sw26010-pro)");
    return *m;
}

/** The MachineParams by which the driver (SunwayGenGen.cpp) tells an autoscheduler which
 * Sunway machine it schedules for: parallelism = the CPEs of one core group (64),
 * last_level_cache_size = the LDM bytes of one CPE (65536 on the SW26010, 262144 on the
 * SW26010-Pro; the stack reserve is not subtracted), balance = 1. In string form (as
 * `machine_params=` takes it) "64,65536,1" for the SW26010. */
inline Halide::MachineParams sunway_machine_params(const Machine &m) {
    return Halide::MachineParams(m.cpes_per_core_group, uint64_t(m.ldm_bytes), 1.0f);
}

} // namespace sw

#endif
