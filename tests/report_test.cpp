/** \file
 * Reports of network runs (runtime/net/report.h): the Chrome/Perfetto trace of a real run of
 * the reduced AlexNet on the emulated core group (graph/'s executor), parsed back with
 * nlohmann-json, has its spans properly nested on every track (no partial overlap, which Perfetto
 * drops), DMA on the CPEs' DMA tracks and timestamps on a whole-nanosecond grid; the JSON and CSV
 * reports escape names and carry the machine's roofs; unwritable outputs are errors naming the
 * path.
 */
#include "graph/Executor.h"
#include "graph/Networks.h"
#include "runtime/io/weights.h"
#include "runtime/net/report.h"

#include <athread_emu.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string temp_path(const std::string &name) {
    return (fs::temp_directory_path() / ("report_test_" + std::to_string(::getpid()) + "_" + name))
        .string();
}

json read_json(const std::string &path) {
    std::ifstream in(path);
    return json::parse(in); // throws on malformed JSON
}

/** A complete event on a track, in nanoseconds. */
struct Event {
    long long start, end;
    std::string name;
};

/** Pairs of events on one track that overlap without one containing the other. */
long long partial_overlaps(std::vector<Event> events) {
    // Parents before children: by start, then longest first.
    std::sort(events.begin(), events.end(), [](const Event &a, const Event &b) {
        return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    long long bad = 0;
    std::vector<long long> open; // ends of the enclosing events
    for (const Event &e : events) {
        while (!open.empty() && open.back() <= e.start)
            open.pop_back();
        if (!open.empty() && e.end > open.back()) {
            bad++; // starts inside the innermost open event, ends after it
            continue;
        }
        open.push_back(e.end);
    }
    return bad;
}

/** The reduced AlexNet (channels / 8, input 67, batch 2, 10 classes; graph/Networks.h), hand
 * schedules, seeded weights and input, with a trace. */
std::vector<sw_net::TraceSpan> traced_run(std::vector<sw_net::LayerRecord> *records) {
    sw_graph::NetworkConfig c;
    c.name = "alexnet";
    c.channel_div = 8;
    c.input = 67;
    c.batch = 2;
    c.classes = 10;
    const sw_graph::Graph g = sw_graph::network_graph(
        c, [](const std::string &layer, const std::string &what, const std::vector<int64_t> &s) {
            return what == "weight" ? sw_io::deterministic_weights(layer, s)
                                    : sw_io::deterministic_bias(layer, s[0]);
        });
    sw_graph::ExecOptions o;
    o.schedule = "hand";
    o.cache_dir = (fs::temp_directory_path() / "report_test_cache").string();
    sw_graph::Executor ex(g, o);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<float> input(size_t(g.tensor("data").elements()));
    for (float &v : input)
        v = dist(rng);
    std::vector<sw_net::TraceSpan> spans;
    const sw_graph::ExecResult r = ex.run({{"data", input}}, &spans);
    for (const sw_graph::StepResult &s : r.steps) {
        if (s.layer >= 0)
            records->push_back(s.record);
    }
    return spans;
}

const sw::Machine &emulated_machine() {
    return *sw::machine_by_name(athread_emu_machine_name());
}

} // namespace

TEST(Trace, RealRunNestsOnEveryTrack) {
    std::vector<sw_net::LayerRecord> records;
    const std::vector<sw_net::TraceSpan> spans = traced_run(&records);
    ASSERT_GT(spans.size(), 1000u);
    const std::string path = temp_path("trace.json");
    sw_net::write_trace(path, spans, emulated_machine());
    const json doc = read_json(path);
    fs::remove(path);

    std::map<long long, std::vector<Event>> tracks;
    std::map<long long, std::string> names;
    size_t complete = 0, dma = 0;
    for (const json &e : doc.at("traceEvents")) {
        const std::string ph = e.at("ph");
        if (ph == "M") {
            if (e.at("name") == "thread_name")
                names[e.at("tid")] = e.at("args").at("name");
            continue;
        }
        ASSERT_EQ(ph, "X");
        complete++;
        // Microseconds with at most three decimals: whole nanoseconds.
        const double ts = e.at("ts"), dur = e.at("dur");
        const long long start = std::llround(ts * 1e3), length = std::llround(dur * 1e3);
        ASSERT_NEAR(ts * 1e3, double(start), 1e-3) << e.dump();
        ASSERT_NEAR(dur * 1e3, double(length), 1e-3) << e.dump();
        ASSERT_GE(length, 0);
        const long long tid = e.at("tid");
        const bool dma_event = e.at("cat") == "DMA";
        dma += dma_event;
        if (dma_event) {
            EXPECT_TRUE(tid >= sw_net::kTraceDmaTidBase && tid < sw_net::kTraceDmaTidBase + 64)
                << e.dump();
        } else if (e.at("cat") != "layer") {
            EXPECT_TRUE(tid >= 0 && tid < 64) << e.dump();
        }
        tracks[tid].push_back({start, start + length, e.at("name")});
    }
    EXPECT_EQ(complete, spans.size() + records.size()); // the spans and one per layer
    EXPECT_GT(dma, 0u);
    EXPECT_EQ(tracks[sw_net::kTraceLayersTid].size(), records.size());
    for (const auto &t : tracks) {
        EXPECT_TRUE(names.count(t.first)) << "track " << t.first << " has no name";
        EXPECT_EQ(partial_overlaps(t.second), 0)
            << "track " << t.first << " (" << names[t.first] << ")";
    }

    // What the nesting check catches: the same spans written as before (DMA on the CPE's
    // track, times with 6 significant digits) overlap partially.
    std::map<int, std::vector<Event>> old_tracks;
    auto six_digits = [](double us) { // what `ostream << double` printed
        char b[32];
        std::snprintf(b, sizeof b, "%g", us);
        return std::stod(b);
    };
    for (const sw_net::TraceSpan &s : spans) {
        const double ts = six_digits(s.start_seconds * 1e6),
                     dur = six_digits((s.end_seconds - s.start_seconds) * 1e6);
        old_tracks[s.cpe].push_back(
            {std::llround(ts * 1e3), std::llround((ts + dur) * 1e3), s.layer});
    }
    long long old_bad = 0;
    for (const auto &t : old_tracks)
        old_bad += partial_overlaps(t.second);
    EXPECT_GT(old_bad, 0);
    std::printf("spans: %zu (%zu DMA); partial overlaps: 0 (written as before: %lld)\n",
                spans.size(), dma, old_bad);
}

TEST(Report, JsonAndCsvEscapeNamesAndCarryTheRoofs) {
    const sw::Machine &m = emulated_machine();
    sw_net::LayerRecord r;
    r.name = "conv \"1\", a\\b\nc"; // quote, comma, backslash, newline
    r.kind = "conv2d";
    r.output = {1, 8, 4, 4};
    r.gflop = 0.5;
    r.modelled_seconds = 1e-3;
    r.modelled_unpaired_seconds = 1.5e-3;
    r.dma_line_bytes = 1000000;
    r.busiest_compute_seconds = 6e-4;
    r.busiest_dma_wait_seconds = 3e-4;
    const std::vector<sw_net::LayerRecord> records = {r};

    const std::string js = temp_path("report.json");
    sw_net::write_report(js, "net,\"x\"", records, nullptr, m);
    const json doc = read_json(js);
    fs::remove(js);
    EXPECT_EQ(doc.at("net"), "net,\"x\"");
    EXPECT_EQ(doc.at("machine").at("name"), m.name);
    EXPECT_DOUBLE_EQ(doc.at("machine").at("peak_gflops").get<double>(), m.cg_peak_gflops());
    EXPECT_DOUBLE_EQ(doc.at("machine").at("dma_get_gbps").get<double>(), m.dma_timing.get_cap_gbps);
    ASSERT_EQ(doc.at("layers").size(), 1u);
    const json &l = doc.at("layers")[0];
    EXPECT_EQ(l.at("layer"), r.name);
    EXPECT_EQ(l.at("output"), "1x8x4x4");
    EXPECT_DOUBLE_EQ(l.at("gflops").get<double>(), 500.0);
    EXPECT_DOUBLE_EQ(l.at("busiest_dma_wait_ms").get<double>(), 0.3);
    EXPECT_DOUBLE_EQ(l.at("modelled_unpaired_ms").get<double>(), 1.5);
    EXPECT_DOUBLE_EQ(doc.at("total").at("modelled_unpaired_ms").get<double>(), 1.5);

    // CSV (RFC 4180): the quoted fields read back whole; as many fields as columns.
    const std::string csv = temp_path("report.csv");
    sw_net::write_report(csv, "net,\"x\"", records, nullptr, m);
    std::ifstream in(csv);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    fs::remove(csv);
    std::vector<std::vector<std::string>> rows(1);
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < text.size(); i++) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
                field += text[++i];
            else if (c == '"')
                quoted = false;
            else
                field += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().push_back(field), field.clear();
        } else if (c == '\n') {
            rows.back().push_back(field), field.clear();
            rows.emplace_back();
        } else {
            field += c;
        }
    }
    rows.pop_back(); // after the last newline
    ASSERT_EQ(rows.size(), 2u);
    ASSERT_EQ(rows[0].size(), rows[1].size());
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < rows[0].size(); i++)
        row[rows[0][i]] = rows[1][i];
    EXPECT_EQ(row["net"], "net,\"x\"");
    EXPECT_EQ(row["layer"], r.name);
    EXPECT_EQ(row["machine"], m.name);
    EXPECT_DOUBLE_EQ(std::stod(row["machine_peak_gflops"]), m.cg_peak_gflops());
    EXPECT_DOUBLE_EQ(std::stod(row["modelled_ms"]), 1.0);
    EXPECT_DOUBLE_EQ(std::stod(row["modelled_unpaired_ms"]), 1.5);
    EXPECT_DOUBLE_EQ(std::stod(row["net_modelled_unpaired_ms"]), 1.5);
}

TEST(Report, TableHasTheNoPairingColumnAndTotal) {
    const sw::Machine &m = emulated_machine();
    std::vector<sw_net::LayerRecord> records(2);
    records[0].name = "conv1", records[0].kind = "conv2d", records[0].output = {1, 8, 4, 4};
    records[0].modelled_seconds = 1e-3, records[0].modelled_unpaired_seconds = 2.5e-3;
    records[1].name = "relu1", records[1].kind = "relu", records[1].output = {1, 8, 4, 4};
    records[1].modelled_seconds = 2e-3, records[1].modelled_unpaired_seconds = 2e-3;
    testing::internal::CaptureStdout();
    sw_net::print_table(records, nullptr, m);
    const std::string out = testing::internal::GetCapturedStdout();
    // The column's header right after the modelled time's; each row's value in it.
    std::istringstream lines(out);
    std::vector<std::vector<std::string>> rows;
    for (std::string line; std::getline(lines, line);) {
        std::istringstream f(line);
        rows.emplace_back();
        for (std::string w; f >> w;)
            rows.back().push_back(w);
    }
    size_t header = 0;
    while (header < rows.size() && (rows[header].empty() || rows[header][0] != "layer"))
        header++;
    ASSERT_LT(header + 3, rows.size()) << out;
    EXPECT_NE(out.find(" model ms unpaired ms "), std::string::npos) << out;
    // Fields of the rows: layer kind output GFLOP LDM reqs MB model unpaired ...
    const size_t model = 7, unpaired = 8;
    EXPECT_EQ(rows[header + 1][0], "conv1");
    EXPECT_DOUBLE_EQ(std::stod(rows[header + 1][model]), 1.0);
    EXPECT_DOUBLE_EQ(std::stod(rows[header + 1][unpaired]), 2.5);
    EXPECT_DOUBLE_EQ(std::stod(rows[header + 2][unpaired]), 2.0);
    EXPECT_EQ(rows[header + 3][0], "total");
    // The total row has no kind or output: its fields start at GFLOP.
    EXPECT_DOUBLE_EQ(std::stod(rows[header + 3][model - 2]), 3.0);
    EXPECT_DOUBLE_EQ(std::stod(rows[header + 3][unpaired - 2]), 4.5);
    EXPECT_NE(out.find("unpaired ms: the same if the compiler paired no P0/P1 instructions"),
              std::string::npos)
        << out;
}

TEST(Trace, NamesTheMachineAndItsSharing) {
    // The process is the machine's core group; the span kind of LDM-to-LDM sharing is the
    // machine's: register communication on SW26010, RMA on the SW26010-Pro.
    const std::vector<sw_net::TraceSpan> spans = {
        {"layer", 0, ATHREAD_EMU_SPAN_REGCOMM, 0.0, 1e-6}};
    for (const char *name : {"sw26010", "sw26010-pro"}) {
        const sw::Machine &m = *sw::machine_by_name(name);
        const std::string path = temp_path("machine_trace.json");
        sw_net::write_trace(path, spans, m);
        const json doc = read_json(path);
        fs::remove(path);
        std::string process, kind;
        for (const json &e : doc.at("traceEvents")) {
            if (e.at("ph") == "M" && e.at("name") == "process_name")
                process = e.at("args").at("name");
            if (e.at("ph") == "X" && e.at("cat") != "layer")
                kind = e.at("cat");
        }
        EXPECT_EQ(process, m.title() + " core group (modelled)");
        EXPECT_EQ(kind, m.regcomm.available ? "register communication" : "RMA") << name;
    }
}

TEST(Report, UnwritableOutputsAreErrorsNamingThePath) {
    const sw::Machine &m = emulated_machine();
    const std::vector<sw_net::LayerRecord> records(1);
    const std::string missing = temp_path("no_dir") + "/report.json";
    for (const std::string &p : {missing, std::string("/dev/full")}) {
        try {
            sw_net::write_report(p, "n", records, nullptr, m);
            ADD_FAILURE() << "no error for " << p;
        } catch (const sw_io::IoError &e) {
            EXPECT_NE(std::string(e.what()).find(p + ": "), std::string::npos) << e.what();
        }
        try {
            sw_net::write_trace(p, {}, m);
            ADD_FAILURE() << "no error for " << p;
        } catch (const sw_io::IoError &e) {
            EXPECT_NE(std::string(e.what()).find(p + ": "), std::string::npos) << e.what();
        }
    }
}

namespace {

/** The SW26010's roofline figures, as the hand-computed cases below take them. */
constexpr double kPeakGflops = 742.4, kGetGbps = 19.65 * 1.45, kPutGbps = 13.56 * 1.45;

} // namespace

TEST(Roofline, MachinePlateaus) {
    const sw::Machine &m = sw::sw26010();
    EXPECT_DOUBLE_EQ(m.cg_peak_gflops(), kPeakGflops);
    EXPECT_NEAR(m.dma_get_plateau_gbps(), 28.5, 0.01);
    EXPECT_NEAR(m.dma_put_plateau_gbps(), 19.7, 0.05);
    EXPECT_DOUBLE_EQ(m.dma_get_plateau_gbps(), kGetGbps);
    EXPECT_DOUBLE_EQ(m.dma_put_plateau_gbps(), kPutGbps);
}

TEST(Roofline, HandComputedCases) {
    const sw::Machine &m = sw::sw26010();
    // Compute-bound: 0.7424 GFLOP is 1 ms at the peak; 1 MB each way is 35 us + 51 us.
    sw::Roofline r = sw::roofline(0.7424, 1e6, 1e6, 2e-3, m);
    EXPECT_EQ(r.binding, sw::RooflineBinding::Compute);
    EXPECT_NEAR(r.bound_seconds, 1e-3, 1e-15);
    EXPECT_NEAR(r.read_seconds, 1e6 / (kGetGbps * 1e9), 1e-15);
    EXPECT_NEAR(r.write_seconds, 1e6 / (kPutGbps * 1e9), 1e-15);
    EXPECT_NEAR(r.fraction, 0.5, 1e-12);
    EXPECT_STREQ(sw::binding_name(r.binding), "compute");
    // Read-bound: 1 ms of reads and 1 us of writes against 1.35 us of flops.
    r = sw::roofline(0.001, kGetGbps * 1e6, kPutGbps * 1e3, 4e-3, m);
    EXPECT_EQ(r.binding, sw::RooflineBinding::Reads);
    EXPECT_NEAR(r.bound_seconds, 1.001e-3, 1e-15);
    EXPECT_NEAR(r.fraction, 1.001e-3 / 4e-3, 1e-12);
    EXPECT_STREQ(sw::binding_name(r.binding), "reads");
    // Write-bound: 1 us of reads and 1 ms of writes, no flops.
    r = sw::roofline(0, kGetGbps * 1e3, kPutGbps * 1e6, 1.001e-3, m);
    EXPECT_EQ(r.binding, sw::RooflineBinding::Writes);
    EXPECT_NEAR(r.bound_seconds, 1.001e-3, 1e-15);
    EXPECT_NEAR(r.fraction, 1.0, 1e-12);
    EXPECT_STREQ(sw::binding_name(r.binding), "writes");
    // Exactly at the peak: 1 ms of flops in 1 ms, nothing moved.
    r = sw::roofline(0.7424, 0, 0, 1e-3, m);
    EXPECT_EQ(r.binding, sw::RooflineBinding::Compute);
    EXPECT_NEAR(r.fraction, 1.0, 1e-12);
    // A tie between flops and bytes (0.5 ms each) goes to compute; no time, no fraction.
    r = sw::roofline(0.3712, kGetGbps * 0.25e6, kPutGbps * 0.25e6, 0, m);
    EXPECT_EQ(r.binding, sw::RooflineBinding::Compute);
    EXPECT_NEAR(r.bound_seconds, 0.5e-3, 1e-15);
    EXPECT_EQ(r.fraction, 0);
}

TEST(Report, RealRunCarriesTheRoofline) {
    std::vector<sw_net::LayerRecord> records;
    traced_run(&records);
    ASSERT_GT(records.size(), 5u);
    const sw::Machine &m = emulated_machine();
    // The first layer, conv1 (12 filters of 3x11x11, bias): its input, weights and bias read
    // once, its output written once.
    const sw_net::LayerRecord &c1 = records[0];
    EXPECT_EQ(c1.read_bytes, 4 * (2 * 3 * 67 * 67 + 12 * 3 * 11 * 11 + 12)) << c1.name;
    EXPECT_EQ(c1.write_bytes, 4 * sw_net::elements(c1.output)) << c1.name;

    const std::string js = temp_path("roof.json"), csv = temp_path("roof.csv");
    sw_net::write_report(js, "alexnet", records, nullptr, m);
    sw_net::write_report(csv, "alexnet", records, nullptr, m);
    const json doc = read_json(js);
    fs::remove(js);
    std::ifstream in(csv);
    std::vector<std::vector<std::string>> rows;
    for (std::string line; std::getline(in, line);) {
        rows.emplace_back();
        std::istringstream l(line);
        for (std::string f; std::getline(l, f, ',');)
            rows.back().push_back(f);
    }
    fs::remove(csv);
    ASSERT_EQ(doc.at("layers").size(), records.size());
    ASSERT_EQ(rows.size(), records.size() + 1);
    auto column = [&](const std::string &name) {
        const auto it = std::find(rows[0].begin(), rows[0].end(), name);
        EXPECT_NE(it, rows[0].end()) << name;
        return size_t(it - rows[0].begin());
    };
    double bounds = 0, times = 0, unpaired = 0;
    for (size_t i = 0; i < records.size(); i++) {
        const json &l = doc.at("layers")[i];
        const std::vector<std::string> &row = rows[i + 1];
        ASSERT_EQ(row.size(), rows[0].size());
        const sw::Roofline r =
            sw::roofline(records[i].gflop, double(records[i].read_bytes),
                         double(records[i].write_bytes), records[i].modelled_seconds, m);
        EXPECT_GT(l.at("read_bytes").get<long long>(), 0);
        EXPECT_EQ(l.at("read_bytes").get<long long>(), records[i].read_bytes);
        EXPECT_EQ(l.at("write_bytes").get<long long>(), records[i].write_bytes);
        EXPECT_DOUBLE_EQ(l.at("bound_ms").get<double>(), r.bound_seconds * 1e3);
        EXPECT_DOUBLE_EQ(l.at("roofline_fraction").get<double>(), r.fraction);
        EXPECT_GT(r.fraction, 0);
        EXPECT_LE(r.fraction, 1.0) << records[i].name; // the model cannot beat the roofline
        EXPECT_EQ(l.at("bound_by").get<std::string>(), sw::binding_name(r.binding));
        EXPECT_EQ(std::stoll(row[column("read_bytes")]), records[i].read_bytes);
        EXPECT_EQ(std::stoll(row[column("write_bytes")]), records[i].write_bytes);
        EXPECT_DOUBLE_EQ(std::stod(row[column("bound_ms")]), r.bound_seconds * 1e3);
        EXPECT_DOUBLE_EQ(std::stod(row[column("roofline_fraction")]), r.fraction);
        EXPECT_EQ(row[column("bound_by")], sw::binding_name(r.binding));
        bounds += l.at("bound_ms").get<double>();
        times += l.at("modelled_ms").get<double>();
        // No P0/P1 pairing: never faster; the CSV field parses to the JSON's.
        EXPECT_GE(records[i].modelled_unpaired_seconds, records[i].modelled_seconds)
            << records[i].name;
        EXPECT_DOUBLE_EQ(l.at("modelled_unpaired_ms").get<double>(),
                         records[i].modelled_unpaired_seconds * 1e3);
        EXPECT_DOUBLE_EQ(std::stod(row[column("modelled_unpaired_ms")]),
                         records[i].modelled_unpaired_seconds * 1e3);
        unpaired += l.at("modelled_unpaired_ms").get<double>();
    }
    // The convs pair P0 and P1 instructions: their no-pairing end is above the modelled time.
    EXPECT_GT(records[0].modelled_unpaired_seconds, records[0].modelled_seconds) << records[0].name;
    EXPECT_NEAR(doc.at("total").at("modelled_unpaired_ms").get<double>(), unpaired,
                1e-9 * unpaired);
    EXPECT_NEAR(std::stod(rows[1][column("net_modelled_unpaired_ms")]), unpaired, 1e-6 * unpaired);
    const json &total = doc.at("total");
    EXPECT_NEAR(total.at("bound_ms").get<double>(), bounds, 1e-9 * bounds);
    EXPECT_NEAR(total.at("modelled_ms").get<double>(), times, 1e-9 * times);
    EXPECT_NEAR(total.at("roofline_fraction").get<double>(), bounds / times, 1e-12);
    EXPECT_NEAR(std::stod(rows[1][column("net_roofline_fraction")]), bounds / times, 1e-12);
    EXPECT_NEAR(std::stod(rows.back()[column("net_bound_ms")]), bounds, 1e-9 * bounds);
    EXPECT_DOUBLE_EQ(doc.at("machine").at("roofline_get_gbps").get<double>(),
                     m.dma_get_plateau_gbps());
    EXPECT_DOUBLE_EQ(doc.at("machine").at("roofline_put_gbps").get<double>(),
                     m.dma_put_plateau_gbps());
}
