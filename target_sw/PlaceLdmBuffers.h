/** \file
 * Pass 2 of the Sunway lowering: places a kernel's buffers in the LDM.
 *
 * Every allocation inside a CPE kernel lives in that CPE's LDM (buffers the schedule put
 * in MemoryType::GPUShared -- offered to schedules as sw::LDM -- and any other buffer
 * computed inside the kernel, since a CPE has no other fast memory). Each gets a constant
 * upper bound of its size (see ConstantBounds.h), rounded up to the machine's LDM
 * alignment; the most bytes live at once must fit the machine's LDM data budget (LDM
 * minus the stack reserve). A schedule that does not fit is a user error naming every
 * buffer live at the peak, its size, and the limit.
 */
#ifndef SW_PLACE_LDM_BUFFERS_H
#define SW_PLACE_LDM_BUFFERS_H

#include "target_sw/SwModule.h"

namespace sw {

/** Schedules write `store_in(sw::LDM)`: the LDM is the CPEs' shared-memory analogue. */
constexpr Halide::MemoryType LDM = Halide::MemoryType::GPUShared;

/** Fills \p k.ldm and \p k.ldm_peak_bytes; throws UserError when the LDM overflows. */
void place_ldm_buffers(CpeKernel &k, const Machine &m);

} // namespace sw

#endif
