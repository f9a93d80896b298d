/** \file
 * athread_syn and athread_get_id in the emulator.
 *
 * athread_syn(ARRAY_SCOPE, mask) is a barrier over all CPEs of the core group,
 * ROW_SCOPE / COL_SCOPE over the CPEs of the caller's mesh row / column
 * (row = id / mesh_cols, column = id % mesh_cols: id >> 3 and id & 7 on SW26010).
 * Only full masks are supported (all rows/columns taking part).
 * A barrier that can never complete (every CPE still running is waiting in some
 * barrier, the others have returned) would hang the real machine: the emulator reports
 * it as an error instead of hanging. The same check covers register communication
 * (regcomm.cpp): a CPE blocked in simd_getr/getc (empty buffer) or simd_putr/putc (full
 * buffer) counts as blocked, and the message names every blocked CPE and what it waits for.
 */
#include <cstdio>
#include <string>

#include "emu_internal.h"
#include "slave.h"

namespace athread_emu {

namespace {

const char *scope_name(scope s) {
    switch (s) {
    case ROW_SCOPE:
        return "ROW_SCOPE";
    case COL_SCOPE:
        return "COL_SCOPE";
    case ARRAY_SCOPE:
        return "ARRAY_SCOPE";
    }
    return "unknown scope";
}

/** What c waits for, for the deadlock message. */
std::string describe_wait(const Run &run, const Cpe &c) {
    const WaitState &w = c.wait;
    char buf[200];
    const char bus = w.bus == 0 ? 'r' : 'c';
    const char *bus_name = w.bus == 0 ? "row" : "column";
    switch (w.kind) {
    case WaitState::Syn:
        std::snprintf(buf, sizeof buf, "CPE %d in athread_syn(%s)", c.id,
                      scope_name(static_cast<scope>(w.scope)));
        break;
    case WaitState::RegGet:
        std::snprintf(buf, sizeof buf, "CPE %d in simd_get%c (its %s receive buffer is empty)",
                      c.id, bus, bus_name);
        break;
    case WaitState::RegPut:
        std::snprintf(buf, sizeof buf,
                      "CPE %d in simd_put%c%s (the %s receive buffer of CPE %d "
                      "is full%s)",
                      c.id, bus, w.broadcast ? " broadcast" : "", bus_name, w.target,
                      w.target >= 0 && run.cpes[w.target]->finished ? ", and it has returned" : "");
        break;
    case WaitState::Reply:
        std::snprintf(buf, sizeof buf,
                      "CPE %d in CRTS_*_wait_value (its reply word %p is %d, it waits for %ld)",
                      c.id, const_cast<const int *>(w.reply), *w.reply, w.value);
        break;
    case WaitState::None:
        std::snprintf(buf, sizeof buf, "CPE %d running", c.id);
        break;
    }
    return buf;
}

/** Called with run.sync_mu held: nobody can make progress any more. The one place where
 *  every kind of blocking (athread_syn, simd_getr/getc, simd_putr/putc on a full buffer) is
 *  checked together. */
void check_deadlock(Run &run, const Cpe &c, const char *event) {
    int n = static_cast<int>(run.cpes.size());
    if (run.blocked > 0 && run.blocked + run.finished == n) {
        bool syn = false, reg = false, reply = false;
        std::string who;
        for (const auto &p : run.cpes) {
            if (p->wait.kind == WaitState::None)
                continue;
            (p->wait.kind == WaitState::Syn ? syn
                                            : (p->wait.kind == WaitState::Reply ? reply : reg)) =
                true;
            if (!who.empty())
                who += "; ";
            who += describe_wait(run, *p);
        }
        std::string what;
        for (auto [on, name] : {std::pair<bool, const char *>{syn, "athread_syn"},
                                {reg, "register communication"},
                                {reply, "reply-word waits"}})
            if (on)
                what += (what.empty() ? "" : " and ") + std::string(name);
        fatal("kernel '%s': deadlock in %s after CPE %d %s: every CPE still running waits for "
              "another: %s; %d CPEs have returned from the kernel (some CPEs skip an athread_syn "
              "or use another scope, receive before the value they wait for is sent, or wait "
              "for more requests than were counted on a reply word)",
              run.kernel.c_str(), what.c_str(), c.id, event, who.c_str(), run.finished);
    }
}

} // namespace

void cpe_finished(Cpe &c) {
    Run &run = *c.run;
    std::lock_guard<std::mutex> lock(run.sync_mu);
    run.finished++;
    c.finished = true;
    check_deadlock(run, c, "returned from the kernel");
}

void block(std::unique_lock<std::mutex> &lock, Cpe &c, const WaitState &w) {
    Run &run = *c.run;
    c.wait = w;
    run.blocked++;
    const char *event = w.kind == WaitState::Syn     ? "entered athread_syn"
                        : w.kind == WaitState::Reply ? "began waiting for a reply word"
                        : w.kind == WaitState::RegGet
                            ? (w.bus ? "entered simd_getc" : "entered simd_getr")
                            : (w.bus ? "entered simd_putc" : "entered simd_putr");
    check_deadlock(run, c, event);
    run.sync_cv.wait(lock, [&] { return c.wait.kind == WaitState::None; });
}

void unblock(Cpe &c) {
    if (c.wait.kind == WaitState::None)
        return;
    c.wait = WaitState{};
    c.run->blocked--;
}

} // namespace athread_emu

using namespace athread_emu;

extern "C" int athread_syn(scope scp, int mask) {
    Cpe &c = current_cpe("athread_syn");
    Run &run = *c.run;
    const sw::Machine &m = *run.machine;
    Barrier *b = nullptr;
    int full = 0;
    switch (scp) {
    case ROW_SCOPE:
        b = &run.rows[c.row];
        full = (1 << m.cpe_mesh_cols) - 1;
        break;
    case COL_SCOPE:
        b = &run.cols[c.col];
        full = (1 << m.cpe_mesh_rows) - 1;
        break;
    case ARRAY_SCOPE:
        b = &run.array;
        full = 0xffff;
        break;
    default:
        fatal("kernel '%s' CPE %d: athread_syn with unknown scope %d", run.kernel.c_str(), c.id,
              static_cast<int>(scp));
    }
    if ((mask & full) != full) {
        fatal("kernel '%s' CPE %d: athread_syn(%s, %#x): partial masks are not supported by "
              "the emulator (use %#x)",
              run.kernel.c_str(), c.id, scope_name(scp), static_cast<unsigned>(mask),
              static_cast<unsigned>(full));
    }
    std::unique_lock<std::mutex> lock(run.sync_mu);
    unsigned long gen = b->generation;
    log_sync(c,
             scp == ARRAY_SCOPE ? 0 : (scp == ROW_SCOPE ? 1 + c.row : 1 + m.cpe_mesh_rows + c.col),
             gen);
    if (++b->arrived == b->parties) {
        // Last one in: release the others (they stop counting as blocked right now).
        b->arrived = 0;
        b->generation++;
        for (auto &p : run.cpes)
            if (p->wait.kind == WaitState::Syn && p->wait.barrier == b)
                unblock(*p);
        run.sync_cv.notify_all();
        return 0;
    }
    WaitState w;
    w.kind = WaitState::Syn;
    w.scope = static_cast<int>(scp);
    w.barrier = b;
    block(lock, c, w);
    return 0;
}

extern "C" int athread_get_id(int core) {
    Cpe &c = current_cpe("athread_get_id");
    if (core == -1)
        return c.id;
    // Every spawn uses all CPEs in order, so physical core i runs thread i.
    if (core >= 0 && core < static_cast<int>(c.run->cpes.size()))
        return core;
    return -1;
}
