/** \file
 * Build and load a generated Sunway layer at run time ("JIT"): for the ONNX executor
 * (graph/Executor.h, sw_net --model), autoschedule --tune and the tests whose shapes are
 * only known when they run (e.g. the ONNX conformance node tests).
 *
 *   JitBuild b = jit_build_layer(GENERATOR, "conv2d", {{"in_channels", "3"}, ...});
 *   if (!b.ok()) FAIL() << b.log;
 *   int rc = b.layer->call({input.raw_buffer(), weights.raw_buffer(), bias.raw_buffer(),
 *                           output.raw_buffer()});
 *
 * jit_build_layer runs
 *   <generator> -g <name> -f <fn> -o <tmpdir> -e mpe,cpe,h <extra args> target=sw26010 k=v ...
 * (fn a unique C identifier; extra args from JitOptions, e.g. -p plugin.so -s Sunway
 * auto_schedule=true), compiles <fn>.mpe.c and <fn>.cpe.c into lib<fn>.so with
 *   <cc> -std=gnu99 -O1 -fPIC -shared -DATHREAD_EMULATOR -I<tmpdir> -I<emulator include>
 *        -I<Halide runtime include> ... -lm
 * (gnu99 as with sw5cc: athread.h refuses strict ISO C), checks that <fn>.cpe.c is strict
 * C99 as the slave compiler sees it (unless JitOptions::strict_cpe_check is false):
 *   <cc> -std=c99 -pedantic-errors -Wall -Wextra -Werror -Wno-unused-variable -fsyntax-only ...
 * <fn>.cpe.c and dlopens it (RTLD_NOW | RTLD_LOCAL). The library leaves the athread symbols
 * undefined: they come from the test executable, which must link the emulator as a whole
 * archive and export its symbols:
 *   target_link_libraries(x PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,athread_emu>")
 *   set_target_properties(x PROPERTIES ENABLE_EXPORTS ON)
 *
 * Results (successes and failures) are cached per (generator, name, params, target, cc,
 * extra args) for the life of the process. Builds of different layers may run
 * concurrently from several threads; a build asked for while the same one is under way
 * waits for it. The temporary directory (under $TMPDIR or /tmp) is removed when
 * the process exits (the emulator reads the loaded module's file for its __thread_local
 * accounting, so it stays while the library is loaded); set SW_JIT_KEEP=1 to keep it, and
 * SW_JIT_VERBOSE=1 to print the commands.
 *
 * Persistent cache (JitOptions::cache_dir): the layer is built in a fresh directory under
 * the cache directory with the function name sw_<name>_<hash>, and renamed to
 * <cache_dir>/<name>-<hash>/ when it is complete (so a build interrupted or running in
 * another process is never seen half-written); a later build with the same key loads that
 * library without running the generator or the compiler. The hash (64-bit FNV-1a) covers
 * the key: the project's version, the generator executable's and every file argument's
 * (e.g. the autoscheduler plugin's) size and modification time, the generator name,
 * params, target (the machine), compiler, extra arguments, environment, checks and -e
 * list; the key is stored as key.txt beside the library and compared in full before a
 * cached library is used. Failed builds are not cached on disk.
 *
 * Tool paths default to the compile definitions SW_JIT_CC and SW_JIT_HALIDE_INCLUDE of
 * jit_layer.cpp (set by CMake: the system's compiler and Halide), else "cc" and
 * /usr/include/halide14, and to the emulator's headers found at run time
 * (runtime/locate.h: the build or installed tree of the running executable, or
 * $SW_EMULATOR_INCLUDE); JitOptions overrides them.
 */
#ifndef SW_JIT_JIT_LAYER_H
#define SW_JIT_JIT_LAYER_H

#include <map>
#include <memory>
#include <string>
#include <vector>

struct halide_buffer_t;

namespace sw_jit {

/** A generated layer loaded into this process. */
class JitLayer {
public:
    ~JitLayer();
    JitLayer(const JitLayer &) = delete;
    JitLayer &operator=(const JitLayer &) = delete;

    /** Calls the layer: inputs in order, then the output. Returns its status (0 = ok, -1 =
     *  bad buffers, after printing why); a wrong argument count returns -2 and says so on
     *  stderr. */
    int call(const std::vector<halide_buffer_t *> &args) const;

    /** The C function name, the number of buffer arguments (from the generated header), the
     *  raw function pointer and the directory of the generated files. */
    const std::string &function_name() const { return fn_; }
    int num_args() const { return num_args_; }
    void *symbol() const { return sym_; }
    const std::string &dir() const { return dir_; }

private:
    friend struct JitAccess;
    JitLayer() = default;
    std::string fn_, dir_;
    void *handle_ = nullptr, *sym_ = nullptr;
    int num_args_ = -1;
    bool keep_ = false;
};

struct JitBuild {
    enum Status { Ok, GeneratorFailed, CompileFailed, LoadFailed };
    Status status = Ok;
    /** On failure: the command and the tool's output (stdout and stderr). */
    std::string log;
    std::shared_ptr<JitLayer> layer;
    bool from_cache = false; ///< loaded from JitOptions::cache_dir without building
    double seconds = 0;      ///< wall time of the build (or the cache lookup and load)
    bool ok() const { return status == Ok && layer != nullptr; }
};

struct JitOptions {
    std::string target = "sw26010";
    std::string cc;               ///< empty: SW_JIT_CC or "cc"
    std::string emulator_include; ///< empty: sw::find_tool(sw::kEmulatorInclude)
    std::string halide_include;   ///< empty: SW_JIT_HALIDE_INCLUDE or /usr/include/halide14
    /** Passed to the generator before target= and the k=v params (e.g. {"-p",
     *  "libsw_autoschedule.so", "-s", "Sunway", "auto_schedule=true"}). */
    std::vector<std::string> extra_args;
    /** Environment variables set for the generator (e.g. SW_AUTOSCHEDULE_PICK). */
    std::map<std::string, std::string> env;
    /** Check the CPE file with -std=c99 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only
     *  (a CompileFailed build if it fails). */
    bool strict_cpe_check = true;
    /** The generator's -e list (add "schedule" with the autoscheduler to get
     *  FUNCTION.schedule.h, with its predicted time, in JitLayer::dir()). */
    std::string emit = "mpe,cpe,h";
    /** Persistent on-disk cache directory (created if missing); empty: none. */
    std::string cache_dir;
};

/** Generates, compiles and loads one layer (or returns the cached result). Thread-safe:
 *  different layers build in parallel. */
JitBuild jit_build_layer(const std::string &generator_exe, const std::string &generator_name,
                         const std::map<std::string, std::string> &params,
                         const JitOptions &options = JitOptions());

/** What the Sunway autoscheduler wrote at the head of a layer's schedule (FUNCTION.schedule.h
 *  in JitLayer::dir(), emitted with "schedule" in JitOptions::emit): the plan it chose
 *  (Plan::describe) and the time its cost model predicted for one call. */
struct LayerSchedule {
    std::string plan;             ///< "" if the header has none
    double predicted_seconds = 0; ///< 0 if the header has none
};

/** Reads the head of \p layer's schedule header ("// Sunway autoscheduler, <machine>: <plan>",
 *  then "// predicted <ms> ms, ..."); empty if there is no header (a hand schedule). */
LayerSchedule read_layer_schedule(const JitLayer &layer);

/** What the autoscheduler predicts for one layer, found without building the layer. */
struct JitEstimate {
    bool ok = false;
    LayerSchedule schedule;  ///< the plan and its predicted seconds per call
    bool from_cache = false; ///< read from JitOptions::cache_dir
    double seconds = 0;      ///< wall time of the estimate (or the cache lookup)
    std::string log;         ///< on failure: the command and the generator's output
};

/** The autoscheduler's prediction for a layer, without lowering or compiling it: runs
 *   <generator> -g <name> -f <fn> -o <tmpdir> -e schedule <extra args> target=... k=v ...
 * (with -e schedule alone the generator driver stops once the autoscheduler has chosen,
 * target_sw/SunwayGenGen.cpp) and reads the head of <fn>.schedule.h (read_layer_schedule).
 * options.extra_args must autoschedule the layer (e.g. {"-p", plugin, "-s", "Sunway",
 * "auto_schedule=true"}); options.emit, cc and the checks are not used. No cache in the
 * process (the caller keeps one, e.g. graph/Executor.h's autoscheduler_coster); with
 * options.cache_dir a successful estimate is kept on disk as
 * <cache_dir>/estimates/<name>-<hash>.txt under the key of a layer build (the generator's and
 * the plugin's identities included) and read back by a later call. Thread-safe. */
JitEstimate jit_estimate_layer(const std::string &generator_exe, const std::string &generator_name,
                               const std::map<std::string, std::string> &params,
                               const JitOptions &options = JitOptions());

/** The head of a schedule header written by the generator driver (-e schedule): see
 *  read_layer_schedule. Empty if the file has none. */
LayerSchedule read_schedule_header(const std::string &path);

/** Reads \p fd (the read end of a child's output pipe) to its end into *output, closes it,
 *  and waits for the child \p pid: returns its wait status (see waitpid), or -1 if waiting
 *  failed. */
int collect_child(int fd, int pid, std::string *output);

/** Runs argv (no shell) and returns its exit status (-1 if it could not run, 128+signal if
 *  killed); *output gets stdout and stderr interleaved. */
int run_command(const std::vector<std::string> &argv, std::string *output,
                const std::map<std::string, std::string> &env = {});

} // namespace sw_jit

#endif
