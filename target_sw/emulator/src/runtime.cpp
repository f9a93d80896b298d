/** \file
 * Host (MPE) side of the athread emulator: athread_init / spawn / join / halt, the CPE
 * threads, and the emulator-only controls of athread_emu.h (machine, kernel name,
 * registered buffers, counters, DMA observer).
 *
 * Each athread_spawn creates one thread per CPE (so every CPE starts with a fresh copy
 * of the __thread_local data and an empty LDM) and returns at once; athread_join joins
 * them, records the counters and reports LDM leaks. The emulator keeps one piece of
 * per-thread state, the current CPE, in a C++ thread_local; it is not in the
 * ".tdata_local" section and so is not counted as LDM.
 */
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>

#include "athread.h"
#include "emu_internal.h"

namespace athread_emu {

namespace {

/** Host-side state. Used from the host thread only (see athread_emu.h). */
struct Global {
    bool initialized = false;
    const sw::Machine *machine = &sw::sw26010();
    std::unique_ptr<Run> run;
    std::vector<Buffer> buffers;
    std::string next_kernel_name;
    std::deque<athread_emu_kernel_stats> stats; // deque: records never move
    athread_emu_dma_observer observer = nullptr;
    void *observer_user = nullptr;
};

Global &global() {
    static Global *g = new Global; // never destroyed: CPE threads may outlive exit()
    return *g;
}

thread_local Cpe *t_current = nullptr;

/** Stack size of a CPE thread: generous, host frames are larger than CPE frames. */
const size_t kCpeThreadStack = 2u << 20;

/** Calls the kernel function on CPE c. Not inlined: its frame address marks the top of
 *  the kernel's stack region, the LDM stack of the real CPE (Cpe::stack_entry). The asm
 *  statement after the call keeps it from being a tail call. */
__attribute__((noinline)) void call_kernel(Cpe &c) {
    c.stack_entry = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    c.run->fn(c.run->arg);
    __asm__ __volatile__("" ::: "memory");
}

void *cpe_main(void *p) {
    Cpe &c = *static_cast<Cpe *>(p);
    t_current = &c;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *lo;
        size_t size;
        if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
            c.stack_lo = reinterpret_cast<uintptr_t>(lo);
            c.stack_hi = c.stack_lo + size;
        }
        pthread_attr_destroy(&attr);
    }
    locate_own_tls(c);
    set_cpe_ids(c);
    call_kernel(c);
    cpe_finished(c);
    t_current = nullptr;
    return nullptr;
}

void require_idle(const char *api) {
    Global &g = global();
    if (g.run) {
        fatal("%s called while kernel '%s' is running (call athread_join first)", api,
              g.run->kernel.c_str());
    }
}

/** Writes the record of a joined run and reports its LDM leaks. */
void record(Run &run) {
    athread_emu_kernel_stats r;
    std::memset(&r, 0, sizeof r);
    std::snprintf(r.kernel, sizeof r.kernel, "%s", run.kernel.c_str());
    std::snprintf(r.machine, sizeof r.machine, "%s", run.machine->name.c_str());
    r.ncpes = static_cast<int>(run.cpes.size());
    r.ldm_static_bytes = run.tls.bytes;
    r.ldm_budget_bytes = run.machine->ldm_data_budget();
    int leaky = 0, first = -1;
    int64_t leaked = 0;
    for (auto &c : run.cpes) {
        c->stats.ldm_leaked_bytes = c->ldm.live_bytes();
        if (c->ldm.live_blocks() > 0) {
            if (first < 0)
                first = c->id;
            leaky++;
            leaked += c->ldm.live_bytes();
        }
        r.cpe[c->id] = c->stats;
    }
    simulate_timing(run, r, static_cast<int>(global().stats.size()));
    global().stats.push_back(r);
    if (leaky) {
        warn("kernel '%s': %d CPEs returned with LDM still allocated (%" PRId64 " bytes in "
             "all; CPE %d: %zu blocks, %" PRId64 " bytes): missing ldm_free",
             run.kernel.c_str(), leaky, leaked, first, run.cpes[first]->ldm.live_blocks(),
             run.cpes[first]->ldm.live_bytes());
    }
}

} // namespace

Cpe::Cpe(Run *r, int i)
    : run(r), id(i), row(i / r->machine->cpe_mesh_cols), col(i % r->machine->cpe_mesh_cols),
      ldm(r->machine->ldm_bytes, r->machine->ldm_alignment) {
    stats.ldm_peak_bytes = r->tls.bytes;
}

Cpe *current_cpe_or_null() {
    return t_current;
}

Cpe &current_cpe(const char *api) {
    if (!t_current)
        fatal("%s called outside a CPE function (host thread?)", api);
    return *t_current;
}

int64_t ldm_in_use(const Cpe &c) {
    return c.ldm.live_bytes() + c.run->tls.bytes;
}

} // namespace athread_emu

using namespace athread_emu;

// ---------------------------------------------------------------- athread.h

extern "C" int athread_init(void) {
    global().initialized = true;
    return 0;
}

extern "C" int athread_get_max_threads(void) {
    return global().machine->cpes_per_core_group;
}

extern "C" int __real_athread_spawn(void *fpc, void *arg) {
    Global &g = global();
    if (!g.initialized)
        fatal("athread_spawn without athread_init (or after athread_halt)");
    require_idle("athread_spawn");
    if (!fpc)
        fatal("athread_spawn of a null function");
    const sw::Machine &m = *g.machine;
    const int n = m.cpes_per_core_group;
    if (n > ATHREAD_EMU_MAX_CPES || m.cpe_mesh_rows * m.cpe_mesh_cols != n)
        fatal("machine %s: %d CPEs in a %dx%d mesh is not supported", m.name.c_str(), n,
              m.cpe_mesh_rows, m.cpe_mesh_cols);

    auto run = std::make_unique<Run>();
    run->machine = &m;
    run->fn = reinterpret_cast<void (*)(void *)>(fpc);
    run->arg = arg;
    if (!g.next_kernel_name.empty()) {
        run->kernel = g.next_kernel_name;
    } else {
        char name[64];
        std::snprintf(name, sizeof name, "kernel@%p", fpc);
        run->kernel = name;
    }
    g.next_kernel_name.clear();
    run->tls = find_tls_local(fpc);
    if (run->tls.bytes > m.ldm_data_budget()) {
        fatal("kernel '%s': the __thread_local data of %s (%" PRId64 " bytes) exceeds the LDM "
              "budget of %" PRId64 " bytes (%s)",
              run->kernel.c_str(), run->tls.module.c_str(), run->tls.bytes, m.ldm_data_budget(),
              m.name.c_str());
    }
    run->buffers = g.buffers;
    run->observer = g.observer;
    run->observer_user = g.observer_user;
    run->array.parties = n;
    run->rows.assign(m.cpe_mesh_rows, Barrier{m.cpe_mesh_cols, 0, 0});
    run->cols.assign(m.cpe_mesh_cols, Barrier{m.cpe_mesh_rows, 0, 0});
    for (int i = 0; i < n; i++)
        run->cpes.push_back(std::make_unique<Cpe>(run.get(), i));

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, kCpeThreadStack);
    for (auto &c : run->cpes) {
        int err = pthread_create(&c->thread, &attr, cpe_main, c.get());
        if (err)
            fatal("cannot create the thread of CPE %d: %s", c->id, std::strerror(err));
    }
    pthread_attr_destroy(&attr);
    g.run = std::move(run);
    return 0;
}

extern "C" int athread_join(void) {
    Global &g = global();
    if (!g.run)
        return -1;
    for (auto &c : g.run->cpes)
        pthread_join(c->thread, nullptr);
    check_unreceived(*g.run);
    record(*g.run);
    g.run.reset();
    g.buffers.clear();
    return 0;
}

/** The SW26010-Pro's spawn (include/sw26010-pro/athread.h renames __real_athread_spawn to this):
 *  a third argument, whether to flush the CPEs' data cache, which the emulator has none of. */
extern "C" int athread_emu_real_athread_spawn_flush(void *fpc, void *arg, int flush_slave_dcache) {
    (void)flush_slave_dcache;
    return __real_athread_spawn(fpc, arg);
}

extern "C" int athread_halt(void) {
    require_idle("athread_halt");
    global().initialized = false;
    return 0;
}

// ---------------------------------------------------------------- athread_emu.h

extern "C" void athread_emu_set_machine(const char *name) {
    require_idle("athread_emu_set_machine");
    const sw::Machine *m = sw::machine_by_name(name ? name : "");
    if (!m)
        fatal("athread_emu_set_machine: unknown machine '%s'", name ? name : "(null)");
    global().machine = m;
}

extern "C" const char *athread_emu_machine_name(void) {
    return global().machine->name.c_str();
}

extern "C" void athread_emu_set_kernel_name(const char *name) {
    global().next_kernel_name = name ? name : "";
}

extern "C" void athread_emu_register_buffer(const char *name, const void *base, size_t bytes) {
    require_idle("athread_emu_register_buffer");
    uintptr_t lo = reinterpret_cast<uintptr_t>(base);
    global().buffers.push_back(Buffer{name ? name : "(unnamed)", lo, lo + bytes});
}

extern "C" void athread_emu_clear_buffers(void) {
    require_idle("athread_emu_clear_buffers");
    global().buffers.clear();
}

extern "C" int athread_emu_stats_count(void) {
    return static_cast<int>(global().stats.size());
}

extern "C" const athread_emu_kernel_stats *athread_emu_stats_get(int i) {
    auto &s = global().stats;
    if (i < 0 || i >= static_cast<int>(s.size()))
        return nullptr;
    return &s[i];
}

extern "C" void athread_emu_stats_reset(void) {
    global().stats.clear();
}

extern "C" void athread_emu_set_dma_observer(athread_emu_dma_observer fn, void *user) {
    global().observer = fn;
    global().observer_user = user;
}
