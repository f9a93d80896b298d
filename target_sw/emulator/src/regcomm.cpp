/** \file
 * Register communication in the emulator: simd_putr / simd_putc / simd_getr / simd_getc
 * (include/simd.h calls athread_emu_regcomm_put / athread_emu_regcomm_get).
 *
 * Semantics (dxhisboy/shenwei-doc data-en.yaml, entries simd_putr / simd_putc / simd_getr /
 * simd_getc; qzwlecr/stencil-computation include/simd.h, SW5 block): a put sends one vector
 * register to a CPE of the same mesh row (putr) or column (putc). The low 4 bits of the
 * destination are read: bit 3 clear, bits 2..0 are the receiver's column (putr) or row
 * (putc); bit 3 set, a broadcast to the other CPEs of the row / column (bits 2..0 ignored).
 * A get reads the oldest value of this CPE's row (getr) or column (getc) receive buffer,
 * waiting until there is one; a put waits while a receiver's buffer is full (for a
 * broadcast: while any receiver's is). Buffer depth: Machine::regcomm.buffer_entries [U].
 * Errors (the hardware would misbehave or hang): a destination outside 0..15 (only the low
 * 4 bits are read: such a value is a bug), a point-to-point put to this CPE itself or past
 * the mesh, a put to a CPE that has returned, a value received as another vector type than
 * it was sent, values still in a buffer when the kernel returns (athread_join), and any
 * use on a machine without register communication (SW26010-Pro: RMA instead).
 * Every buffer is guarded by Run::sync_mu; blocking goes through block()/unblock() of
 * sync.cpp, which detects deadlocks together with athread_syn.
 */
#include <cinttypes>
#include <cstring>

#include "emu_internal.h"

namespace athread_emu {

namespace {

const char *type_name(int type) {
    switch (type) {
    case 1:
        return "floatv4";
    case 2:
        return "doublev4";
    case 3:
        return "intv8";
    }
    return "unknown vector type";
}

int type_bytes(int type) {
    return type == 1 ? 16 : 32;
}

const char *put_name(int bus) {
    return bus == 0 ? "simd_putr" : "simd_putc";
}
const char *get_name(int bus) {
    return bus == 0 ? "simd_getr" : "simd_getc";
}
const char *bus_name(int bus) {
    return bus == 0 ? "row" : "column";
}

Cpe &regcomm_cpe(const char *api, int bus, int type) {
    Cpe &c = current_cpe(api);
    const sw::Machine &m = *c.run->machine;
    if (!m.regcomm.available) {
        fatal("kernel '%s' CPE %d: %s: %s has no register communication (it has RMA "
              "instead)",
              c.run->kernel.c_str(), c.id, api, m.name.c_str());
    }
    if (bus != 0 && bus != 1)
        fatal("kernel '%s' CPE %d: %s on bus %d", c.run->kernel.c_str(), c.id, api, bus);
    if (type < 1 || type > 3) {
        fatal("kernel '%s' CPE %d: %s of vector type code %d", c.run->kernel.c_str(), c.id, api,
              type);
    }
    return c;
}

bool has_room(Run &run, const std::vector<int> &targets, int bus, int *full) {
    const size_t depth = static_cast<size_t>(run.machine->regcomm.buffer_entries);
    for (int t : targets) {
        if (run.cpes[t]->fifo[bus].values.size() >= depth) {
            *full = t;
            return false;
        }
    }
    return true;
}

thread_local RegValue t_received;

} // namespace

void check_unreceived(Run &run) {
    for (auto &c : run.cpes) {
        for (int bus = 0; bus < 2; bus++) {
            const std::deque<RegValue> &q = c->fifo[bus].values;
            if (q.empty())
                continue;
            fatal("kernel '%s' CPE %d: %zu value(s) sent to it by %s were never received (%s "
                  "receive buffer not empty when the kernel returned; the first from CPE %d, "
                  "a %s): every put needs a matching %s",
                  run.kernel.c_str(), c->id, q.size(), put_name(bus), bus_name(bus),
                  q.front().sender, type_name(q.front().type), get_name(bus));
        }
    }
}

} // namespace athread_emu

using namespace athread_emu;

extern "C" void athread_emu_regcomm_put(int bus, int type, const void *value, int dest) {
    Cpe &c = regcomm_cpe(bus == 0 ? "simd_putr" : "simd_putc", bus, type);
    Run &run = *c.run;
    const sw::Machine &m = *run.machine;
    const char *api = put_name(bus);
    const char *k = run.kernel.c_str();
    const int line = bus == 0 ? m.cpe_mesh_cols : m.cpe_mesh_rows; // CPEs on this bus
    if (dest < 0 || dest > 15) {
        fatal("kernel '%s' CPE %d: %s to destination %d: only its low 4 bits are read (0..%d: "
              "the %s of the receiver, 8: broadcast)",
              k, c.id, api, dest, line - 1, bus == 0 ? "column" : "row");
    }
    const bool broadcast = (dest & 8) != 0;
    const int self = bus == 0 ? c.col : c.row;
    std::vector<int> targets;
    auto id_at = [&](int pos) {
        return bus == 0 ? c.row * m.cpe_mesh_cols + pos : pos * m.cpe_mesh_cols + c.col;
    };
    if (broadcast) {
        for (int p = 0; p < line; p++)
            if (p != self)
                targets.push_back(id_at(p));
    } else {
        if (dest >= line) {
            fatal("kernel '%s' CPE %d: %s to %s %d: the mesh has %d", k, c.id, api,
                  bus == 0 ? "column" : "row", dest, line);
        }
        if (dest == self) {
            fatal("kernel '%s' CPE %d: %s to itself (destination %d is this CPE's own %s)", k, c.id,
                  api, dest, bus == 0 ? "column" : "row");
        }
        targets.push_back(id_at(dest));
    }

    RegValue v;
    std::memset(v.bytes, 0, sizeof v.bytes);
    std::memcpy(v.bytes, value, static_cast<size_t>(type_bytes(type)));
    v.type = type;
    v.sender = c.id;
    v.put_index = c.reg_puts;
    RegPutLog log;
    log.bus = bus;
    {
        std::unique_lock<std::mutex> lock(run.sync_mu);
        for (;;) {
            for (int t : targets) {
                if (run.cpes[t]->finished) {
                    fatal("kernel '%s' CPE %d: %s to CPE %d, which has returned from the kernel: "
                          "the value can never be received",
                          k, c.id, api, t);
                }
            }
            int full = -1;
            if (has_room(run, targets, bus, &full))
                break;
            WaitState w;
            w.kind = WaitState::RegPut;
            w.bus = bus;
            w.target = full;
            w.broadcast = broadcast;
            block(lock, c, w);
        }
        for (int t : targets) {
            Cpe &r = *run.cpes[t];
            RegFifo &f = r.fifo[bus];
            log.targets.emplace_back(t, f.pushed);
            f.pushed++;
            f.values.push_back(v);
            if (r.wait.kind == WaitState::RegGet && r.wait.bus == bus)
                unblock(r);
        }
        run.sync_cv.notify_all();
    }
    c.reg_puts++;
    c.stats.regcomm_puts++;
    TimingEvent e;
    e.kind = TimingEvent::RegPut;
    e.value = static_cast<int64_t>(c.reg_put_log.size());
    c.reg_put_log.push_back(std::move(log));
    c.timing_log.push_back(e);
}

extern "C" const void *athread_emu_regcomm_get(int bus, int type) {
    Cpe &c = regcomm_cpe(bus == 0 ? "simd_getr" : "simd_getc", bus, type);
    Run &run = *c.run;
    {
        std::unique_lock<std::mutex> lock(run.sync_mu);
        RegFifo &f = c.fifo[bus];
        while (f.values.empty()) {
            WaitState w;
            w.kind = WaitState::RegGet;
            w.bus = bus;
            block(lock, c, w);
        }
        t_received = f.values.front();
        f.values.pop_front();
        if (t_received.type != type) {
            fatal("kernel '%s' CPE %d: %s into a %s received a %s (sent by CPE %d with %s): "
                  "send and receive the same vector type",
                  run.kernel.c_str(), c.id, get_name(bus), type_name(type),
                  type_name(t_received.type), t_received.sender, put_name(bus));
        }
        // Room in this buffer: let every put waiting on this bus try again.
        for (auto &p : run.cpes)
            if (p->wait.kind == WaitState::RegPut && p->wait.bus == bus && p->wait.target == c.id)
                unblock(*p);
        run.sync_cv.notify_all();
    }
    c.stats.regcomm_gets++;
    TimingEvent e;
    e.kind = TimingEvent::RegGet;
    e.barrier = bus;
    e.value = t_received.sender;
    e.blocks = t_received.put_index;
    c.timing_log.push_back(e);
    return t_received.bytes;
}
