/** \file
 * Tables, CSV/JSON reports and traces of network runs.
 */
#include "apps/net/report.h"

#include <athread_emu.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace sw_net {

LayerFigures figures(const LayerRecord &r, const LayerRecord *baseline, const sw::Machine &m) {
    LayerFigures f;
    if (r.modelled_seconds > 0) {
        f.gflops = r.gflop / r.modelled_seconds;
        f.peak_fraction = f.gflops / m.cg_peak_gflops();
        f.dma_gbps = double(r.dma_line_bytes) / r.modelled_seconds / 1e9;
    }
    if (baseline && r.modelled_seconds > 0) f.speedup = baseline->modelled_seconds / r.modelled_seconds;
    return f;
}

void print_table(const std::vector<LayerRecord> &records, const std::vector<LayerRecord> *baseline,
                 const sw::Machine &m) {
    std::printf("\n%-8s %-8s %-14s %8s %9s %9s %10s %9s %8s %6s %8s", "layer", "kind", "output", "GFLOP",
                "LDM B/CPE", "DMA reqs", "DMA MB", "model ms", "GFLOPS", "%peak", "DMA GB/s");
    if (baseline) std::printf(" %9s %7s", "base ms", "speedup");
    std::printf(" %8s\n", "wall ms");
    LayerRecord total;
    total.name = "total";
    LayerRecord base_total;
    for (size_t i = 0; i < records.size(); i++) {
        const LayerRecord &r = records[i];
        const LayerRecord *b = baseline ? &(*baseline)[i] : nullptr;
        const LayerFigures f = figures(r, b, m);
        std::printf("%-8s %-8s %-14s %8.3f %9lld %9lld %10.2f %9.3f %8.1f %5.1f%% %8.2f", r.name.c_str(),
                    r.kind.c_str(), shape_string(r.output).c_str(), r.gflop, r.ldm_peak_bytes, r.dma_requests,
                    double(r.dma_line_bytes) / 1e6, r.modelled_seconds * 1e3, f.gflops, 100 * f.peak_fraction,
                    f.dma_gbps);
        if (b) std::printf(" %9.3f %6.2fx", b->modelled_seconds * 1e3, f.speedup);
        std::printf(" %8.1f\n", r.wall_seconds * 1e3);
        total.gflop += r.gflop;
        total.ldm_peak_bytes = std::max(total.ldm_peak_bytes, r.ldm_peak_bytes);
        total.dma_requests += r.dma_requests;
        total.dma_line_bytes += r.dma_line_bytes;
        total.modelled_seconds += r.modelled_seconds;
        total.wall_seconds += r.wall_seconds;
        if (b) base_total.modelled_seconds += b->modelled_seconds;
    }
    const LayerFigures f = figures(total, baseline ? &base_total : nullptr, m);
    std::printf("%-8s %-8s %-14s %8.3f %9lld %9lld %10.2f %9.3f %8.1f %5.1f%% %8.2f", "total", "", "", total.gflop,
                total.ldm_peak_bytes, total.dma_requests, double(total.dma_line_bytes) / 1e6,
                total.modelled_seconds * 1e3, f.gflops, 100 * f.peak_fraction, f.dma_gbps);
    if (baseline) std::printf(" %9.3f %6.2fx", base_total.modelled_seconds * 1e3, f.speedup);
    std::printf(" %8.1f\n", total.wall_seconds * 1e3);
    std::printf("model ms: SW26010 time from the emulator's timing model (one core group, %s at %.2f GHz, peak "
                "%.1f GFLOPS); wall ms: emulation on this machine\n",
                m.name.c_str(), m.clock_ghz, m.cg_peak_gflops());
}

void write_report(const std::string &path, const std::string &net, const std::vector<LayerRecord> &records,
                  const std::vector<LayerRecord> *baseline, const sw::Machine &m) {
    std::ofstream out(path);
    if (!out) throw std::runtime_error("cannot write the report " + path);
    const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
    if (csv) {
        out << "net,layer,kind,output,gflop,counted_gflop,ldm_bytes_per_cpe,dma_requests,dma_bytes,dma_line_bytes,"
               "modelled_ms,gflops,peak_fraction,dma_gbps,baseline_ms,speedup,wall_ms\n";
    } else {
        out << "{\"net\": \"" << net << "\", \"machine\": \"" << m.name << "\", \"layers\": [\n";
    }
    for (size_t i = 0; i < records.size(); i++) {
        const LayerRecord &r = records[i];
        const LayerRecord *b = baseline ? &(*baseline)[i] : nullptr;
        const LayerFigures f = figures(r, b, m);
        const double base_ms = b ? b->modelled_seconds * 1e3 : 0;
        if (csv) {
            out << net << "," << r.name << "," << r.kind << "," << shape_string(r.output) << "," << r.gflop << ","
                << r.counted_gflop << "," << r.ldm_peak_bytes << "," << r.dma_requests << "," << r.dma_bytes << ","
                << r.dma_line_bytes << "," << r.modelled_seconds * 1e3 << "," << f.gflops << "," << f.peak_fraction
                << "," << f.dma_gbps << "," << base_ms << "," << f.speedup << "," << r.wall_seconds * 1e3 << "\n";
        } else {
            out << "  {\"layer\": \"" << r.name << "\", \"kind\": \"" << r.kind << "\", \"output\": \""
                << shape_string(r.output) << "\", \"gflop\": " << r.gflop << ", \"counted_gflop\": " << r.counted_gflop
                << ", \"ldm_bytes_per_cpe\": " << r.ldm_peak_bytes << ", \"dma_requests\": " << r.dma_requests
                << ", \"dma_bytes\": " << r.dma_bytes << ", \"dma_line_bytes\": " << r.dma_line_bytes
                << ", \"modelled_ms\": " << r.modelled_seconds * 1e3 << ", \"gflops\": " << f.gflops
                << ", \"peak_fraction\": " << f.peak_fraction << ", \"dma_gbps\": " << f.dma_gbps
                << ", \"baseline_ms\": " << base_ms << ", \"speedup\": " << f.speedup
                << ", \"wall_ms\": " << r.wall_seconds * 1e3 << "}" << (i + 1 < records.size() ? "," : "") << "\n";
        }
    }
    if (!csv) out << "]}\n";
}

void write_trace(const std::string &path, const std::vector<TraceSpan> &spans) {
    std::ofstream out(path);
    if (!out) throw std::runtime_error("cannot write the trace " + path);
    static const char *kinds[] = {"compute", "DMA", "wait DMA", "barrier"};
    out << "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
    out << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"SW26010 core group (modelled)\"}}";
    for (int c = 0; c < ATHREAD_EMU_MAX_CPES; c++) {
        out << ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": " << c
            << ", \"args\": {\"name\": \"CPE " << c << "\"}}";
    }
    for (const TraceSpan &s : spans) {
        const int kind = s.kind >= 0 && s.kind < 4 ? s.kind : 0;
        out << ",\n{\"name\": \"" << s.layer << " " << kinds[kind] << "\", \"cat\": \"" << kinds[kind]
            << "\", \"ph\": \"X\", \"pid\": 1, \"tid\": " << s.cpe << ", \"ts\": " << s.start_seconds * 1e6
            << ", \"dur\": " << (s.end_seconds - s.start_seconds) * 1e6 << "}";
    }
    out << "\n]}\n";
}

}  // namespace sw_net
