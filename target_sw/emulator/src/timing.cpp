/** \file
 * The SW26010 timing model of the athread emulator (see "Timing model" in athread_emu.h).
 *
 * While a kernel runs, each CPE thread appends to its own log (Cpe::timing_log, no lock):
 * compute work (athread_emu_account), DMA requests (dma.cpp), waits on a reply word
 * (athread_emu_wait_reply) and barrier arrivals (sync.cpp). At athread_join,
 * simulate_timing replays the 64 logs together:
 *
 *  - each CPE runs its log ahead as far as it can: compute adds cycles to its clock, a
 *    request is queued with its issue time, a wait whose request has not completed yet
 *    (or a barrier not complete yet) blocks it;
 *  - the DMA side is a fluid (processor-sharing) simulation in global time T: each CPE's
 *    engine does the setup of its requests in order (get_block_cycles or put_block_cycles
 *    per block: gets and puts have their own per-block cost), then moves
 *    their line bytes in order through the channel shared by all CPEs moving data (equal
 *    share of the channel time, a line byte costs 1/get_bytes_per_cycle or
 *    1/put_bytes_per_cycle of it, capped per CPE), then the request completes after the
 *    fixed latency; T advances from one start or end of a data transfer to the next;
 *  - a request completing (its completion time becomes known) unblocks the CPE waiting
 *    for it at max(its clock, the completion);
 *  - register communication: a put takes regcomm.put_cycles once its values have room (a
 *    value that is entry n of a receiver's buffer waits for that receiver's get n - depth);
 *    a get waits until its matching put's time + regcomm.latency_cycles, then takes
 *    regcomm.get_cycles. The matching (which put each get received) is the one the emulated
 *    run produced, logged on both sides, so the replay is deterministic for a given run; a
 *    CPE whose needed time is not known yet waits (WaitReg) and replays that event later.
 * CPE clocks never fall behind T when they issue (a blocked CPE resumes at a completion
 * time >= T), so every request is queued before T reaches its issue time.
 */
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "emu_internal.h"

namespace athread_emu {

namespace {

struct TraceState {
    bool on = false;
    std::vector<athread_emu_span> spans;
    long long dropped = 0;
};

TraceState &trace_state() {
    static TraceState *t = new TraceState;
    return *t;
}

/** One DMA request during the replay. */
struct Req {
    bool put;
    double line_bytes;
    double setup_start, setup_end;
    double data_start = -1; ///< -1: not started
    double remaining;
    double done = -1; ///< completion; -1: not known yet
};

struct CpeSim {
    enum State { Running, WaitDma, WaitSync, WaitReg, Finished } state = Running;
    size_t pc = 0;
    double t = 0;          ///< this CPE's clock
    double setup_free = 0; ///< end of the last setup of its engine
    std::vector<Req> reqs;
    size_t data_head = 0; ///< first request whose data has not finished
    double data_free = 0; ///< end of the last finished data transfer
    std::unordered_map<uintptr_t, size_t> last_on_reply;
    size_t waiting_for = 0; ///< request index while WaitDma
    double blocked_since = 0;
    double compute = 0, dma_wait = 0, sync_wait = 0, reg_wait = 0;
    double end = 0;
    // Register communication: the time of each put (in put order), of each get per bus.
    std::vector<double> put_t;
    std::vector<double> get_t[2];
    // RMA (SW26010-Pro): the completion time of each request, in issue order.
    std::vector<double> rma_done;
    // WaitReg: the put (dep_cpe's put dep_index, dep_bus -1), get (dep_cpe's get dep_index on
    // dep_bus >= 0) or RMA request (dep_bus kRmaBus) whose time is not known yet.
    int dep_cpe = -1, dep_bus = -1;
    size_t dep_index = 0;
    // trace: spans of this CPE, index of the last span of each kind (-1: none)
    std::vector<athread_emu_span> spans;
    long last_span[5] = {-1, -1, -1, -1, -1};
};

/** CpeSim::dep_bus of a wait for an RMA request. */
constexpr int kRmaBus = -2;

struct BarrierSim {
    int arrived = 0;
    double latest = 0;
    std::vector<int> cpes;
};

class Simulator {
public:
    Simulator(Run &run, int index, bool tracing)
        : run_(run), m_(*run.machine), dt_(run.machine->dma_timing), index_(index),
          tracing_(tracing), cpes_(run.cpes.size()) {}

    void run() {
        for (;;) {
            bool progress = true;
            while (progress) {
                progress = false;
                for (size_t i = 0; i < cpes_.size(); i++) {
                    if (cpes_[i].state == CpeSim::WaitDma) {
                        Req &q = cpes_[i].reqs[cpes_[i].waiting_for];
                        if (q.done < 0)
                            continue;
                        resume_after(i, q.done, cpes_[i].dma_wait, ATHREAD_EMU_SPAN_WAIT);
                    }
                    if (cpes_[i].state == CpeSim::WaitReg) {
                        // Its event is replayed again once the time it needs is known.
                        const CpeSim &c = cpes_[i];
                        const CpeSim &d = cpes_[c.dep_cpe];
                        const size_t known = c.dep_bus == kRmaBus ? d.rma_done.size()
                                             : c.dep_bus < 0      ? d.put_t.size()
                                                                  : d.get_t[c.dep_bus].size();
                        if (known <= c.dep_index)
                            continue;
                        cpes_[i].state = CpeSim::Running;
                    }
                    if (cpes_[i].state == CpeSim::Running) {
                        advance(i);
                        progress = true;
                    }
                }
                progress |= release_barriers();
            }
            if (!step_channel())
                break; // nothing moves any more
        }
        for (size_t i = 0; i < cpes_.size(); i++) {
            CpeSim &c = cpes_[i];
            double end = c.t;
            for (const Req &q : c.reqs)
                end = std::max(end, q.done);
            if (end > c.t) { // requests never waited: the CPE ends when they complete
                span(c, ATHREAD_EMU_SPAN_WAIT, c.t, end);
                c.dma_wait += end - c.t;
            }
            c.end = end;
        }
    }

    void fill(athread_emu_kernel_stats &r) {
        double worst = 0, worst_unpaired = 0;
        for (size_t i = 0; i < cpes_.size(); i++) {
            const CpeSim &c = cpes_[i];
            athread_emu_cpe_stats &s = r.cpe[i];
            s.cycles = llround(c.end);
            s.compute_cycles = llround(c.compute);
            s.dma_wait_cycles = llround(c.dma_wait);
            s.sync_wait_cycles = llround(c.sync_wait);
            s.regcomm_wait_cycles = llround(c.reg_wait);
            worst = std::max(worst, c.end);
            // No pairing: this CPE's end plus its extra cycles, every DMA wait kept (an upper
            // bound; athread_emu.h). s.unpaired_extra_cycles was summed by athread_emu_account.
            worst_unpaired =
                std::max(worst_unpaired, c.end + static_cast<double>(s.unpaired_extra_cycles));
        }
        r.cycles_max = llround(worst);
        r.spawn_cycles = llround(dt_.spawn_cycles);
        r.join_cycles = llround(dt_.join_cycles);
        r.modelled_seconds = (dt_.spawn_cycles + worst + dt_.join_cycles) / (m_.clock_ghz * 1e9);
        r.cycles_max_unpaired = llround(worst_unpaired);
        r.modelled_unpaired_seconds =
            (dt_.spawn_cycles + worst_unpaired + dt_.join_cycles) / (m_.clock_ghz * 1e9);
    }

    void emit_trace() {
        TraceState &ts = trace_state();
        if (!ts.on)
            ts.spans.clear(), ts.dropped = 0;
        ts.dropped += dropped_;
        for (CpeSim &c : cpes_) {
            for (const athread_emu_span &s : c.spans) {
                if (ts.spans.size() >= static_cast<size_t>(ATHREAD_EMU_TRACE_MAX_SPANS)) {
                    ts.dropped++;
                    continue;
                }
                ts.spans.push_back(s);
            }
        }
    }

private:
    /** Runs CPE i's log until it blocks or ends. */
    void advance(size_t i) {
        CpeSim &c = cpes_[i];
        const std::vector<TimingEvent> &log = run_.cpes[i]->timing_log;
        while (c.pc < log.size()) {
            const TimingEvent &e = log[c.pc++];
            switch (e.kind) {
            case TimingEvent::Compute:
                span(c, ATHREAD_EMU_SPAN_COMPUTE, c.t, c.t + e.value);
                c.t += e.value;
                c.compute += e.value;
                break;
            case TimingEvent::Dma: {
                Req q;
                q.put = e.is_put;
                q.line_bytes = static_cast<double>(e.value);
                q.remaining = q.line_bytes;
                q.setup_start = std::max(c.t, c.setup_free);
                q.setup_end =
                    q.setup_start + (q.put ? dt_.put_block_cycles : dt_.get_block_cycles) *
                                        static_cast<double>(e.blocks);
                c.setup_free = q.setup_end;
                if (e.reply)
                    c.last_on_reply[e.reply] = c.reqs.size();
                c.reqs.push_back(q);
                break;
            }
            case TimingEvent::Wait: {
                auto it = c.last_on_reply.find(e.reply);
                if (it == c.last_on_reply.end())
                    break; // nothing counted on it
                Req &q = c.reqs[it->second];
                if (q.done >= 0) {
                    wait_until(c, q.done, c.dma_wait, ATHREAD_EMU_SPAN_WAIT);
                } else {
                    c.state = CpeSim::WaitDma;
                    c.waiting_for = it->second;
                    return;
                }
                break;
            }
            case TimingEvent::RegPut: {
                // Room: the value is entry n of a receiver's buffer; with `depth` entries it
                // goes in once that receiver's get n - depth has taken a value out.
                const RegPutLog &p = run_.cpes[i]->reg_put_log[static_cast<size_t>(e.value)];
                const int64_t depth = m_.regcomm.buffer_entries;
                double ready = c.t;
                for (const auto &target : p.targets) {
                    if (target.second < depth)
                        continue;
                    const size_t need = static_cast<size_t>(target.second - depth);
                    const std::vector<double> &g = cpes_[target.first].get_t[p.bus];
                    if (g.size() <= need) {
                        block_reg(c, target.first, p.bus, need);
                        return;
                    }
                    ready = std::max(ready, g[need]);
                }
                wait_until(c, ready, c.reg_wait, ATHREAD_EMU_SPAN_REGCOMM);
                span(c, ATHREAD_EMU_SPAN_COMPUTE, c.t, c.t + m_.regcomm.put_cycles);
                c.t += m_.regcomm.put_cycles;
                c.put_t.push_back(c.t);
                break;
            }
            case TimingEvent::RegGet: {
                const CpeSim &sender = cpes_[static_cast<size_t>(e.value)];
                const size_t k = static_cast<size_t>(e.blocks);
                if (sender.put_t.size() <= k) {
                    block_reg(c, static_cast<int>(e.value), -1, k);
                    return;
                }
                wait_until(c, sender.put_t[k] + m_.regcomm.latency_cycles, c.reg_wait,
                           ATHREAD_EMU_SPAN_REGCOMM);
                span(c, ATHREAD_EMU_SPAN_COMPUTE, c.t, c.t + m_.regcomm.get_cycles);
                c.t += m_.regcomm.get_cycles;
                c.get_t[e.barrier].push_back(c.t);
                break;
            }
            case TimingEvent::Rma: {
                // The issuer spends issue_cycles; the bytes land latency_cycles later, at
                // bytes_per_cycle (Machine.h, Rma: all [U]).
                const sw::Rma &r = m_.rma;
                span(c, ATHREAD_EMU_SPAN_COMPUTE, c.t, c.t + r.issue_cycles);
                c.t += r.issue_cycles;
                c.rma_done.push_back(c.t + r.latency_cycles +
                                     static_cast<double>(e.value) / r.bytes_per_cycle);
                break;
            }
            case TimingEvent::RmaWait: {
                const CpeSim &issuer = cpes_[static_cast<size_t>(e.value)];
                const size_t k = static_cast<size_t>(e.blocks);
                if (issuer.rma_done.size() <= k) {
                    block_reg(c, static_cast<int>(e.value), kRmaBus, k);
                    return;
                }
                wait_until(c, issuer.rma_done[k], c.reg_wait, ATHREAD_EMU_SPAN_REGCOMM);
                break;
            }
            case TimingEvent::Sync: {
                BarrierSim &b = barriers_[{e.barrier, e.value}];
                b.arrived++;
                b.latest = std::max(b.latest, c.t);
                b.cpes.push_back(static_cast<int>(i));
                c.state = CpeSim::WaitSync;
                return;
            }
            }
        }
        c.state = CpeSim::Finished;
    }

    /** c's current event needs a time not known yet: it is replayed again once known. */
    void block_reg(CpeSim &c, int cpe, int bus, size_t index) {
        c.pc--;
        c.state = CpeSim::WaitReg;
        c.dep_cpe = cpe;
        c.dep_bus = bus;
        c.dep_index = index;
    }

    void wait_until(CpeSim &c, double until, double &counter, int kind) {
        if (until > c.t) {
            span(c, kind, c.t, until);
            counter += until - c.t;
            c.t = until;
        }
    }

    void resume_after(size_t i, double until, double &counter, int kind) {
        CpeSim &c = cpes_[i];
        wait_until(c, until, counter, kind);
        c.state = CpeSim::Running;
    }

    int parties(int barrier) const {
        if (barrier == 0)
            return static_cast<int>(cpes_.size());
        return barrier <= m_.cpe_mesh_rows ? m_.cpe_mesh_cols : m_.cpe_mesh_rows;
    }

    bool release_barriers() {
        bool any = false;
        for (auto it = barriers_.begin(); it != barriers_.end();) {
            BarrierSim &b = it->second;
            if (b.arrived < parties(it->first.first)) {
                ++it;
                continue;
            }
            for (int i : b.cpes)
                resume_after(i, b.latest, cpes_[i].sync_wait, ATHREAD_EMU_SPAN_SYNC);
            it = barriers_.erase(it);
            any = true;
        }
        return any;
    }

    /** Time at which CPE c's next data transfer may start (its head request), or -1. */
    double head_ready(const CpeSim &c) const {
        if (c.data_head >= c.reqs.size())
            return -1;
        const Req &q = c.reqs[c.data_head];
        return std::max(q.setup_end, c.data_free);
    }

    /** Advances the channel to its next event; false when no request is left anywhere. */
    bool step_channel() {
        // Start the transfers that are ready at T; find the next start time.
        double next_start = INFINITY;
        bool pending = false;
        active_.clear();
        for (size_t i = 0; i < cpes_.size(); i++) {
            CpeSim &c = cpes_[i];
            double ready = head_ready(c);
            if (ready < 0)
                continue;
            pending = true;
            Req &q = c.reqs[c.data_head];
            if (q.data_start < 0 && ready <= now_)
                q.data_start = now_;
            if (q.data_start >= 0)
                active_.push_back(i);
            else
                next_start = std::min(next_start, ready);
        }
        if (!pending)
            return false;
        if (active_.empty()) {
            now_ = next_start;
            return true;
        }
        // Rates: equal shares of the channel time, capped per CPE (water-filling).
        rates_.assign(active_.size(), -1.0);
        double fraction = 1.0;
        size_t open = active_.size();
        for (bool changed = true; changed && open > 0;) {
            changed = false;
            double share = fraction / static_cast<double>(open);
            for (size_t k = 0; k < active_.size(); k++) {
                if (rates_[k] >= 0)
                    continue;
                const Req &q = head(k);
                double full = q.put ? dt_.put_bytes_per_cycle : dt_.get_bytes_per_cycle;
                if (share * full > dt_.cpe_cap_bytes_per_cycle) {
                    rates_[k] = dt_.cpe_cap_bytes_per_cycle;
                    fraction -= dt_.cpe_cap_bytes_per_cycle / full;
                    open--;
                    changed = true;
                }
            }
        }
        double share = open > 0 ? fraction / static_cast<double>(open) : 0;
        double dt = next_start - now_;
        for (size_t k = 0; k < active_.size(); k++) {
            const Req &q = head(k);
            if (rates_[k] < 0)
                rates_[k] = share * (q.put ? dt_.put_bytes_per_cycle : dt_.get_bytes_per_cycle);
            dt = std::min(dt, rates_[k] > 0 ? q.remaining / rates_[k] : INFINITY);
        }
        if (!std::isfinite(dt))
            return false; // no rate (cap 0): nothing can move
        now_ += dt;
        for (size_t k = 0; k < active_.size(); k++) {
            CpeSim &c = cpes_[active_[k]];
            Req &q = c.reqs[c.data_head];
            q.remaining -= rates_[k] * dt;
            if (q.remaining <= 1e-9 * std::max(1.0, q.line_bytes)) {
                q.remaining = 0;
                q.done = now_ + (q.put ? dt_.put_latency_cycles : dt_.get_latency_cycles);
                span(c, ATHREAD_EMU_SPAN_DMA, q.setup_start, q.done);
                c.data_free = now_;
                c.data_head++;
            }
        }
        return true;
    }

    const Req &head(size_t k) const {
        const CpeSim &c = cpes_[active_[k]];
        return c.reqs[c.data_head];
    }

    void span(CpeSim &c, int kind, double start, double end) {
        if (!tracing_ || end <= start)
            return;
        size_t cap = ATHREAD_EMU_TRACE_MAX_SPANS / cpes_.size();
        long long s = llround(dt_.spawn_cycles + start), e = llround(dt_.spawn_cycles + end);
        long &last = c.last_span[kind];
        if (last >= 0) {
            athread_emu_span &p = c.spans[last];
            if (s <= p.end_cycle) { // adjacent or overlapping: merge
                p.end_cycle = std::max(p.end_cycle, e);
                return;
            }
        }
        if (c.spans.size() >= cap) {
            dropped_++;
            return;
        }
        int cpe = static_cast<int>(&c - cpes_.data());
        c.spans.push_back(athread_emu_span{index_, cpe, kind, s, e});
        last = static_cast<long>(c.spans.size()) - 1;
    }

    Run &run_;
    const sw::Machine &m_;
    const sw::DmaTiming &dt_;
    int index_;
    bool tracing_;
    std::vector<CpeSim> cpes_;
    std::map<std::pair<int, int64_t>, BarrierSim> barriers_;
    double now_ = 0;
    long long dropped_ = 0;
    std::vector<size_t> active_;
    std::vector<double> rates_;
};

} // namespace

void log_dma(Cpe &c, bool is_put, int64_t line_bytes, int64_t blocks, const void *reply) {
    TimingEvent e;
    e.kind = TimingEvent::Dma;
    e.is_put = is_put;
    e.value = line_bytes;
    e.blocks = blocks;
    e.reply = reinterpret_cast<uintptr_t>(reply);
    c.timing_log.push_back(e);
}

void log_sync(Cpe &c, int barrier, unsigned long generation) {
    TimingEvent e;
    e.kind = TimingEvent::Sync;
    e.barrier = barrier;
    e.value = static_cast<int64_t>(generation);
    c.timing_log.push_back(e);
}

void log_rma(Cpe &c, int64_t bytes) {
    TimingEvent e;
    e.kind = TimingEvent::Rma;
    e.value = bytes;
    c.timing_log.push_back(e);
}

void log_rma_wait(Cpe &c, int issuer, int64_t index) {
    TimingEvent e;
    e.kind = TimingEvent::RmaWait;
    e.value = issuer;
    e.blocks = index;
    c.timing_log.push_back(e);
}

void simulate_timing(Run &run, athread_emu_kernel_stats &r, int index) {
    // The trace is always filled (cheap next to the emulation) so that the last kernel's
    // spans are there even with tracing off.
    Simulator sim(run, index, true);
    sim.run();
    sim.fill(r);
    sim.emit_trace();
    for (auto &c : run.cpes) {
        c->timing_log.clear();
        c->timing_log.shrink_to_fit();
        c->reg_put_log.clear();
        c->reg_put_log.shrink_to_fit();
        c->rma_counts.clear();
    }
}

} // namespace athread_emu

using namespace athread_emu;

extern "C" void athread_emu_account(athread_emu_work *w) {
    Cpe &c = current_cpe("athread_emu_account");
    if (!w)
        return;
    long long dual = (w->p0 + w->p1 + w->either + 1) / 2;
    long long issue = std::max({w->p0, w->p1, dual});
    long long cycles = issue + w->slow_cycles;
    athread_emu_cpe_stats &s = c.stats;
    // No pairing (athread_emu.h): kept apart from the modelled cycles.
    s.unpaired_extra_cycles += (w->p0 + w->p1 + w->either - issue) + w->unpaired_extra_cycles;
    s.flops += w->flops;
    s.ldm_accesses += w->ldm_accesses;
    s.direct_accesses += w->direct_accesses;
    if (cycles > 0) {
        std::vector<TimingEvent> &log = c.timing_log;
        if (!log.empty() && log.back().kind == TimingEvent::Compute) {
            log.back().value += cycles; // consecutive reports make one compute event
        } else {
            TimingEvent e;
            e.kind = TimingEvent::Compute;
            e.value = cycles;
            log.push_back(e);
        }
    }
    *w = athread_emu_work{0, 0, 0, 0, 0, 0, 0, 0};
}

extern "C" void athread_emu_wait_reply(volatile int *reply) {
    Cpe &c = current_cpe("athread_emu_wait_reply");
    TimingEvent e;
    e.kind = TimingEvent::Wait;
    e.reply = reinterpret_cast<uintptr_t>(reply);
    c.timing_log.push_back(e);
}

extern "C" void athread_emu_set_trace(int on) {
    trace_state().on = on != 0;
}

extern "C" int athread_emu_trace_count(void) {
    return static_cast<int>(trace_state().spans.size());
}

extern "C" const athread_emu_span *athread_emu_trace_spans(void) {
    return trace_state().spans.empty() ? nullptr : trace_state().spans.data();
}

extern "C" long long athread_emu_trace_dropped(void) {
    return trace_state().dropped;
}

extern "C" void athread_emu_trace_reset(void) {
    trace_state().spans.clear();
    trace_state().dropped = 0;
}
