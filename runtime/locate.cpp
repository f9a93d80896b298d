/** \file
 * Where this project's tools and files are at run time: see locate.h.
 */
#include "runtime/locate.h"

#include "target_sw/Errors.h"

#include <cstdlib>
#include <filesystem>
#include <set>
#include <system_error>

#include <unistd.h>

// The installed layout (GNUInstallDirs, relative to the prefix unless set absolute); set by
// runtime/CMakeLists.txt. These are the install tree's folder names, not paths of the build.
#ifndef SW_INSTALL_BINDIR
#define SW_INSTALL_BINDIR "bin"
#endif
#ifndef SW_INSTALL_LIBDIR
#define SW_INSTALL_LIBDIR "lib"
#endif
#ifndef SW_INSTALL_LIBEXECDIR
#define SW_INSTALL_LIBEXECDIR "libexec"
#endif
#ifndef SW_INSTALL_INCLUDEDIR
#define SW_INSTALL_INCLUDEDIR "include/halide_sunway"
#endif

namespace sw {

namespace fs = std::filesystem;

namespace {

struct Entry {
    const char *name;
    const char *variable;
    const char *what;                ///< for the error message
    std::vector<std::string> places; ///< relative to the executable's folder and its parents
    const char *probe;               ///< a file that must exist in a folder entry; null: a file
};

const std::vector<Entry> &entries() {
    static const std::vector<Entry> all = [] {
        const std::string bin = SW_INSTALL_BINDIR, lib = SW_INSTALL_LIBDIR,
                          libexec = SW_INSTALL_LIBEXECDIR, inc = SW_INSTALL_INCLUDEDIR;
        std::vector<Entry> e;
        // Build tree first (<build>/<folder>/<target>, the source tree's folders), then the
        // installed layout, then beside the executable.
        e.push_back({kLayersGenerator,
                     "SW_LAYERS_GENERATOR",
                     "the layer generator executable",
                     {"generators/layers.generator", bin + "/layers.generator",
                      libexec + "/halide_sunway/layers.generator", "layers.generator"},
                     nullptr});
        e.push_back({kAutoschedulePlugin,
                     "SW_AUTOSCHEDULE_PLUGIN",
                     "the Sunway autoscheduler plugin",
                     {"autoscheduler/libsw_autoschedule.so", lib + "/libsw_autoschedule.so",
                      "lib/libsw_autoschedule.so", "libsw_autoschedule.so"},
                     nullptr});
        e.push_back({kAutoscheduleCli,
                     "SW_AUTOSCHEDULE_CLI",
                     "the autoschedule CLI",
                     {"autoscheduler/autoschedule", "apps/autoschedule", bin + "/autoschedule",
                      "autoschedule"},
                     nullptr});
        e.push_back({kEmulatorLibrary,
                     "SW_EMULATOR_LIB",
                     "the athread emulator's archive",
                     {"target_sw/emulator/libathread_emu.a", lib + "/libathread_emu.a",
                      "lib/libathread_emu.a"},
                     nullptr});
        e.push_back({kEmulatorInclude,
                     "SW_EMULATOR_INCLUDE",
                     "the athread emulator's headers (athread.h)",
                     {"include/halide_sunway/emulator", inc + "/emulator"},
                     "athread.h"});
        return e;
    }();
    return all;
}

const Entry &entry(const std::string &name) {
    for (const Entry &e : entries()) {
        if (name == e.name)
            return e;
    }
    throw UserError("find_tool: unknown name '" + name + "'");
}

bool usable(const fs::path &p, const Entry &e) {
    std::error_code ec;
    if (e.probe)
        return fs::is_directory(p, ec) && fs::is_regular_file(p / e.probe, ec);
    return fs::is_regular_file(p, ec);
}

/** The path, or "" with *tried listing every place looked at. */
std::string search(const Entry &e, std::string *tried) {
    if (const char *v = std::getenv(e.variable); v && *v) {
        if (usable(v, e))
            return v;
        *tried = std::string(e.variable) + "=" + v + " (not " +
                 (e.probe ? "a folder with " + std::string(e.probe) : std::string("a file")) + ")";
        return "";
    }
    const std::string exe = executable_dir();
    if (exe.empty()) {
        *tried = "(the running executable's folder: /proc/self/exe cannot be read)";
        return "";
    }
    fs::path dir = exe;
    std::set<std::string> seen;
    for (int up = 0; up <= 2; up++) {
        for (const std::string &rel : e.places) {
            const fs::path p = fs::path(rel).is_absolute() ? fs::path(rel) : dir / rel;
            const std::string s = p.lexically_normal().string();
            if (usable(p, e))
                return s;
            if (seen.insert(s).second)
                *tried += (tried->empty() ? "" : ", ") + s;
        }
        if (!dir.has_parent_path() || dir.parent_path() == dir)
            break;
        dir = dir.parent_path();
    }
    return "";
}

} // namespace

std::string executable_dir() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        return "";
    return exe.parent_path().string();
}

std::string tool_variable(const std::string &name) {
    return entry(name).variable;
}

std::string find_tool_or_empty(const std::string &name) {
    std::string tried;
    return search(entry(name), &tried);
}

std::string find_tool(const std::string &name) {
    const Entry &e = entry(name);
    std::string tried;
    std::string p = search(e, &tried);
    if (!p.empty())
        return p;
    throw UserError(std::string("cannot find ") + e.what + " (" + e.name + "): set " + e.variable +
                    " to its path (looked in: " + tried + ")");
}

} // namespace sw
