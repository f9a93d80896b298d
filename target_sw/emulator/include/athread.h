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
 * athread_emu.h. Valid C; usable from C++ (declarations are extern "C").
 */
#ifndef ATHREAD_EMU_ATHREAD_H
#define ATHREAD_EMU_ATHREAD_H

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
