/** \file
 * MPE (host) side of the athread API, as implemented by the athread emulator.
 *
 * Same declarations as sw5cc's <athread.h> for what the project's generated host code
 * uses (see shared/sunway/athread-api.md):
 *
 *     extern void SLAVE_FUN(kernel)(void *);   // the CPE function, seen from the host
 *     athread_init(); athread_spawn(kernel, &args); athread_join(); ... athread_halt();
 *
 * The CPE source defines `kernel`; the real slave compiler names its symbol
 * `slave_kernel`. Built for the emulator (ATHREAD_EMULATOR defined), CPE sources add
 * the prefix themselves: `#define kernel slave_kernel`.
 * Emulator-only controls (machine choice, buffer registration, counters) are in
 * athread_emu.h. Usable from C++ (declarations are extern "C").
 *
 * Mirrors sw5cc's <athread.h>: what is declared here is declared the same way there, and
 * like the real header it includes <signal.h>, <stdlib.h>, <errno.h> and <string.h>. The
 * real header also pulls intc.h, whose prototypes use the POSIX types siginfo_t and
 * struct sigcontext: host code does not compile with -std=c99, only with -std=gnu99
 * (sw5cc -host -std=gnu99). This header refuses strict ISO C the same way, with an #error.
 * Left out (the project's host code does not use them): athread_spawn_task /
 * athread_spawn_group / athread_create and their __real_ functions, athread_wait /
 * athread_end / athread_task / athread_master_sync / athread_cancel / athread_signal /
 * athread_expt_signal, athread_set_num_threads / athread_get_num_threads,
 * athread_join_group / athread_try_join_group / athread_idle_group, malloc_cross,
 * get_tdata_slave_addr, h2ldm / IO_addr, sys_m_en, __thread_mix, and intc.h's macros
 * (TRUE, FALSE, FmtAssert, Is_True, the host-side athread_get_id / athread_get_core) and
 * signal-handler declarations.
 */
#ifndef ATHREAD_EMU_ATHREAD_H
#define ATHREAD_EMU_ATHREAD_H

#if !defined(__cplusplus) && defined(__STRICT_ANSI__)
#error                                                                                             \
    "athread.h: the real sw5cc athread.h needs POSIX signal types (intc.h); build host code with -std=gnu99, not -std=c99"
#endif

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLAVE_FUN(x) slave_##x

#ifdef __cplusplus
/* C++ does not convert a function pointer to void * implicitly. */
#define athread_spawn(f, arg) __real_athread_spawn(reinterpret_cast<void *>(slave_##f), (arg))
#else
#define athread_spawn(f, arg) __real_athread_spawn(slave_##f, arg)
#endif

/** Starts the CPE function `fpc` on every CPE of the core group with argument `arg`;
 *  returns at once (the CPEs run asynchronously). Use the athread_spawn macro. */
extern int __real_athread_spawn(void *fpc, void *arg);
/** Makes the CPE array usable. */
extern int athread_init(void);
/** Waits until the spawned function has returned on every CPE. */
extern int athread_join(void);
/** Shuts the CPE array down; spawning again needs a new athread_init. */
extern int athread_halt(void);
/** Number of CPEs in the core group (64). */
extern int athread_get_max_threads(void);

#ifdef __cplusplus
}
#endif

#endif /* ATHREAD_EMU_ATHREAD_H */
