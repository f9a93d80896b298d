/** \file
 * The autoschedule command line:
 *
 *   autoschedule -g GENERATOR [name=value ...] [--machine sw26010|sw26010-pro] [--tune N]
 *                [-o schedule.h]
 *   autoschedule --net alexnet|vgg19 [--machine sw26010|sw26010-pro]
 *
 * Schedules one layer generator (the generators of generators/, linked in) with the Sunway
 * autoscheduler and prints the chosen schedule as C++ source with its predicted time,
 * GFLOPS, LDM bytes and DMA bytes, and what the Sunway lowering made of it; -o writes the
 * schedule as a header of one function apply_schedule_<generator>(pipeline, target) to paste
 * into schedules/. --tune N builds the N best plans, runs each on the emulated core group and
 * keeps the one the emulator's timing model finds fastest. --net schedules every layer of a
 * network and prints the per-layer table (a layer equal to an earlier one, same kind and
 * parameters, reuses its schedule: each distinct layer is searched once).
 */
#include "Halide.h"
#include "autoscheduler/ApplyPlan.h"
#include "autoscheduler/SunwayAutoscheduler.h"
#include "target_sw/Errors.h"
#include "target_sw/GeneratorSupport.h"
#include "target_sw/SunwayLowering.h"
#include "tests/support/jit_layer.h"

#include "HalideBuffer.h"
#include "athread_emu.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

namespace {

const char *usage =
    "usage: autoschedule -g GENERATOR [name=value ...] [--machine sw26010|sw26010-pro] [--tune N]\n"
    "                    [-o schedule.h]\n"
    "       autoschedule --net alexnet|vgg19 [--machine sw26010|sw26010-pro]\n";

struct Options {
    std::string generator, net, out;
    const sw::Machine *machine = &sw::sw26010();
    int tune = 0;
    std::map<std::string, std::string> params;
};

int to_int(const std::string &s, const std::string &what) {
    char *end = nullptr;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end || v < 0 || v > 1000) throw sw::UserError(what + " must be a number from 0 to 1000, not '" + s + "'");
    return int(v);
}

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw sw::UserError("option " + a + " needs a value\n" + usage);
            return argv[++i];
        };
        if (a == "-g") {
            o.generator = value();
        } else if (a == "--net") {
            o.net = value();
        } else if (a == "-o") {
            o.out = value();
        } else if (a == "--machine") {
            const std::string m = value();
            o.machine = sw::machine_by_name(m);
            if (!o.machine) throw sw::UserError("unknown machine '" + m + "' (sw26010 or sw26010-pro)");
        } else if (a == "--tune") {
            o.tune = to_int(value(), "--tune");
        } else if (a == "-h" || a == "--help") {
            std::cout << usage;
            std::exit(0);
        } else if (a.find('=') != std::string::npos && a[0] != '-') {
            o.params[a.substr(0, a.find('='))] = a.substr(a.find('=') + 1);
        } else {
            throw sw::UserError("unexpected argument '" + a + "'\n" + usage);
        }
    }
    if (o.generator.empty() == o.net.empty()) throw sw::UserError(std::string("give -g GENERATOR or --net NET\n") + usage);
    return o;
}

/** The last result of the autoscheduler as Halide called it. */
sw_auto::Result last_result;
sw_auto::Options next_options;

void register_autoscheduler() {
    Halide::Pipeline::add_autoscheduler(sw_auto::autoscheduler_name, [](const Halide::Pipeline &p, const Halide::Target &,
                                                                        const Halide::MachineParams &mp,
                                                                        Halide::AutoSchedulerResults *out) {
        last_result = sw_auto::autoschedule(p, sw_auto::machine_for(mp), next_options,
                                            p.outputs().empty() ? "pipeline" : p.outputs()[0].name());
        if (out) out->schedule_source = last_result.schedule_source;
    });
    Halide::Pipeline::set_default_autoscheduler_name(sw_auto::autoscheduler_name);
}

/** One layer scheduled and lowered. */
struct Scheduled {
    sw_auto::Result result;
    sw::SwFunction lowered;
    std::vector<std::string> args;  ///< buffer arguments of the generated function, in order
    double seconds = 0;  ///< generator build + autoscheduling + lowering
};

Scheduled schedule_layer(const std::string &generator, std::map<std::string, std::string> params, const sw::Machine &m,
                         int pick) {
    const auto known = Halide::Internal::GeneratorRegistry::enumerate();
    if (std::find(known.begin(), known.end(), generator) == known.end()) {
        std::string list;
        for (const std::string &k : known) list += " " + k;
        throw sw::UserError("unknown generator '" + generator + "'; known:" + list);
    }
    const auto start = std::chrono::steady_clock::now();
    params["machine"] = m.name;
    Halide::Internal::GeneratorParamsMap gp;
    for (const auto &kv : params) gp[kv.first] = kv.second;
    Halide::GeneratorContext context(sw::halide_target_for_sunway(), true, sw::sunway_machine_params(m));
    auto gen = Halide::Internal::GeneratorRegistry::create(generator, context);
    gen->set_generator_param_values(gp);
    next_options = sw_auto::Options();
    next_options.pick = pick;
    Halide::Module module = gen->build_module(generator);
    Scheduled s;
    s.result = last_result;
    for (const auto &f : module.functions()) {
        if (f.name != generator) continue;
        s.lowered = sw::lower_to_sunway(f, m);
        for (const Halide::Internal::LoweredArgument &a : f.args) {
            if (a.is_buffer()) s.args.push_back(a.name);
        }
    }
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return s;
}

int64_t ldm_peak(const sw::SwFunction &f) {
    int64_t peak = 0;
    for (const sw::CpeKernel &k : f.kernels) peak = std::max(peak, k.ldm_peak_bytes);
    return peak;
}

/** Runs the \p pick-th plan of a layer on the emulator (random inputs); modelled seconds. */
double run_on_emulator(const Options &o, const Scheduled &layer, int pick, std::string *error) {
    const sw_auto::PipelineInfo &info = layer.result.info;
    const char *exe = std::getenv("SW_LAYERS_GENERATOR");
    sw_test::JitOptions jo;
    jo.target = o.machine->name;
    jo.extra_args = {"-p", SW_AUTOSCHEDULE_PLUGIN, "-s", sw_auto::autoscheduler_name, "auto_schedule=true"};
    jo.env = {{"SW_AUTOSCHEDULE_PICK", std::to_string(pick)}};
    sw_test::JitBuild b = sw_test::jit_build_layer(exe ? exe : SW_LAYERS_GENERATOR, o.generator, o.params, jo);
    if (!b.ok()) {
        *error = b.log;
        return -1;
    }
    // Buffers: the inputs in the order of the generated function (the pipeline's arguments),
    // then the output.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<Halide::Runtime::Buffer<float>> bufs;
    for (const std::string &a : layer.args) {
        for (const sw_auto::Stage &s : info.stages) {
            if (!s.is_input || s.source_name != a) continue;
            std::vector<int> ext(s.source_extents.begin(), s.source_extents.end());
            Halide::Runtime::Buffer<float> buf(ext);
            buf.for_each_value([&](float &v) { v = dist(rng); });
            bufs.push_back(std::move(buf));
        }
    }
    std::vector<int> oext(info.out_extents.begin(), info.out_extents.end());
    bufs.emplace_back(oext);
    std::vector<halide_buffer_t *> raw;
    for (auto &b2 : bufs) raw.push_back(b2.raw_buffer());
    athread_emu_set_machine(o.machine->name.c_str());
    athread_emu_stats_reset();
    if (b.layer->call(raw) != 0) {
        *error = "the layer returned an error";
        return -1;
    }
    double seconds = 0;
    long long compute = 0, wait = 0, line_bytes = 0;
    for (int i = 0; i < athread_emu_stats_count(); i++) {
        const athread_emu_kernel_stats *k = athread_emu_stats_get(i);
        seconds += k->modelled_seconds;
        for (const athread_emu_cpe_stats &c : k->cpe) {
            if (c.compute_cycles + c.dma_wait_cycles > compute + wait) compute = c.compute_cycles, wait = c.dma_wait_cycles;
            line_bytes += c.get_line_bytes + c.put_line_bytes;
        }
    }
    *error = "busiest CPE: compute " + std::to_string(compute) + " cycles, DMA wait " + std::to_string(wait) +
             "; all CPEs: " + std::to_string(line_bytes) + " DMA line bytes";
    return seconds;
}

void print_estimate(const char *what, const sw_auto::Estimate &e) {
    std::printf("%s: %.3f ms, %.1f GFLOPS, LDM %lld B per CPE, DMA get %.2f MB, put %.2f MB\n", what, e.seconds * 1e3,
                e.gflops, (long long)e.ldm_bytes, e.dma_get_bytes / 1e6, e.dma_put_bytes / 1e6);
}

int one_layer(const Options &o) {
    // With --tune N, the N best plans that pass the lowering head the ranking, in the order
    // in which the plugin picks them (SW_AUTOSCHEDULE_PICK).
    Scheduled s = schedule_layer(o.generator, o.params, *o.machine, std::max(o.tune, 1) - 1);
    int pick = 0;
    if (o.tune > 0) {
        const int n = std::min<int>(o.tune, s.result.passed);
        double best = -1;
        for (int i = 0; i < n; i++) {
            std::fprintf(stderr, "[tune %d/%d] %s (predicted %.3f ms) ...", i + 1, n,
                         s.result.ranked[i].plan.describe().c_str(), s.result.ranked[i].estimate.seconds * 1e3);
            std::string err;
            const double t = run_on_emulator(o, s, i, &err);
            if (t < 0) {
                std::fprintf(stderr, " failed\n%s\n", err.c_str());
                continue;
            }
            const sw_auto::Estimate &e = s.result.ranked[i].estimate;
            std::fprintf(stderr, " emulator %.3f ms (%s; model: compute %.0f, DMA %.0f, %.0f line bytes)\n", t * 1e3,
                         err.c_str(), e.compute_cycles, e.dma_cycles, e.line_bytes);
            if (best < 0 || t < best) best = t, pick = i;
        }
        s = schedule_layer(o.generator, o.params, *o.machine, pick);
        std::printf("tuning: kept plan %d of %d (emulator %.3f ms)\n", pick + 1, n, best * 1e3);
    }
    const sw_auto::Result &r = s.result;
    std::printf("%s on %s: %s\n", o.generator.c_str(), o.machine->name.c_str(), r.chosen.plan.describe().c_str());
    print_estimate("predicted", r.chosen.estimate);
    std::printf("lowered: LDM peak %lld of %lld bytes per CPE; %lld plans costed, %d lowered, %.2f s\n",
                (long long)ldm_peak(s.lowered), (long long)o.machine->ldm_data_budget(), (long long)r.considered,
                r.lowered, s.seconds);
    std::printf("\n%s\n%s", r.schedule_source.c_str(), sw::describe(s.lowered).c_str());
    if (!o.out.empty()) {
        std::ofstream f(o.out);
        f << "// Generated by autoschedule -g " << o.generator;
        for (const auto &kv : o.params) f << " " << kv.first << "=" << kv.second;
        f << " --machine " << o.machine->name << "\n#pragma once\n#include \"Halide.h\"\n"
          << "#include \"target_sw/DoubleBuffer.h\"\n#include \"target_sw/PlaceLdmBuffers.h\"\n\n"
          << sw_auto::schedule_function(r.schedule_source, o.generator);
        if (!f) throw sw::UserError("cannot write " + o.out);
        std::printf("wrote %s\n", o.out.c_str());
    }
    return 0;
}

}  // namespace

/** The layers of a network (name, generator, parameters), from the network tables. */
std::vector<std::array<std::string, 3>> network_layers(const std::string &net);

namespace {

int network(const Options &o) {
    const auto layers = network_layers(o.net);
    std::printf("%s on %s, scheduled by the Sunway autoscheduler\n", o.net.c_str(), o.machine->name.c_str());
    std::printf("%-8s %-8s %-70s %10s %8s %9s %10s %8s\n", "layer", "kind", "plan", "pred ms", "GFLOPS", "LDM B",
                "DMA MB", "sched s");
    double total = 0, predicted = 0;
    // A layer of the same kind and parameters as an earlier one (VGG-19's conv3_2..conv3_4)
    // gets the same schedule: it is searched once.
    std::map<std::string, std::pair<std::string, Scheduled>> done;
    for (const auto &l : layers) {
        std::map<std::string, std::string> params;
        std::istringstream in(l[2]);
        for (std::string kv; in >> kv;) params[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
        std::string key = l[1];
        for (const auto &kv : params) key += " " + kv.first + "=" + kv.second;
        auto it = done.find(key);
        const bool repeated = it != done.end();
        if (!repeated) it = done.emplace(key, std::make_pair(l[0], schedule_layer(l[1], params, *o.machine, 0))).first;
        const Scheduled &s = it->second.second;
        const sw_auto::Estimate &e = s.result.chosen.estimate;
        const std::string plan = repeated ? "as " + it->second.first : s.result.chosen.plan.describe();
        std::printf("%-8s %-8s %-70s %10.4g %8.1f %9lld %10.2f %8.2f\n", l[0].c_str(), l[1].c_str(), plan.c_str(),
                    e.seconds * 1e3, e.gflops, (long long)ldm_peak(s.lowered), (e.dma_get_bytes + e.dma_put_bytes) / 1e6,
                    repeated ? 0.0 : s.seconds);
        std::fflush(stdout);
        if (!repeated) total += s.seconds;
        predicted += e.seconds;
    }
    std::printf("total: predicted %.2f ms; scheduled %zu layers (%zu distinct) in %.2f s\n", predicted * 1e3,
                layers.size(), done.size(), total);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        const Options o = parse(argc, argv);
        register_autoscheduler();
        return o.net.empty() ? one_layer(o) : network(o);
    } catch (const sw::UserError &e) {
        std::cerr << "error: " << e.what() << "\n";
    } catch (const Halide::Error &e) {
        std::cerr << "error: " << e.what() << "\n";
    } catch (const std::exception &e) {
        std::cerr << "error: " << e.what() << "\n";
    }
    return 1;
}
