/** \file
 * Emulator-only controls of the athread emulator (never needed by code built for the
 * real machine): machine choice, kernel names, main-memory buffer registration for
 * bounds checks, per-kernel DMA/LDM counters and a DMA observer hook.
 *
 * What the emulator models (details in target_sw/emulator/src/):
 *  - the CPEs of one core group run as host threads, created by each spawn;
 *  - ldm_malloc takes memory from a per-CPE arena of the machine's LDM size, aligned to
 *    machine.ldm_alignment; ldm_malloc bytes live at once plus the __thread_local bytes
 *    of the kernel's module must stay <= machine.ldm_data_budget();
 *  - DMA copies at once with the real block/gap semantics and checks both sides: the LDM
 *    side must be an ldm_malloc block, a __thread_local variable or a local variable of
 *    this CPE; the main-memory side must not be LDM and, when buffers are registered,
 *    must lie inside one of them (block by block).
 * Every misuse prints one line starting "athread emulator: error:" on stderr and ends
 * the process with status 134.
 *
 * The host API below is not thread-safe: call it from the host (MPE) thread only.
 */
#ifndef ATHREAD_EMU_H
#define ATHREAD_EMU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most CPEs per core group of any supported machine. */
#define ATHREAD_EMU_MAX_CPES 64

/** Counters of one CPE during one spawned kernel. "blocks" are the contiguous pieces of
 *  main memory a request moves; "line bytes" count, for every block, the bytes of the
 *  DMA lines it touches: roundup(end, line) - rounddown(start, line). */
typedef struct {
    long long get_requests, put_requests;
    long long get_bytes, put_bytes;            /**< sum of len */
    long long get_line_bytes, put_line_bytes;
    long long get_blocks, put_blocks;
    long long ldm_peak_bytes;    /**< peak of ldm_malloc live bytes + __thread_local bytes */
    long long ldm_leaked_bytes;  /**< ldm_malloc bytes not freed when the kernel returned */
} athread_emu_cpe_stats;

/** One record per spawn, appended by athread_join. */
typedef struct {
    char kernel[128];
    char machine[32];
    int ncpes;
    long long ldm_static_bytes;  /**< __thread_local bytes counted in every CPE's LDM */
    long long ldm_budget_bytes;  /**< machine.ldm_data_budget() */
    athread_emu_cpe_stats cpe[ATHREAD_EMU_MAX_CPES];
} athread_emu_kernel_stats;

/** Chooses the machine ("sw26010", the default, or "sw26010-pro"); limits come from
 *  target_sw/Machine.h. Unknown names and calls while a kernel runs are errors. */
void athread_emu_set_machine(const char *name);
/** Name of the current machine. */
const char *athread_emu_machine_name(void);

/** Names the next spawned kernel in messages and counters (consumed by that spawn);
 *  without it the name is "kernel@<function address>". */
void athread_emu_set_kernel_name(const char *name);

/** Registers a main-memory buffer the next kernel may access by DMA (the spawn argument
 *  too, if kernels DMA it). Once one buffer is registered, every DMA block must lie
 *  inside one registered buffer. athread_join clears the list. */
void athread_emu_register_buffer(const char *name, const void *base, size_t bytes);
/** Forgets the registered buffers (athread_join does it too). */
void athread_emu_clear_buffers(void);

/** Number of kernel records. */
int athread_emu_stats_count(void);
/** Record i (0 = oldest), or NULL. Valid until athread_emu_stats_reset. */
const athread_emu_kernel_stats *athread_emu_stats_get(int i);
/** Drops all records. */
void athread_emu_stats_reset(void);

/** Called after every DMA request, on the CPE's thread (so concurrently from many CPEs:
 *  it must be thread-safe). main_addr is the main-memory start of the request. */
typedef void (*athread_emu_dma_observer)(void *user, int cpe, int is_put,
                                         const void *main_addr, long long len,
                                         int bsize, int stride);
/** Installs the observer for the kernels spawned from now on (NULL removes it). */
void athread_emu_set_dma_observer(athread_emu_dma_observer fn, void *user);

#ifdef __cplusplus
}
#endif

#endif /* ATHREAD_EMU_H */
