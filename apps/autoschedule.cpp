/** \file
 * The autoschedule command line:
 *
 *   autoschedule -g GENERATOR [name=value ...] [--generator PATH] [--machine sw26010|sw26010-pro]
 *                [--tune N] [-o schedule.h]
 *   autoschedule --net alexnet|vgg19 [--machine sw26010|sw26010-pro] [--tune N] [-o DIR]
 *
 * Schedules one generator with the Sunway autoscheduler and prints the chosen schedule as C++
 * source with its predicted time, GFLOPS, LDM bytes and DMA bytes, and what the Sunway
 * lowering made of it; -o writes the schedule as a header of one function
 * apply_schedule_<generator>(pipeline, target) to paste into a project. The generator is
 * one of generators/ (linked in), or, with --generator PATH, one of any generator executable
 * built with add_sw_generator (run with the plugin; the plugin reports the run back through
 * $SW_AUTOSCHEDULE_SUMMARY, Summary.h). --tune N builds the N best plans, runs each on the
 * emulated core group and keeps the one the emulator's timing model finds fastest. --net
 * schedules every layer of a network and prints the per-layer table (a layer equal to an
 * earlier one, same kind and parameters, reuses its schedule: each distinct layer is
 * searched, and tuned, once); with -o DIR it writes DIR/<layer>.schedule.h per layer. A
 * pipeline the lowering leaves without a CPE kernel is reported with a warning.
 */
#include "Halide.h"
#include "apps/cli_support.h"
#include "autoscheduler/ApplyPlan.h"
#include "autoscheduler/Summary.h"
#include "autoscheduler/SunwayAutoscheduler.h"
#include "jit/jit_layer.h"
#include "runtime/locate.h"
#include "target_sw/DriverSupport.h"
#include "target_sw/Errors.h"
#include "target_sw/GeneratorSupport.h"
#include "target_sw/Roofline.h"
#include "target_sw/SunwayLowering.h"

#include "HalideBuffer.h"
#include "athread_emu.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <regex>
#include <sstream>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;

struct Options {
    std::string generator, generator_exe, net, out;
    const sw::Machine *machine = &sw::sw26010();
    int tune = 0;
    std::string plan; ///< --plan: cost and check this plan only (sw_auto::Options::plan)
    std::map<std::string, std::string> params;
};

/** The last result of the autoscheduler as Halide called it (generators linked in). */
sw_auto::Result last_result;
sw_auto::Options next_options;

void register_autoscheduler() {
    Halide::Pipeline::add_autoscheduler(
        sw_auto::autoscheduler_name,
        [](const Halide::Pipeline &p, const Halide::Target &, const Halide::MachineParams &mp,
           Halide::AutoSchedulerResults *out) {
            last_result =
                sw_auto::autoschedule(p, sw_auto::machine_for(mp), next_options,
                                      p.outputs().empty() ? "pipeline" : p.outputs()[0].name());
            if (out)
                out->schedule_source = last_result.schedule_source;
        });
    Halide::Pipeline::set_default_autoscheduler_name(sw_auto::autoscheduler_name);
}

/** One layer scheduled and lowered. */
struct Scheduled {
    sw_auto::Summary result;
    int64_t ldm_peak = 0;          ///< the lowered function's largest LDM peak per CPE
    std::string lowering;          ///< sw::describe of the lowered function
    std::vector<std::string> args; ///< buffer arguments of the generated function, in order
    double seconds = 0;            ///< generator build + autoscheduling + lowering
};

std::string check_generator_name(const std::string &generator) {
    const auto known = Halide::Internal::GeneratorRegistry::enumerate();
    if (std::find(known.begin(), known.end(), generator) != known.end())
        return generator;
    std::string list;
    for (const std::string &k : known)
        list += " " + k;
    throw sw::UserError("unknown generator '" + generator + "'; known:" + list +
                        " (--generator PATH schedules one of another generator executable)");
}

/** A generator linked into this executable, built in this process. */
Scheduled schedule_linked(const std::string &generator, const std::string &plan,
                          const std::map<std::string, std::string> &params, const sw::Machine &m,
                          int pick) {
    check_generator_name(generator);
    const auto start = std::chrono::steady_clock::now();
    Halide::Internal::GeneratorParamsMap gp;
    for (const auto &kv : params)
        gp[kv.first] = kv.second;
    Halide::GeneratorContext context(sw::halide_target_for_sunway(), true,
                                     sw::sunway_machine_params(m));
    auto gen = Halide::Internal::GeneratorRegistry::create(generator, context);
    sw::set_sunway_generator_params(*gen, gp, m);
    next_options = sw_auto::Options();
    next_options.pick = pick;
    next_options.plan = plan;
    Halide::Module module = gen->build_module(generator);
    Scheduled s;
    s.result = sw_auto::summarize(last_result);
    for (const auto &f : module.functions()) {
        if (f.name != generator)
            continue;
        const sw::SwFunction lowered =
            sw::lower_to_sunway(f, m, sw::directives_of(gen->get_pipeline()));
        const std::string warning = sw::host_only_warning(lowered);
        if (!warning.empty())
            std::cerr << "warning: " << warning << "\n";
        for (const sw::CpeKernel &k : lowered.kernels)
            s.ldm_peak = std::max(s.ldm_peak, k.ldm_peak_bytes);
        s.lowering = sw::describe(lowered);
        for (const Halide::Internal::LoweredArgument &a : f.args) {
            if (a.is_buffer())
                s.args.push_back(a.name);
        }
    }
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return s;
}

std::string read_text(const fs::path &path) {
    std::ifstream f(path);
    if (!f)
        throw sw::UserError("cannot read " + path.string());
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

/** A generator of another executable (--generator): run with the plugin in a temporary
 * directory; the plugin writes the summary, the driver the lowering report and header. */
Scheduled schedule_external(const std::string &exe, const std::string &generator,
                            const std::string &plan,
                            const std::map<std::string, std::string> &params, const sw::Machine &m,
                            int pick) {
    const auto start = std::chrono::steady_clock::now();
    char tmpl[] = "/tmp/sw_autoschedule.XXXXXX";
    if (!mkdtemp(tmpl))
        throw sw::UserError("cannot create a temporary directory in /tmp");
    const fs::path dir = tmpl;
    struct Cleanup {
        fs::path d;
        ~Cleanup() {
            std::error_code ec;
            fs::remove_all(d, ec);
        }
    } cleanup{dir};
    const std::string &fn = generator; // a C identifier, as every registered generator name
    std::vector<std::string> argv = {exe,
                                     "-g",
                                     generator,
                                     "-f",
                                     fn,
                                     "-o",
                                     dir.string(),
                                     "-e",
                                     "h,report,schedule",
                                     "-p",
                                     sw::find_tool(sw::kAutoschedulePlugin),
                                     "-s",
                                     sw_auto::autoscheduler_name,
                                     "auto_schedule=true",
                                     "target=" + m.name};
    for (const auto &kv : params)
        argv.push_back(kv.first + "=" + kv.second);
    std::string output;
    const int status =
        sw_jit::run_command(argv, &output,
                            {{"SW_AUTOSCHEDULE_PICK", std::to_string(pick)},
                             {"SW_AUTOSCHEDULE_PLAN", plan},
                             {"SW_AUTOSCHEDULE_SUMMARY", (dir / "summary.txt").string()}});
    if (status != 0) {
        // From the driver's first "error: " line on (Halide's warnings may come first).
        std::string why = output;
        const size_t at = why.rfind("error: ", 0) == 0 ? 0 : why.find("\nerror: ");
        if (at != std::string::npos)
            why = why.substr(at == 0 ? 7 : at + 8);
        while (!why.empty() && why.back() == '\n')
            why.pop_back();
        throw sw::UserError(exe +
                            (status < 0 ? " could not be run"
                                        : " failed (exit status " + std::to_string(status) + ")") +
                            (why.empty() ? "" : ": " + why));
    }
    std::cerr << output; // the driver's warnings (e.g. no CPE kernel)
    Scheduled s;
    std::istringstream summary(read_text(dir / "summary.txt"));
    s.result = sw_auto::read_summary(summary, exe + " " + generator);
    s.lowering = read_text(dir / (fn + ".sw_report.txt"));
    // "LDM per CPE: <peak> of <budget> bytes at the peak" per kernel.
    static const std::regex ldm(R"(LDM per CPE: ([0-9]+) of)");
    for (std::sregex_iterator it(s.lowering.begin(), s.lowering.end(), ldm), end; it != end; ++it) {
        s.ldm_peak = std::max<int64_t>(s.ldm_peak, std::stoll((*it)[1]));
    }
    // The buffer arguments in the order of the generated prototype.
    const std::string header = read_text(dir / (fn + ".h"));
    static const std::regex arg(R"(struct halide_buffer_t \*([A-Za-z_][A-Za-z0-9_]*))");
    for (std::sregex_iterator it(header.begin(), header.end(), arg), end; it != end; ++it)
        s.args.push_back((*it)[1]);
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return s;
}

Scheduled schedule_layer(const Options &o, const std::string &generator,
                         const std::map<std::string, std::string> &params, int pick) {
    return o.generator_exe.empty()
               ? schedule_linked(generator, o.plan, params, *o.machine, pick)
               : schedule_external(o.generator_exe, generator, o.plan, params, *o.machine, pick);
}

/** Runs the \p pick-th plan of a layer on the emulator (random inputs); modelled seconds. */
double run_on_emulator(const Options &o, const std::string &generator,
                       const std::map<std::string, std::string> &params, const Scheduled &layer,
                       int pick, std::string *error) {
    const sw_auto::Summary &info = layer.result;
    std::string exe = o.generator_exe;
    if (exe.empty())
        exe = sw::find_tool(sw::kLayersGenerator); // or $SW_LAYERS_GENERATOR
    sw_jit::JitOptions jo;
    jo.target = o.machine->name;
    jo.extra_args = {"-p", sw::find_tool(sw::kAutoschedulePlugin), "-s",
                     sw_auto::autoscheduler_name, "auto_schedule=true"};
    jo.env = {{"SW_AUTOSCHEDULE_PICK", std::to_string(pick)}, {"SW_AUTOSCHEDULE_PLAN", o.plan}};
    sw_jit::JitBuild b = sw_jit::jit_build_layer(exe, generator, params, jo);
    if (!b.ok()) {
        *error = b.log;
        return -1;
    }
    // Buffers: the inputs in the order of the generated function, then the output.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<Halide::Runtime::Buffer<float>> bufs;
    for (const std::string &a : layer.args) {
        for (const auto &in : info.inputs) {
            if (in.first != a)
                continue;
            std::vector<int> ext(in.second.begin(), in.second.end());
            Halide::Runtime::Buffer<float> buf(ext);
            buf.for_each_value([&](float &v) { v = dist(rng); });
            bufs.push_back(std::move(buf));
        }
    }
    std::vector<int> oext(info.out_extents.begin(), info.out_extents.end());
    bufs.emplace_back(oext);
    std::vector<halide_buffer_t *> raw;
    for (auto &b2 : bufs)
        raw.push_back(b2.raw_buffer());
    athread_emu_set_machine(o.machine->name.c_str());
    athread_emu_stats_reset();
    if (b.layer->call(raw) != 0) {
        *error = "the layer returned an error";
        return -1;
    }
    double seconds = 0, unpaired = 0;
    long long compute = 0, wait = 0, line_bytes = 0;
    for (int i = 0; i < athread_emu_stats_count(); i++) {
        const athread_emu_kernel_stats *k = athread_emu_stats_get(i);
        seconds += k->modelled_seconds;
        unpaired += k->modelled_unpaired_seconds;
        for (const athread_emu_cpe_stats &c : k->cpe) {
            if (c.compute_cycles + c.dma_wait_cycles > compute + wait)
                compute = c.compute_cycles, wait = c.dma_wait_cycles;
            line_bytes += c.get_line_bytes + c.put_line_bytes;
        }
    }
    *error = "busiest CPE: compute " + std::to_string(compute) + " cycles, DMA wait " +
             std::to_string(wait) + "; all CPEs: " + std::to_string(line_bytes) +
             " DMA line bytes; if no P0/P1 pairing: " + std::to_string(unpaired * 1e3) + " ms";
    return seconds;
}

/** Schedules a layer; with --tune N, builds its N best plans that pass the lowering (they head
 * the ranking, in the order in which the plugin picks them, SW_AUTOSCHEDULE_PICK), runs each
 * on the emulator and schedules it again with the fastest. */
Scheduled schedule_and_tune(const Options &o, const std::string &generator,
                            const std::map<std::string, std::string> &params, std::string *tuning) {
    Scheduled s = schedule_layer(o, generator, params, std::max(o.tune, 1) - 1);
    if (o.tune <= 0)
        return s;
    const int n = std::min<int>(o.tune, s.result.passed);
    int pick = 0;
    double best = -1;
    for (int i = 0; i < n; i++) {
        const sw_auto::PlanSummary &p = s.result.ranked[i];
        std::fprintf(stderr, "[tune %d/%d] %s (predicted %.3f ms) ...", i + 1, n, p.plan.c_str(),
                     p.estimate.seconds * 1e3);
        std::string err;
        const double t = run_on_emulator(o, generator, params, s, i, &err);
        if (t < 0) {
            std::fprintf(stderr, " failed\n%s\n", err.c_str());
            continue;
        }
        const sw_auto::Estimate &e = p.estimate;
        std::fprintf(stderr,
                     " emulator %.3f ms (%s; model: compute %.0f, DMA %.0f, %.0f line bytes)\n",
                     t * 1e3, err.c_str(), e.compute_cycles, e.dma_cycles, e.line_bytes);
        if (best < 0 || t < best)
            best = t, pick = i;
    }
    s = schedule_layer(o, generator, params, pick);
    char line[160];
    std::snprintf(line, sizeof line, "tuning: kept plan %d of %d (emulator %.3f ms)", pick + 1, n,
                  best * 1e3);
    *tuning = line;
    return s;
}

void print_estimate(const char *what, const sw_auto::Estimate &e) {
    std::printf("%s: %.3f ms, %.1f GFLOPS, LDM %lld B per CPE, DMA get %.2f MB, put %.2f MB\n",
                what, e.seconds * 1e3, e.gflops, (long long)e.ldm_bytes, e.dma_get_bytes / 1e6,
                e.dma_put_bytes / 1e6);
}

/** The other end of the compute band (CostModel.h, Estimate::seconds_unpaired): the plan if no
 * P0/P1 instructions paired, and how much of the predicted time rests on pairing. */
void print_unpaired(const sw_auto::Estimate &e) {
    const double ratio = e.seconds > 0 ? e.seconds_unpaired / e.seconds : 1.0;
    std::printf("if no P0/P1 pairing: %.3f ms, %.1f GFLOPS; unpaired/paired %.2f (busiest CPE's "
                "compute %.0f -> %.0f cycles)%s\n",
                e.seconds_unpaired * 1e3, e.gflops_unpaired, ratio, e.compute_cycles,
                e.compute_cycles_unpaired,
                ratio > 1.05 ? ": the predicted figure depends on ideal dual issue" : "");
}

/** The roofline of a scheduled pipeline (target_sw/Roofline.h): its flops, each input it reads
 * once and its output written once (4 bytes a value), against the chosen plan's predicted
 * time. */
sw::Roofline plan_roofline(const sw_auto::Summary &s, const sw::Machine &m) {
    auto bytes = [](const std::vector<int64_t> &extents) {
        double n = 4;
        for (const int64_t e : extents)
            n *= double(e);
        return n;
    };
    double read = 0;
    for (const auto &in : s.inputs)
        read += bytes(in.second);
    return sw::roofline(s.flops / 1e9, read, bytes(s.out_extents), s.chosen.estimate.seconds, m);
}

/** Writes \p s's schedule as a header of apply_schedule_<name>(pipeline, target). */
void write_schedule_header(const std::string &path, const std::string &comment, const Scheduled &s,
                           const std::string &name) {
    std::ofstream f(path);
    f << "// Generated by autoschedule " << comment << "\n#pragma once\n#include \"Halide.h\"\n"
      << "#include \"target_sw/BroadcastDma.h\"\n#include \"target_sw/DoubleBuffer.h\"\n"
      << "#include \"target_sw/PlaceLdmBuffers.h\"\n#include \"target_sw/SplitPhases.h\"\n"
      << "#include \"target_sw/StageOutput.h\"\n\n"
      << sw_auto::schedule_function(s.result.schedule_source, name);
    f.close();
    if (!f)
        throw sw::UserError("cannot write " + path);
}

std::string params_string(const std::map<std::string, std::string> &params) {
    std::string out;
    for (const auto &kv : params)
        out += " " + kv.first + "=" + kv.second;
    return out;
}

/** Checks before any work that -o can be written (a file, or with --net a directory). */
void check_output(const Options &o) {
    if (o.out.empty())
        return;
    if (!o.net.empty()) {
        std::error_code ec;
        fs::create_directories(o.out, ec);
        if (!fs::is_directory(o.out) || access(o.out.c_str(), W_OK) != 0) {
            throw sw::UserError("-o " + o.out +
                                ": not a writable directory (with --net, -o names a directory)");
        }
        return;
    }
    if (fs::is_directory(o.out))
        throw sw::UserError("-o " + o.out + ": is a directory (a header file is expected)");
    const bool existed = fs::exists(o.out);
    bool ok;
    {
        std::ofstream f(o.out, std::ios::app);
        ok = bool(f);
    }
    if (!existed) {
        std::error_code ec;
        fs::remove(o.out, ec); // written only once there is a schedule
    }
    if (!ok)
        throw sw::UserError("-o " + o.out + ": cannot be written");
}

int one_layer(const Options &o) {
    std::string tuning;
    const Scheduled s = schedule_and_tune(o, o.generator, o.params, &tuning);
    if (!tuning.empty())
        std::printf("%s\n", tuning.c_str());
    const sw_auto::Summary &r = s.result;
    std::printf("%s on %s: %s\n", o.generator.c_str(), o.machine->name.c_str(),
                r.chosen.plan.c_str());
    print_estimate("predicted", r.chosen.estimate);
    print_unpaired(r.chosen.estimate);
    const sw::Roofline roof = plan_roofline(r, *o.machine);
    std::printf("roofline: bound %.4g ms (%s; compute %.4g ms, reads %.4g ms, writes %.4g ms); "
                "predicted at %.3f of it\n",
                roof.bound_seconds * 1e3, sw::binding_name(roof.binding),
                roof.compute_seconds * 1e3, roof.read_seconds * 1e3, roof.write_seconds * 1e3,
                roof.fraction);
    std::printf(
        "lowered: LDM peak %lld of %lld bytes per CPE; %lld plans costed, %d lowered, %.2f s\n",
        (long long)s.ldm_peak, (long long)o.machine->ldm_data_budget(), (long long)r.considered,
        r.lowered, s.seconds);
    std::printf("\n%s\n%s", r.schedule_source.c_str(), s.lowering.c_str());
    if (!o.out.empty()) {
        write_schedule_header(
            o.out, "-g " + o.generator + params_string(o.params) + " --machine " + o.machine->name,
            s, o.generator);
        std::printf("wrote %s\n", o.out.c_str());
    }
    return 0;
}

} // namespace

/** The layers of a network (name, generator, parameters): autoschedule_networks.cpp. */
std::vector<std::array<std::string, 3>> network_layers(const std::string &net);

namespace {

int network(const Options &o) {
    const auto layers = network_layers(o.net);
    std::printf("%s on %s, scheduled by the Sunway autoscheduler%s\n", o.net.c_str(),
                o.machine->name.c_str(),
                o.tune > 0
                    ? (", tuned on the emulator (best of " + std::to_string(o.tune) + ")").c_str()
                    : "");
    std::printf("%-8s %-8s %-70s %10s %8s %9s %10s %8s %8s %5s %-7s\n", "layer", "kind", "plan",
                "pred ms", "GFLOPS", "LDM B", "DMA MB", "sched s", "bound ms", "roof", "bound");
    double total = 0, predicted = 0, bound = 0, unpaired = 0;
    // A layer of the same kind and parameters as an earlier one (VGG-19's conv3_2..conv3_4)
    // gets the same schedule: it is searched once.
    std::map<std::string, std::pair<std::string, Scheduled>> done;
    std::vector<std::string> written;
    for (const auto &l : layers) {
        std::map<std::string, std::string> params;
        std::istringstream in(l[2]);
        for (std::string kv; in >> kv;)
            params[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
        const std::string key = l[1] + params_string(params);
        auto it = done.find(key);
        const bool repeated = it != done.end();
        if (!repeated) {
            std::string tuning;
            it =
                done.emplace(key, std::make_pair(l[0], schedule_and_tune(o, l[1], params, &tuning)))
                    .first;
            if (!tuning.empty())
                std::fprintf(stderr, "%s: %s\n", l[0].c_str(), tuning.c_str());
        }
        const Scheduled &s = it->second.second;
        const sw_auto::Estimate &e = s.result.chosen.estimate;
        const std::string plan = repeated ? "as " + it->second.first : s.result.chosen.plan;
        const sw::Roofline roof = plan_roofline(s.result, *o.machine);
        std::printf("%-8s %-8s %-70s %10.4g %8.1f %9lld %10.2f %8.2f %8.3f %5.2f %-7s\n",
                    l[0].c_str(), l[1].c_str(), plan.c_str(), e.seconds * 1e3, e.gflops,
                    (long long)s.ldm_peak, (e.dma_get_bytes + e.dma_put_bytes) / 1e6,
                    repeated ? 0.0 : s.seconds, roof.bound_seconds * 1e3, roof.fraction,
                    sw::binding_name(roof.binding));
        bound += roof.bound_seconds;
        std::fflush(stdout);
        if (!repeated)
            total += s.seconds;
        predicted += e.seconds;
        unpaired += e.seconds_unpaired;
        if (!o.out.empty()) {
            const std::string path = (fs::path(o.out) / (l[0] + ".schedule.h")).string();
            write_schedule_header(path,
                                  "--net " + o.net + " layer " + l[0] + ": -g " + l[1] +
                                      params_string(params) + " --machine " + o.machine->name,
                                  s, l[0]);
            written.push_back(path);
        }
    }
    std::printf("total: predicted %.2f ms, roofline bound %.2f ms (roof %.2f); scheduled %zu "
                "layers (%zu distinct) in %.2f s\n",
                predicted * 1e3, bound * 1e3, predicted > 0 ? bound / predicted : 0.0,
                layers.size(), done.size(), total);
    // Below the total, outside the table (apps/bench/bench_support.h reads its rows).
    std::printf("if no P0/P1 pairing: predicted %.2f ms; unpaired/paired %.2f\n", unpaired * 1e3,
                predicted > 0 ? unpaired / predicted : 1.0);
    if (!written.empty())
        std::printf("wrote %zu schedule headers to %s\n", written.size(), o.out.c_str());
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{
        "Schedules a Halide generator, or every layer of a network, with the Sunway autoscheduler "
        "and prints the chosen schedule, its predicted time and what the Sunway lowering made of "
        "it."};
    app.name("autoschedule");
    Options o;
    std::string machine = "sw26010";
    std::vector<std::string> params;
    auto *g = app.add_option("-g", o.generator, "the generator to schedule (its registered name)");
    auto *exe =
        app.add_option(
               "--generator", o.generator_exe,
               "a generator executable (built with add_sw_generator) that has the -g generator; "
               "default: the layer generators of generators/, linked in")
            ->check(CLI::ExistingFile);
    auto *net = app.add_option("--net", o.net, "schedule every layer of a network")
                    ->check(CLI::IsMember({"alexnet", "vgg19", "vgg16"}));
    app.add_option("--machine", machine, "the machine to schedule for")
        ->check(CLI::IsMember({"sw26010", "sw26010-pro"}));
    app.add_option("--tune", o.tune,
                   "run the N best plans on the emulator and keep the fastest (per distinct layer)")
        ->check(CLI::Range(0, 1000));
    auto *plan =
        app.add_option("--plan", o.plan,
                       "with -g: cost and check only this plan, as the output's first line "
                       "describes one (e.g. \"tile 56x7x8x1, chunk 16, floatv4 x2 x 8 register "
                       "block\"); a plan the layer does not have falls back to the whole search");
    app.add_option("-o", o.out,
                   "write the schedule as a header (with -g: this file; with --net: one "
                   "<layer>.schedule.h per layer "
                   "in this directory)");
    app.add_option("params", params, "generator parameters, name=value")
        ->check(CLI::Validator(
            [](std::string &s) {
                return s.find('=') == std::string::npos || s[0] == '='
                           ? "'" + s + "' is not name=value"
                           : std::string();
            },
            "name=value"));
    g->excludes(net);
    exe->needs(g);
    plan->needs(g);
    if (int rc = sw_cli::parse(app, argc, argv); rc >= 0)
        return rc;
    try {
        if (o.generator.empty() == o.net.empty())
            throw sw::UserError("give -g GENERATOR or --net NET");
        if (!o.net.empty() && !params.empty())
            throw sw::UserError("--net takes no generator parameters");
        o.machine = sw::machine_by_name(machine);
        for (const std::string &p : params)
            o.params[p.substr(0, p.find('='))] = p.substr(p.find('=') + 1);
        check_output(o);
        register_autoscheduler();
        return o.net.empty() ? one_layer(o) : network(o);
    } catch (const sw::UserError &e) {
        std::cerr << "error: " << e.what() << "\n";
    } catch (const Halide::Error &e) {
        std::cerr << "error: " << sw::without_error_prefix(e.what()) << "\n";
    } catch (const std::exception &e) {
        std::cerr << "error: " << sw::without_error_prefix(e.what()) << "\n";
    }
    return 1;
}
