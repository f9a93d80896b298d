/** \file
 * Broadcast DMA of LDM stagings that every CPE needs (BCAST_MODE) or their sharing by register
 * communication, and the uniform block loop that lets all 64 CPEs meet their barriers and
 * take part in every sharing.
 */
#include "target_sw/BroadcastDma.h"

#include "target_sw/Errors.h"
#include "target_sw/PassSupport.h"
#include "target_sw/SunwayIR.h"

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** A DMA site of a marked buffer. */
struct MarkedSite {
    std::string func;
    Sharing how;
    int64_t bytes; ///< the LDM buffer's size (what a RegComm sharing passes on)
};

/** Whether an expression (lets expanded) depends on the block variables of the kernel: on all
 * of them, or (\p how: Sharing::RegCommRow) on the ones that differ between the CPEs of a mesh
 * row, or (Sharing::RegCommColumn) on the ones that differ down a mesh column.
 *
 * The CPEs take the blocks in rounds of 64, block = round * 64 + id, id = row * cols + col
 * (CodeGen_CPE). With an innermost block loop of cols iterations (check_mesh_blocks), its
 * variable is the CPE's column; every other block variable is a function of block / cols =
 * round * rows + row: it differs down a column, unless the block loops inside it (the innermost
 * left out) have a multiple of rows iterations, when it is the same for the whole round. */
class BlockDependence {
public:
    explicit BlockDependence(const CpeKernel &k, Sharing how = Sharing::Dma, int mesh_rows = 1) {
        int64_t inside = 1; // iterations of the block loops inside, the innermost left out
        bool known = true;
        for (size_t i = k.blocks.size(); i-- > 0;) {
            const BlockLoop &b = k.blocks[i];
            const bool innermost = i + 1 == k.blocks.size();
            bool counts = true;
            if (how == Sharing::RegCommRow || how == Sharing::DmaRow)
                counts = innermost;
            else if (how == Sharing::RegCommColumn)
                counts = !innermost && !(known && inside % mesh_rows == 0);
            if (counts)
                vars.push_back(b.var);
            bounds.push(b.var, Interval(b.min, simplify(b.min + b.extent - 1)));
            if (!innermost) {
                const Expr extent = simplify(b.extent);
                const int64_t *e = as_const_int(extent);
                known = known && e;
                inside *= e ? *e : 1;
            }
        }
    }
    bool depends(const Expr &e, const LetScope &lets) const {
        // Simplified within the blocks' ranges: e.g. the image tile tile / 16 of a fused
        // block variable with 16 tiles is 0 on every CPE.
        const Expr x = simplify(lets.expand(e), true, bounds);
        for (const std::string &v : vars) {
            if (expr_uses_var(x, v))
                return true;
        }
        return false;
    }

private:
    std::vector<std::string> vars;
    Scope<Interval> bounds;
};

/** Whether \p s only issues DMA requests (begins and requests, in lets, loops and branches)
 * or, with \p waits, also waits for them: no stores, no barriers, no allocations. */
class OnlyDma : public IRVisitor {
public:
    explicit OnlyDma(bool waits) : waits(waits) {}
    bool issues = false, other = false;

private:
    using IRVisitor::visit;
    bool waits;
    void visit(const Call *op) override {
        if (ir::is_dma_intrinsic(op) && (waits || !ir::as_dma_wait(op))) {
            issues = true;
        } else if (op->call_type == Call::Extern || op->call_type == Call::ExternCPlusPlus) {
            other = true;
        }
        IRVisitor::visit(op);
    }
    void visit(const Store *) override { other = true; }
    void visit(const Provide *) override { other = true; }
    void visit(const Allocate *) override { other = true; }
    void visit(const Free *) override { other = true; }
};

bool only_issues_dma(const Stmt &s) {
    OnlyDma v(false);
    s.accept(&v);
    return v.issues && !v.other;
}

/** Whether \p s only issues DMA requests of other buffers and waits for them. */
bool only_dma_traffic(const Stmt &s) {
    OnlyDma v(true);
    s.accept(&v);
    return v.issues && !v.other;
}

/** Turns the DMA sites of marked buffers into broadcast groups, checking the conditions. */
class Broadcaster : public LetTrackingMutator {
public:
    Broadcaster(const CpeKernel &k, const std::map<int, MarkedSite> &sites, int mask, int mesh_cols,
                int mesh_rows)
        : slot_bytes(k.slot_bytes), dep(k), along_row(k, Sharing::RegCommRow, mesh_rows),
          down_column(k, Sharing::RegCommColumn, mesh_rows), sites(sites), mask(mask),
          mesh_cols(mesh_cols) {
        for (const ClosureArg &a : k.args)
            elem_bytes[a.name] = a.type.bytes();
    }
    std::set<int> done;
    std::map<int, int> issuers; ///< per site: CPEs issuing its pieces
    /** Buffers shared by broadcast DMA and double buffered (DoubleBuffer ran first): the site
     * of each slot. */
    std::map<std::string, std::pair<int, int>> doubled;

private:
    using LetTrackingMutator::visit;
    const std::map<std::string, int64_t> &slot_bytes; ///< CpeKernel::slot_bytes
    BlockDependence dep;
    /** What a staging shared along a mesh row (down a column) must not depend on. */
    BlockDependence along_row, down_column;
    const std::map<int, MarkedSite> &sites;
    int mask;
    int mesh_cols;

    /** What the staged box of a site shared \p how must not depend on. */
    const BlockDependence &dependence(Sharing how) const {
        return how == Sharing::RegCommRow || how == Sharing::DmaRow ? along_row
               : how == Sharing::RegCommColumn                      ? down_column
                                                                    : dep;
    }
    std::map<std::string, int64_t> elem_bytes; ///< per kernel argument
    /** What encloses the current point inside the kernel body, for the error message. */
    std::vector<std::string> around;
    std::vector<bool> around_dependent;

    [[noreturn]] void refuse(const std::string &func, const std::string &why) const {
        throw UserError("error: sw::broadcast(" + func + "): " + why);
    }

    Stmt visit(const For *op) override {
        const bool d = dep.depends(op->min, lets) || dep.depends(op->extent, lets);
        around.push_back("loop " + op->name);
        around_dependent.push_back(d);
        Stmt body = mutate(op->body);
        around.pop_back();
        around_dependent.pop_back();
        return body.same_as(op->body)
                   ? Stmt(op)
                   : For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
    }
    Stmt visit(const IfThenElse *op) override {
        const bool d = dep.depends(op->condition, lets);
        around.push_back("branch if (" + to_string(op->condition) + ")");
        around_dependent.push_back(d);
        Stmt t = mutate(op->then_case);
        Stmt e = op->else_case.defined() ? mutate(op->else_case) : Stmt();
        around.pop_back();
        around_dependent.pop_back();
        return IfThenElse::make(op->condition, t, e);
    }
    Stmt visit(const Allocate *op) override {
        auto d = doubled.find(op->name);
        if (d == doubled.end())
            return LetTrackingMutator::visit(op);
        // Two slots of half the allocation each (DoubleBuffer.h).
        const int64_t *total = op->extents.size() == 1 ? as_const_int(op->extents[0]) : nullptr;
        if (!total)
            refuse(op->name, "double buffered, but its allocation is not one constant extent");
        auto data = slot_bytes.find(op->name);
        const Slots slots{*total / 2,
                          data != slot_bytes.end() ? data->second : *total / 2 * op->type.bytes()};
        return Allocate::make(op->name, op->type, op->memory_type, op->extents, op->condition,
                              double_buffered_group(d->second, op->body, slots), op->new_expr,
                              op->free_function);
    }

    /** The two slots of a double-buffered staging: elements of one (where the second
     * starts), bytes of data in one. */
    struct Slots {
        int64_t elems, data_bytes;
    };

    /** How a double-buffered shared staging is issued and passed on, per its Sharing. */
    struct Issue {
        std::string func;
        Sharing how;
        int issuers = 1; ///< Dma: the CPEs issuing its pieces
        Slots slots{};
    };
    /** \p requests (chunk 0's, or the next chunk's prefetch) issued as the sharing wants: by
     * broadcast DMA in pieces, or in PE_MODE by the source CPE(s) of a register-communication
     * sharing. */
    Stmt issued(const Issue &is, const Stmt &requests) {
        if (by_dma(is.how))
            return pieces(is.func, true, requests, is.issuers, is.how);
        Requests r(*this, is.func, false, lets, is.how);
        return IfThenElse::make(source(is.how), r.mutate(requests));
    }
    /** The condition of the CPEs that fetch a register-communication sharing's data: CPE
     * (0, 0), column 0 of each row, or row 0 of each column. */
    Expr source(Sharing how) const {
        const Expr id = ir::cpe_id(), cols = Expr(mesh_cols);
        if (how == Sharing::RegCommRow)
            return id % cols == 0;
        if (how == Sharing::RegCommColumn)
            return id < cols;
        return ir::bcast_issuer(1);
    }

    /** Whether \p s contains a request or begin of site \p a or \p b. */
    static bool issues_site(const Stmt &s, int a, int b) {
        class Find : public IRVisitor {
        public:
            Find(int a, int b) : a(a), b(b) {}
            bool found = false;

        private:
            using IRVisitor::visit;
            int a, b;
            void visit(const Call *c) override {
                if (ir::is_dma_intrinsic(c) && !ir::as_dma_wait(c)) {
                    const std::optional<int> site = ir::dma_site(c);
                    found |= site == a || site == b;
                }
                IRVisitor::visit(c);
            }
        } f(a, b);
        s.accept(&f);
        return f.found;
    }

    bool doubled_site(int site) const {
        for (const auto &[name, pair] : doubled) {
            if (pair.first == site || pair.second == site)
                return true;
        }
        return false;
    }

    /** The body of a double-buffered shared buffer's allocation (DoubleBuffer.h's shape: the
     * first chunk's issue, then a serial loop whose body issues the next chunk and waits for
     * its own slot) as a sharing one chunk ahead. By broadcast DMA:
     *     barrier; if (issuers) { chunk 0's pieces }
     *     for (i) { if (issuers) { wait for slot i }  barrier;
     *               if (i + 1 < end) { if (issuers) { chunk i + 1's pieces into the other slot } }
     *               the rest of the body }
     * One barrier per chunk: after it, chunk i is on every CPE and every CPE is done with
     * chunk i - 1, whose slot chunk i + 1 then fills while chunk i is computed. By register
     * communication the source CPE(s) alone fetch, and the sharing of slot i replaces the
     * barrier:
     *     if (source) { chunk 0's requests }
     *     for (i) { if (source) { wait for slot i }
     *               if (i + 1 < end) { if (source) { chunk i + 1's requests into the other slot } }
     *               share slot i;
     *               the rest of the body }
     * A receiver writes slot i only when it runs the sharing of chunk i, after it computed
     * chunk i - 1 from the other slot; a source refills slot i - 1 after computing from it and
     * passing it on, its next request moving while it passes slot i on and computes. */
    Stmt double_buffered_group(std::pair<int, int> sites, const Stmt &body_in, const Slots &slots) {
        const auto [a, b] = sites;
        // The other broadcasts inside it first.
        const Stmt body = mutate(body_in);
        const MarkedSite &marked = this->sites.at(a);
        const std::string &func = marked.func;
        const bool dma = by_dma(marked.how);
        refuse_inside_block_dependent(func, dma);
        std::vector<Stmt> flat = flatten_blocks(body);
        if (flat.size() < 2 || !issues_site(flat[0], a, b) || !only_issues_dma(flat[0]))
            refuse(func, "double buffered, but its first chunk is not issued ahead of its loop");
        // The issuers of the first chunk's requests (each later chunk's are the same requests
        // one chunk on).
        Issue is{func, marked.how, dma ? issuers_of(func, true, flat[0], marked.how) : 1, slots};
        const Stmt first = issued(is, flat[0]);
        Stmt rest = Block::make(std::vector<Stmt>(flat.begin() + 1, flat.end()));
        bool found = false;
        rest = mutate_loop_issuing(rest, a, b, is, &found);
        if (!found)
            refuse(func, "double buffered, but the loop that prefetches its chunks was not found");
        issuers[a] = issuers[b] = is.issuers;
        done.insert(a);
        done.insert(b);
        if (dma)
            return Block::make({ir::make_bcast_barrier(), first, rest});
        return Block::make({first, rest});
    }

    /** The CPEs that issue \p issue's requests: their pieces in BCAST_MODE (\p bcast), or
     * CPE 0 alone. */
    int issuers_of(const std::string &func, bool bcast, const Stmt &issue,
                   Sharing how = Sharing::Dma) {
        Requests r(*this, func, bcast, lets, how);
        r.mutate(issue);
        return r.issuers;
    }

    /** \p issue's requests (cut into pieces in BCAST_MODE), under the condition of its \p n
     * issuers (issuers_of; per mesh row for Sharing::DmaRow); with one, the requests are not
     * guarded each. */
    Stmt pieces(const std::string &func, bool bcast, const Stmt &issue, int n,
                Sharing how = Sharing::Dma) {
        Requests r(*this, func, bcast, lets, how);
        r.alone = n == 1;
        return IfThenElse::make(issuer(n, how), r.mutate(issue));
    }

    /** The condition of the \p n CPEs issuing a broadcast's pieces: CPEs 0 .. n - 1, or for a
     * broadcast to each mesh row the CPEs in its columns 0 .. n - 1. */
    Expr issuer(int n, Sharing how) const {
        return ir::bcast_issuer(n, how == Sharing::DmaRow ? mesh_cols : 0);
    }

    /** Refuses \p func when it is staged inside a loop or branch whose bounds or condition
     * depend on the CPE's block. */
    void refuse_inside_block_dependent(const std::string &func, bool dma) const {
        for (size_t i = 0; i < around.size(); i++) {
            if (around_dependent[i]) {
                refuse(
                    func,
                    "it is staged inside " + around[i] +
                        ", whose bounds or condition depend on the CPE's block: the CPEs would "
                        "not all reach the broadcast's " +
                        std::string(dma ? "barriers" : "register-communication sharing") +
                        " the same number of times (Halide splits off edge tiles this way: choose "
                        "tiles that divide the extents)");
            }
        }
    }

    /** In \p s, the serial loop whose body prefetches site a / b, rewritten as in
     * double_buffered_group. */
    Stmt mutate_loop_issuing(const Stmt &s, int a, int b, const Issue &is, bool *found) {
        class Loop : public IRMutator {
        public:
            Loop(Broadcaster &br, int a, int b, const Issue &is, bool *found)
                : br(br), a(a), b(b), is(is), func(is.func), found(found) {}

        private:
            using IRMutator::visit;
            Broadcaster &br;
            int a, b;
            const Issue &is;
            const std::string &func;
            bool *found;
            Stmt visit(const For *op) override {
                std::vector<Stmt> flat = flatten_blocks(op->body);
                size_t p = flat.size();
                for (size_t i = 0; i < flat.size(); i++) {
                    const IfThenElse *c = flat[i].as<IfThenElse>();
                    if (c && !c->else_case.defined() && issues_site(flat[i], a, b) &&
                        only_issues_dma(flat[i]))
                        p = i;
                }
                if (p == flat.size())
                    return IRMutator::visit(op);
                const IfThenElse *prefetch = flat[p].as<IfThenElse>();
                // The wait for this chunk's slot, taken out of the rest of the body.
                Stmt wait;
                class TakeWait : public IRMutator {
                public:
                    TakeWait(int a, int b, Stmt &wait) : a(a), b(b), wait(wait) {}

                private:
                    using IRMutator::visit;
                    int a, b;
                    Stmt &wait;
                    Stmt visit(const IfThenElse *op) override {
                        if (ir::as_dma_wait(op->then_case) == a && op->else_case.defined() &&
                            ir::as_dma_wait(op->else_case) == b) {
                            wait = op;
                            return Evaluate::make(0);
                        }
                        return IRMutator::visit(op);
                    }
                };
                std::vector<Stmt> rest;
                for (size_t i = 0; i < flat.size(); i++) {
                    if (i != p)
                        rest.push_back(TakeWait(a, b, wait).mutate(flat[i]));
                }
                if (!wait.defined())
                    br.refuse(func, "double buffered, but the wait for its slot was not found");
                *found = true;
                std::vector<Stmt> body;
                const Stmt next =
                    IfThenElse::make(prefetch->condition, br.issued(is, prefetch->then_case));
                if (by_dma(is.how)) {
                    body = {IfThenElse::make(br.issuer(is.issuers, is.how), wait),
                            ir::make_bcast_barrier(), next};
                } else {
                    // The wait is `if (slot 0) wait(a) else wait(b)`: slot i's elements start
                    // at 0 or one slot on. The source requests the next chunk before it passes
                    // this one on (its other slot holds chunk i - 1, computed and passed on
                    // already; the receivers' slots are written by the sharing only), so that
                    // the transfer overlaps the sharing too.
                    const Expr first_slot = wait.as<IfThenElse>()->condition;
                    const Expr offset = select(first_slot, 0, int32_t(is.slots.elems));
                    body = {IfThenElse::make(br.source(is.how), wait), next,
                            ir::make_regcomm_share({func, is.slots.data_bytes, is.how, offset})};
                }
                body.insert(body.end(), rest.begin(), rest.end());
                return For::make(op->name, op->min, op->extent, op->for_type, op->device_api,
                                 Block::make(body));
            }
        };
        return Loop(*this, a, b, is, found).mutate(s);
    }

    Stmt visit(const Block *op) override {
        std::vector<Stmt> flat = flatten_blocks(op), out;
        bool changed = false;
        for (size_t i = 0; i < flat.size(); i++) {
            const Call *c = evaluated_call(flat[i]);
            const std::optional<int> begin = ir::as_dma_begin(c);
            if (begin && sites.count(*begin) && !doubled_site(*begin)) {
                const int site = *begin;
                size_t j = i;
                while (j < flat.size() && ir::as_dma_wait(flat[j]) != site)
                    j++;
                if (j == flat.size())
                    refuse(sites.at(site).func,
                           "its transfer is not waited for where it is issued");
                std::vector<Stmt> group(flat.begin() + long(i), flat.begin() + long(j) + 1);
                // Ahead of the requests issued just before it (a double buffer's prefetch of
                // other buffers, and the wait for the current chunk of those): an issuer's DMA
                // engine serves its requests in order, so a broadcast queued behind its own
                // prefetch would keep all 64 CPEs waiting for it.
                size_t at = out.size();
                while (at > 0 && only_dma_traffic(out[at - 1]))
                    at--;
                out.insert(out.begin() + long(at), make_group(site, group));
                i = j;
                changed = true;
                continue;
            }
            Stmt s = mutate(flat[i]);
            changed |= !s.same_as(flat[i]);
            // The same when the broadcast heads the next statement (inside the allocation of
            // its buffer): the requests (and waits) just before it move in behind the broadcast.
            while (!out.empty() && only_dma_traffic(out.back()) && !s.same_as(flat[i])) {
                Stmt sunk = sink_behind_broadcast(s, out.back());
                if (!sunk.defined())
                    break;
                s = sunk;
                out.pop_back();
            }
            out.push_back(s);
        }
        return changed ? Block::make(out) : Stmt(op);
    }

    /** \p s with \p issue placed right behind the broadcast group that starts it (through
     * allocations, producer markers and lets that \p issue does not use), or undefined. */
    static Stmt sink_behind_broadcast(const Stmt &s, const Stmt &issue) {
        if (const Allocate *a = s.as<Allocate>()) {
            if (stmt_uses_var(issue, a->name))
                return Stmt();
            Stmt body = sink_behind_broadcast(a->body, issue);
            return body.defined()
                       ? Allocate::make(a->name, a->type, a->memory_type, a->extents, a->condition,
                                        body, a->new_expr, a->free_function)
                       : Stmt();
        }
        if (const ProducerConsumer *p = s.as<ProducerConsumer>()) {
            Stmt body = sink_behind_broadcast(p->body, issue);
            return body.defined() ? ProducerConsumer::make(p->name, p->is_producer, body) : Stmt();
        }
        if (const LetStmt *l = s.as<LetStmt>()) {
            if (stmt_uses_var(issue, l->name))
                return Stmt();
            Stmt body = sink_behind_broadcast(l->body, issue);
            return body.defined() ? LetStmt::make(l->name, l->value, body) : Stmt();
        }
        if (!s.as<Block>())
            return Stmt();
        std::vector<Stmt> flat = flatten_blocks(s);
        // The group: barrier, the issuers' gets, barrier (broadcast DMA), or CPE 0's get then
        // the register-communication sharing; the requests go in right after the gets.
        auto is_issue = [&](size_t i) {
            const IfThenElse *c = i < flat.size() ? flat[i].as<IfThenElse>() : nullptr;
            return c && ir::is_bcast_issuer(c->condition);
        };
        auto is_barrier = [&](size_t i) {
            return i < flat.size() && ir::is_bcast_barrier(flat[i]);
        };
        if (is_issue(0) || (is_barrier(0) && is_issue(1) && is_barrier(2))) {
            flat.insert(flat.begin() + (is_issue(0) ? 1 : 3), issue);
            return Block::make(flat);
        }
        Stmt head = sink_behind_broadcast(flat[0], issue);
        if (!head.defined())
            return Stmt();
        flat[0] = head;
        return Block::make(flat);
    }

    static std::string to_string(const Expr &e) {
        std::ostringstream s;
        s << e;
        return s.str();
    }

    /** Checks the requests of one site and, for Sharing::Dma, puts them in BCAST_MODE. */
    class Requests : public IRMutator {
    public:
        int issuers = 1;    ///< CPEs that issue a piece of some request (BCAST_MODE)
        bool alone = false; ///< no request of the site is cut: CPE 0 issues them all

        Requests(const Broadcaster &b, const std::string &func, bool bcast, LetScope lets,
                 Sharing how = Sharing::Dma)
            : b(b), dep(b.dependence(how)), func(func), bcast(bcast), lets(std::move(lets)) {
            // To each mesh row: the row's CPEs issue its pieces (piece = column), each to its
            // own row's mask.
            const Expr id = ir::cpe_id(), cols = Expr(b.mesh_cols);
            piece = how == Sharing::DmaRow ? id % cols : id;
            mask = how == Sharing::DmaRow ? Expr(1) << (id / cols) : Expr(b.mask);
        }

    private:
        using IRMutator::visit;
        const Broadcaster &b;
        const BlockDependence &dep; ///< what the staged box must not depend on
        const std::string &func;
        bool bcast; ///< BCAST_MODE (else the requests stay PE_MODE, issued by CPE 0 alone)
        LetScope lets;
        Expr piece; ///< the piece this CPE issues
        Expr mask;  ///< the mesh rows that receive

        Stmt visit(const LetStmt *op) override {
            lets.push(op->name, op->value);
            Stmt body = mutate(op->body);
            lets.pop();
            return LetStmt::make(op->name, op->value, body);
        }
        Stmt visit(const For *op) override {
            if (dep.depends(op->min, lets) || dep.depends(op->extent, lets)) {
                b.refuse(func,
                         "the number of its transfers (loop " + op->name +
                             ") depends on the CPE's block: each CPE needs a different region, so "
                             "it cannot be broadcast");
            }
            loops.push_back(op);
            Stmt body = mutate(op->body);
            loops.pop_back();
            return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        }
        /** The loops around the request inside the group, innermost last. */
        std::vector<const For *> loops;
        /** A request not cut, issued once per iteration of the loops around it: iteration i
         * goes to issuer i mod n, n = min(kBroadcastIssuers, iterations); the linear index of
         * the iteration, and n (1 when the loops' extents are not constants). */
        std::pair<Expr, int> iteration() const {
            Expr index = 0;
            int64_t count = 1;
            for (const For *f : loops) {
                const std::optional<int64_t> e = constant(f->extent);
                if (!e)
                    return {Expr(), 1};
                index = index * Expr(int32_t(*e)) + (Variable::make(Int(32), f->name) - f->min);
                count *= *e;
            }
            return {simplify(index), int(std::min<int64_t>(count, kBroadcastIssuers))};
        }
        Stmt visit(const IfThenElse *op) override {
            if (dep.depends(op->condition, lets)) {
                b.refuse(func, "its transfer is guarded by a condition on the CPE's block (" +
                                   to_string(op->condition) + ")");
            }
            return IRMutator::visit(op);
        }
        Stmt visit(const Evaluate *op) override {
            const Call *c = op->value.as<Call>();
            std::optional<ir::DmaRequest> r = c ? ir::as_dma_request(c) : std::nullopt;
            if (!r || !bcast)
                return IRMutator::visit(op);
            check(*r);
            return split(*r);
        }
        Expr visit(const Call *op) override {
            std::optional<ir::DmaRequest> r = ir::as_dma_request(op);
            if (!r)
                return IRMutator::visit(op);
            check(*r);
            return op;
        }
        /** The request's size as constants (expanded through the lets), when it has them. */
        std::optional<int64_t> constant(const Expr &e) const {
            const Expr x = simplify(lets.expand(e));
            const int64_t *v = as_const_int(x);
            return v ? std::optional<int64_t>(*v) : std::nullopt;
        }
        /** The request cut into the pieces of split_broadcast: CPE p issues piece p (rows or
         * elements p * per onwards) in BCAST_MODE; a CPE without a piece skips it. */
        Stmt split(ir::DmaRequest r) {
            r.bcast_mask = mask; // the rows of the mesh that receive
            const std::optional<int64_t> rows = constant(r.rows), block = constant(r.block_elems),
                                         pitch = constant(r.pitch_elems);
            BroadcastSplit cut;
            Expr total;        // rows (by rows) or elements cut
            bool exact = true; // total a constant: every piece below cut.pieces is not empty
            if (rows && block && pitch) {
                cut = split_broadcast(*rows, *block, *rows == 1 || *pitch == *block,
                                      int(elem_bytes(r)));
                total = Expr(cut.by_rows ? *rows : *rows * *block);
            } else if (rows && *rows > 1) {
                // Rows of a length known at run time: cut by rows.
                cut = split_broadcast(*rows, 1, false, int(elem_bytes(r)));
                total = Expr(*rows);
            } else if (rows && *rows == 1) {
                // Contiguous, of a length known at run time (a window clamped at the edges):
                // cut as its largest length; a piece past the end is skipped.
                const Expr upper =
                    find_constant_bound(simplify(lets.expand(r.block_elems)), Direction::Upper);
                const int64_t *u = as_const_int(upper);
                if (u && *u > 0) {
                    cut = split_broadcast(1, *u, true, int(elem_bytes(r)));
                    total = r.block_elems;
                    exact = false;
                }
            }
            issuers = std::max(issuers, cut.pieces);
            if (cut.pieces == 1) {
                // Not cut: the iterations of the loops around it dealt to the issuers.
                const auto [index, n] = iteration();
                issuers = std::max(issuers, n);
                if (alone) // no request of the site is cut or dealt: CPE 0 issues them all
                    return ir::make_dma_request(r);
                return IfThenElse::make(piece == (n == 1 ? Expr(0) : index % n),
                                        ir::make_dma_request(r));
            }
            const Stmt request = ir::make_dma_request(split_request(r, cut, total, piece));
            if (!exact)
                return IfThenElse::make(piece < cut.pieces && piece * Expr(cut.per) < total,
                                        request);
            if (cut.pieces == kBroadcastIssuers) // every issuer has a piece
                return request;
            return IfThenElse::make(piece < cut.pieces, request);
        }
        /** Piece \p piece of \p r: rows or elements p * per onwards, at most per of them, of
         * \p total. */
        static ir::DmaRequest split_request(ir::DmaRequest r, const BroadcastSplit &cut,
                                            const Expr &total, const Expr &piece) {
            const Expr start = piece * Expr(cut.per);
            if (cut.by_rows) {
                r.main_index = r.main_index + start * r.pitch_elems;
                r.ldm_index = r.ldm_index + start * r.block_elems;
                r.rows = min(Expr(cut.per), total - start);
            } else {
                r.main_index = r.main_index + start;
                r.ldm_index = r.ldm_index + start;
                r.block_elems = min(Expr(cut.per), total - start);
                r.rows = 1;
                r.pitch_elems = r.block_elems;
            }
            return r;
        }
        int64_t elem_bytes(const ir::DmaRequest &r) const {
            return b.elem_bytes.count(r.main_buffer) ? b.elem_bytes.at(r.main_buffer) : 4;
        }
        void check(const ir::DmaRequest &r) {
            if (r.is_put)
                b.refuse(func, "a put cannot be broadcast");
            for (const Expr &a :
                 {r.ldm_index, r.main_index, r.block_elems, r.rows, r.pitch_elems}) {
                if (dep.depends(a, lets)) {
                    b.refuse(
                        func,
                        "the staged region depends on the CPE's block (" +
                            to_string(simplify(lets.expand(a))) +
                            "): each CPE needs a different region, so it cannot be broadcast; "
                            "stage it "
                            "where its box is the same for every block, or drop sw::broadcast");
                }
            }
        }
    };

    Stmt make_group(int site, const std::vector<Stmt> &group) {
        const MarkedSite &marked = sites.at(site);
        const std::string &func = marked.func;
        const bool dma = by_dma(marked.how);
        refuse_inside_block_dependent(func, dma);
        if (marked.how == Sharing::RegCommRow || marked.how == Sharing::RegCommColumn) {
            done.insert(site);
            issuers[site] = 1;
            return make_mesh_group(marked, group);
        }
        const Stmt requests = Block::make(group);
        const int n = issuers_of(func, dma, requests, marked.how);
        const Stmt issue = pieces(func, dma, requests, n, marked.how);
        done.insert(site);
        issuers[site] = n;
        if (dma)
            return Block::make({ir::make_bcast_barrier(), issue, ir::make_bcast_barrier()});
        // CPE (0, 0) gets the staging alone (PE_MODE) and waits; then every CPE takes part in
        // passing the whole buffer over the mesh. What InjectDma writes after the wait (padding,
        // spreading) follows the sharing and runs on every CPE, as after a broadcast DMA.
        const Stmt share = ir::make_regcomm_share({func, marked.bytes, marked.how});
        return Block::make({issue, share});
    }

    /** A staging shared along each mesh row (or down each column) by register communication:
     *     if (column 0 (row 0)) { begin; requests in PE_MODE; wait }
     *     sw_regcomm_share(buffer, bytes, how);     // every CPE
     * The block's column is its innermost block variable (mesh_blocks), so the eight CPEs of a
     * row (column) stage the same box, which the requests' check makes sure of. */
    Stmt make_mesh_group(const MarkedSite &marked, const std::vector<Stmt> &group) {
        return Block::make({issued({marked.func, marked.how}, Block::make(group)),
                            ir::make_regcomm_share({marked.func, marked.bytes, marked.how})});
    }
};

/** Whether \p s contains a barrier, a broadcast issue or a register-communication sharing
 * (something every CPE must run). */
bool collective(const Stmt &s) {
    return ir::has_collective(s);
}

/** Takes out of a statement the Frees of buffers it does not allocate itself (a buffer
 * allocated around a broadcast, freed inside work that a CPE past the last block skips). */
class ExtractFrees : public IRMutator {
public:
    std::vector<Stmt> frees;

private:
    using IRMutator::visit;
    std::set<std::string> inside;
    Stmt visit(const Allocate *op) override {
        const bool fresh = inside.insert(op->name).second;
        Stmt s = IRMutator::visit(op);
        if (fresh)
            inside.erase(op->name);
        return s;
    }
    Stmt visit(const Free *op) override {
        if (inside.count(op->name))
            return op;
        frees.push_back(op);
        return Evaluate::make(0);
    }
};

class Uniform {
public:
    explicit Uniform(const CpeKernel &k) : dep(k) {}

    Stmt run(const Stmt &s) {
        if (!collective(s))
            return skipped_when_inactive(s);
        if (s.as<Block>()) {
            std::vector<Stmt> out, pending;
            auto close = [&]() {
                if (!pending.empty())
                    out.push_back(skipped_when_inactive(Block::make(pending)));
                pending.clear();
            };
            for (const Stmt &t : flatten_blocks(s)) {
                if (t.as<Free>()) {
                    // Frees of buffers allocated around a broadcast: on every CPE, in order.
                    close();
                    out.push_back(t);
                } else if (collective(t)) {
                    close();
                    out.push_back(run(t));
                } else {
                    pending.push_back(t);
                }
            }
            close();
            return Block::make(out);
        }
        if (const LetStmt *l = s.as<LetStmt>()) {
            lets.push(l->name, l->value);
            Stmt body = run(l->body);
            lets.pop();
            return LetStmt::make(l->name, l->value, body);
        }
        if (const Allocate *a = s.as<Allocate>()) {
            // Allocated by every CPE, in the same order: same LDM address everywhere.
            return Allocate::make(a->name, a->type, a->memory_type, a->extents, a->condition,
                                  run(a->body), a->new_expr, a->free_function);
        }
        if (const ProducerConsumer *p = s.as<ProducerConsumer>()) {
            return ProducerConsumer::make(p->name, p->is_producer, run(p->body));
        }
        if (const For *f = s.as<For>()) {
            if (dep.depends(f->min, lets) || dep.depends(f->extent, lets)) {
                throw UserError("error: the loop " + f->name +
                                " around a broadcast depends on the CPE's block");
            }
            return For::make(f->name, f->min, f->extent, f->for_type, f->device_api, run(f->body));
        }
        if (const IfThenElse *i = s.as<IfThenElse>()) {
            if (ir::is_bcast_issuer(i->condition))
                return s; // the issue itself: its issuers always
            if (dep.depends(i->condition, lets)) {
                throw UserError("error: a branch around a broadcast depends on the CPE's block");
            }
            return IfThenElse::make(i->condition, run(i->then_case),
                                    i->else_case.defined() ? run(i->else_case) : Stmt());
        }
        return s; // a barrier
    }

private:
    BlockDependence dep;
    LetScope lets;
    static Expr active() { return ir::block_active(); }

    /** if (sw_active) { s }, followed by the Frees of buffers allocated outside s: every CPE
     * frees what every CPE allocated, so the LDM stays the same on all of them. */
    static Stmt skipped_when_inactive(const Stmt &s) {
        ExtractFrees x;
        Stmt body = x.mutate(s);
        std::vector<Stmt> out = {IfThenElse::make(active(), body)};
        out.insert(out.end(), x.frees.begin(), x.frees.end());
        return Block::make(out);
    }
};

/** The condition of a staging shared along mesh rows or down mesh columns (\p how): the
 * kernel's blocks are dealt to the CPEs so that the innermost block variable is the CPE's mesh
 * column and the others depend only on its mesh row (and the round): the innermost block loop
 * has as many iterations as the mesh has columns. The blocks need not fill the last round:
 * every CPE runs the same rounds (make_block_loop_uniform), a mesh row past the last block
 * has every CPE of it past (the blocks fill the rows in order), and its CPE in column 0 still
 * fetches (the last block's box, in bounds) and passes on what the row's others receive; a
 * column's source, in row 0, is past the last block only in a round that has none. */
void check_mesh_blocks(const CpeKernel &k, const Machine &m, const std::string &func, Sharing how) {
    const std::string what = "sw::broadcast(" + func + ", " + sharing_name(how) + ")";
    if (k.blocks.empty())
        throw UserError("error: " + what + ": the kernel has no block loop");
    // (The simplified Expr is kept: as_const_int points into it.)
    const Expr inner_extent = simplify(k.blocks.back().extent);
    const int64_t *inner = as_const_int(inner_extent);
    if (!inner || *inner != m.cpe_mesh_cols) {
        throw UserError("error: " + what + ": the innermost block loop (" + k.blocks.back().var +
                        ") must have " + std::to_string(m.cpe_mesh_cols) +
                        " iterations, one per mesh column, so that a block's column is the "
                        "CPE's; it has " +
                        (inner ? std::to_string(*inner) : std::string("a run-time number of")));
    }
}

} // namespace

void apply_broadcast(CpeKernel &k, const Machine &m, const Directives &d) {
    const std::map<std::string, Sharing> &marked = d.shared;
    if (marked.empty())
        return;
    const std::set<std::string> &doubled = d.double_buffered;
    std::map<int, MarkedSite> sites;
    bool dma = false, regcomm = false;
    for (const LdmBuffer &b : k.ldm) {
        auto mark = marked.find(b.name);
        if (mark == marked.end())
            continue;
        const Sharing how = mark->second;
        // Register communication, or on the SW26010-Pro its RMA form (CodeGen_CPE).
        if (by_regcomm(how) && !m.regcomm.available && !m.rma.available) {
            throw UserError("error: sw::broadcast(" + b.name + ", " + sharing_name(how) +
                            "): " + m.name +
                            " has neither register communication nor RMA between CPEs; use "
                            "Sharing::Dma");
        }
        bool filled = false;
        for (size_t s = 0; s < k.dma.size(); s++) {
            if (k.dma[s].ldm_buffer == b.name && !k.dma[s].is_put) {
                sites[int(s)] = {b.name, how, b.bytes};
                filled = true;
            }
        }
        if (!filled) {
            throw UserError(
                "error: sw::broadcast(" + b.name +
                "): its LDM staging is not filled by DMA (a copy InjectDma could not turn into "
                "DMA), so there is nothing to broadcast");
        }
        (by_dma(how) ? dma : regcomm) = true;
        if (how == Sharing::RegCommRow || how == Sharing::RegCommColumn || how == Sharing::DmaRow)
            check_mesh_blocks(k, m, b.name, how);
    }
    if (sites.empty())
        return;
    // Every row of the mesh receives.
    const int mask = (1 << m.cpe_mesh_rows) - 1;
    Broadcaster b(k, sites, mask, m.cpe_mesh_cols, m.cpe_mesh_rows);
    // Double buffered (DoubleBuffer added the second slot's site, the first's twin).
    for (const std::string &name : doubled) {
        auto mark = marked.find(name);
        if (mark == marked.end())
            continue;
        std::vector<int> filling;
        for (const auto &[s, site] : sites) {
            if (site.func == name)
                filling.push_back(s);
        }
        if (filling.size() == 2 &&
            k.dma[size_t(filling[1])].shape.find("(double buffered)") != std::string::npos) {
            b.doubled[name] = {filling[0], filling[1]};
        } else if (filling.size() > 2) {
            throw UserError("error: sw::broadcast(" + name + ") together with sw::double_buffer(" +
                            name + "): its staging is filled at " + std::to_string(filling.size()) +
                            " places (Halide split its loop nest); drop one of the two directives");
        }
    }
    k.body = b.mutate(k.body);
    // How LDM-to-LDM sharing moves the bytes on this machine (the descriptions below).
    const std::string ldm_sharing =
        m.regcomm.available ? "register communication" : "RMA (row or column broadcast)";
    for (const auto &[s, site] : sites) {
        if (!b.done.count(s)) {
            throw UserError("error: sw::broadcast(" + site.func +
                            "): its transfer was not found where it is issued");
        }
        if (site.how == Sharing::Dma) {
            const int n = b.issuers.at(s);
            k.dma[size_t(s)].shape +=
                " (broadcast: issued by " +
                (n == 1 ? std::string("CPE 0")
                        : "CPEs 0-" + std::to_string(n - 1) + ", a piece each,") +
                " in BCAST_MODE for all " + std::to_string(m.cpes_per_core_group) + " CPEs)";
        } else if (site.how == Sharing::DmaRow) {
            const int n = b.issuers.at(s);
            k.dma[size_t(s)].shape += " (broadcast to each mesh row: issued by " +
                                      (n == 1 ? std::string("the row's CPE in column 0")
                                              : "the row's CPEs in columns 0-" +
                                                    std::to_string(n - 1) + ", a piece each,") +
                                      " in BCAST_MODE with the row's mask)";
        } else if (site.how != Sharing::RegComm) {
            const bool row = site.how == Sharing::RegCommRow;
            k.dma[size_t(s)].shape +=
                " (shared: issued by the CPE in " +
                std::string(row ? "column 0 of each mesh row" : "row 0 of each mesh column") +
                ", its " + std::to_string(site.bytes) + "-byte buffer passed " +
                (row ? "along the row" : "down the column") + " by " + ldm_sharing + ")";
        } else {
            k.dma[size_t(s)].shape +=
                " (shared: issued by CPE 0 alone, its " + std::to_string(site.bytes) +
                "-byte buffer passed to the other " + std::to_string(m.cpes_per_core_group - 1) +
                " CPEs " +
                (m.regcomm.available ? "by register communication along row 0 and down every column"
                                     : "by one RMA broadcast") +
                ")";
        }
    }
    if (dma) {
        k.notes.push_back("broadcast DMA: every CPE runs the same number of block rounds (" +
                          std::to_string(m.cpes_per_core_group) +
                          " blocks per round), skipping the work of a round "
                          "past the last block but not its barriers");
    }
    if (regcomm) {
        k.notes.push_back(
            (m.regcomm.available ? "register-communication" : "RMA") +
            std::string(" sharing: every CPE runs the same number of block rounds (") +
            std::to_string(m.cpes_per_core_group) +
            " blocks per round), skipping the work of a round "
            "past the last block but not the sharing");
    }
}

BroadcastSplit split_broadcast(int64_t rows, int64_t block_elems, bool contiguous, int elem_bytes) {
    BroadcastSplit cut;
    if (rows < 1 || block_elems < 1 || elem_bytes < 1)
        return cut;
    if (contiguous) {
        // Whole 128-byte lines per piece (no line is fetched by two issuers), and at least
        // 1 KB: a smaller piece costs more in its request's setup and latency than it saves.
        const int64_t total = rows * block_elems, line = std::max<int64_t>(1, 128 / elem_bytes);
        const int64_t least = (1024 / elem_bytes + line - 1) / line * line;
        const int64_t per = std::max(
            least, ((total + kBroadcastIssuers - 1) / kBroadcastIssuers + line - 1) / line * line);
        cut.per = per;
        cut.pieces = int((total + per - 1) / per);
        return cut;
    }
    const int64_t per = (rows + kBroadcastIssuers - 1) / kBroadcastIssuers;
    cut.per = per;
    cut.pieces = int((rows + per - 1) / per);
    cut.by_rows = true;
    return cut;
}

bool has_broadcast(const CpeKernel &k) {
    return ir::has_collective(k.body);
}

void make_block_loop_uniform(CpeKernel &k) {
    if (!has_broadcast(k))
        return;
    k.body = Uniform(k).run(k.body);
}

} // namespace sw
