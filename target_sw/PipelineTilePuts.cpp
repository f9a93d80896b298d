/** \file
 * A tile's put spread over the next tile's chunk loop, the output tile in two slots (see the
 * header).
 */
#include "target_sw/PipelineTilePuts.h"

#include "target_sw/Errors.h"
#include "target_sw/PassSupport.h"
#include "target_sw/PlaceLdmBuffers.h"
#include "target_sw/SunwayIR.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** The put a statement issues when it only issues one (a begin and one put request of its
 * site, or a begin and a serial loop of constant bounds around one such request, through lets
 * and producer/consumer marks, and no-ops), with the lets on the way. */
struct PutIssue {
    ir::DmaRequest request;
    std::vector<std::pair<std::string, Expr>> lets; ///< outermost first
    /** The loop of requests around it (a tile's channel planes, one request each), if any. */
    std::string loop;
    int64_t loop_min = 0, loop_extent = 1;
};

bool only_put_issue(const Stmt &s, std::optional<PutIssue> &p, int &site,
                    std::vector<std::pair<std::string, Expr>> &lets, const For *loop = nullptr) {
    if (const LetStmt *l = s.as<LetStmt>()) {
        lets.emplace_back(l->name, l->value);
        return only_put_issue(l->body, p, site, lets, loop);
    }
    if (const ProducerConsumer *pc = s.as<ProducerConsumer>())
        return only_put_issue(pc->body, p, site, lets, loop);
    if (const Block *b = s.as<Block>())
        return only_put_issue(b->first, p, site, lets, loop) &&
               only_put_issue(b->rest, p, site, lets, loop);
    if (const For *f = s.as<For>()) {
        if (loop || p || site < 0 || f->for_type != ForType::Serial || !as_const_int(f->min) ||
            !as_const_int(f->extent) || *as_const_int(f->extent) < 1)
            return false; // a loop inside a loop, after the request, or before the begin
        return only_put_issue(f->body, p, site, lets, f) && p;
    }
    const Evaluate *e = s.as<Evaluate>();
    if (e && is_const(e->value))
        return true;
    const Call *c = e ? e->value.as<Call>() : nullptr;
    if (!c)
        return false;
    std::optional<int> this_site;
    if (std::optional<ir::DmaRequest> r = ir::as_dma_request(c)) {
        if (!r->is_put || p)
            return false; // a get, or a second request
        p = PutIssue();
        p->request = *r;
        p->lets = lets;
        if (loop) {
            p->loop = loop->name;
            p->loop_min = *as_const_int(loop->min);
            p->loop_extent = *as_const_int(loop->extent);
        }
        this_site = r->site;
    } else {
        this_site = ir::as_dma_begin(c);
        if (!this_site || loop)
            return false; // (a begin inside the loop)
    }
    if (site >= 0 && *this_site != site)
        return false;
    site = *this_site;
    return true;
}

std::optional<PutIssue> as_put_issue(const Stmt &s) {
    std::optional<PutIssue> p;
    int site = -1;
    std::vector<std::pair<std::string, Expr>> lets;
    if (only_put_issue(s, p, site, lets) && p)
        return p;
    return std::nullopt;
}

/** What the pass needs from a tile loop's body: the output buffer's allocation, its put and
 * the chunk loop before it. */
struct Found {
    const Allocate *buffer = nullptr;
    Stmt issue; ///< the put's issue statement
    PutIssue put;
    const For *chunks = nullptr;
};

/** Walks a tile loop's body in program order through allocations, lets, producer/consumer
 * marks and blocks (not into loops or branches). */
class Finder {
public:
    Finder(const CpeKernel &k) : k(k) {}
    Found found;
    bool failed = false;

    void walk(const Stmt &s, std::vector<std::pair<std::string, Expr>> &lets) {
        if (failed || found.issue.defined())
            return;
        if (const Block *b = s.as<Block>()) {
            walk(b->first, lets);
            walk(b->rest, lets);
            return;
        }
        if (std::optional<PutIssue> p = as_put_issue(s)) {
            if (found.buffer && p->request.ldm_buffer == found.buffer->name) {
                found.issue = s;
                found.put = *p;
                found.put.lets.insert(found.put.lets.begin(), lets.begin(), lets.end());
            } else {
                failed = true; // a put of another buffer
            }
            return;
        }
        if (const Allocate *a = s.as<Allocate>()) {
            if (!found.buffer && is_put_source(a->name))
                found.buffer = a;
            walk(a->body, lets);
            return;
        }
        if (const LetStmt *l = s.as<LetStmt>()) {
            lets.emplace_back(l->name, l->value);
            walk(l->body, lets);
            lets.pop_back();
            return;
        }
        if (const ProducerConsumer *pc = s.as<ProducerConsumer>()) {
            walk(pc->body, lets);
            return;
        }
        if (const For *f = s.as<For>()) {
            if (!found.chunks && is_prefetching(f))
                found.chunks = f;
        }
        const ir::RequestSites r = ir::request_sites(s, false);
        issued.insert(r.gets.begin(), r.gets.end());
    }

private:
    const CpeKernel &k;
    std::set<int> issued;

    bool is_put_source(const std::string &name) const {
        bool put = false, get = false;
        for (const DmaSite &d : k.dma) {
            if (d.ldm_buffer == name)
                (d.is_put ? put : get) = true;
        }
        return put && !get;
    }
    bool is_prefetching(const For *f) const {
        const int64_t *extent = as_const_int(f->extent);
        if (f->for_type != ForType::Serial || !as_const_int(f->min) || !extent || *extent < 2)
            return false;
        const ir::RequestSites r = ir::request_sites(f->body, true);
        for (int site : r.gets) {
            if (issued.count(site))
                return true;
        }
        return false;
    }
};

/** Inlines \p lets (outermost first) into \p e. */
Expr inline_lets(Expr e, const std::vector<std::pair<std::string, Expr>> &lets) {
    for (size_t i = lets.size(); i-- > 0;)
        e = substitute(lets[i].first, lets[i].second, e);
    return simplify(e);
}

/** Rewrites the tile loop's body: the output buffer's accesses into the tile's slot, its
 * allocation, free, put and waits removed, the pieces of the previous tile's put in the chunk
 * loop. */
class Rewrite : public IRMutator {
public:
    Rewrite(const Found &f, Expr slot, Expr slot_elems, Stmt piece, int site)
        : f(f), slot(slot), slot_elems(slot_elems), piece(piece), site(site) {}

private:
    using IRMutator::visit;
    const Found &f;
    Expr slot, slot_elems;
    Stmt piece;
    int site;

    const std::string &name() const { return f.buffer->name; }
    Expr shifted(const Expr &index) {
        Expr i = mutate(index);
        if (const Ramp *r = i.as<Ramp>())
            return Ramp::make(r->base + slot * slot_elems, r->stride, r->lanes);
        return i + slot * slot_elems;
    }
    Expr visit(const Load *op) override {
        if (op->name != name())
            return IRMutator::visit(op);
        return Load::make(op->type, op->name, shifted(op->index), op->image, op->param,
                          op->predicate, ModulusRemainder());
    }
    Stmt visit(const Store *op) override {
        if (op->name != name())
            return IRMutator::visit(op);
        return Store::make(op->name, mutate(op->value), shifted(op->index), op->param,
                           op->predicate, ModulusRemainder());
    }
    Stmt visit(const Free *op) override {
        return op->name == name() ? Evaluate::make(0) : Stmt(op);
    }
    Stmt visit(const Allocate *op) override {
        return op == f.buffer ? mutate(op->body) : IRMutator::visit(op);
    }
    Stmt visit(const Evaluate *op) override {
        if (ir::as_dma_wait(op->value.as<Call>()) == site)
            return Evaluate::make(0);
        return IRMutator::visit(op);
    }

public:
    /** Without a chunk loop: the statement that replaces the put's issue (the tile's whole
     * put into its slot); with one, the issue goes (its pieces are in the loop). */
    Stmt whole_put;
    Stmt mutate(const Stmt &s) override {
        if (s.same_as(f.issue))
            return whole_put.defined() ? whole_put : Evaluate::make(0);
        return IRMutator::mutate(s);
    }
    using IRMutator::mutate;

private:
    Stmt visit(const For *op) override {
        if (op != f.chunks)
            return IRMutator::visit(op);
        std::vector<Stmt> body = flatten_blocks(mutate(op->body));
        int last = -1;
        for (size_t i = 0; i < body.size(); i++) {
            if (ir::request_sites(body[i], true).any)
                last = int(i);
        }
        body.insert(body.begin() + last + 1, piece);
        return For::make(op->name, op->min, op->extent, op->for_type, op->device_api,
                         Block::make(body));
    }
};

/** Whether the loop's body issues, at its top level, a get of a site that is also issued
 * outside the loop (the prologue of a prefetch). */
bool prefetches_next_tile(const CpeKernel &k, const For *op) {
    const std::set<int> sites = ir::request_sites(op->body, true).gets;
    if (sites.empty())
        return false;
    class Outside : public IRVisitor {
    public:
        Outside(const For *loop, const std::set<int> &sites) : loop(loop), sites(sites) {}
        bool found = false;

    private:
        using IRVisitor::visit;
        const For *loop;
        const std::set<int> &sites;
        void visit(const For *f) override {
            if (f != loop)
                IRVisitor::visit(f);
        }
        void visit(const Call *c) override {
            if (std::optional<ir::DmaRequest> r = ir::as_dma_request(c))
                found |= !r->is_put && sites.count(r->site) > 0;
            IRVisitor::visit(c);
        }
    } outside(op, sites);
    k.body.accept(&outside);
    return outside.found;
}

} // namespace

std::optional<Stmt> pipeline_loop_puts(CpeKernel &k, const Machine &m, const For *op,
                                       std::string &buffer_name) {
    const int64_t *min = as_const_int(op->min), *extent = as_const_int(op->extent);
    if (op->for_type != ForType::Serial || !min || !extent || *extent < 2)
        return std::nullopt;
    Finder finder(k);
    std::vector<std::pair<std::string, Expr>> lets;
    finder.walk(op->body, lets);
    const Found &f = finder.found;
    if (finder.failed || !f.issue.defined())
        return std::nullopt;
    // Without a chunk loop before the put, only tiles whose next stagings are prefetched
    // (a get at the loop's top level of a site also issued before the loop, DoubleBuffer's
    // tiles in turn): there the whole put, issued after the next tile's prefetch, moves
    // while the next tile computes.
    if (!f.chunks && !prefetches_next_tile(k, op))
        return std::nullopt;
    buffer_name = f.buffer->name;
    const ir::DmaRequest &put = f.put.request;
    const int site = put.site;
    // One request of the site in the kernel; constant rows, block, pitch and size.
    class Count : public IRVisitor {
    public:
        int site, n = 0;

    private:
        using IRVisitor::visit;
        void visit(const Call *c) override {
            if (std::optional<ir::DmaRequest> r = ir::as_dma_request(c))
                n += r->site == site;
            IRVisitor::visit(c);
        }
    } count;
    count.site = site;
    k.body.accept(&count);
    const int requests = count.n;
    const Expr rows_e = simplify(put.rows), block_e = simplify(put.block_elems),
               pitch_e = simplify(put.pitch_elems);
    const int64_t *rows = as_const_int(rows_e), *block = as_const_int(block_e),
                  *pitch = as_const_int(pitch_e);
    int64_t elems = 1;
    for (const Expr &e : f.buffer->extents) {
        const Expr v = simplify(e);
        const int64_t *c = as_const_int(v);
        if (!c)
            return std::nullopt;
        elems *= *c;
    }
    if (requests != 1 || !rows || !block || !pitch || *rows < 1)
        return std::nullopt;
    // Every value the put reads is bound outside the loop, or is the loop's variable (or
    // that of the put's own loop of requests).
    const Expr ldm_index = inline_lets(put.ldm_index, f.put.lets);
    const Expr main_index = inline_lets(put.main_index, f.put.lets);
    BoundNames bound;
    op->body.accept(&bound);
    VariableNames free_names;
    ldm_index.accept(&free_names);
    main_index.accept(&free_names);
    for (const std::string &n : free_names.names) {
        if (bound.names.count(n) && n != f.put.loop)
            return std::nullopt;
    }
    // Room for a second slot.
    const int64_t bytes = f.buffer->type.bytes();
    const int64_t slot_bytes = align_up(elems * bytes, m.ldm_alignment);
    if (k.ldm_peak_bytes + slot_bytes > m.ldm_data_budget()) {
        k.notes.push_back("the put of " + f.buffer->name +
                          " not spread over the next tile: no LDM for a second slot");
        return std::nullopt;
    }
    const int64_t slot_elems = slot_bytes / bytes;
    const int other = int(k.dma.size());
    k.dma.push_back(k.dma[size_t(site)]);
    const std::string how =
        f.chunks ? "in pieces over the next tile's chunks" : "waited for two tiles later";
    k.dma[size_t(site)].shape += " (" + how + ", slot 0)";
    k.dma.back().shape += " (" + how + ", slot 1)";

    const Expr p = Variable::make(Int(32), op->name);
    const Expr E = Expr(int32_t(slot_elems));
    auto slot_of = [&](const Expr &tile) { return simplify((tile - op->min) % 2); };
    // The put's units: its requests where it is a loop of them (each whole), else its rows.
    const bool looped = !f.put.loop.empty();
    // Units [u0, u0 + n) of tile `tile`'s put, from slot `which`.
    auto request_at = [&](const Expr &tile, int which, const Expr &u0, const Expr &n) {
        ir::DmaRequest r = put;
        r.site = which == 0 ? site : other;
        const Type lt = ldm_index.type(), mt = main_index.type();
        r.ldm_index = simplify(ldm_index + make_const(lt, which * slot_elems));
        r.main_index = simplify(substitute(op->name, tile, main_index));
        if (looped) {
            return For::make(f.put.loop, simplify(int32_t(f.put.loop_min) + u0), n, ForType::Serial,
                             DeviceAPI::None, ir::make_dma_request(r));
        }
        r.ldm_index = simplify(r.ldm_index + cast(lt, u0) * make_const(lt, *block));
        r.main_index = simplify(r.main_index + cast(mt, u0) * make_const(mt, *pitch));
        r.rows = n;
        // A one-block put (a tile of whole rows, merged) may carry a row pitch below its
        // block; its pieces' rows are no longer a constant 1, so their pitch is printed as
        // a stride: the block itself, never a negative stride.
        if (*rows == 1)
            r.pitch_elems = make_const(r.pitch_elems.type(), *block);
        return ir::make_dma_request(r);
    };
    const Stmt wait_slot = IfThenElse::make(
        p >= op->min + 2,
        IfThenElse::make(slot_of(p) == 0, ir::make_dma_wait(site), ir::make_dma_wait(other)));
    const int64_t R = looped ? f.put.loop_extent : *rows;
    if (!f.chunks) {
        // The tile's whole put into its slot where it was issued; waited for at the top of
        // tile p + 2 (before the slot is written again) and after the loop.
        auto whole = [&](int which) {
            return Block::make(ir::make_dma_begin(which == 0 ? site : other),
                               request_at(p, which, Expr(0), Expr(int32_t(R))));
        };
        Rewrite rewrite(f, slot_of(p), E, Stmt(), site);
        rewrite.whole_put = IfThenElse::make(slot_of(p) == 0, whole(0), whole(1));
        const Stmt body = Block::make(wait_slot, rewrite.mutate(op->body));
        const Stmt loop =
            For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        return Allocate::make(
            f.buffer->name, f.buffer->type, MemoryType::GPUShared, {Expr(int32_t(2 * slot_elems))},
            const_true(),
            Block::make(loop, Block::make(ir::make_dma_wait(site), ir::make_dma_wait(other))));
    }
    // The piece of chunk iteration kk of the previous tile's put.
    const For *L = f.chunks;
    const Expr kk = simplify(Variable::make(Int(32), L->name) - L->min);
    const int64_t C = *as_const_int(L->extent);
    // Units (rows, or requests of a loop) [ceil(k R / C), ceil((k + 1) R / C)): fewer than C
    // units go to the first iterations, and the last iteration's piece, which the next tile's
    // first chunk follows in the engine, is the smallest.
    const Expr row0 = simplify((kk * int32_t(R) + int32_t(C - 1)) / int32_t(C));
    const Expr n = simplify(((kk + 1) * int32_t(R) + int32_t(C - 1)) / int32_t(C) - row0);
    auto piece_for = [&](int which) {
        const int s = which == 0 ? site : other;
        Stmt req = request_at(p - 1, which, row0, n);
        if (R % C != 0)
            req = IfThenElse::make(n > 0, req);
        return Block::make(IfThenElse::make(kk == 0, ir::make_dma_begin(s)), req);
    };
    const Stmt piece = IfThenElse::make(
        p > op->min, IfThenElse::make(slot_of(p - 1) == 0, piece_for(0), piece_for(1)));
    Stmt body = Rewrite(f, slot_of(p), E, piece, site).mutate(op->body);
    body = Block::make(wait_slot, body);
    Stmt loop = For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
    // After the loop: the last tile's put whole, then both slots waited for.
    const int64_t last = *min + *extent - 1;
    const int last_slot = int((last - *min) % 2);
    const Stmt tail =
        Block::make({ir::make_dma_begin(last_slot == 0 ? site : other),
                     request_at(Expr(int32_t(last)), last_slot, Expr(0), Expr(int32_t(R))),
                     ir::make_dma_wait(site), ir::make_dma_wait(other)});
    return Allocate::make(f.buffer->name, f.buffer->type, MemoryType::GPUShared,
                          {Expr(int32_t(2 * slot_elems))}, const_true(), Block::make(loop, tail));
}

namespace {

class Transform : public IRMutator {
public:
    Transform(CpeKernel &k, const Machine &m) : k(k), m(m) {}
    bool done = false;
    std::string buffer_name; ///< the output tile's buffer, once done

private:
    using IRMutator::visit;
    CpeKernel &k;
    const Machine &m;

    Stmt visit(const For *op) override {
        if (done)
            return op;
        std::optional<Stmt> s = pipeline_loop_puts(k, m, op, buffer_name);
        if (s) {
            done = true;
            return *s;
        }
        return IRMutator::visit(op);
    }
};

} // namespace

void pipeline_tile_puts(CpeKernel &k, const Machine &m) {
    const CpeKernel before = k;
    Transform t(k, m);
    Stmt body = t.mutate(k.body);
    if (!t.done)
        return;
    k.body = body;
    k.ldm.clear();
    try {
        place_ldm_buffers(k, m);
    } catch (const UserError &) {
        // The two slots live through the whole tile loop: where the LDM's peak was elsewhere in
        // the tile (a staging that O did not overlap), they may not fit though one more slot
        // would have. The kernel as it was, one slot, each put waited for.
        const std::string name = t.buffer_name;
        k = before;
        k.notes.push_back("the put of " + name +
                          " not pipelined over the next tile: its two slots do not fit the LDM");
    }
}

} // namespace sw
