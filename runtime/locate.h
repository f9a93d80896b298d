/** \file
 * Where this project's own tools and files are at run time: the generator executable, the
 * autoscheduler plugin, the autoschedule CLI, the emulator's headers and archive. Libraries
 * (jit/, graph/) ask here instead of compiling in the paths of the build tree they were
 * built in, so that the same library works from the build tree and from an installed tree.
 *
 * find_tool(name) looks, in order, at
 *   1. the environment variable of that name (e.g. SW_LAYERS_GENERATOR), used as given;
 *   2. the folder of the running executable (/proc/self/exe) and its parents, up to two
 *      levels, for the build tree's layout (e.g. <build>/generators/layers.generator beside
 *      <build>/tests/x) and the installed layout (<prefix>/bin, <prefix>/libexec/halide_sunway,
 *      <prefix>/<libdir>, <prefix>/<includedir>/halide_sunway/emulator);
 * and throws sw::UserError "cannot find <what> ...: set <VARIABLE> to its path (looked in:
 * <every path tried>)" when none has it.
 *
 * Library sw_locate (runtime/CMakeLists.txt): no dependency, so that jit/ can link it.
 */
#ifndef SW_RUNTIME_LOCATE_H
#define SW_RUNTIME_LOCATE_H

#include <string>
#include <vector>

namespace sw {

/** The names find_tool knows. */
constexpr const char *kLayersGenerator = "layers.generator";         ///< generators/
constexpr const char *kAutoschedulePlugin = "libsw_autoschedule.so"; ///< autoscheduler/
constexpr const char *kAutoscheduleCli = "autoschedule";             ///< apps/
constexpr const char *kEmulatorLibrary = "libathread_emu.a";         ///< target_sw/emulator/
/** The folder holding athread.h, slave.h, simd.h and athread_emu.h (the build tree has a
 * copy in <build>/include/halide_sunway/emulator, as installed). */
constexpr const char *kEmulatorInclude = "emulator include";

/** The path of \p name (one of the names above), or throws sw::UserError saying what was
 * looked for and where. */
std::string find_tool(const std::string &name);

/** As find_tool, but "" when not found. */
std::string find_tool_or_empty(const std::string &name);

/** The environment variable that overrides \p name (e.g. "SW_LAYERS_GENERATOR"). */
std::string tool_variable(const std::string &name);

/** The folder of the running executable (/proc/self/exe), or "" if it cannot be read. */
std::string executable_dir();

} // namespace sw

#endif
