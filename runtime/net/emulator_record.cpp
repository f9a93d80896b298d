/** \file
 * Emulator records of one layer call: see emulator_record.h.
 */
#include "runtime/net/emulator_record.h"

#include "target_sw/Machine.h"

#include <athread_emu.h>

#include <algorithm>

namespace sw_net {

double emulated_clock_ghz() {
    const sw::Machine *m = sw::machine_by_name(athread_emu_machine_name());
    return m ? m->clock_ghz : sw::sw26010().clock_ghz;
}

void add_emulator_records(LayerRecord &r, double clock, std::vector<TraceSpan> *trace) {
    const double hz = 1e9 * emulated_clock_ghz();
    const double start = clock + r.modelled_seconds;
    std::vector<double> kernel_start;
    for (int k = 0; k < athread_emu_stats_count(); k++) {
        const athread_emu_kernel_stats *st = athread_emu_stats_get(k);
        kernel_start.push_back(clock + r.modelled_seconds);
        r.modelled_seconds += st->modelled_seconds;
        r.modelled_unpaired_seconds += st->modelled_unpaired_seconds;
        r.kernels++;
        for (int c = 0; c < st->ncpes; c++) {
            const athread_emu_cpe_stats &e = st->cpe[c];
            r.ldm_peak_bytes = std::max(r.ldm_peak_bytes, e.ldm_peak_bytes);
            r.dma_requests += e.get_requests + e.put_requests;
            r.dma_bytes += e.get_bytes + e.put_bytes;
            r.dma_line_bytes += e.get_line_bytes + e.put_line_bytes;
            r.dma_get_bytes += e.get_bytes;
            r.dma_get_line_bytes += e.get_line_bytes;
            r.counted_gflop += double(e.flops) / 1e9;
        }
        if (st->ncpes == 0)
            continue;
        int busiest = 0;
        for (int c = 1; c < st->ncpes; c++) {
            if (st->cpe[c].cycles > st->cpe[busiest].cycles)
                busiest = c;
        }
        const athread_emu_cpe_stats &b = st->cpe[busiest];
        r.busiest_compute_seconds += double(b.compute_cycles) / hz;
        r.busiest_dma_wait_seconds += double(b.dma_wait_cycles) / hz;
        r.busiest_sync_wait_seconds += double(b.sync_wait_cycles) / hz;
        r.busiest_regcomm_wait_seconds += double(b.regcomm_wait_cycles) / hz;
    }
    if (!trace)
        return;
    const athread_emu_span *spans = athread_emu_trace_spans();
    for (int k = 0; k < athread_emu_trace_count(); k++) {
        const athread_emu_span &sp = spans[k];
        const double base =
            sp.kernel < int(kernel_start.size()) ? kernel_start[size_t(sp.kernel)] : start;
        trace->push_back({r.name, sp.cpe, sp.kind, base + double(sp.start_cycle) / hz,
                          base + double(sp.end_cycle) / hz});
    }
}

void accumulate(std::vector<LayerRecord> &total, const std::vector<LayerRecord> &pass) {
    if (total.empty()) {
        total = pass;
        return;
    }
    for (size_t i = 0; i < pass.size() && i < total.size(); i++) {
        LayerRecord &t = total[i];
        const LayerRecord &p = pass[i];
        t.gflop += p.gflop;
        t.counted_gflop += p.counted_gflop;
        t.wall_seconds += p.wall_seconds;
        t.modelled_seconds += p.modelled_seconds;
        t.modelled_unpaired_seconds += p.modelled_unpaired_seconds;
        t.ldm_peak_bytes = std::max(t.ldm_peak_bytes, p.ldm_peak_bytes);
        t.dma_requests += p.dma_requests;
        t.dma_bytes += p.dma_bytes;
        t.dma_line_bytes += p.dma_line_bytes;
        t.dma_get_bytes += p.dma_get_bytes;
        t.dma_get_line_bytes += p.dma_get_line_bytes;
        t.read_bytes += p.read_bytes;
        t.write_bytes += p.write_bytes;
        t.kernels += p.kernels;
        t.busiest_compute_seconds += p.busiest_compute_seconds;
        t.busiest_dma_wait_seconds += p.busiest_dma_wait_seconds;
        t.busiest_sync_wait_seconds += p.busiest_sync_wait_seconds;
        t.busiest_regcomm_wait_seconds += p.busiest_regcomm_wait_seconds;
    }
}

double modelled_seconds(const std::vector<LayerRecord> &records) {
    double s = 0;
    for (const LayerRecord &r : records)
        s += r.modelled_seconds;
    return s;
}

double modelled_unpaired_seconds(const std::vector<LayerRecord> &records) {
    double s = 0;
    for (const LayerRecord &r : records)
        s += r.modelled_unpaired_seconds;
    return s;
}

} // namespace sw_net
