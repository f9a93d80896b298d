/** \file
 * The SW26010-Pro's CRTS runtime in the emulator (include/sw26010-pro/crts.h): the per-CPE ids,
 * DMA with reply counters (through dma.cpp's request, in PE_MODE or as a column broadcast),
 * RMA between the LDMs of a core group, waits on reply words, CRTS_ssync_* and the cycle
 * counters.
 *
 * RMA semantics (crts.h; shared/sunway/SW26010-Pro.md, "RMA"): a request of CPE i moves `len`
 * bytes between LDMs at once: a get from CPE r_tid's r_addr to i's l_addr, a put from i's l_addr
 * to r_tid's r_addr, a row / column broadcast from i's l_addr to r_addr of every CPE of the mesh
 * rows / columns set in the mask (i included in the *_LOCAL_RECEIVE_DATA modes, excluded in the
 * others). An LDM address names the same place on every CPE (the same ldm_malloc arena offset,
 * __thread_local offset or depth below the kernel's entry frame), so r_addr and r_reply are
 * mapped to each remote CPE's copy. Then 1 is added to the issuer's l_reply and to the remote
 * r_reply of every remote CPE (the one read from, for a get). Checked: the machine has RMA,
 * every address is LDM of its CPE (inside one LDM object), 4-byte aligned, len > 0 and a
 * multiple of 4, r_tid a CPE of the core group.
 *
 * A wait (CRTS_dma_wait_value / CRTS_rma_wait_value) returns when the word has reached the
 * count; while it has not, the CPE thread blocks (counted by the deadlock check of sync.cpp)
 * and is woken by every RMA that counts on one of its words. The timing model (timing.cpp)
 * replays a wait as waiting for the last own DMA request counted on the word and, if an RMA
 * brought the word to its count, for that RMA's completion.
 */
#include <cinttypes>
#include <cstring>

#include "emu_internal.h"
#include "slave.h"

// The Pro's per-CPE variables (slave.h of include/sw26010-pro), one copy per CPE thread.
extern "C" {
__thread char _CGN, _ROW, _COL, _PEN;
}

namespace athread_emu {

namespace {

// The Pro's constants (crts.h / slave.h of include/sw26010-pro); this file is built against
// SW26010's slave.h, whose enums differ.
constexpr int kProPeMode = 0, kProColMode = 2;
constexpr int kProDmaPut = 0, kProDmaGet = 1;
constexpr int kRmaSingle = 0, kRmaRow = 1, kRmaCol = 2, kRmaRowLocal = 5, kRmaColLocal = 6;
constexpr int kRmaPut = 0, kRmaGet = 1;

/** The CPE calling `api`; an error unless the machine is one with the CRTS API (RMA). */
Cpe &pro_cpe(const char *api) {
    Cpe &c = current_cpe(api);
    if (!c.run->machine->crts_runtime) {
        fatal("kernel '%s' CPE %d: %s on %s: the CRTS DMA / RMA API is the SW26010-Pro's (its "
              "headers are include/sw26010-pro; choose the machine with "
              "athread_emu_set_machine(\"sw26010-pro\"))",
              c.run->kernel.c_str(), c.id, api, c.run->machine->name.c_str());
    }
    return c;
}

/** An RMA address of c: LDM of c (inside one LDM object), 4-byte aligned. */
void check_rma_local(Cpe &c, const char *api, const char *what, const void *p, int64_t len) {
    const char *k = c.run->kernel.c_str();
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    if (a % 4 != 0)
        fatal("kernel '%s' CPE %d: %s: %s %p is not 4-byte aligned (RMA addresses must be)", k,
              c.id, api, what, p);
    std::lock_guard<std::mutex> lock(c.ldm_mu);
    check_ldm_side(c, a, len, api, what);
}

/** With run.sync_mu held: adds 1 to reply word `word` of CPE t, counted for RMA request
 *  `index` of `issuer`, and wakes t if it waits for one of its words. */
void count_rma(Cpe &t, unsigned char *word, int issuer, int64_t index) {
    __atomic_fetch_add(reinterpret_cast<int *>(word), 1, __ATOMIC_SEQ_CST);
    t.rma_counts[reinterpret_cast<uintptr_t>(word)].emplace_back(issuer, index);
    if (t.wait.kind == WaitState::Reply)
        unblock(t);
}

const char *rma_name(int mode, int opcode) {
    switch (mode) {
    case kRmaSingle:
        return opcode == kRmaGet ? "CRTS_rma_iget" : "CRTS_rma_iput";
    case kRmaRow:
        return "CRTS_rma_row_ibcast_other";
    case kRmaCol:
        return "CRTS_rma_col_ibcast_other";
    case kRmaRowLocal:
        return "CRTS_rma_row_ibcast";
    case kRmaColLocal:
        return "CRTS_rma_col_ibcast";
    }
    return "RMA";
}

} // namespace

void set_cpe_ids(const Cpe &c) {
    _CGN = 0;
    _ROW = static_cast<char>(c.row);
    _COL = static_cast<char>(c.col);
    _PEN = static_cast<char>(c.id);
}

} // namespace athread_emu

using namespace athread_emu;

extern "C" int athread_emu_crts_dma(int mode, int op, void *mem, void *ldm, int len, void *reply,
                                    int mask, int stride, int bsize) {
    const bool put = op == kProDmaPut;
    const char *api = mode == kProColMode
                          ? (put ? "CRTS DMA put in COL_MODE" : "CRTS_dma_col_ibcast")
                          : (put ? "CRTS_dma_iput" : "CRTS_dma_iget");
    Cpe &c = pro_cpe(api);
    const char *k = c.run->kernel.c_str();
    if (op != kProDmaPut && op != kProDmaGet)
        fatal("kernel '%s' CPE %d: DMA operation %d is not supported by the emulator (DMA_GET and "
              "DMA_PUT only)",
              k, c.id, op);
    if (mode != kProPeMode && mode != kProColMode)
        fatal("kernel '%s' CPE %d: %s in DMA mode %d: the Pro has PE_MODE and COL_MODE only", k,
              c.id, api, mode);
    DmaCast cast;
    if (mode == kProColMode) {
        if (put)
            fatal("kernel '%s' CPE %d: a DMA put in COL_MODE: puts have no broadcast mode", k,
                  c.id);
        cast.kind = DmaCast::Cols;
        cast.mask = static_cast<unsigned>(mask);
    }
    return dma_request(c, api, put, cast, mem, ldm, len, reply, stride, bsize);
}

extern "C" int athread_emu_crts_rma(int r_tid, void *l_addr, void *r_addr, int len, void *l_reply,
                                    void *r_reply, int mode, int opcode, int mask) {
    const char *api = rma_name(mode, opcode);
    Cpe &c = pro_cpe(api);
    Run &run = *c.run;
    const char *k = run.kernel.c_str();
    const bool single = mode == kRmaSingle;
    if (!single && mode != kRmaRow && mode != kRmaCol && mode != kRmaRowLocal &&
        mode != kRmaColLocal)
        fatal("kernel '%s' CPE %d: RMA mode %d is not supported by the emulator", k, c.id, mode);
    if (opcode != kRmaPut && (opcode != kRmaGet || !single))
        fatal("kernel '%s' CPE %d: %s with RMA opcode %d (puts, and gets from one CPE, only)", k,
              c.id, api, opcode);
    if (len <= 0 || len % 4 != 0)
        fatal("kernel '%s' CPE %d: %s of %d bytes: the length must be a positive multiple of 4", k,
              c.id, api, len);
    const int n = static_cast<int>(run.cpes.size());
    if (single && (r_tid < 0 || r_tid >= n))
        fatal("kernel '%s' CPE %d: %s to CPE %d: there are CPEs 0..%d", k, c.id, api, r_tid, n - 1);
    check_rma_local(c, api, "local LDM address", l_addr, len);
    // The remote address and reply word are read as places every CPE has.
    LdmPosition remote, remote_reply{};
    if (!ldm_position(c, reinterpret_cast<uintptr_t>(r_addr), &remote)) {
        fatal("kernel '%s' CPE %d: %s: remote LDM address %p is no LDM address (in %s)", k, c.id,
              api, r_addr, describe_ldm(c, reinterpret_cast<uintptr_t>(r_addr)).c_str());
    }
    if (reinterpret_cast<uintptr_t>(r_addr) % 4 != 0)
        fatal("kernel '%s' CPE %d: %s: remote LDM address %p is not 4-byte aligned", k, c.id, api,
              r_addr);
    if (r_reply && !ldm_position(c, reinterpret_cast<uintptr_t>(r_reply), &remote_reply))
        fatal("kernel '%s' CPE %d: %s: remote reply word %p is no LDM address", k, c.id, api,
              r_reply);
    if (l_reply)
        check_rma_local(c, api, "local reply word", l_reply, sizeof(int));

    // The remote CPEs.
    std::vector<Cpe *> remotes;
    if (single) {
        remotes.push_back(run.cpes[static_cast<size_t>(r_tid)].get());
    } else {
        const bool rows = mode == kRmaRow || mode == kRmaRowLocal;
        const bool self = mode == kRmaRowLocal || mode == kRmaColLocal;
        for (Cpe *t : cpes_of_lines(c, api, rows, static_cast<unsigned>(mask)))
            if (self || t != &c)
                remotes.push_back(t);
    }
    const bool get = opcode == kRmaGet;
    std::vector<unsigned char *> data, words;
    for (Cpe *t : remotes) {
        data.push_back(receiver_address(c, *t, api, "remote LDM address", remote, len));
        words.push_back(
            r_reply ? receiver_address(c, *t, api, "remote reply word", remote_reply, sizeof(int))
                    : nullptr);
    }
    auto *mine = static_cast<unsigned char *>(l_addr);
    for (unsigned char *d : data) {
        if (get)
            std::memmove(mine, d, static_cast<size_t>(len));
        else if (d != mine)
            std::memmove(d, mine, static_cast<size_t>(len));
    }
    const int64_t index = c.rma_requests++;
    log_rma(c, len);
    std::lock_guard<std::mutex> lock(run.sync_mu);
    for (size_t i = 0; i < remotes.size(); i++)
        if (words[i])
            count_rma(*remotes[i], words[i], c.id, index);
    if (l_reply)
        count_rma(c, static_cast<unsigned char *>(l_reply), c.id, index);
    run.sync_cv.notify_all();
    return 0;
}

extern "C" int athread_emu_crts_wait(volatile void *reply, long value) {
    Cpe &c = pro_cpe("CRTS_dma_wait_value / CRTS_rma_wait_value");
    Run &run = *c.run;
    auto *word = static_cast<const volatile int *>(reply);
    {
        std::lock_guard<std::mutex> lock(c.ldm_mu);
        check_ldm_side(c, reinterpret_cast<uintptr_t>(reply), sizeof(int), "CRTS_*_wait_value",
                       "reply word");
    }
    std::unique_lock<std::mutex> lock(run.sync_mu);
    while (*word < value) {
        WaitState w;
        w.kind = WaitState::Reply;
        w.reply = word;
        w.value = value;
        block(lock, c, w);
    }
    // Timing: the own DMA requests counted on the word, and the RMA that brought it to the
    // count (the value-th from the end of its counts, if the word was not reset since).
    TimingEvent e;
    e.kind = TimingEvent::Wait;
    e.reply = reinterpret_cast<uintptr_t>(reply);
    c.timing_log.push_back(e);
    auto it = c.rma_counts.find(reinterpret_cast<uintptr_t>(reply));
    if (it != c.rma_counts.end()) {
        const int64_t past = static_cast<int64_t>(*word) - value; // counts after the one needed
        const auto &v = it->second;
        if (past >= 0 && past < static_cast<int64_t>(v.size())) {
            const auto &src = v[v.size() - 1 - static_cast<size_t>(past)];
            log_rma_wait(c, src.first, src.second);
        }
    }
    return 0;
}

extern "C" int athread_emu_crts_ssync(int s) {
    pro_cpe("CRTS_ssync_*");
    return athread_syn(static_cast<scope>(s), 0xffff);
}

extern "C" int CRTS_init(void) {
    return 0;
}

extern "C" unsigned long athread_emu_crts_time_cycle(void) {
    // The MPE's counter: the modelled time of the kernels joined so far at the MPE's clock.
    const sw::Machine *m = sw::machine_by_name(athread_emu_machine_name());
    double seconds = 0;
    for (int i = 0; i < athread_emu_stats_count(); i++)
        seconds += athread_emu_stats_get(i)->modelled_seconds;
    return static_cast<unsigned long>(seconds * (m ? m->mpe_clock_ghz : 0) * 1e9);
}

/** The CPE's counter: its reported compute cycles so far (the timing model replays DMA and
 *  waits at athread_join, so a running clock with them is not known while the kernel runs). */
extern "C" unsigned long athread_emu_crts_stime_cycle(void) {
    Cpe &c = pro_cpe("CRTS_stime_cycle");
    unsigned long cycles = 0;
    for (const TimingEvent &e : c.timing_log)
        if (e.kind == TimingEvent::Compute)
            cycles += static_cast<unsigned long>(e.value);
    return cycles;
}
