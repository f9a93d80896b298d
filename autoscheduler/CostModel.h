/** \file
 * The autoscheduler's cost model: the emulator's timing model (target_sw/emulator/src/
 * timing.cpp, parameters in Machine.h) in closed form, evaluated from a plan without
 * generating or running code.
 *
 * Per tile of the busiest CPE (tiles go to the CPEs cyclically): the tile-level staging by
 * DMA, then per chunk of the reduction its staging and its compute (overlapped when double
 * buffered), the remaining stages, and the result written back (its latency waited for). The
 * n requests of a transfer cost their setups and data pipelined (a request's data after its
 * own setup, the next setup meanwhile) plus the latency: setup is get_block_cycles or
 * put_block_cycles per contiguous main-memory block, data its 128-byte-line bytes (a block at
 * an unknown 4-byte-aligned offset touches 1 + (bytes - 4) / 128 lines on average) at the
 * CPE's share of the channel: the CPEs run in step, so every active CPE moves data at once and
 * each gets an equal share (capped per CPE). The whole kernel cannot beat the channel itself
 * (all line bytes at the core group's bandwidth) plus the time the CPEs, running in step,
 * leave it idle (first setups, latencies and compute not overlapped by double buffering),
 * and pays the launch and join.
 *
 * Compute follows the rules of WorkCount.h on the code the plan generates, region by region
 * with WorkCount's own region_cycles: P0 (float), P1 (loads, two per unaligned vector access,
 * splats, loop branches), integer work (either pipeline) and the chain of dependent floating-
 * point operations (OpCount::chain, times Machine::fp_latency_cycles); and once more with
 * region_unpaired_cycles for the no-pairing estimate (Estimate::seconds_unpaired). Three costs of
 * the generated code are taken from its counters rather than derived (see CostModel.cpp).
 * tests/autoschedule_random_test.cpp compares the model with the emulator on every plan it
 * picks for its random shapes; auto_bench and model_calibration on AlexNet and VGG-19.
 */
#ifndef SW_AUTO_COST_MODEL_H
#define SW_AUTO_COST_MODEL_H

#include "autoscheduler/Analysis.h"
#include "autoscheduler/Plan.h"
#include "target_sw/Machine.h"

#include <string>

namespace sw_auto {

struct Estimate {
    bool fits = false;  ///< the LDM buffers fit the machine's data budget
    double seconds = 0; ///< predicted time of the kernel on one core group
    double gflops = 0;
    int64_t ldm_bytes = 0;                        ///< per CPE, buffers aligned
    int64_t dma_get_bytes = 0, dma_put_bytes = 0; ///< whole kernel, bytes requested
    double compute_cycles = 0, dma_cycles = 0;    ///< busiest CPE
    double line_bytes = 0; ///< whole kernel, 128-byte-line bytes moved by DMA
    /** The other end of the compute band: the same plan if the compiler paired no P0/P1
     * instructions (every region by WorkCount's region_unpaired_cycles). The busiest CPE's
     * compute counted that way, and the kernel's time with its extra compute cycles added,
     * every DMA wait kept (as the emulator's no-pairing time, athread_emu.h): >= seconds. */
    double compute_cycles_unpaired = 0, seconds_unpaired = 0, gflops_unpaired = 0;
    int64_t tiles = 0;
    std::string
        ldm_detail; ///< buffer: bytes, ... (only when asked for: the search costs many plans)
};

Estimate estimate(const PipelineInfo &info, const Plan &plan, const sw::Machine &m,
                  bool ldm_detail = false);

} // namespace sw_auto

#endif
