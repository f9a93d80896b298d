/** \file
 * Pass 1 of the Sunway lowering: finds the CPE kernels of a lowered function.
 *
 * A kernel is an outermost nest of GPUBlock loops (scheduled with
 * `gpu_blocks(v, DeviceAPI::Host)`). The pass replaces each one in the host body by a
 * `sw_launch(k)` call and records the kernel: its block loops (the CPEs share their
 * iterations), its body, and its closure (the scalars and main-memory buffers it uses,
 * which the host passes in an argument struct).
 *
 * It does not check LDM use or place DMA (later passes). GPUThread loops, and GPUBlock
 * loops nested inside a kernel's body, are user errors; a block loop that Halide's loop
 * partitioning put inside both parts of an edge tile's branch is first brought back next to
 * the enclosing one (MergeBlockPartitions.h).
 */
#ifndef SW_FIND_CPE_KERNELS_H
#define SW_FIND_CPE_KERNELS_H

#include "target_sw/SwModule.h"

namespace sw {

/** Fills \p f.kernels and \p f.host_body from \p body. Kernels are named \p f.name + "_k" + index.
 */
void find_cpe_kernels(const Halide::Internal::Stmt &body, SwFunction &f);

/** The closure of a kernel body: every free variable and main-memory buffer it uses,
 * excluding \p bound (the block variables). */
std::vector<ClosureArg> kernel_closure(const Halide::Internal::Stmt &body,
                                       const std::vector<std::string> &bound);

} // namespace sw

#endif
