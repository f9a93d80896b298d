/** \file
 * Internal declarations of the athread emulator shared by its .cpp files: the state of a
 * spawned kernel (Run), of each emulated CPE (Cpe), the LDM arena, the module's
 * __thread_local layout and the diagnostics helpers. Not part of the public API.
 */
#ifndef ATHREAD_EMU_INTERNAL_H
#define ATHREAD_EMU_INTERNAL_H

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pthread.h>

#include "Machine.h"
#include "athread_emu.h"

namespace athread_emu {

// ---------------------------------------------------------------- diagnostics.cpp
/** Prints "athread emulator: error: <message>" on stderr and ends the process (134). */
[[noreturn]] void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Prints "athread emulator: warning: <message>" on stderr. */
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// ---------------------------------------------------------------- tls_local.cpp
/** One __thread_local variable: a symbol of the module's symbol table in .tdata_local. */
struct TlsLocalSymbol {
    std::string name;
    uintptr_t offset = 0; ///< offset inside the module's TLS block
    int64_t bytes = 0;    ///< the symbol's size (st_size)
};

/** Where the __thread_local variables (section ".tdata_local") of one loaded module are. */
struct TlsLocalInfo {
    bool known = false;   ///< false: module or section headers could not be read
    std::string module;   ///< file of the module holding the kernel
    int64_t bytes = 0;    ///< size of .tdata_local (0 if the module has none)
    uintptr_t offset = 0; ///< offset of .tdata_local inside the module's TLS block
    size_t tls_modid = 0; ///< the module's TLS module id (0: no TLS)
    /** The variables of .tdata_local, by offset, from the module's symbol table (.symtab,
     *  else .dynsym). Empty if the module is stripped: then a DMA is checked against the
     *  extent of the whole section only. */
    std::vector<TlsLocalSymbol> symbols;
};
/** Layout of __thread_local data in the module containing `code` (cached per module). */
TlsLocalInfo find_tls_local(const void *code);
/** The calling thread's TLS block of module `modid`, or 0 if not allocated. */
uintptr_t thread_tls_block(size_t modid);

// ---------------------------------------------------------------- ldm.cpp
/** One CPE's LDM: a heap of machine.ldm_bytes with first-fit, aligned blocks. */
class LdmArena {
public:
    LdmArena(int64_t bytes, int64_t alignment);
    ~LdmArena();
    LdmArena(const LdmArena &) = delete;
    LdmArena &operator=(const LdmArena &) = delete;

    /** Places a block of `size` bytes; nullptr if no free gap is large enough. */
    void *allocate(size_t size);
    /** Size the live block starting at p was allocated with, or -1 if p is no such block. */
    int64_t block_size(const void *p) const;
    void release(const void *p);

    bool contains(uintptr_t a) const { return a >= base() && a < base() + bytes_; }
    /** The live block containing address a: its start and requested size; false if none. */
    bool block_containing(uintptr_t a, uintptr_t *start, int64_t *size) const;
    uintptr_t base() const { return reinterpret_cast<uintptr_t>(mem_); }
    int64_t live_bytes() const { return live_bytes_; }
    size_t live_blocks() const { return blocks_.size(); }

private:
    unsigned char *mem_;
    int64_t bytes_, alignment_;
    std::map<uintptr_t, int64_t> blocks_; ///< offset -> requested size
    int64_t live_bytes_ = 0;
};

// ---------------------------------------------------------------- runtime.cpp
struct Run;

/** Main-memory range registered by the host for bounds checks. */
struct Buffer {
    std::string name;
    uintptr_t lo, hi;
};

/** One emulated CPE during one spawned kernel. Touched only by its own thread while the
 *  kernel runs, and by the host thread after athread_join has joined it. */
/** One entry of a CPE's timing log (timing.cpp). */
struct TimingEvent {
    enum Kind : uint8_t { Compute, Dma, Wait, Sync, RegPut, RegGet, Rma, RmaWait } kind;
    bool is_put = false;
    int32_t barrier = 0; ///< Sync: 0 array, 1 + row, 1 + rows + column; RegGet: bus
    /** Compute: cycles; Dma, Rma: line bytes / bytes; Sync: barrier generation; RegPut: index
     *  in Cpe::reg_put_log; RegGet, RmaWait: the sending / issuing CPE */
    int64_t value = 0;
    /** Dma: blocks; RegGet: index of the matching put among the sender's puts; RmaWait: index
     *  of the RMA request among the issuer's */
    int64_t blocks = 0;
    uintptr_t reply = 0; ///< Dma, Wait: address of the reply word (0: none)
};

struct Barrier;

/** What a blocked CPE waits for (guarded by Run::sync_mu; deadlock detection, sync.cpp). */
struct WaitState {
    enum Kind { None, Syn, RegGet, RegPut, Reply } kind = None;
    int bus = 0;                         ///< RegGet / RegPut: 0 row, 1 column
    int target = -1;                     ///< RegPut: a receiver whose buffer is full
    bool broadcast = false;              ///< RegPut
    int scope = 0;                       ///< Syn: the athread_syn scope
    const Barrier *barrier = nullptr;    ///< Syn
    const volatile int *reply = nullptr; ///< Reply: the word waited for
    long value = 0;                      ///< Reply: the count waited for
};

/** One value in a register-communication receive buffer (regcomm.cpp). */
struct RegValue {
    alignas(32) unsigned char bytes[32];
    int type; ///< 1 floatv4, 2 doublev4, 3 intv8
    int sender;
    int64_t put_index; ///< the sender's put count before this put
};

/** A CPE's receive buffer of one bus (guarded by Run::sync_mu). */
struct RegFifo {
    std::deque<RegValue> values;
    int64_t pushed = 0; ///< values ever put into it
};

/** One put of a CPE for the timing replay: the receivers and the position of the value in
 *  each receiver's buffer (its pushed count before the put). */
struct RegPutLog {
    int bus = 0;
    std::vector<std::pair<int, int64_t>> targets;
};

struct Cpe {
    Cpe(Run *r, int i);
    Run *run;
    int id, row, col;
    LdmArena ldm;
    athread_emu_cpe_stats stats{};
    pthread_t thread{};
    uintptr_t stack_lo = 0, stack_hi = 0; ///< this thread's stack: local variables are LDM
    /** Frame address of the emulator's call into the kernel function: the kernel's local
     *  variables (its frames and those of what it calls) lie below it. On the real machine
     *  the stack is in LDM and has ldm_stack_reserve bytes (Machine.h): a DMA to the stack
     *  must land in [stack_entry - ldm_stack_reserve, stack_entry). */
    uintptr_t stack_entry = 0;
    uintptr_t tls_lo = 0, tls_hi = 0;    ///< this thread's copy of the __thread_local data
    std::vector<TimingEvent> timing_log; ///< replayed by simulate_timing at join
    /** Guards ldm (the arena's block map): taken by ldm_malloc / ldm_free on this CPE and by
     *  another CPE's broadcast DMA checking this CPE's LDM side. */
    std::mutex ldm_mu;
    // Register communication and deadlock detection, guarded by Run::sync_mu:
    WaitState wait;
    bool finished = false; ///< the kernel function has returned
    RegFifo fifo[2];       ///< receive buffers: 0 row, 1 column
    // Own thread only:
    int64_t reg_puts = 0;
    std::vector<RegPutLog> reg_put_log;
    int64_t rma_requests = 0; ///< RMA requests issued (own thread only)
    /** Guarded by Run::sync_mu: for every reply word of this CPE an RMA counted on, the
     *  requests that counted, in order (issuer, index among the issuer's RMA requests). */
    std::map<uintptr_t, std::vector<std::pair<int, int64_t>>> rma_counts;
};

/** A reusable barrier of athread_syn (guarded by Run::sync_mu). */
struct Barrier {
    int parties = 0, arrived = 0;
    unsigned long generation = 0;
};

/** One spawned kernel, from athread_spawn to athread_join. */
struct Run {
    const sw::Machine *machine = nullptr;
    std::string kernel;
    void (*fn)(void *) = nullptr;
    void *arg = nullptr;
    TlsLocalInfo tls;
    std::vector<Buffer> buffers;
    athread_emu_dma_observer observer = nullptr;
    void *observer_user = nullptr;
    std::vector<std::unique_ptr<Cpe>> cpes;

    // athread_syn state (sync.cpp)
    std::mutex sync_mu;
    std::condition_variable sync_cv;
    Barrier array;
    std::vector<Barrier> rows, cols;
    int blocked = 0;  ///< CPEs waiting in a barrier that has not completed
    int finished = 0; ///< CPEs whose kernel function has returned
};

/** The CPE running on this thread, or nullptr on the host thread. */
Cpe *current_cpe_or_null();
/** The CPE running on this thread; `api` called elsewhere is an error. */
Cpe &current_cpe(const char *api);

/** Bytes of LDM in use on c: ldm_malloc live bytes + __thread_local bytes. */

int64_t ldm_in_use(const Cpe &c);

// ---------------------------------------------------------------- ldm.cpp
/** [lo, lo + len) must lie inside one LDM object of c: a live ldm_malloc block, one
 *  __thread_local variable, or the stack region of the kernel (Cpe::stack_entry); otherwise
 *  an error naming the kernel, the CPE, `api`, `what`, the range and the object. */
void check_ldm_side(Cpe &c, uintptr_t lo, int64_t len, const char *api, const char *what);
/** What LDM object of c address a is in, for messages: "the LDM block [..) of
 *  ldm_malloc(n)", "the __thread_local variable 'x' [..) (n bytes)", "the CPE stack", or "no LDM
 *  object of this CPE". */
std::string describe_ldm(Cpe &c, uintptr_t a);
/** Whether [lo, hi) overlaps the LDM of c (arena, stack, __thread_local data). */
bool overlaps_ldm(Cpe &c, uintptr_t lo, uintptr_t hi);
/** Locates c's __thread_local data (called on c's own thread when its kernel starts, so that
 *  other CPEs can map LDM addresses into c's copy). */
void locate_own_tls(Cpe &c);
/** An LDM address as a place every CPE has: the same offset in the ldm_malloc arena, in the
 *  __thread_local data, or below the kernel's entry frame. */
struct LdmPosition {
    enum Region { Arena, Tls, Stack } region;
    uintptr_t offset;
};
/** Where LDM address a of c is; false if a is not in c's LDM. */
bool ldm_position(Cpe &c, uintptr_t a, LdmPosition *p);
/** The address of position p on CPE t; 0 if t's region is not known (not started, or its
 *  __thread_local data not located). */
uintptr_t ldm_address(Cpe &t, const LdmPosition &p);

// ---------------------------------------------------------------- dma.cpp
/** The CPEs a get broadcasts to: none (the issuer's own LDM), or every CPE of the mesh rows
 *  (SW26010's BCAST_MODE) or mesh columns (the Pro's COL_MODE) whose bit is set in mask. */
struct DmaCast {
    enum Kind { None, Rows, Cols } kind = None;
    unsigned mask = 0;
};
/** One DMA request of c (`api` names it in messages): checks both sides, copies at once with
 *  the block/gap semantics, counts it, logs it for the timing model and adds 1 to *reply. */
int dma_request(Cpe &c, const char *api, bool is_put, DmaCast cast, void *main_mem, void *ldm,
                int len, void *reply, int stride, int bsize);
/** The CPEs of the mesh rows (\p rows) or columns whose bit is set in \p mask, which must be
 *  non-zero and within the mesh (else an error naming c and \p api): the receivers of a
 *  broadcast get (BCAST_MODE, COL_MODE) or of an RMA broadcast. */
std::vector<Cpe *> cpes_of_lines(Cpe &c, const char *api, bool rows, unsigned mask);
/** The LDM address on CPE t of position p of the issuer's LDM, checked to lie inside one of
 *  t's LDM objects for \p len bytes (an error naming the issuer, \p api and \p what). */
unsigned char *receiver_address(Cpe &issuer, Cpe &t, const char *api, const char *what,
                                const LdmPosition &p, int64_t len);

// ---------------------------------------------------------------- crts.cpp
/** Sets the Pro's per-CPE variables (_PEN, _ROW, _COL, _CGN) on c's own thread. */
void set_cpe_ids(const Cpe &c);

// ---------------------------------------------------------------- timing.cpp
/** Appends a DMA request / a barrier arrival to c's timing log. */
void log_dma(Cpe &c, bool is_put, int64_t line_bytes, int64_t blocks, const void *reply);
void log_sync(Cpe &c, int barrier, unsigned long generation);
/** Appends an RMA request of `bytes` bytes of c / a wait for RMA request `index` of CPE
 *  `issuer` (it brought a reply word of c to the count c waited for). */
void log_rma(Cpe &c, int64_t bytes);
void log_rma_wait(Cpe &c, int issuer, int64_t index);
/** Replays the logs of run's CPEs (athread_join): fills the timing fields of r (record
 *  number `index`) and the trace. */
void simulate_timing(Run &run, athread_emu_kernel_stats &r, int index);

// ---------------------------------------------------------------- sync.cpp
/** Called on a CPE thread when its kernel function has returned (deadlock detection). */
void cpe_finished(Cpe &c);
/** With run.sync_mu held by `lock`: c is blocked on w. Checks for a deadlock (every CPE
 *  still running blocked), then waits until another CPE calls unblock(c). */
void block(std::unique_lock<std::mutex> &lock, Cpe &c, const WaitState &w);
/** With run.sync_mu held: c (if blocked) may run again; the caller notifies sync_cv. */
void unblock(Cpe &c);

// ---------------------------------------------------------------- regcomm.cpp
/** athread_join: values left in receive buffers are an error. */
void check_unreceived(Run &run);

} // namespace athread_emu

#endif
