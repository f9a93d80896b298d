/** \file
 * Moving DMA waits to the first use of their buffer.
 */
#include "target_sw/DelayDmaWaits.h"

#include "target_sw/SunwayIR.h"

#include <map>
#include <vector>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

struct Pending {
    Stmt wait;
    std::string buffer;
    bool is_put;
};

/** Whether \p s touches \p buffer in a way that needs the transfer finished. */
class Touches : public IRVisitor {
public:
    Touches(const std::string &buffer, bool is_put) : buffer(buffer), is_put(is_put) {}
    bool found = false;

private:
    using IRVisitor::visit;
    const std::string &buffer;
    bool is_put;
    void visit(const Load *op) override {
        if (op->name == buffer && !is_put)
            found = true;
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        if (op->name == buffer)
            found = true;
        IRVisitor::visit(op);
    }
    void visit(const Free *op) override {
        if (op->name == buffer)
            found = true;
    }
    void visit(const Call *op) override {
        // Another transfer into or out of the same buffer.
        if (std::optional<ir::DmaRequest> r = ir::as_dma_request(op)) {
            if (r->ldm_buffer == buffer)
                found = true;
        }
        IRVisitor::visit(op);
    }
};

bool touches(const Stmt &s, const Pending &p) {
    Touches t(p.buffer, p.is_put);
    s.accept(&t);
    return t.found;
}

class Delay {
public:
    explicit Delay(const std::map<int, std::pair<std::string, bool>> &sites) : sites(sites) {}

    /** \p s with the waits it issues left pending in \p pending where possible, and the
     * pending waits it needs issued before the statements that need them. */
    Stmt run(const Stmt &s, std::vector<Pending> &pending) {
        if (const Block *b = s.as<Block>()) {
            Stmt first = run(b->first, pending);
            Stmt rest = run(b->rest, pending);
            return Block::make(first, rest);
        }
        if (const Allocate *a = s.as<Allocate>()) {
            Stmt body = run(a->body, pending);
            body = flush_touching(body, pending, a->name, true);
            return Allocate::make(a->name, a->type, a->memory_type, a->extents, a->condition, body,
                                  a->new_expr, a->free_function);
        }
        if (const LetStmt *l = s.as<LetStmt>()) {
            return LetStmt::make(l->name, l->value, run(l->body, pending));
        }
        if (const ProducerConsumer *pc = s.as<ProducerConsumer>()) {
            return ProducerConsumer::make(pc->name, pc->is_producer, run(pc->body, pending));
        }
        if (const Evaluate *e = s.as<Evaluate>()) {
            const Call *c = e->value.as<Call>();
            if (std::optional<int> w = ir::as_dma_wait(c)) {
                const auto &site = sites.at(*w);
                pending.push_back({s, site.first, site.second});
                return Evaluate::make(0);
            }
        }
        // A leaf, a loop or a branch: wait first for what it touches, and keep the waits it
        // issues inside it.
        Stmt before = flush_if_touched(s, pending);
        Stmt inner = s;
        if (const For *f = s.as<For>()) {
            inner =
                For::make(f->name, f->min, f->extent, f->for_type, f->device_api, scope(f->body));
        } else if (const IfThenElse *i = s.as<IfThenElse>()) {
            inner = IfThenElse::make(i->condition, scope(i->then_case),
                                     i->else_case.defined() ? scope(i->else_case) : Stmt());
        }
        return before.defined() ? Block::make(before, inner) : inner;
    }

    /** A nested scope: waits issued there are all done before it ends. */
    Stmt scope(const Stmt &s) {
        std::vector<Pending> inner;
        Stmt body = run(s, inner);
        return append_all(body, inner);
    }

    static Stmt append_all(Stmt body, std::vector<Pending> &pending) {
        for (const Pending &p : pending)
            body = Block::make(body, p.wait);
        pending.clear();
        return body;
    }

private:
    const std::map<int, std::pair<std::string, bool>> &sites;

    /** The waits among \p pending that \p s needs, removed from \p pending. */
    static Stmt flush_if_touched(const Stmt &s, std::vector<Pending> &pending) {
        Stmt out;
        for (auto it = pending.begin(); it != pending.end();) {
            if (touches(s, *it)) {
                out = out.defined() ? Block::make(out, it->wait) : it->wait;
                it = pending.erase(it);
            } else {
                ++it;
            }
        }
        return out;
    }
    /** Waits for \p buffer appended to \p body (its allocation ends there). */
    static Stmt flush_touching(Stmt body, std::vector<Pending> &pending, const std::string &buffer,
                               bool) {
        for (auto it = pending.begin(); it != pending.end();) {
            if (it->buffer == buffer) {
                body = Block::make(body, it->wait);
                it = pending.erase(it);
            } else {
                ++it;
            }
        }
        return body;
    }
};

/** The LDM buffer and direction of each DMA site. */
class Sites : public IRVisitor {
public:
    std::map<int, std::pair<std::string, bool>> sites;

private:
    using IRVisitor::visit;
    void visit(const Call *op) override {
        if (std::optional<ir::DmaRequest> r = ir::as_dma_request(op)) {
            sites[r->site] = {r->ldm_buffer, r->is_put};
        }
        IRVisitor::visit(op);
    }
};

} // namespace

void delay_dma_waits(CpeKernel &k) {
    Sites sites;
    k.body.accept(&sites);
    Delay d(sites.sites);
    k.body = d.scope(k.body);
}

} // namespace sw
