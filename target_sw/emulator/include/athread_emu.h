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
    long long get_bytes, put_bytes; /**< sum of len */
    long long get_line_bytes, put_line_bytes;
    long long get_blocks, put_blocks;
    long long ldm_peak_bytes;   /**< peak of ldm_malloc live bytes + __thread_local bytes */
    long long ldm_leaked_bytes; /**< ldm_malloc bytes not freed when the kernel returned */
    /* Timing model (see "Timing model" below); cycles of this CPE at machine.clock_ghz. */
    long long cycles;           /**< from its start until its last instruction and last DMA */
    long long compute_cycles;   /**< sum of the work reported by athread_emu_account */
    long long dma_wait_cycles;  /**< blocked in athread_emu_wait_reply, plus the final drain */
    long long sync_wait_cycles; /**< blocked in athread_syn */
    long long flops, ldm_accesses, direct_accesses; /**< sums of the reported work */
    /* Register communication (simd_putr / putc / getr / getc; SW26010 only). */
    long long regcomm_puts, regcomm_gets; /**< puts (a broadcast counts once) and gets */
    long long regcomm_wait_cycles;        /**< blocked in a get until the value arrived, or in a put
                                               until the receiver's buffer had room (modelled) */
    /* No P0/P1 pairing (see "No pairing" below). */
    long long unpaired_extra_cycles; /**< sum of the reported unpaired_extra_cycles, plus for the
                                          reported p0/p1/either their unpaired issue minus their
                                          dual issue */
} athread_emu_cpe_stats;

/** One record per spawn, appended by athread_join. */
typedef struct {
    char kernel[128];
    char machine[32];
    int ncpes;
    long long ldm_static_bytes; /**< __thread_local bytes counted in every CPE's LDM */
    long long ldm_budget_bytes; /**< machine.ldm_data_budget() */
    athread_emu_cpe_stats cpe[ATHREAD_EMU_MAX_CPES];
    /* Timing model results. */
    double modelled_seconds; /**< spawn overhead + cycles_max + join overhead, in seconds */
    long long cycles_max;    /**< the slowest CPE's cycles */
    long long spawn_cycles, join_cycles; /**< the machine's launch and join overheads */
    /* The same kernel if no P0/P1 instructions paired (see "No pairing" below); never below
     * modelled_seconds / cycles_max, equal when no CPE reported work that pairs. */
    double modelled_unpaired_seconds; /**< spawn + cycles_max_unpaired + join, in seconds */
    long long cycles_max_unpaired;    /**< max over CPEs of cycles + unpaired_extra_cycles */
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
typedef void (*athread_emu_dma_observer)(void *user, int cpe, int is_put, const void *main_addr,
                                         long long len, int bsize, int stride);
/** Installs the observer for the kernels spawned from now on (NULL removes it). */
void athread_emu_set_dma_observer(athread_emu_dma_observer fn, void *user);

/* ------------------------------------------------------------------ Timing model
 * Every CPE logs, while the kernel runs, the compute work its code reports, its DMA
 * requests (direction, bytes, blocks, 128-byte-line bytes, reply word) and its waits;
 * athread_join replays the logs of all CPEs together in modelled time (CPE cycles at
 * machine.clock_ghz; parameters and sources in target_sw/Machine.h, struct DmaTiming):
 *  - compute advances a CPE by max(p0, p1, ceil((p0 + p1 + either) / 2)) + slow_cycles;
 *  - a DMA request goes through the CPE's DMA engine, asynchronously to its compute:
 *    setup (block_cycles per block, one request at a time), data (its line bytes through a
 *    channel shared by all CPEs moving data at that moment, equal shares, at most
 *    cpe_cap_bytes_per_cycle per CPE; one request at a time), then a fixed latency
 *    (pipelined with the next requests); it starts no earlier than its issue;
 *  - athread_emu_wait_reply blocks the CPE until the last request counted on that reply
 *    word has completed; athread_syn blocks until every CPE of its scope has arrived;
 *  - a broadcast DMA (BCAST_MODE) is one request of the issuing CPE: its line bytes go
 *    through the channel once, whatever the number of receivers;
 *  - a register-communication put or get costs regcomm.put_cycles / get_cycles (one P1
 *    instruction); a get waits until the matching put's time + regcomm.latency_cycles, a
 *    put into a full buffer until the get that made room (regcomm_wait_cycles);
 *  - a CPE ends when its code has returned and its last request has completed (requests
 *    never waited through athread_emu_wait_reply count here);
 *  - the kernel takes spawn_cycles + the slowest CPE + join_cycles.
 * Code that never calls athread_emu_account (hand-written or real code) is modelled as
 * DMA and waits only.
 *
 * No pairing: the compute above assumes ideal dual issue (every P0 instruction paired with a
 * P1 one where the counts allow). The other end of that band, the same code if no two
 * instructions paired, is kept apart and never changes the figures above: each CPE sums the
 * extra cycles its work would take unpaired (unpaired_extra_cycles: for p0/p1/either,
 * p0 + p1 + either - max(p0, p1, ceil((p0 + p1 + either) / 2)); the generated code reports
 * each region's region_unpaired_cycles - region_cycles of target_sw/WorkCount.h), and the
 * kernel's no-pairing time is spawn_cycles + max over CPEs of (its cycles + its extra cycles)
 * + join_cycles. That is an upper bound of a replay without pairing as far as DMA goes: it
 * keeps every DMA wait as it was (a slower CPE could hide more of its DMA behind its compute,
 * and would load the shared channel at other moments, which is not replayed). It does not
 * carry one CPE's extra cycles to another: where a CPE waits for another (athread_syn,
 * register communication, a broadcast issued by another CPE), the other's extra cycles before
 * that point would delay it too, so with such waits it can fall below a full replay (CPEs in
 * step with equal work, as the generated kernels mostly are, reach each barrier with about
 * equal extra cycles). */

/** Work of the calling CPE since its last report; athread_emu_account adds
 *  max(p0, p1, ceil((p0 + p1 + either) / 2)) + slow_cycles cycles. p0: instructions of the
 *  floating-point/vector pipeline; p1: load/store/branch pipeline; either: integer ops that
 *  may issue on either pipeline (hand-written kernels report these); slow_cycles: cycles
 *  added as they are: the generated code reports there each straight-line region's cycles,
 *  already bounded per region at generation time (issue rate, floating-point dependency
 *  chains, slow operations: target_sw/WorkCount.h, region_cycles), so that pipeline slack of
 *  one region is never filled by another; flops: floating-point operations (an FMA counts 2,
 *  a floatv4 FMA 8); ldm_accesses and direct_accesses are only summed into the statistics;
 *  unpaired_extra_cycles: cycles the work in slow_cycles would take more if no P0/P1
 *  instructions paired (the generated code reports region_unpaired_cycles - region_cycles of
 *  each region; code that leaves it 0 is taken as pairing nothing beyond p0/p1/either); only
 *  summed into the no-pairing figures. */
typedef struct {
    long long p0, p1, either, slow_cycles, flops, ldm_accesses, direct_accesses;
    long long unpaired_extra_cycles;
} athread_emu_work;
/** Adds *w to the calling CPE's modelled work and resets *w to zero (CPE side only). */
void athread_emu_account(athread_emu_work *w);
/** Called right after `while (reply != n);`: the CPE's modelled clock advances to the
 *  completion of the last request counted on that reply word (CPE side only). */
void athread_emu_wait_reply(volatile int *reply);

/** Kinds of trace spans. DMA spans are the times the CPE's DMA engine is busy (setup, data
 *  or latency of at least one request); overlapping requests make one span. */
typedef enum {
    ATHREAD_EMU_SPAN_COMPUTE,
    ATHREAD_EMU_SPAN_DMA,
    ATHREAD_EMU_SPAN_WAIT,   /**< blocked in athread_emu_wait_reply or the final drain */
    ATHREAD_EMU_SPAN_SYNC,   /**< blocked in athread_syn */
    ATHREAD_EMU_SPAN_REGCOMM /**< blocked in a register-communication get or put, or (SW26010-Pro)
                                in an RMA wait */
} athread_emu_span_kind;

/** One span of one CPE in one kernel; cycles count from that kernel's athread_spawn (the
 *  CPEs start at its spawn_cycles). Adjacent or overlapping spans of the same CPE and kind
 *  are merged. */
typedef struct {
    int kernel; /**< index of the kernel's record (athread_emu_stats_get) */
    int cpe;
    int kind; /**< athread_emu_span_kind */
    long long start_cycle, end_cycle;
} athread_emu_span;

/** Most spans kept; later spans are counted in athread_emu_trace_dropped and dropped. */
#define ATHREAD_EMU_TRACE_MAX_SPANS (1 << 20)

/** Tracing on (1) or off (0, the default). While it is on every joined kernel appends its
 *  spans; while it is off only the last kernel's spans are kept (each join replaces them). */
void athread_emu_set_trace(int on);
/** Number of spans kept, and the spans (valid until the next join or reset). */
int athread_emu_trace_count(void);
const athread_emu_span *athread_emu_trace_spans(void);
/** Spans not kept because of ATHREAD_EMU_TRACE_MAX_SPANS. */
long long athread_emu_trace_dropped(void);
/** Drops all spans. */
void athread_emu_trace_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* ATHREAD_EMU_H */
