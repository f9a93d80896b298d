/** \file
 * JitLayer: see jit_layer.h.
 */
#include "jit/jit_layer.h"

#include "runtime/locate.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <locale>
#include <mutex>
#include <sstream>

#ifndef SW_JIT_CC
#define SW_JIT_CC "cc"
#endif
#ifndef SW_JIT_PROJECT_VERSION
#define SW_JIT_PROJECT_VERSION "unknown"
#endif
#ifndef SW_JIT_HALIDE_INCLUDE
#define SW_JIT_HALIDE_INCLUDE "/usr/include/halide14"
#endif

namespace sw_jit {

namespace {

bool env_flag(const char *name) {
    const char *v = std::getenv(name);
    return v && *v && std::strcmp(v, "0") != 0;
}

std::string join(const std::vector<std::string> &argv) {
    std::string s;
    for (const std::string &a : argv)
        s += (s.empty() ? "" : " ") + a;
    return s;
}

void remove_tree(const std::string &dir) {
    if (dir.empty())
        return;
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
}

std::string read_text(const std::string &path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

/** Buffer arguments of `int fn(struct halide_buffer_t *a, ...)` in the generated header. */
int count_args(const std::string &header, const std::string &fn) {
    const size_t at = header.find("int " + fn + "(");
    if (at == std::string::npos)
        return -1;
    const size_t end = header.find(')', at);
    if (end == std::string::npos)
        return -1;
    const std::string list = header.substr(at, end - at);
    int n = 0;
    for (size_t p = list.find("halide_buffer_t"); p != std::string::npos;
         p = list.find("halide_buffer_t", p + 1)) {
        n++;
    }
    return n;
}

std::string sanitize(const std::string &s) {
    std::string r;
    for (char c : s)
        r += std::isalnum((unsigned char)c) ? c : '_';
    return r;
}

/** "size mtime" of an existing regular file, "" otherwise. */
std::string file_identity(const std::string &path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        return "";
    return std::to_string((long long)st.st_size) + " " +
           std::to_string((long long)st.st_mtim.tv_sec) + "." +
           std::to_string((long long)st.st_mtim.tv_nsec);
}

std::string cache_key(const std::string &gen, const std::string &name,
                      const std::map<std::string, std::string> &params, const JitOptions &o) {
    std::string k = gen + '\n' + name + '\n' + o.target + '\n' + o.cc + '\n' +
                    (o.strict_cpe_check ? "strict\n" : "") + "emit " + o.emit + '\n';
    for (const std::string &a : o.extra_args)
        k += "arg " + a + '\n';
    for (const auto &e : o.env)
        k += "env " + e.first + '=' + e.second + '\n';
    for (const auto &p : params)
        k += p.first + '=' + p.second + '\n';
    return k;
}

/** The persistent cache's key: the in-process key, the project's version and the identity
 *  of the generator and of every file named by an extra argument (the plugin). */
std::string disk_key(const std::string &gen, const std::string &memory_key, const JitOptions &o) {
    std::string k = std::string("version ") + SW_JIT_PROJECT_VERSION + '\n' + memory_key;
    k += "generator-file " + file_identity(gen) + '\n';
    for (const std::string &a : o.extra_args) {
        const std::string id = file_identity(a);
        if (!id.empty())
            k += "file " + a + ' ' + id + '\n';
    }
    return k;
}

std::string fnv1a_hex(const std::string &s) {
    uint64_t h = 14695981039346656037ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
    return buf;
}

} // namespace

struct JitAccess {
    static std::shared_ptr<JitLayer> make() { return std::shared_ptr<JitLayer>(new JitLayer()); }
    static void init(JitLayer &l, const std::string &fn, const std::string &dir, void *handle,
                     void *sym, bool keep, int num_args) {
        l.fn_ = fn;
        l.dir_ = dir;
        l.handle_ = handle;
        l.sym_ = sym;
        l.keep_ = keep;
        l.num_args_ = num_args;
    }
};

LayerSchedule read_layer_schedule(const JitLayer &layer) {
    return read_schedule_header(layer.dir() + "/" + layer.function_name() + ".schedule.h");
}

LayerSchedule read_schedule_header(const std::string &path) {
    LayerSchedule r;
    std::ifstream f(path);
    std::string line;
    while (std::getline(f, line)) {
        const size_t head = line.find("// Sunway autoscheduler, ");
        if (head != std::string::npos && r.plan.empty()) {
            const size_t colon = line.find(": ", head);
            if (colon != std::string::npos)
                r.plan = line.substr(colon + 2);
            continue;
        }
        const size_t pred = line.find("// predicted ");
        if (pred != std::string::npos) {
            std::istringstream in(line.substr(pred + 13));
            in.imbue(std::locale::classic());
            double ms = 0;
            if (in >> ms)
                r.predicted_seconds = ms * 1e-3;
            break;
        }
    }
    return r;
}

int collect_child(int fd, int pid, std::string *output) {
    char buf[4096];
    for (;;) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) {
            output->append(buf, size_t(n));
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            break;
        }
    }
    close(fd);
    int status = 0;
    while (waitpid(pid_t(pid), &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    return status;
}

int run_command(const std::vector<std::string> &argv, std::string *output,
                const std::map<std::string, std::string> &env) {
    output->clear();
    if (argv.empty())
        return -1;
    int fds[2];
    // Close-on-exec: a child started concurrently from another thread must not inherit
    // this pipe's write end (we would then wait for its exit too before seeing EOF).
    if (pipe2(fds, O_CLOEXEC) != 0) {
        *output = std::string("pipe: ") + std::strerror(errno);
        return -1;
    }
    std::vector<char *> args;
    for (const std::string &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        *output = std::string("fork: ") + std::strerror(errno);
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        for (const auto &e : env)
            setenv(e.first.c_str(), e.second.c_str(), 1);
        execvp(args[0], args.data());
        std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    const int status = collect_child(fds[0], pid, output);
    if (status < 0)
        return -1;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return -1;
}

JitLayer::~JitLayer() {
    // The library stays loaded (its kernels may be named in the emulator's records); only
    // its files go, at process exit through the cache.
    if (!keep_)
        remove_tree(dir_);
}

int JitLayer::call(const std::vector<halide_buffer_t *> &a) const {
    using B = halide_buffer_t *;
    if (num_args_ >= 0 && (int)a.size() != num_args_) {
        std::fprintf(stderr, "JitLayer %s: called with %zu buffers, the function takes %d\n",
                     fn_.c_str(), a.size(), num_args_);
        return -2;
    }
    switch (a.size()) {
    case 1:
        return reinterpret_cast<int (*)(B)>(sym_)(a[0]);
    case 2:
        return reinterpret_cast<int (*)(B, B)>(sym_)(a[0], a[1]);
    case 3:
        return reinterpret_cast<int (*)(B, B, B)>(sym_)(a[0], a[1], a[2]);
    case 4:
        return reinterpret_cast<int (*)(B, B, B, B)>(sym_)(a[0], a[1], a[2], a[3]);
    case 5:
        return reinterpret_cast<int (*)(B, B, B, B, B)>(sym_)(a[0], a[1], a[2], a[3], a[4]);
    case 6:
        return reinterpret_cast<int (*)(B, B, B, B, B, B)>(sym_)(a[0], a[1], a[2], a[3], a[4],
                                                                 a[5]);
    case 7:
        return reinterpret_cast<int (*)(B, B, B, B, B, B, B)>(sym_)(a[0], a[1], a[2], a[3], a[4],
                                                                    a[5], a[6]);
    case 8:
        return reinterpret_cast<int (*)(B, B, B, B, B, B, B, B)>(sym_)(a[0], a[1], a[2], a[3], a[4],
                                                                       a[5], a[6], a[7]);
    default:
        std::fprintf(stderr, "JitLayer %s: %zu buffer arguments are not supported (1..8)\n",
                     fn_.c_str(), a.size());
        return -2;
    }
}

namespace {

/** The generator's command line: layer \p name as function \p fn into \p dir, emitting
 *  o.emit, with o.extra_args, o.target and \p params. */
std::vector<std::string> generator_command(const std::string &gen, const std::string &name,
                                           const std::map<std::string, std::string> &params,
                                           const JitOptions &o, const std::string &dir,
                                           const std::string &fn) {
    std::vector<std::string> g = {gen, "-g", name, "-f", fn, "-o", dir, "-e", o.emit};
    g.insert(g.end(), o.extra_args.begin(), o.extra_args.end());
    g.push_back("target=" + o.target);
    for (const auto &p : params)
        g.push_back(p.first + "=" + p.second);
    return g;
}

/** $TMPDIR, else /tmp: where a build or an estimate makes its temporary directory. */
std::string temp_parent() {
    const char *tmp = std::getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
}

/** Runs the generator and the compiler (and the strict C99 check) in \p dir for function
 *  \p fn. Returns "" on success, else sets *status and returns the log. */
std::string generate_and_compile(const std::string &gen, const std::string &name,
                                 const std::map<std::string, std::string> &params,
                                 const JitOptions &o, const std::string &dir, const std::string &fn,
                                 JitBuild::Status *status) {
    const bool verbose = env_flag("SW_JIT_VERBOSE");
    // 1. Generate.
    const std::vector<std::string> g = generator_command(gen, name, params, o, dir, fn);
    std::string out;
    if (verbose)
        std::fprintf(stderr, "[jit] %s\n", join(g).c_str());
    int rc = run_command(g, &out, o.env);
    if (rc != 0) {
        *status = JitBuild::GeneratorFailed;
        return "generator failed (exit status " + std::to_string(rc) + "): " + join(g) + "\n" + out;
    }

    // 2. Compile.
    const std::string cc = !o.cc.empty() ? o.cc : SW_JIT_CC;
    std::string emu = o.emulator_include;
    if (emu.empty()) {
        try {
            emu = sw::find_tool(sw::kEmulatorInclude); // or $SW_EMULATOR_INCLUDE
        } catch (const std::exception &e) {
            *status = JitBuild::CompileFailed;
            return e.what();
        }
    }
    const std::string hal = !o.halide_include.empty() ? o.halide_include : SW_JIT_HALIDE_INCLUDE;
    const std::string so = dir + "/lib" + fn + ".so";
    // The SW26010-Pro's headers (crts.h, its slave.h and simd.h) come first; its sides are
    // told apart as swgcc's -mhost / -mslave do, by __sw_host__ / __sw_slave__, so the MPE and
    // CPE files are compiled apart.
    const bool pro = o.target == "sw26010-pro";
    std::vector<std::string> includes = {"-I" + dir};
    if (!emu.empty() && pro)
        includes.push_back("-I" + emu + "/sw26010-pro");
    if (!emu.empty())
        includes.push_back("-I" + emu);
    if (!hal.empty())
        includes.push_back("-I" + hal);
    // gnu99 as with sw5cc (the real athread.h, and ours, refuse strict ISO C on the host).
    std::vector<std::vector<std::string>> steps;
    if (pro) {
        for (const char *side : {"mpe", "cpe"}) {
            std::vector<std::string> c = {
                cc,      "-std=gnu99",         "-O1",
                "-fPIC", "-DATHREAD_EMULATOR", side[0] == 'm' ? "-D__sw_host__" : "-D__sw_slave__"};
            c.insert(c.end(), includes.begin(), includes.end());
            c.insert(c.end(), {"-c", "-o", dir + "/" + fn + "." + side + ".o",
                               dir + "/" + fn + "." + side + ".c"});
            steps.push_back(c);
        }
        steps.push_back(
            {cc, "-shared", "-o", so, dir + "/" + fn + ".mpe.o", dir + "/" + fn + ".cpe.o", "-lm"});
    } else {
        std::vector<std::string> c = {cc,      "-std=gnu99", "-O1",
                                      "-fPIC", "-shared",    "-DATHREAD_EMULATOR"};
        c.insert(c.end(), includes.begin(), includes.end());
        c.insert(c.end(), {"-o", so, dir + "/" + fn + ".mpe.c", dir + "/" + fn + ".cpe.c", "-lm"});
        steps.push_back(c);
    }
    for (const std::vector<std::string> &c : steps) {
        if (verbose)
            std::fprintf(stderr, "[jit] %s\n", join(c).c_str());
        rc = run_command(c, &out);
        if (rc != 0) {
            *status = JitBuild::CompileFailed;
            return "compiling the generated code failed (exit status " + std::to_string(rc) +
                   "): " + join(c) + "\n" + out;
        }
    }
    if (!o.strict_cpe_check)
        return "";
    // The CPE file as its machine's slave compiler sees it (no ATHREAD_EMULATOR), warnings as
    // errors. -Wno-unused-variable: some LRN and pooling kernels keep an unused
    // `..._extent_realized` let (known; generated_c_test runs without the exception).
    //  - SW26010: strict C99, as sw5cc -slave takes it;
    //  - the Pro: GNU C99 as swgcc -mslave (crts.h's macros are statement expressions), without
    //    -Wpsabi, the host's (x86 without AVX has no register for a floatv8, a native register
    //    type on the Pro).
    std::vector<std::string> sx = {cc};
    if (pro)
        sx.insert(sx.end(), {"-std=gnu99", "-Wno-psabi", "-D__sw_slave__"});
    else
        sx.insert(sx.end(), {"-std=c99", "-pedantic-errors"});
    sx.insert(sx.end(), {"-Wall", "-Wextra", "-Werror", "-Wno-unused-variable", "-fsyntax-only"});
    sx.insert(sx.end(), includes.begin(), includes.end());
    sx.push_back(dir + "/" + fn + ".cpe.c");
    if (verbose)
        std::fprintf(stderr, "[jit] %s\n", join(sx).c_str());
    rc = run_command(sx, &out);
    if (rc != 0) {
        *status = JitBuild::CompileFailed;
        return std::string(pro ? "the CPE source does not build as swgcc -mslave would"
                               : "the CPE source is not strict C99") +
               " (exit status " + std::to_string(rc) + "): " + join(sx) + "\n" + out;
    }
    return "";
}

/** dlopens dir/lib<fn>.so and finds fn. */
JitBuild load(const std::string &dir, const std::string &fn, bool keep) {
    JitBuild r;
    const std::string so = dir + "/lib" + fn + ".so";
    void *handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        r.status = JitBuild::LoadFailed;
        r.log = std::string(
                    "dlopen failed (does the executable link athread_emu as a whole archive with "
                    "ENABLE_EXPORTS?): ") +
                dlerror();
        return r;
    }
    void *sym = dlsym(handle, fn.c_str());
    if (!sym) {
        r.status = JitBuild::LoadFailed;
        r.log = "dlsym(" + fn + ") failed: " + dlerror();
        dlclose(handle);
        return r;
    }
    std::shared_ptr<JitLayer> layer = JitAccess::make();
    JitAccess::init(*layer, fn, dir, handle, sym, keep,
                    count_args(read_text(dir + "/" + fn + ".h"), fn));
    if (env_flag("SW_JIT_KEEP") || env_flag("SW_JIT_VERBOSE")) {
        std::fprintf(stderr, "[jit] %s: %s\n", fn.c_str(), dir.c_str());
    }
    r.layer = layer;
    return r;
}

/** mkdtemp of <parent>/<prefix>XXXXXX; "" (and *error) on failure. */
std::string make_temp_dir(const std::string &parent, const std::string &prefix,
                          std::string *error) {
    std::string tmpl = parent + "/" + prefix + "XXXXXX";
    std::vector<char> t(tmpl.begin(), tmpl.end());
    t.push_back(0);
    if (!mkdtemp(t.data())) {
        *error = "cannot create a directory " + tmpl + ": " + std::strerror(errno);
        return "";
    }
    return t.data();
}

/** A build in a temporary directory, removed at exit unless SW_JIT_KEEP. */
JitBuild build_temporary(const std::string &gen, const std::string &name,
                         const std::map<std::string, std::string> &params, const JitOptions &o) {
    static std::atomic<int> counter{0};
    const bool keep = env_flag("SW_JIT_KEEP");
    JitBuild r;
    const std::string dir = make_temp_dir(temp_parent(), "sw_jit_" + sanitize(name) + "_", &r.log);
    if (dir.empty()) {
        r.status = JitBuild::GeneratorFailed;
        return r;
    }
    const std::string fn =
        "jit_" + sanitize(name) + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
    r.log = generate_and_compile(gen, name, params, o, dir, fn, &r.status);
    if (r.log.empty())
        r = load(dir, fn, keep);
    if (!r.ok()) {
        if (keep) {
            r.log += "\n(kept " + dir + ")";
        } else {
            remove_tree(dir);
        }
    }
    return r;
}

/** A build through the persistent cache (JitOptions::cache_dir; see jit_layer.h). */
JitBuild build_cached(const std::string &gen, const std::string &name,
                      const std::map<std::string, std::string> &params, const JitOptions &o,
                      const std::string &memory_key) {
    JitBuild r;
    const std::string key = disk_key(gen, memory_key, o);
    const std::string hash = fnv1a_hex(key);
    const std::string fn = "sw_" + sanitize(name) + "_" + hash;
    const std::string dir = o.cache_dir + "/" + sanitize(name) + "-" + hash;
    auto usable = [&]() {
        return read_text(dir + "/key.txt") == key && file_identity(dir + "/lib" + fn + ".so") != "";
    };
    if (usable()) {
        r = load(dir, fn, true);
        r.from_cache = r.ok();
        if (r.ok())
            return r;
    }
    std::error_code ec;
    std::filesystem::create_directories(o.cache_dir, ec);
    if (ec) {
        r.status = JitBuild::GeneratorFailed;
        r.log = "cannot create the layer cache directory " + o.cache_dir + ": " + ec.message();
        return r;
    }
    const std::string work = make_temp_dir(o.cache_dir, ".build-" + sanitize(name) + "-", &r.log);
    if (work.empty()) {
        r.status = JitBuild::GeneratorFailed;
        return r;
    }
    r.log = generate_and_compile(gen, name, params, o, work, fn, &r.status);
    if (!r.log.empty()) {
        remove_tree(work);
        return r;
    }
    {
        std::ofstream k(work + "/key.txt", std::ios::binary);
        k << key;
        if (!k.flush()) {
            r.status = JitBuild::CompileFailed;
            r.log = "cannot write " + work + "/key.txt";
            remove_tree(work);
            return r;
        }
    }
    // Publish: replace a stale entry (a different key with the same hash, or a broken one);
    // if another process published the same layer meanwhile, use its copy.
    if (std::rename(work.c_str(), dir.c_str()) != 0) {
        if (!usable()) {
            remove_tree(dir);
            if (std::rename(work.c_str(), dir.c_str()) != 0) {
                r.status = JitBuild::LoadFailed;
                r.log = "cannot move " + work + " to " + dir + ": " + std::strerror(errno);
                remove_tree(work);
                return r;
            }
        } else {
            remove_tree(work);
        }
    }
    return load(dir, fn, true);
}

JitBuild build_uncached(const std::string &gen, const std::string &name,
                        const std::map<std::string, std::string> &params, const JitOptions &o,
                        const std::string &memory_key) {
    const auto t0 = std::chrono::steady_clock::now();
    JitBuild r = o.cache_dir.empty() ? build_temporary(gen, name, params, o)
                                     : build_cached(gen, name, params, o, memory_key);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

} // namespace

namespace {

/** An estimate kept on disk: the key, then a line "predicted <seconds>", then "plan <plan>". */
bool read_estimate(const std::string &path, const std::string &key, LayerSchedule *s) {
    const std::string text = read_text(path);
    if (text.size() <= key.size() || text.compare(0, key.size(), key) != 0)
        return false;
    std::istringstream in(text.substr(key.size()));
    in.imbue(std::locale::classic());
    std::string word, plan;
    double seconds = 0;
    if (!(in >> word >> seconds) || word != "predicted" || !(seconds > 0))
        return false;
    in >> word;
    if (word != "plan")
        return false;
    std::getline(in >> std::ws, plan);
    s->predicted_seconds = seconds;
    s->plan = plan;
    return true;
}

/** Writes the estimate through a temporary file and a rename (another process reading the
 *  cache sees the whole file or none); failures leave no entry and are not errors. */
void write_estimate(const std::string &dir, const std::string &path, const std::string &key,
                    const LayerSchedule &s) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
        return;
    std::string error;
    const std::string work = make_temp_dir(dir, ".estimate-", &error);
    if (work.empty())
        return;
    {
        std::ofstream f(work + "/estimate.txt", std::ios::binary);
        f.imbue(std::locale::classic());
        char seconds[64];
        std::snprintf(seconds, sizeof seconds, "%.17g", s.predicted_seconds);
        f << key << "predicted " << seconds << "\nplan " << s.plan << "\n";
        if (f.flush())
            std::rename((work + "/estimate.txt").c_str(), path.c_str());
    }
    remove_tree(work);
}

} // namespace

JitEstimate jit_estimate_layer(const std::string &generator_exe, const std::string &generator_name,
                               const std::map<std::string, std::string> &params,
                               const JitOptions &options) {
    static std::atomic<int> counter{0};
    const auto t0 = std::chrono::steady_clock::now();
    JitEstimate r;
    auto done = [&]() {
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return r;
    };
    JitOptions o = options;
    o.emit = "schedule";
    o.strict_cpe_check = false;
    o.cc.clear();
    const std::string key =
        disk_key(generator_exe, cache_key(generator_exe, generator_name, params, o), o);
    const std::string cache = o.cache_dir.empty() ? "" : o.cache_dir + "/estimates";
    const std::string cached =
        cache.empty() ? "" : cache + "/" + sanitize(generator_name) + "-" + fnv1a_hex(key) + ".txt";
    if (!cached.empty() && read_estimate(cached, key, &r.schedule)) {
        r.ok = r.from_cache = true;
        return done();
    }
    const std::string dir =
        make_temp_dir(temp_parent(), "sw_estimate_" + sanitize(generator_name) + "_", &r.log);
    if (dir.empty())
        return done();
    const std::string fn = "estimate_" + sanitize(generator_name) + "_" + std::to_string(getpid()) +
                           "_" + std::to_string(counter++);
    const std::vector<std::string> g =
        generator_command(generator_exe, generator_name, params, o, dir, fn);
    if (env_flag("SW_JIT_VERBOSE"))
        std::fprintf(stderr, "[jit] %s\n", join(g).c_str());
    std::string out;
    const int rc = run_command(g, &out, o.env);
    if (rc == 0)
        r.schedule = read_schedule_header(dir + "/" + fn + ".schedule.h");
    remove_tree(dir);
    if (rc != 0) {
        r.log =
            "generator failed (exit status " + std::to_string(rc) + "): " + join(g) + "\n" + out;
        return done();
    }
    if (!(r.schedule.predicted_seconds > 0)) {
        r.log = "no predicted time in the schedule the generator wrote: " + join(g) + "\n" + out;
        return done();
    }
    r.ok = true;
    if (!cached.empty())
        write_estimate(cache, cached, key, r.schedule);
    return done();
}

JitBuild jit_build_layer(const std::string &generator_exe, const std::string &generator_name,
                         const std::map<std::string, std::string> &params,
                         const JitOptions &options) {
    // One entry per key, filled once; the lock is held only to find or add the entry, so
    // different layers build in parallel and a second request for a layer under way waits.
    static std::mutex mutex;
    static std::map<std::string, std::shared_future<JitBuild>>
        cache; // destroyed at exit: removes the directories
    const std::string key = cache_key(generator_exe, generator_name, params, options);
    const std::string entry_key = key + "cache " + options.cache_dir + '\n';
    std::promise<JitBuild> promise;
    std::shared_future<JitBuild> entry;
    bool build = false;
    {
        std::lock_guard<std::mutex> lock(mutex);
        auto it = cache.find(entry_key);
        if (it == cache.end()) {
            it = cache.emplace(entry_key, promise.get_future().share()).first;
            build = true;
        }
        entry = it->second;
    }
    if (build) {
        try {
            promise.set_value(build_uncached(generator_exe, generator_name, params, options, key));
        } catch (...) {
            promise.set_exception(std::current_exception());
        }
    }
    return entry.get();
}

} // namespace sw_jit
