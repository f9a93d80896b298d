/** \file
 * Issuing a tile's get that is needed only after a double-buffered loop inside that loop,
 * after its last prefetch (see the header).
 */
#include "target_sw/DeferTileGets.h"

#include "target_sw/PassSupport.h"
#include "target_sw/SunwayIR.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** A statement that only issues gets of one site into one LDM buffer. */
struct GetIssue {
    int site = -1;
    std::string ldm_buffer, main_buffer;
};

/** Whether \p s only issues gets of one site (through lets and producer/consumer marks): its
 * begin and its requests, nothing else. */
bool only_get_issue(const Stmt &s, GetIssue &g, bool &requested) {
    if (const LetStmt *l = s.as<LetStmt>())
        return only_get_issue(l->body, g, requested);
    if (const ProducerConsumer *p = s.as<ProducerConsumer>())
        return only_get_issue(p->body, g, requested);
    if (const Block *b = s.as<Block>())
        return only_get_issue(b->first, g, requested) && only_get_issue(b->rest, g, requested);
    // A loop of requests (one per row of a box whose LDM rows are padded), and a guard of
    // the whole issue (a CPE with a block of the round).
    if (const For *f = s.as<For>())
        return f->for_type == ForType::Serial && only_get_issue(f->body, g, requested);
    if (const IfThenElse *i = s.as<IfThenElse>())
        return !i->else_case.defined() && only_get_issue(i->then_case, g, requested);
    const Evaluate *e = s.as<Evaluate>();
    if (e && is_const(e->value))
        return true; // a no-op (DelayDmaWaits leaves Evaluate(0) where a wait was)
    const Call *c = e ? e->value.as<Call>() : nullptr;
    if (!c)
        return false;
    std::optional<int> site;
    if (std::optional<ir::DmaRequest> r = ir::as_dma_request(c)) {
        if (r->is_put || (!g.ldm_buffer.empty() && r->ldm_buffer != g.ldm_buffer))
            return false;
        g.ldm_buffer = r->ldm_buffer;
        g.main_buffer = r->main_buffer;
        site = r->site;
        requested = true;
    } else {
        site = ir::as_dma_begin(c);
        if (!site)
            return false;
    }
    if (g.site >= 0 && *site != g.site)
        return false;
    g.site = *site;
    return true;
}

std::optional<GetIssue> as_get_issue(const Stmt &s) {
    GetIssue g;
    bool requested = false;
    if (only_get_issue(s, g, requested) && requested)
        return g;
    return std::nullopt;
}

/** Whether a statement reads, writes, frees or transfers the LDM buffer, waits for the site,
 * or writes the main-memory buffer the get reads. */
class Touches : public IRVisitor {
public:
    explicit Touches(const GetIssue &g) : g(g) {}
    bool found = false;

private:
    using IRVisitor::visit;
    const GetIssue &g;
    void visit(const Load *op) override {
        found |= op->name == g.ldm_buffer;
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        found |= op->name == g.ldm_buffer || op->name == g.main_buffer;
        IRVisitor::visit(op);
    }
    void visit(const Free *op) override { found |= op->name == g.ldm_buffer; }
    void visit(const Allocate *op) override {
        found |= op->name == g.ldm_buffer;
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        if (std::optional<ir::DmaRequest> r = ir::as_dma_request(op)) {
            found |= r->ldm_buffer == g.ldm_buffer || r->site == g.site ||
                     (r->is_put && r->main_buffer == g.main_buffer);
        } else if (std::optional<int> w = ir::as_dma_wait(op)) {
            found |= *w == g.site;
        }
        IRVisitor::visit(op);
    }
};

bool touches(const Stmt &s, const GetIssue &g) {
    Touches t(g);
    s.accept(&t);
    return t.found;
}

/** Moves one get issue into the first double-buffered loop after it (the header's rule). */
class Placer {
public:
    Placer(const GetIssue &g, const Stmt &issue) : g(g), issue(issue) {
        VariableNames f;
        issue.accept(&f);
        uses = f.names;
    }
    enum class Status { Continue, Placed, Blocked };
    Status status = Status::Continue;

    Stmt walk(const Stmt &s) {
        if (const Block *b = s.as<Block>()) {
            Stmt first = walk(b->first);
            if (status != Status::Continue)
                return Block::make(first, b->rest);
            return Block::make(first, walk(b->rest));
        }
        if (const Allocate *a = s.as<Allocate>()) {
            if (a->name == g.ldm_buffer) {
                status = Status::Blocked;
                return s;
            }
            return Allocate::make(a->name, a->type, a->memory_type, a->extents, a->condition,
                                  walk(a->body), a->new_expr, a->free_function);
        }
        if (const LetStmt *l = s.as<LetStmt>()) {
            if (uses.count(l->name)) { // would shadow a name the issue reads
                status = Status::Blocked;
                return s;
            }
            if (touches(Evaluate::make(l->value), g)) {
                status = Status::Blocked;
                return s;
            }
            return LetStmt::make(l->name, l->value, walk(l->body));
        }
        if (const ProducerConsumer *p = s.as<ProducerConsumer>())
            return ProducerConsumer::make(p->name, p->is_producer, walk(p->body));
        if (touches(s, g)) {
            status = Status::Blocked;
            return s;
        }
        if (const For *f = s.as<For>()) {
            if (uses.count(f->name)) {
                status = Status::Blocked;
                return s;
            }
            if (std::optional<Stmt> placed = place_in(f)) {
                status = Status::Placed;
                return *placed;
            }
        }
        const ir::RequestSites r = ir::request_sites(s, false);
        issued.insert(r.gets.begin(), r.gets.end());
        return s;
    }

private:
    const GetIssue &g;
    Stmt issue;
    std::set<std::string> uses;
    std::set<int> issued; ///< get sites issued between the issue and the current statement

    /** The loop with the issue inside it, if the loop is double buffered (a prefetch at its
     * top level of a site also issued before it) with constant bounds and >= 2 iterations. */
    std::optional<Stmt> place_in(const For *f) {
        const int64_t *min = as_const_int(f->min), *extent = as_const_int(f->extent);
        if (f->for_type != ForType::Serial || !min || !extent || *extent < 2)
            return std::nullopt;
        std::vector<Stmt> body = flatten_blocks(f->body);
        int last = -1;
        bool prefetches = false;
        for (size_t i = 0; i < body.size(); i++) {
            const ir::RequestSites r = ir::request_sites(body[i], true);
            if (r.any)
                last = int(i);
            for (int site : r.gets)
                prefetches |= issued.count(site) > 0;
        }
        if (!prefetches || last < 0)
            return std::nullopt;
        const Expr at = Variable::make(Int(32), f->name) == Expr(int(*min + *extent - 2));
        body.insert(body.begin() + last + 1, IfThenElse::make(at, issue));
        return For::make(f->name, f->min, f->extent, f->for_type, f->device_api, Block::make(body));
    }
};

/** A block's statements (each processed already), with every get issue moved where the rule
 * allows. */
Stmt sequence(const std::vector<Stmt> &stmts) {
    Stmt rest;
    for (size_t j = stmts.size(); j-- > 0;) {
        const Stmt &s = stmts[j];
        if (!rest.defined()) {
            rest = s;
            continue;
        }
        if (std::optional<GetIssue> g = as_get_issue(s)) {
            Placer p(*g, s);
            Stmt moved = p.walk(rest);
            if (p.status == Placer::Status::Placed) {
                rest = moved;
                continue;
            }
        }
        rest = Block::make(s, rest);
    }
    return rest;
}

/** Whether \p s is a no-op or a request of \p site. */
bool continues_issue(const Stmt &s, int site) {
    const Evaluate *e = s.as<Evaluate>();
    if (!e)
        return false;
    if (is_const(e->value))
        return true;
    const Call *c = e->value.as<Call>();
    const std::optional<ir::DmaRequest> r = c ? ir::as_dma_request(c) : std::nullopt;
    return r && r->site == site;
}

Stmt process(const Stmt &s) {
    if (s.as<Block>()) {
        const std::vector<Stmt> flat = flatten_blocks(s);
        std::vector<Stmt> stmts;
        // A begin and the requests (and no-ops) of its site that follow it form one issue.
        for (size_t i = 0; i < flat.size(); i++) {
            const std::optional<int> site = ir::as_dma_begin(flat[i]);
            size_t j = i + 1;
            while (site && j < flat.size() && continues_issue(flat[j], *site))
                j++;
            stmts.push_back(j == i + 1 ? process(flat[i])
                                       : Block::make(std::vector<Stmt>(flat.begin() + long(i),
                                                                       flat.begin() + long(j))));
            i = j - 1;
        }
        return sequence(stmts);
    }
    if (const For *f = s.as<For>())
        return For::make(f->name, f->min, f->extent, f->for_type, f->device_api, process(f->body));
    if (const IfThenElse *i = s.as<IfThenElse>())
        return IfThenElse::make(i->condition, process(i->then_case),
                                i->else_case.defined() ? process(i->else_case) : Stmt());
    if (const LetStmt *l = s.as<LetStmt>())
        return LetStmt::make(l->name, l->value, process(l->body));
    if (const Allocate *a = s.as<Allocate>())
        return Allocate::make(a->name, a->type, a->memory_type, a->extents, a->condition,
                              process(a->body), a->new_expr, a->free_function);
    if (const ProducerConsumer *p = s.as<ProducerConsumer>())
        return ProducerConsumer::make(p->name, p->is_producer, process(p->body));
    return s;
}

} // namespace

void defer_tile_gets(CpeKernel &k) {
    k.body = process(k.body);
}

} // namespace sw
