/** \file
 * Tables, CSV/JSON reports and traces of network runs.
 */
#include "runtime/net/report.h"

#include <athread_emu.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace sw_net {

sw::Roofline layer_roofline(const LayerRecord &r, const sw::Machine &m) {
    if (r.unfused.empty()) {
        return sw::roofline(r.gflop, double(r.read_bytes), double(r.write_bytes),
                            r.modelled_seconds, m);
    }
    sw::Roofline sum;
    double largest = -1;
    for (const LayerRecord::Part &p : r.unfused) {
        const sw::Roofline part =
            sw::roofline(p.gflop, double(p.read_bytes), double(p.write_bytes), 0, m);
        sum.compute_seconds += part.compute_seconds;
        sum.read_seconds += part.read_seconds;
        sum.write_seconds += part.write_seconds;
        sum.bound_seconds += part.bound_seconds;
        if (part.bound_seconds > largest) {
            largest = part.bound_seconds;
            sum.binding = part.binding;
        }
    }
    if (r.modelled_seconds > 0)
        sum.fraction = sum.bound_seconds / r.modelled_seconds;
    return sum;
}

LayerFigures figures(const LayerRecord &r, const LayerRecord *baseline, const sw::Machine &m) {
    LayerFigures f;
    if (r.modelled_seconds > 0) {
        f.gflops = r.gflop / r.modelled_seconds;
        f.peak_fraction = f.gflops / m.cg_peak_gflops();
        f.dma_gbps = double(r.dma_line_bytes) / r.modelled_seconds / 1e9;
    }
    f.roof = layer_roofline(r, m);
    f.fused_roof =
        sw::roofline(r.gflop, double(r.read_bytes), double(r.write_bytes), r.modelled_seconds, m);
    if (baseline && r.modelled_seconds > 0)
        f.speedup = baseline->modelled_seconds / r.modelled_seconds;
    return f;
}

void print_table(const std::vector<LayerRecord> &records, const std::vector<LayerRecord> *baseline,
                 const sw::Machine &m) {
    // The name and kind columns as wide as their longest entry (a model's node names, kinds
    // such as "Conv+Relu"), at least 8.
    int nw = 8, kw = 8;
    for (const LayerRecord &r : records) {
        nw = std::max(nw, int(r.name.size()));
        kw = std::max(kw, int(r.kind.size()));
    }
    std::printf("\n%-*s %-*s %-14s %8s %9s %9s %10s %9s %11s %8s %6s %8s", nw, "layer", kw, "kind",
                "output", "GFLOP", "LDM B/CPE", "DMA reqs", "DMA MB", "model ms", "unpaired ms",
                "GFLOPS", "%peak", "DMA GB/s");
    std::printf(" %8s %5s %-7s", "bound ms", "roof", "bound");
    if (baseline)
        std::printf(" %9s %7s", "base ms", "speedup");
    std::printf(" %8s\n", "wall ms");
    LayerRecord total;
    total.name = "total";
    LayerRecord base_total;
    double bound_total = 0; ///< the sum of the layers' roofline bounds
    for (size_t i = 0; i < records.size(); i++) {
        const LayerRecord &r = records[i];
        const LayerRecord *b = baseline ? &(*baseline)[i] : nullptr;
        const LayerFigures f = figures(r, b, m);
        std::printf("%-*s %-*s %-14s %8.3f %9lld %9lld %10.2f %9.3f %11.3f %8.1f %5.1f%% %8.2f", nw,
                    r.name.c_str(), kw, r.kind.c_str(), shape_string(r.output).c_str(), r.gflop,
                    r.ldm_peak_bytes, r.dma_requests, double(r.dma_line_bytes) / 1e6,
                    r.modelled_seconds * 1e3, r.modelled_unpaired_seconds * 1e3, f.gflops,
                    100 * f.peak_fraction, f.dma_gbps);
        std::printf(" %8.3f %5.2f %-7s", f.roof.bound_seconds * 1e3, f.roof.fraction,
                    sw::binding_name(f.roof.binding));
        bound_total += f.roof.bound_seconds;
        if (b)
            std::printf(" %9.3f %6.2fx", b->modelled_seconds * 1e3, f.speedup);
        std::printf(" %8.1f\n", r.wall_seconds * 1e3);
        total.gflop += r.gflop;
        total.ldm_peak_bytes = std::max(total.ldm_peak_bytes, r.ldm_peak_bytes);
        total.dma_requests += r.dma_requests;
        total.dma_line_bytes += r.dma_line_bytes;
        total.modelled_seconds += r.modelled_seconds;
        total.modelled_unpaired_seconds += r.modelled_unpaired_seconds;
        total.wall_seconds += r.wall_seconds;
        if (b)
            base_total.modelled_seconds += b->modelled_seconds;
    }
    const LayerFigures f = figures(total, baseline ? &base_total : nullptr, m);
    std::printf("%-*s %-*s %-14s %8.3f %9lld %9lld %10.2f %9.3f %11.3f %8.1f %5.1f%% %8.2f", nw,
                "total", kw, "", "", total.gflop, total.ldm_peak_bytes, total.dma_requests,
                double(total.dma_line_bytes) / 1e6, total.modelled_seconds * 1e3,
                total.modelled_unpaired_seconds * 1e3, f.gflops, 100 * f.peak_fraction, f.dma_gbps);
    std::printf(" %8.3f %5.2f %-7s", bound_total * 1e3,
                total.modelled_seconds > 0 ? bound_total / total.modelled_seconds : 0.0, "");
    if (baseline)
        std::printf(" %9.3f %6.2fx", base_total.modelled_seconds * 1e3, f.speedup);
    std::printf(" %8.1f\n", total.wall_seconds * 1e3);
    std::printf("model ms: %s time from the emulator's timing model (one core group, %s at "
                "%.2f GHz, peak "
                "%.1f GFLOPS%s); wall ms: emulation on this machine\n",
                m.title().c_str(), m.name.c_str(), m.clock_ghz, m.cg_peak_gflops(),
                m.crts_runtime ? ", a model resting on unmeasured parameters" : "");
    std::printf("unpaired ms: the same if the compiler paired no P0/P1 instructions (one a "
                "cycle; model ms assumes ideal dual issue): an upper bound that keeps every DMA "
                "wait; GFLOPS, %%peak and roof are of model ms\n");
    std::printf("bound ms: roofline bound max(GFLOP / peak, inputs once / %.1f GB/s get + output "
                "once / %.1f GB/s put); roof: bound / model ms (total: sum of bounds / sum of "
                "times); bound: what binds it\n",
                m.dma_get_plateau_gbps(), m.dma_put_plateau_gbps());
}

namespace {

/** One CSV field: quoted (quotes doubled) if it holds a comma, a quote or a line break. */
std::string csv_field(const std::string &v) {
    if (v.find_first_of(",\"\r\n") == std::string::npos)
        return v;
    std::string q = "\"";
    for (const char c : v)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

/** The machine's roofs, as the report and the plot use them. */
nlohmann::ordered_json machine_json(const sw::Machine &m) {
    nlohmann::ordered_json j;
    j["name"] = m.name;
    j["clock_ghz"] = m.clock_ghz;
    j["peak_gflops"] = m.cg_peak_gflops();
    j["dma_get_gbps"] = m.dma_timing.get_cap_gbps;
    j["dma_theoretical_gbps"] = m.dma_theoretical_gbps;
    j["roofline_get_gbps"] = m.dma_get_plateau_gbps();
    j["roofline_put_gbps"] = m.dma_put_plateau_gbps();
    return j;
}

/** The whole run's roofline: the sums of the layers' modelled times and bounds. */
struct NetRoofline {
    double modelled_seconds = 0, bound_seconds = 0;
    double modelled_unpaired_seconds = 0; ///< the same layers if no P0/P1 pairing
    double fraction() const { return modelled_seconds > 0 ? bound_seconds / modelled_seconds : 0; }
};

NetRoofline net_roofline(const std::vector<LayerRecord> &records, const sw::Machine &m) {
    NetRoofline n;
    for (const LayerRecord &r : records) {
        n.modelled_seconds += r.modelled_seconds;
        n.modelled_unpaired_seconds += r.modelled_unpaired_seconds;
        n.bound_seconds += figures(r, nullptr, m).roof.bound_seconds;
    }
    return n;
}

/** The per-layer fields of the report, in column order. */
nlohmann::ordered_json layer_json(const std::string &net, const LayerRecord &r,
                                  const LayerRecord *b, const sw::Machine &m,
                                  const NetRoofline &total) {
    const LayerFigures f = figures(r, b, m);
    nlohmann::ordered_json j;
    j["net"] = net;
    j["layer"] = r.name;
    j["kind"] = r.kind;
    j["output"] = shape_string(r.output);
    j["gflop"] = r.gflop;
    j["counted_gflop"] = r.counted_gflop;
    j["ldm_bytes_per_cpe"] = r.ldm_peak_bytes;
    j["dma_requests"] = r.dma_requests;
    j["dma_bytes"] = r.dma_bytes;
    j["dma_line_bytes"] = r.dma_line_bytes;
    j["modelled_ms"] = r.modelled_seconds * 1e3;
    j["modelled_unpaired_ms"] = r.modelled_unpaired_seconds * 1e3;
    j["gflops"] = f.gflops;
    j["peak_fraction"] = f.peak_fraction;
    j["dma_gbps"] = f.dma_gbps;
    j["read_bytes"] = r.read_bytes;
    j["write_bytes"] = r.write_bytes;
    j["bound_ms"] = f.roof.bound_seconds * 1e3;
    j["roofline_fraction"] = f.roof.fraction;
    j["bound_by"] = sw::binding_name(f.roof.binding);
    j["fused_bound_ms"] = f.fused_roof.bound_seconds * 1e3;
    j["baseline_ms"] = b ? b->modelled_seconds * 1e3 : 0.0;
    j["speedup"] = f.speedup;
    j["wall_ms"] = r.wall_seconds * 1e3;
    j["busiest_compute_ms"] = r.busiest_compute_seconds * 1e3;
    j["busiest_dma_wait_ms"] = r.busiest_dma_wait_seconds * 1e3;
    j["busiest_sync_wait_ms"] = r.busiest_sync_wait_seconds * 1e3;
    j["busiest_regcomm_wait_ms"] = r.busiest_regcomm_wait_seconds * 1e3;
    j["machine"] = m.name;
    j["machine_peak_gflops"] = m.cg_peak_gflops();
    j["machine_dma_get_gbps"] = m.dma_timing.get_cap_gbps;
    j["machine_dma_theoretical_gbps"] = m.dma_theoretical_gbps;
    j["net_modelled_ms"] = total.modelled_seconds * 1e3;
    j["net_modelled_unpaired_ms"] = total.modelled_unpaired_seconds * 1e3;
    j["net_bound_ms"] = total.bound_seconds * 1e3;
    j["net_roofline_fraction"] = total.fraction();
    return j;
}

} // namespace

void write_report(sw_io::OutputFile &out, const std::string &net,
                  const std::vector<LayerRecord> &records, const std::vector<LayerRecord> *baseline,
                  const sw::Machine &m) {
    const std::string &path = out.path();
    const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
    const NetRoofline total = net_roofline(records, m);
    if (csv) {
        // One line per layer, the fields of layer_json in order; the header from their names.
        auto line = [](const nlohmann::ordered_json &j, bool names) {
            std::string text;
            bool first = true;
            for (const auto &item : j.items()) {
                text += first ? "" : ",";
                first = false;
                text += names                      ? item.key()
                        : item.value().is_string() ? csv_field(item.value().get<std::string>())
                                                   : item.value().dump();
            }
            return text + "\n";
        };
        out.write(line(layer_json(net, LayerRecord{}, nullptr, m, total), true));
        for (size_t i = 0; i < records.size(); i++) {
            out.write(
                line(layer_json(net, records[i], baseline ? &(*baseline)[i] : nullptr, m, total),
                     false));
        }
    } else {
        nlohmann::ordered_json doc;
        doc["net"] = net;
        doc["machine"] = machine_json(m);
        doc["total"] = {{"modelled_ms", total.modelled_seconds * 1e3},
                        {"modelled_unpaired_ms", total.modelled_unpaired_seconds * 1e3},
                        {"bound_ms", total.bound_seconds * 1e3},
                        {"roofline_fraction", total.fraction()}};
        doc["layers"] = nlohmann::ordered_json::array();
        for (size_t i = 0; i < records.size(); i++) {
            nlohmann::ordered_json j =
                layer_json(net, records[i], baseline ? &(*baseline)[i] : nullptr, m, total);
            for (const char *k :
                 {"net", "machine", "machine_peak_gflops", "machine_dma_get_gbps",
                  "machine_dma_theoretical_gbps", "net_modelled_ms", "net_modelled_unpaired_ms",
                  "net_bound_ms", "net_roofline_fraction"}) {
                j.erase(k);
            }
            doc["layers"].push_back(std::move(j));
        }
        out.write(doc.dump(1) + "\n");
    }
    out.close();
}

void write_report(const std::string &path, const std::string &net,
                  const std::vector<LayerRecord> &records, const std::vector<LayerRecord> *baseline,
                  const sw::Machine &m) {
    sw_io::OutputFile out(path);
    write_report(out, net, records, baseline, m);
}

namespace {

/** Whole nanoseconds of a time in seconds: the trace's time grid. */
long long to_ns(double seconds) {
    return std::llround(seconds * 1e9);
}

/** A complete event ("ph": "X") on a track, times in microseconds from whole nanoseconds. */
std::string span_event(const std::string &name, const char *category, int tid, long long start_ns,
                       long long end_ns, const std::string &layer) {
    nlohmann::ordered_json e;
    e["name"] = name;
    e["cat"] = category;
    e["ph"] = "X";
    e["pid"] = 1;
    e["tid"] = tid;
    e["ts"] = double(start_ns) / 1e3;
    e["dur"] = double(end_ns - start_ns) / 1e3;
    e["args"] = {{"layer", layer}};
    return e.dump();
}

std::string metadata_event(const char *what, int tid, const nlohmann::json &args) {
    nlohmann::ordered_json e;
    e["name"] = what;
    e["ph"] = "M";
    e["pid"] = 1;
    if (tid >= 0)
        e["tid"] = tid;
    e["args"] = args;
    return e.dump();
}

} // namespace

void write_trace(sw_io::OutputFile &out, const std::vector<TraceSpan> &spans,
                 const sw::Machine &m) {
    const char *kinds[] = {"compute", "DMA", "wait DMA", "barrier",
                           m.regcomm.available ? "register communication" : "RMA"};
    constexpr int kKinds = int(sizeof kinds / sizeof kinds[0]);
    std::string text = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
    text += metadata_event("process_name", -1, {{"name", m.title() + " core group (modelled)"}});
    // Each CPE's DMA track right below the CPE's own; the layers on top.
    auto thread = [&](int tid, const std::string &name, int order) {
        text += ",\n" + metadata_event("thread_name", tid, {{"name", name}});
        text += ",\n" + metadata_event("thread_sort_index", tid, {{"sort_index", order}});
    };
    thread(kTraceLayersTid, "layers", -1);
    for (int c = 0; c < ATHREAD_EMU_MAX_CPES; c++) {
        thread(c, "CPE " + std::to_string(c), 2 * c);
        thread(kTraceDmaTidBase + c, "CPE " + std::to_string(c) + " DMA", 2 * c + 1);
    }
    out.write(text);
    // Layers: from the first to the last span of each run of spans of one layer.
    for (size_t i = 0; i < spans.size();) {
        size_t j = i;
        long long first = to_ns(spans[i].start_seconds), last = to_ns(spans[i].end_seconds);
        while (j < spans.size() && spans[j].layer == spans[i].layer) {
            first = std::min(first, to_ns(spans[j].start_seconds));
            last = std::max(last, to_ns(spans[j].end_seconds));
            j++;
        }
        out.write(",\n" + span_event(spans[i].layer, "layer", kTraceLayersTid, first, last,
                                     spans[i].layer));
        i = j;
    }
    for (const TraceSpan &s : spans) {
        const int kind = s.kind >= 0 && s.kind < kKinds ? s.kind : 0;
        const int tid = kind == ATHREAD_EMU_SPAN_DMA ? kTraceDmaTidBase + s.cpe : s.cpe;
        out.write(",\n" + span_event(s.layer + " " + kinds[kind], kinds[kind], tid,
                                     to_ns(s.start_seconds), to_ns(s.end_seconds), s.layer));
    }
    out.write("\n]}\n");
    out.close();
}

void write_trace(const std::string &path, const std::vector<TraceSpan> &spans,
                 const sw::Machine &m) {
    sw_io::OutputFile out(path);
    write_trace(out, spans, m);
}

} // namespace sw_net
