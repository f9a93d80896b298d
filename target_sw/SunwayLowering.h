/** \file
 * The orchestrator of the Sunway target: runs its passes, in order, on a function that
 * unchanged Halide 14 has lowered for a plain CPU target (CPE loops still GPUBlock loops
 * with DeviceAPI::Host), and can log the IR after each step.
 *
 *   1. find_cpe_kernels   (FindCpeKernels.h)   kernels, iteration spaces, closures
 *      stage_outputs      (StageOutput.h)      outputs marked sw::stage_output, via LDM
 *      apply_split_phases (SplitPhases.h)      marked stagings also split into stride phases
 *   2. place_ldm_buffers  (PlaceLdmBuffers.h)  LDM bounds and the per-CPE budget
 *   3. inject_dma         (InjectDma.h)        copies to and from LDM become DMA
 *   4. apply_double_buffering (DoubleBuffer.h) prefetch the next tile of marked Funcs
 *      apply_broadcast    (BroadcastDma.h)     marked stagings: one BCAST_MODE get per core group
 *   5. delay_dma_waits    (DelayDmaWaits.h)    each wait moves to the first use: async DMA
 *   6. promote_accumulators (PromoteAccumulators.h) loop-invariant accumulators in registers
 *   7. share_operands     (ShareOperands.h)    repeated operands of a register block loaded once
 *   8. align_vector_accesses (AlignVectorAccesses.h) floatv4 LDM accesses proved aligned
 *      make_block_loop_uniform (BroadcastDma.h) same block rounds on every CPE (broadcasts)
 *   9. pipeline_round_puts (PipelineRoundPuts.h) a CPE's rounds of blocks in turn, each put
 *                                               spread over the next block's chunks
 *
 * The code generators (CodeGen_MPE.h, CodeGen_CPE.h) print the result.
 */
#ifndef SW_SUNWAY_LOWERING_H
#define SW_SUNWAY_LOWERING_H

#include "target_sw/Directives.h"
#include "target_sw/SwModule.h"

#include <ostream>

namespace sw {

/** The Halide target a Sunway function is lowered for before the Sunway passes run. */
Halide::Target halide_target_for_sunway();

/** Lowers \p fn for machine \p m with the Sunway directives \p d of the pipeline it was
 * compiled from (Directives.h: directives_of); if \p ir_log is given, writes the IR after
 * each step. */
SwFunction lower_to_sunway(const Halide::Internal::LoweredFunc &fn, const Machine &m,
                           const Directives &d, std::ostream *ir_log = nullptr);

/** Compiles \p p with unchanged Halide for halide_target_for_sunway() and lowers the
 * function \p name to Sunway code for machine \p m with the directives \p d (the Pipeline
 * route; generators go through the driver, SunwayGenGen.cpp). */
SwFunction lower_pipeline_to_sunway(Halide::Pipeline p, const std::vector<Halide::Argument> &args,
                                    const std::string &name, const Machine &m, const Directives &d,
                                    std::ostream *ir_log = nullptr);

/** The same, with the directives marked on the Funcs of \p p (directives_of(p)). */
SwFunction lower_pipeline_to_sunway(Halide::Pipeline p, const std::vector<Halide::Argument> &args,
                                    const std::string &name, const Machine &m,
                                    std::ostream *ir_log = nullptr);

/** A human-readable summary of the kernels: LDM buffers, DMA sites, direct accesses. */
std::string describe(const SwFunction &f);

} // namespace sw

#endif
