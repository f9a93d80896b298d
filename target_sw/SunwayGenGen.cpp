/** \file
 * The generator driver, in the spirit of Halide's GenGen, linked into every generator
 * executable:
 *
 *   <gen> -g NAME [-f FUNCTION] -o DIR [-e mpe,cpe,h,stmt,report] [-p PLUGIN.so] [-s NAME]
 *         target=sw26010|sw26010-pro [param=value ...]
 *
 * For a Sunway target it builds the generator's module with unchanged Halide 14, runs the
 * Sunway lowering and writes, in DIR: FUNCTION.mpe.c (host), FUNCTION.cpe.c (CPE kernels),
 * FUNCTION.h (signature), FUNCTION.sw_args.h (kernel argument structs), FUNCTION.stmt (IR
 * after each step, with -e stmt) and FUNCTION.sw_report.txt (LDM and DMA summary). For any
 * other target it hands over to Halide's own GenGen (e.g. target=host for a CPU reference).
 */
#include "Halide.h"
#include "target_sw/CodeGen_CPE.h"
#include "target_sw/CodeGen_MPE.h"
#include "target_sw/Errors.h"
#include "target_sw/SunwayLowering.h"

#include <dlfcn.h>

#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

namespace {

const char *usage =
    "usage: GENERATOR -g NAME [-f FUNCTION] -o DIR [-e mpe,cpe,h,stmt,report]\n"
    "                 [-p PLUGIN.so] [-s AUTOSCHEDULER] target=sw26010|sw26010-pro [param=value ...]\n"
    "       (any other target= is handed to Halide's GenGen)\n";

struct Options {
    std::string generator, function, out_dir, target, autoscheduler;
    std::set<std::string> emit{"mpe", "cpe", "h", "report"};
    std::vector<std::string> plugins;
    Halide::Internal::GeneratorParamsMap params;
};

std::string target_name(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a.rfind("target=", 0) == 0) return a.substr(7);
    }
    return "";
}

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw sw::UserError("option " + a + " needs a value");
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
                if (!std::set<std::string>{"mpe", "cpe", "h", "stmt", "report"}.count(e)) {
                    throw sw::UserError("unknown output '" + e + "' for -e (mpe,cpe,h,stmt,report)");
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
    if (o.generator.empty()) throw sw::UserError(std::string("missing -g GENERATOR\n") + usage);
    if (o.out_dir.empty()) throw sw::UserError(std::string("missing -o DIR\n") + usage);
    if (o.function.empty()) o.function = o.generator;
    return o;
}

void write_file(const std::string &path, const std::string &text) {
    std::ofstream f(path);
    f << text;
    if (!f) throw sw::UserError("cannot write " + path);
}

int run_sunway(const Options &o) {
    const sw::Machine *machine = sw::machine_by_name(o.target);
    for (const std::string &p : o.plugins) {
        if (!dlopen(p.c_str(), RTLD_LAZY | RTLD_GLOBAL)) {
            throw sw::UserError("cannot load plugin " + p + ": " + dlerror());
        }
    }
    if (!o.autoscheduler.empty()) Halide::Pipeline::set_default_autoscheduler_name(o.autoscheduler);

    const auto known = Halide::Internal::GeneratorRegistry::enumerate();
    if (std::find(known.begin(), known.end(), o.generator) == known.end()) {
        std::string list;
        for (const std::string &k : known) list += " " + k;
        throw sw::UserError("unknown generator '" + o.generator + "'; this executable has:" + list);
    }
    Halide::Internal::GeneratorParamsMap params = o.params;
    bool auto_schedule = false;
    if (params.count("auto_schedule")) {
        auto_schedule = params["auto_schedule"].string_value == "true";
        params.erase("auto_schedule");
    }
    params.erase("machine_params");
    if (!params.count("machine")) params["machine"] = machine->name;

    Halide::GeneratorContext context(sw::halide_target_for_sunway(), auto_schedule);
    auto gen = Halide::Internal::GeneratorRegistry::create(o.generator, context);
    gen->set_generator_param_values(params);
    Halide::Module module = gen->build_module(o.function);

    const Halide::Internal::LoweredFunc *fn = nullptr;
    for (const auto &f : module.functions()) {
        if (f.name == o.function) fn = &f;
    }
    if (!fn) throw sw::UserError("the module has no function " + o.function);

    std::ostringstream ir;
    sw::SwFunction f = sw::lower_to_sunway(*fn, *machine, o.emit.count("stmt") ? &ir : nullptr);
    const std::string base = o.out_dir + "/" + o.function;
    const std::string header = o.function + ".h", args_header = o.function + ".sw_args.h";
    if (o.emit.count("h")) write_file(base + ".h", sw::generate_header(f));
    if (o.emit.count("mpe") || o.emit.count("cpe")) {
        write_file(base + ".sw_args.h", sw::generate_args_header(f));
    }
    if (o.emit.count("mpe")) write_file(base + ".mpe.c", sw::generate_mpe_source(f, header, args_header));
    if (o.emit.count("cpe")) write_file(base + ".cpe.c", sw::generate_cpe_source(f, args_header));
    if (o.emit.count("stmt")) write_file(base + ".stmt", ir.str());
    if (o.emit.count("report")) write_file(base + ".sw_report.txt", sw::describe(f));
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    const std::string target = target_name(argc, argv);
    if (!sw::machine_by_name(target)) {
        if (target.rfind("sw", 0) == 0) {
            std::cerr << "error: unknown Sunway target '" << target << "' (sw26010 or sw26010-pro)\n";
            return 1;
        }
        return Halide::Internal::generate_filter_main(argc, argv, std::cerr);
    }
    try {
        return run_sunway(parse(argc, argv));
    } catch (const sw::UserError &e) {
        std::cerr << "error: " << e.what() << "\n";
    } catch (const Halide::Error &e) {
        std::cerr << "error: " << e.what() << "\n";
    } catch (const std::exception &e) {
        std::cerr << "error: " << e.what() << "\n";
    }
    return 1;
}
