/** \file
 * What one layer call did, read back from the emulator: its kernel records
 * (athread_emu_stats_*) summed into a LayerRecord, and its trace spans placed on the run's
 * modelled timeline. Used by the built-in networks (network.cpp) and the ONNX executor
 * (graph/Executor.cpp), so both report the same figures.
 *
 *   athread_emu_stats_reset(); athread_emu_trace_reset();
 *   ... call the layer ...
 *   add_emulator_records(record, clock, &spans);  // clock: modelled seconds before the call
 */
#ifndef SW_NET_EMULATOR_RECORD_H
#define SW_NET_EMULATOR_RECORD_H

#include "runtime/net/records.h"

#include <vector>

namespace sw_net {

/** The clock of the machine the emulator models, in GHz. */
double emulated_clock_ghz();

/** Adds the emulator's kernel records since the last athread_emu_stats_reset() to \p r
 * (modelled time, its no-pairing end, kernels, DMA requests and bytes, LDM peak, counted flops, the
 * busiest CPE's breakdown) and, if \p trace, appends the recorded spans named r.name, shifted by \p
 * clock (modelled seconds from the start of the run to the start of this call). */
void add_emulator_records(LayerRecord &r, double clock, std::vector<TraceSpan> *trace);

/** Adds one pass's records (the same layers in the same order) to the running totals: every
 * time, count and byte summed, the LDM peak the larger; an empty \p total takes \p pass. */
void accumulate(std::vector<LayerRecord> &total, const std::vector<LayerRecord> &pass);

/** The modelled seconds of all \p records together (a run's, or a rank's share). */
double modelled_seconds(const std::vector<LayerRecord> &records);
/** The same if no P0/P1 instructions paired (LayerRecord::modelled_unpaired_seconds). */
double modelled_unpaired_seconds(const std::vector<LayerRecord> &records);

} // namespace sw_net

#endif
