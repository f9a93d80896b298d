/** \file
 * athread_syn and athread_get_id in the emulator.
 *
 * athread_syn(ARRAY_SCOPE, mask) is a barrier over all CPEs of the core group,
 * ROW_SCOPE / COL_SCOPE over the CPEs of the caller's mesh row / column
 * (row = id / mesh_cols, column = id % mesh_cols: id >> 3 and id & 7 on SW26010).
 * Only full masks are supported (all rows/columns taking part).
 * A barrier that can never complete (every CPE still running is waiting in some
 * barrier, the others have returned) would hang the real machine: the emulator reports
 * it as an error instead of hanging.
 */
#include "emu_internal.h"
#include "slave.h"

namespace athread_emu {

namespace {

const char *scope_name(scope s) {
    switch (s) {
    case ROW_SCOPE: return "ROW_SCOPE";
    case COL_SCOPE: return "COL_SCOPE";
    case ARRAY_SCOPE: return "ARRAY_SCOPE";
    }
    return "unknown scope";
}

/** Called with run.sync_mu held: nobody can make progress any more. */
void check_deadlock(Run &run, const Cpe &c, const char *event) {
    int n = static_cast<int>(run.cpes.size());
    if (run.blocked > 0 && run.blocked + run.finished == n) {
        fatal("kernel '%s': deadlock in athread_syn after CPE %d %s: %d CPEs wait in a "
              "barrier that can never complete, %d CPEs have returned from the kernel "
              "(some CPEs skip an athread_syn or use another scope)",
              run.kernel.c_str(), c.id, event, run.blocked, run.finished);
    }
}

}  // namespace

void cpe_finished(Cpe &c) {
    Run &run = *c.run;
    std::lock_guard<std::mutex> lock(run.sync_mu);
    run.finished++;
    check_deadlock(run, c, "returned from the kernel");
}

}  // namespace athread_emu

using namespace athread_emu;

extern "C" int athread_syn(scope scp, int mask) {
    Cpe &c = current_cpe("athread_syn");
    Run &run = *c.run;
    const sw::Machine &m = *run.machine;
    Barrier *b = nullptr;
    int full = 0;
    switch (scp) {
    case ROW_SCOPE: b = &run.rows[c.row]; full = (1 << m.cpe_mesh_cols) - 1; break;
    case COL_SCOPE: b = &run.cols[c.col]; full = (1 << m.cpe_mesh_rows) - 1; break;
    case ARRAY_SCOPE: b = &run.array; full = 0xffff; break;
    default:
        fatal("kernel '%s' CPE %d: athread_syn with unknown scope %d", run.kernel.c_str(),
              c.id, static_cast<int>(scp));
    }
    if ((mask & full) != full) {
        fatal("kernel '%s' CPE %d: athread_syn(%s, %#x): partial masks are not supported by "
              "the emulator (use %#x)", run.kernel.c_str(), c.id, scope_name(scp),
              static_cast<unsigned>(mask), static_cast<unsigned>(full));
    }
    std::unique_lock<std::mutex> lock(run.sync_mu);
    unsigned long gen = b->generation;
    log_sync(c, scp == ARRAY_SCOPE ? 0 : (scp == ROW_SCOPE ? 1 + c.row : 1 + m.cpe_mesh_rows + c.col),
             gen);
    if (++b->arrived == b->parties) {
        // Last one in: release the others (they stop counting as blocked right now).
        b->arrived = 0;
        b->generation++;
        run.blocked -= b->parties - 1;
        run.sync_cv.notify_all();
        return 0;
    }
    run.blocked++;
    check_deadlock(run, c, "entered athread_syn");
    run.sync_cv.wait(lock, [&] { return b->generation != gen; });
    return 0;
}

extern "C" int athread_get_id(int core) {
    Cpe &c = current_cpe("athread_get_id");
    if (core == -1) return c.id;
    // Every spawn uses all CPEs in order, so physical core i runs thread i.
    if (core >= 0 && core < static_cast<int>(c.run->cpes.size())) return core;
    return -1;
}
