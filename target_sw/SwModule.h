/** \file
 * What the Sunway lowering produces from one Halide LoweredFunc: the MPE (host) body, in
 * which each CPE kernel has become a launch, and the CPE kernels themselves with their
 * iteration space, closure, LDM buffers and DMA transfers.
 */
#ifndef SW_SW_MODULE_H
#define SW_SW_MODULE_H

#include "Halide.h"
#include "target_sw/Machine.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sw {

/** One GPUBlock loop of a kernel's iteration space (outermost first). */
struct BlockLoop {
    std::string var;
    Halide::Expr min, extent; ///< constant after lowering, or expressions of host values
};

/** A value the host passes to a kernel: a scalar, or the host pointer of a buffer. */
struct ClosureArg {
    std::string name;  ///< Halide name (a buffer's name for buffers)
    Halide::Type type; ///< the scalar type, or the element type of a buffer
    bool is_buffer;
    bool written; ///< buffers only: the kernel stores to it
};

/** An LDM buffer of a kernel: an allocation inside the kernel body. */
struct LdmBuffer {
    std::string name;
    Halide::Type type;
    int64_t bytes; ///< constant upper bound of its size, before alignment
};

/** \p bytes rounded up to a multiple of \p alignment (an LDM buffer's size as allocated:
 * align_up(bytes, Machine::ldm_alignment)). */
inline int64_t align_up(int64_t bytes, int64_t alignment) {
    return (bytes + alignment - 1) / alignment * alignment;
}

/** Counts of the DMA transfers a kernel issues, by kind, as placed by InjectDma. */
struct DmaSite {
    std::string ldm_buffer, main_buffer;
    bool is_put;
    std::string shape; ///< human-readable: "1 strided request of 8 rows x 132 B per iteration"
};

struct CpeKernel {
    std::string name;
    std::vector<BlockLoop> blocks; ///< outermost first; the CPEs share their product
    Halide::Internal::Stmt body;   ///< one block iteration, in terms of the block vars
    /** The body is not one block iteration but the CPE's whole loop over its rounds of blocks
     * (PipelineRoundPuts.h: the rounds pipelined), the block variables bound inside it. */
    bool rounds_in_body = false;
    std::vector<ClosureArg> args;
    std::vector<LdmBuffer> ldm;
    int64_t ldm_peak_bytes = 0; ///< most LDM live at once, aligned, per CPE
    std::vector<DmaSite> dma;
    /** Double-buffered LDM buffers (DoubleBuffer.h): the bytes of one slot's data, before
     * alignment (what a register-communication sharing of a slot passes on). */
    std::map<std::string, int64_t> slot_bytes;
    std::vector<std::string> direct_accesses; ///< main-memory buffers read or written directly
    std::vector<std::string> notes;           ///< what the passes could not do, for the report
};

struct SwFunction {
    std::string name;
    std::vector<Halide::Internal::LoweredArgument> args;
    Halide::Internal::Stmt host_body; ///< kernels replaced by sw_launch(k) calls
    std::vector<CpeKernel> kernels;
    const Machine *machine = nullptr;
};

/* The intrinsics the lowering puts into the IR (sw_launch in host_body, the DMA, broadcast
 * and sharing intrinsics in kernel bodies) are named, built and matched in SunwayIR.h. */

} // namespace sw

#endif
