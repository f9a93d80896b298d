/** \file
 * The autoscheduler's cost model: the emulator's timing model (target_sw/emulator/src/
 * timing.cpp, parameters in Machine.h) in closed form, evaluated from a plan without
 * generating or running code.
 *
 * Per tile of the busiest CPE (tiles go to the CPEs cyclically): the tile-level staging by
 * DMA, then per chunk of the reduction its staging and its compute (overlapped when double
 * buffered), the remaining stages, and the result written back. The n requests of a transfer
 * cost their setups and data pipelined (a request's data after its own setup, the next setup
 * meanwhile) plus the latency: setup is block_cycles per contiguous main-memory block, data its
 * 128-byte-line bytes at the CPE's share of the channel (capped per CPE); the share follows
 * from how many CPEs move data at once (a fixed point on each CPE's share of time spent
 * moving data). The whole kernel cannot beat the channel itself (all line bytes at the
 * core group's bandwidth) plus the time the CPEs, running in step, leave it idle (setups,
 * latencies and compute not overlapped by double buffering), and pays the launch and join.
 *
 * Compute follows the work-counting rules of WorkCount.h on the code the plan generates:
 * P0 (float, splats), P1 (loads, stores, loop branches) and integer work (either pipeline);
 * a loop iteration costs max(P0, P1, (P0 + P1 + int) / 2) plus slow cycles. Two costs of
 * the generated staging code are taken from its counters rather than derived (see
 * CostModel.cpp). tests/autoschedule_test.cpp compares the model with the emulator.
 */
#ifndef SW_AUTO_COST_MODEL_H
#define SW_AUTO_COST_MODEL_H

#include "autoscheduler/Analysis.h"
#include "autoscheduler/Plan.h"
#include "target_sw/Machine.h"

#include <string>

namespace sw_auto {

struct Estimate {
    bool fits = false;      ///< the LDM buffers fit the machine's data budget
    double seconds = 0;     ///< predicted time of the kernel on one core group
    double gflops = 0;
    int64_t ldm_bytes = 0;  ///< per CPE, buffers aligned
    int64_t dma_get_bytes = 0, dma_put_bytes = 0;  ///< whole kernel, bytes requested
    double compute_cycles = 0, dma_cycles = 0;     ///< busiest CPE
    int64_t tiles = 0;
    std::string ldm_detail;  ///< buffer: bytes, ...
};

Estimate estimate(const PipelineInfo &info, const Plan &plan, const sw::Machine &m);

}  // namespace sw_auto

#endif
