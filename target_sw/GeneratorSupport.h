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

#include <string>
#include <vector>

namespace sw {

/** Throws a UserError with \p message unless \p ok. */
inline void check_param(bool ok, const std::string &message) {
    if (!ok) throw UserError(message);
}

/** Constrains a generator buffer to the dense row-major shape \p extents (x first),
 * with every min at 0: the generated code is specialised to it, and the host function
 * checks the buffers it is given against it. */
template<typename T>
void set_dense_shape(T &buffer, const std::vector<int> &extents) {
    int stride = 1;
    for (size_t d = 0; d < extents.size(); d++) {
        buffer.dim(int(d)).set_bounds(0, extents[d]).set_stride(stride);
        stride *= extents[d];
    }
}

/** The machine named by a generator's `machine` parameter. */
inline const Machine &machine_param(const std::string &name) {
    const Machine *m = machine_by_name(name);
    if (!m) throw UserError("unknown machine '" + name + "' (sw26010 or sw26010-pro)");
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

}  // namespace sw

#endif
