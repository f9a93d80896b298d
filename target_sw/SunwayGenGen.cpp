/** \file
 * The generator driver, in the spirit of Halide's GenGen, linked into every generator
 * executable:
 *
 *   <gen> -g NAME [-f FUNCTION] -o DIR [-e mpe,cpe,h,stmt,report,schedule,example] [-p PLUGIN.so]
 *         [-s AUTOSCHEDULER] target=sw26010|sw26010-pro [auto_schedule=true]
 *         [machine_params=P,C,B] [param=value ...]
 *
 * For a Sunway target it builds the generator's module with unchanged Halide 14, runs the
 * Sunway lowering and writes, in DIR: FUNCTION.mpe.c (host), FUNCTION.cpe.c (CPE kernels),
 * FUNCTION.h (signature, argument shapes), FUNCTION.sw_args.h (kernel argument structs),
 * FUNCTION.stmt (IR after each step, with -e stmt), FUNCTION.sw_report.txt (LDM and DMA
 * summary) and FUNCTION.example.c (with -e example: a call on deterministic data that prints
 * a checksum, ArgumentShapes.h). For any
 * other target it hands over to Halide's own GenGen (e.g. target=host for a CPU reference).
 *
 * Autoscheduling: -p loads an autoscheduler plugin (e.g. libsw_autoschedule.so, which
 * registers "Sunway"), -s names the autoscheduler, and auto_schedule=true builds the
 * generator with it instead of its own schedules (LayerGenerator::autoscheduled()). The
 * autoscheduler is told the targeted machine by sunway_machine_params (GeneratorSupport.h):
 * parallelism = the CPEs of a core group, last_level_cache_size = the LDM bytes of a CPE;
 * machine_params=P,C,B overrides that. -e schedule then also writes FUNCTION.schedule.h,
 * the schedule the autoscheduler chose as C++ source, with its predicted time at its head.
 * With -e schedule alone the driver stops once the autoscheduler has chosen: it writes only
 * FUNCTION.schedule.h and neither lowers the module nor generates code (the executor's cost
 * estimates, jit_estimate_layer in jit/jit_layer.h).
 */
#include "Halide.h"
#include "target_sw/ArgumentShapes.h"
#include "target_sw/CodeGen_CPE.h"
#include "target_sw/CodeGen_MPE.h"
#include "target_sw/DriverSupport.h"
#include "target_sw/Errors.h"
#include "target_sw/GeneratorSupport.h"
#include "target_sw/SunwayLowering.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <map>
#include <new>
#include <set>
#include <sstream>

namespace {

const char *usage =
    "usage: GENERATOR -g NAME [-f FUNCTION] -o DIR [-e mpe,cpe,h,stmt,report,schedule,example]\n"
    "                 [-p PLUGIN.so] [-s AUTOSCHEDULER] target=sw26010|sw26010-pro\n"
    "                 [auto_schedule=true [machine_params=PARALLELISM,CACHE_BYTES,BALANCE]]\n"
    "                 [param=value ...]\n"
    "       auto_schedule=true schedules with the autoscheduler -s names (loaded with -p), told\n"
    "       the machine's CPEs and LDM bytes unless machine_params= is given; -e schedule writes\n"
    "       the schedule it chose (FUNCTION.schedule.h; -e schedule alone: only that, the module\n"
    "       is not lowered); -e example writes FUNCTION.example.c\n"
    "       (any other target= is handed to Halide's GenGen)\n"
    "       the generator's `machine` GeneratorParam, if it declares one, is set from target=;\n"
    "       a pipeline without a CPE kernel (host-only code) is built with a warning\n";

/** The outputs -e accepts. */
const std::set<std::string> &emit_kinds() {
    static const std::set<std::string> kinds{"mpe",    "cpe",      "h",      "stmt",
                                             "report", "schedule", "example"};
    return kinds;
}

/** Halide 14 keeps its table of autoschedulers in the private static
 * Pipeline::get_autoscheduler_map(). An explicit instantiation may name a private member
 * ([temp.explicit]): AutoschedulerMapAccess is instantiated with its address, which its
 * friend autoscheduler_map_fn() returns. The driver uses it to check the name given to -s
 * before Pipeline::set_default_autoscheduler_name, and to list the registered names. */
using AutoschedulerMapFn = std::map<std::string, Halide::AutoSchedulerFn> &(*)();
AutoschedulerMapFn autoscheduler_map_fn();
template <AutoschedulerMapFn F> struct AutoschedulerMapAccess {
    friend AutoschedulerMapFn autoscheduler_map_fn() { return F; }
};
template struct AutoschedulerMapAccess<&Halide::Pipeline::get_autoscheduler_map>;

/** The names of the registered autoschedulers, separated by spaces, or "none". */
std::string registered_autoschedulers() {
    std::string names;
    for (const auto &entry : autoscheduler_map_fn()())
        names += (names.empty() ? "" : " ") + entry.first;
    return names.empty() ? "none" : names;
}

struct Options {
    std::string generator, function, out_dir, target, autoscheduler;
    std::set<std::string> emit{"mpe", "cpe", "h", "report"};
    std::vector<std::string> plugins;
    Halide::Internal::GeneratorParamsMap params;
};

/** "generator G (function F, target T, PARAMS)" from the command line, for errors that
 * happen before (or without) a parsed Options. */
std::string what_is_built(int argc, char **argv) {
    std::string generator, function, params;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if ((a == "-g" || a == "-f") && i + 1 < argc)
            (a == "-g" ? generator : function) = argv[++i];
        else if (a.find('=') != std::string::npos)
            params += (params.empty() ? "" : " ") + a;
    }
    return "generator '" + generator + "'" +
           (function.empty() ? "" : " (function " + function + ")") +
           (params.empty() ? "" : " with " + params);
}

std::string target_name(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a.rfind("target=", 0) == 0)
            return a.substr(7);
    }
    return "";
}

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                throw sw::UserError("option " + a + " needs a value");
            return argv[++i];
        };
        if (a == "-g") {
            o.generator = value();
        } else if (a == "-f") {
            o.function = value();
        } else if (a == "-o") {
            o.out_dir = value();
        } else if (a == "-e") {
            o.emit.clear();
            std::stringstream list(value());
            for (std::string e; std::getline(list, e, ',');) {
                if (!emit_kinds().count(e)) {
                    throw sw::UserError("unknown output '" + e +
                                        "' for -e (mpe,cpe,h,stmt,report,schedule,example)");
                }
                o.emit.insert(e);
            }
        } else if (a == "-p") {
            o.plugins.push_back(value());
        } else if (a == "-s") {
            o.autoscheduler = value();
        } else if (a.find('=') != std::string::npos && a[0] != '-') {
            const size_t eq = a.find('=');
            const std::string key = a.substr(0, eq), val = a.substr(eq + 1);
            if (key == "target") {
                o.target = val;
            } else {
                o.params[key] = val;
            }
        } else {
            throw sw::UserError("unexpected argument '" + a + "'\n" + usage);
        }
    }
    if (o.generator.empty())
        throw sw::UserError(std::string("missing -g GENERATOR\n") + usage);
    if (o.out_dir.empty())
        throw sw::UserError(std::string("missing -o DIR\n") + usage);
    if (o.function.empty())
        o.function = o.generator;
    return o;
}

void write_file(const std::string &path, const std::string &text) {
    std::ofstream f(path);
    f << text;
    if (!f)
        throw sw::UserError("cannot write " + path);
}

/** FUNCTION.schedule.h: the autoscheduler's schedule source as a header. The Sunway
 * autoscheduler's source is a whole function, apply_schedule_<output>(pipeline, target),
 * using sw::LDM and sw::double_buffer; a source that defines no apply_schedule_ function
 * (the statements Halide's own autoschedulers return) is wrapped in
 * apply_schedule_FUNCTION(pipeline, target) as Halide's GenGen does. */
std::string schedule_header(const Options &o, const sw::Machine &machine,
                            const Halide::AutoSchedulerResults &r) {
    std::string guard = o.function + "_SCHEDULE_H";
    for (char &ch : guard)
        ch = std::isalnum((unsigned char)ch) ? char(std::toupper((unsigned char)ch)) : '_';
    std::string source = r.schedule_source;
    if (source.find("apply_schedule_") == std::string::npos) {
        source = "inline void apply_schedule_" + o.function +
                 "(::Halide::Pipeline pipeline, ::Halide::Target target) {\n"
                 "    using ::Halide::Func;\n    using ::Halide::MemoryType;\n    using "
                 "::Halide::RVar;\n"
                 "    using ::Halide::TailStrategy;\n    using ::Halide::Var;\n" +
                 source + "}\n";
    }
    std::ostringstream h;
    h << "// " << o.function << ".schedule.h: the schedule the " << r.scheduler_name
      << " autoscheduler chose for " << o.function << " (generator " << o.generator
      << ", target=" << machine.name << ", machine_params=" << r.machine_params_string << ").\n"
      << "// Machine generated by the Sunway generator driver (-e schedule).\n"
      << "#ifndef " << guard << "\n#define " << guard << "\n\n"
      << "#include \"Halide.h\"\n#include \"target_sw/DoubleBuffer.h\"\n#include "
         "\"target_sw/PlaceLdmBuffers.h\"\n#include \"target_sw/StageOutput.h\"\n\n"
      << source << (source.empty() || source.back() == '\n' ? "" : "\n") << "\n#endif  // " << guard
      << "\n";
    return h.str();
}

/** Thrown by the wrapped autoscheduler of a build for -e schedule alone: the schedule it
 * chose, which ends the build before the lowering. */
struct ScheduleChosen {
    Halide::AutoSchedulerResults results;
};

int run_sunway(const Options &o) {
    const sw::Machine *machine = sw::machine_by_name(o.target);
    for (const std::string &p : o.plugins) {
        if (!dlopen(p.c_str(), RTLD_LAZY | RTLD_GLOBAL)) {
            throw sw::UserError("cannot load plugin " + p + ": " + dlerror());
        }
    }
    if (!o.autoscheduler.empty()) {
        if (!autoscheduler_map_fn()().count(o.autoscheduler)) {
            throw sw::UserError("unknown autoscheduler '" + o.autoscheduler +
                                "' for -s (registered: " + registered_autoschedulers() +
                                "; load its plugin with -p)");
        }
        Halide::Pipeline::set_default_autoscheduler_name(o.autoscheduler);
    }

    const auto known = Halide::Internal::GeneratorRegistry::enumerate();
    if (std::find(known.begin(), known.end(), o.generator) == known.end()) {
        std::string list;
        for (const std::string &k : known)
            list += " " + k;
        throw sw::UserError("unknown generator '" + o.generator + "'; this executable has:" + list);
    }
    Halide::Internal::GeneratorParamsMap params = o.params;
    bool auto_schedule = false;
    if (params.count("auto_schedule")) {
        const std::string v = params["auto_schedule"].string_value;
        if (v != "true" && v != "false") {
            throw sw::UserError("auto_schedule must be true or false, not '" + v + "'");
        }
        auto_schedule = v == "true";
        params.erase("auto_schedule");
    }
    Halide::MachineParams machine_params = sw::sunway_machine_params(*machine);
    if (params.count("machine_params")) {
        const std::string v = params["machine_params"].string_value;
        try {
            machine_params = Halide::MachineParams(v);
        } catch (const Halide::Error &) {
            throw sw::UserError("machine_params must be PARALLELISM,CACHE_BYTES,BALANCE (e.g. " +
                                sw::sunway_machine_params(*machine).to_string() + "), not '" + v +
                                "'");
        }
        params.erase("machine_params");
    }
    if (auto_schedule && o.autoscheduler.empty()) {
        throw sw::UserError("auto_schedule=true needs -s AUTOSCHEDULER (registered: " +
                            registered_autoschedulers() + "; load its plugin with -p)");
    }
    if (o.emit.count("schedule") && !auto_schedule) {
        throw sw::UserError(
            "-e schedule writes the autoscheduler's schedule: it needs auto_schedule=true");
    }
    Halide::GeneratorContext context(sw::halide_target_for_sunway(), auto_schedule, machine_params);
    auto gen = Halide::Internal::GeneratorRegistry::create(o.generator, context);
    sw::set_sunway_generator_params(*gen, params, *machine);
    if (o.emit == std::set<std::string>{"schedule"}) {
        // The schedule alone: Generator::build_module autoschedules the pipeline and then
        // lowers it; the autoscheduler is wrapped for this build so that it ends the build
        // (ScheduleChosen) as soon as it has chosen, before the lowering.
        std::map<std::string, Halide::AutoSchedulerFn> &map = autoscheduler_map_fn()();
        const Halide::AutoSchedulerFn chosen = map.at(o.autoscheduler);
        map[o.autoscheduler] = [chosen](const Halide::Pipeline &p, const Halide::Target &t,
                                        const Halide::MachineParams &mp,
                                        Halide::AutoSchedulerResults *r) {
            Halide::AutoSchedulerResults results = r ? *r : Halide::AutoSchedulerResults();
            chosen(p, t, mp, &results);
            throw ScheduleChosen{results};
        };
        try {
            gen->build_module(o.function);
        } catch (const ScheduleChosen &s) {
            if (s.results.schedule_source.empty()) {
                throw sw::UserError("the autoscheduler '" + o.autoscheduler +
                                    "' returned no schedule source for " + o.function);
            }
            write_file(o.out_dir + "/" + o.function + ".schedule.h",
                       schedule_header(o, *machine, s.results));
            return 0;
        }
        throw sw::UserError("the autoscheduler '" + o.autoscheduler + "' was not called for " +
                            o.function);
    }
    Halide::Module module = gen->build_module(o.function);

    const Halide::Internal::LoweredFunc *fn = nullptr;
    for (const auto &f : module.functions()) {
        if (f.name == o.function)
            fn = &f;
    }
    if (!fn)
        throw sw::UserError("the module has no function " + o.function);

    // The Sunway directives the schedule (or the autoscheduler) marked on the Funcs.
    const sw::Directives directives = sw::directives_of(gen->get_pipeline());
    std::ostringstream ir;
    sw::SwFunction f =
        sw::lower_to_sunway(*fn, *machine, directives, o.emit.count("stmt") ? &ir : nullptr);
    const std::string host_only = sw::host_only_warning(f);
    if (!host_only.empty())
        std::cerr << "warning: " << host_only << "\n";
    const std::string base = o.out_dir + "/" + o.function;
    const std::string header = o.function + ".h", args_header = o.function + ".sw_args.h";
    if (o.emit.count("h"))
        write_file(base + ".h", sw::generate_header(f));
    if (o.emit.count("mpe") || o.emit.count("cpe")) {
        write_file(base + ".sw_args.h", sw::generate_args_header(f));
    }
    if (o.emit.count("mpe"))
        write_file(base + ".mpe.c", sw::generate_mpe_source(f, header, args_header));
    if (o.emit.count("cpe"))
        write_file(base + ".cpe.c", sw::generate_cpe_source(f, args_header));
    if (o.emit.count("stmt"))
        write_file(base + ".stmt", ir.str());
    if (o.emit.count("example")) {
        if (!sw::has_example(sw::argument_shapes(f))) {
            std::cerr << "warning: " << o.function
                      << ".example.c calls nothing: the example needs "
                         "float32 buffers of fixed dense shapes and no scalar argument\n";
        }
        write_file(base + ".example.c", sw::generate_example_source(f, header));
    }
    if (o.emit.count("report"))
        write_file(base + ".sw_report.txt", sw::describe(f));
    if (o.emit.count("schedule")) {
        const Halide::AutoSchedulerResults *results = module.get_auto_scheduler_results();
        if (!results || results->schedule_source.empty()) {
            throw sw::UserError("the autoscheduler '" + o.autoscheduler +
                                "' returned no schedule source for " + o.function);
        }
        write_file(base + ".schedule.h", schedule_header(o, *machine, *results));
    }
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (std::string(argv[i]) == "-h" || std::string(argv[i]) == "--help") {
            std::cout << usage;
            return 0;
        }
    }
    const std::string target = target_name(argc, argv);
    try {
        if (!sw::machine_by_name(target)) {
            if (target.rfind("sw", 0) == 0) {
                throw sw::UserError("unknown Sunway target '" + target +
                                    "' (sw26010 or sw26010-pro)");
            }
            // Not a Sunway machine: Halide's GenGen, whose errors (e.g. an unknown target=) are
            // exceptions too.
            if (!target.empty() && !Halide::Target::validate_target_string(target)) {
                throw sw::UserError("unknown target '" + target +
                                    "' (sw26010, sw26010-pro or a Halide target such as host)");
            }
            return Halide::Internal::generate_filter_main(argc, argv, std::cerr);
        }
        return run_sunway(parse(argc, argv));
    } catch (const sw::UserError &e) {
        std::cerr << "error: " << e.what() << "\n";
    } catch (const Halide::Error &e) {
        std::cerr << "error: " << sw::without_error_prefix(e.what()) << "\n";
    } catch (const std::bad_alloc &) {
        std::cerr << "error: out of memory while building " << what_is_built(argc, argv)
                  << " (check the size parameters)\n";
    } catch (const std::exception &e) {
        std::cerr << "error: " << sw::without_error_prefix(e.what()) << "\n";
    }
    return 1;
}
