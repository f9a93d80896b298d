/** \file
 * Per-layer reports of a network run: the table the apps print, the same figures as CSV or
 * JSON, and a Chrome/Perfetto trace (a track per CPE and one per CPE's DMA engine) of the
 * modelled timeline.
 */
#ifndef SW_NET_REPORT_H
#define SW_NET_REPORT_H

#include "runtime/io/output_file.h"
#include "runtime/net/records.h"
#include "target_sw/Machine.h"
#include "target_sw/Roofline.h"

#include <string>
#include <vector>

namespace sw_net {

/** Figures of one layer derived from its record (and the baseline's, if any). */
struct LayerFigures {
    double gflops = 0;        ///< analytic flops / modelled time
    double peak_fraction = 0; ///< of the core group's peak
    double dma_gbps = 0;      ///< DMA bytes (lines touched) / modelled time
    double speedup = 0;       ///< baseline modelled time / this one (0: no baseline)
    /** The layer's roofline (target_sw/Roofline.h): its analytic flops, read_bytes and
     * write_bytes against its modelled time; for a fused layer the sum of the layers it
     * replaces (layer_roofline). */
    sw::Roofline roof;
    /** The layer's own roofline as one layer (== roof unless it is fused). */
    sw::Roofline fused_roof;
};

/** A layer's per-layer roofline against its modelled time: of its own flops and bytes, or,
 * for a fused layer (LayerRecord::unfused), the sum of the bounds of the layers it replaces
 * (each term summed; bound by what binds the largest of them), so that the run's sum of
 * per-layer bounds stays the unfused model's and a fusion shows as a gain over it. */
sw::Roofline layer_roofline(const LayerRecord &r, const sw::Machine &m);

LayerFigures figures(const LayerRecord &r, const LayerRecord *baseline, const sw::Machine &m);

/** Prints the per-layer table (with the baseline's time and the speedup when given). */
void print_table(const std::vector<LayerRecord> &records, const std::vector<LayerRecord> *baseline,
                 const sw::Machine &m);

/** Writes the per-layer figures as CSV (if the path ends in .csv) or JSON (through
 * nlohmann-json). Both carry, per layer: the table's figures (the no-pairing time as
 * modelled_unpaired_ms), the busiest CPE's time
 * breakdown (compute, DMA wait, sync wait, register-communication wait, in ms) and the
 * machine's roofs (peak GFLOPS, the modelled DMA get plateau and the theoretical DMA
 * bandwidth in GB/s), which scripts/plot_report.py draws, and the roofline (read_bytes,
 * write_bytes, bound_ms, roofline_fraction, bound_by per layer, then fused_bound_ms: a fused
 * layer's own bound, which bound_ms, the unfused layers' sum, is not; the run's sums: the JSON's
 * "total" object, the CSV's net_modelled_ms, net_modelled_unpaired_ms, net_bound_ms and
 * net_roofline_fraction columns,
 * the same on every line; the roofline's DMA plateaus in the JSON's machine object as
 * roofline_get_gbps and roofline_put_gbps). CSV fields are quoted where
 * needed (RFC 4180). The OutputFile version writes and closes \p out (opened before the
 * run); errors throw sw_io::IoError naming the path. */
void write_report(sw_io::OutputFile &out, const std::string &net,
                  const std::vector<LayerRecord> &records, const std::vector<LayerRecord> *baseline,
                  const sw::Machine &m);
void write_report(const std::string &path, const std::string &net,
                  const std::vector<LayerRecord> &records, const std::vector<LayerRecord> *baseline,
                  const sw::Machine &m);

/** Writes a Chrome trace-event JSON file (ui.perfetto.dev, chrome://tracing), each event
 * through nlohmann-json:
 * - one process named after \p m's core group; per CPE two tracks (threads of pid 1,
 *   sorted together): "CPE c" (tid c) with its compute, wait DMA, barrier and
 *   register-communication spans ("RMA" on a machine without register communication: the
 *   SW26010-Pro), which follow one another,
 *   and "CPE c DMA" (tid 1000 + c) with the spans its DMA engine is busy, which overlap the
 *   CPE's own; a "layers" track (tid 2000) with one span per layer (first to last span);
 * - complete events ("ph": "X"), timestamps and durations in microseconds with at most
 *   three decimals: every span end is rounded to whole nanoseconds before the subtraction,
 *   so spans that nest or touch in the model nest or touch in the file (no partial
 *   overlap on a track, which Perfetto would drop).
 * The OutputFile version writes and closes \p out. */
void write_trace(sw_io::OutputFile &out, const std::vector<TraceSpan> &spans, const sw::Machine &m);
void write_trace(const std::string &path, const std::vector<TraceSpan> &spans,
                 const sw::Machine &m);

/** Trace thread ids: CPE c's own track, its DMA engine's track, and the layers track. */
constexpr int kTraceDmaTidBase = 1000;
constexpr int kTraceLayersTid = 2000;

} // namespace sw_net

#endif
