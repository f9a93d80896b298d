/** \file
 * Per-layer reports of a network run: the table the apps print, the same figures as CSV or
 * JSON, and a Chrome/Perfetto trace (one track per CPE) of the modelled timeline.
 */
#ifndef SW_NET_REPORT_H
#define SW_NET_REPORT_H

#include "apps/net/network.h"
#include "target_sw/Machine.h"

#include <string>
#include <vector>

namespace sw_net {

/** Figures of one layer derived from its record (and the baseline's, if any). */
struct LayerFigures {
    double gflops = 0;         ///< analytic flops / modelled time
    double peak_fraction = 0;  ///< of the core group's peak
    double dma_gbps = 0;       ///< DMA bytes (lines touched) / modelled time
    double speedup = 0;        ///< baseline modelled time / this one (0: no baseline)
};

LayerFigures figures(const LayerRecord &r, const LayerRecord *baseline, const sw::Machine &m);

/** Prints the per-layer table (with the baseline's time and the speedup when given). */
void print_table(const std::vector<LayerRecord> &records, const std::vector<LayerRecord> *baseline,
                 const sw::Machine &m);

/** Writes the per-layer figures as CSV (if \p path ends in .csv) or JSON. */
void write_report(const std::string &path, const std::string &net, const std::vector<LayerRecord> &records,
                  const std::vector<LayerRecord> *baseline, const sw::Machine &m);

/** Writes a Chrome trace-event JSON file (loadable in ui.perfetto.dev): one track per CPE,
 *  compute, DMA and wait spans named after their layer. */
void write_trace(const std::string &path, const std::vector<TraceSpan> &spans);

}  // namespace sw_net

#endif
