/** \file
 * Double buffering of LDM tiles staged inside a serial loop.
 */
#include "target_sw/DoubleBuffer.h"

#include "target_sw/PassSupport.h"
#include "target_sw/PlaceLdmBuffers.h"
#include "target_sw/SunwayIR.h"

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** Whether \p s reaches Allocate(\p buffer) through lets, allocations, producer/consumer
 * markers and blocks only (no loop or branch on the way). */
bool reaches(const Stmt &s, const std::string &buffer) {
    if (const Allocate *a = s.as<Allocate>())
        return a->name == buffer || reaches(a->body, buffer);
    if (const LetStmt *l = s.as<LetStmt>())
        return reaches(l->body, buffer);
    if (const ProducerConsumer *p = s.as<ProducerConsumer>())
        return reaches(p->body, buffer);
    if (const Block *b = s.as<Block>())
        return reaches(b->first, buffer) || reaches(b->rest, buffer);
    return false;
}

/** The statements that issue the transfer of \p site, with the lets on the way to them. */
Stmt extract_issue(const Stmt &s, int site) {
    if (const LetStmt *l = s.as<LetStmt>()) {
        Stmt body = extract_issue(l->body, site);
        return body.defined() ? LetStmt::make(l->name, l->value, body) : Stmt();
    }
    if (const Allocate *a = s.as<Allocate>())
        return extract_issue(a->body, site);
    if (const ProducerConsumer *p = s.as<ProducerConsumer>())
        return extract_issue(p->body, site);
    if (s.as<Block>()) {
        std::vector<Stmt> parts;
        const std::vector<Stmt> flat = flatten_blocks(s);
        for (size_t i = 0; i < flat.size(); i++) {
            if (ir::as_dma_begin(flat[i]) == site) {
                for (size_t j = i; j < flat.size() && ir::as_dma_wait(flat[j]) != site; j++) {
                    parts.push_back(flat[j]);
                }
                return Block::make(parts);
            }
            Stmt inner = extract_issue(flat[i], site);
            if (inner.defined())
                return inner;
        }
    }
    return Stmt();
}

/** Rewrites a copy of the loop body: accesses to the buffer go to the slot; the original
 * transfer of the site disappears (it is issued one iteration ahead); its wait waits for
 * the slot's reply word. */
class UseSlots : public IRMutator {
public:
    UseSlots(const std::string &buffer, int site_a, int site_b, Expr slot, Expr slot_elems)
        : buffer(buffer), site_a(site_a), site_b(site_b), slot(slot), slot_elems(slot_elems) {}

    /** Site ids of a transfer issued into slot \p s (0 or 1), with its LDM index shifted. */
    Stmt for_slot(const Stmt &s, int which) {
        fixed_slot = which;
        Stmt r = mutate(s);
        fixed_slot = -1;
        return r;
    }

private:
    using IRMutator::visit;
    const std::string &buffer;
    int site_a, site_b;
    Expr slot, slot_elems;
    int fixed_slot = -1; // >= 0: rewriting a transfer issued into that slot
    bool in_removed = false;

    Expr offset() const {
        return fixed_slot >= 0 ? Expr(fixed_slot) * slot_elems : slot * slot_elems;
    }
    /** \p index moved into the slot (a dense vector index stays a Ramp). */
    Expr shifted(const Expr &index) {
        Expr i = mutate(index);
        if (const Ramp *r = i.as<Ramp>())
            return Ramp::make(r->base + offset(), r->stride, r->lanes);
        return i + offset();
    }

    Expr visit(const Load *op) override {
        if (op->name != buffer)
            return IRMutator::visit(op);
        return Load::make(op->type, op->name, shifted(op->index), op->image, op->param,
                          op->predicate, ModulusRemainder());
    }
    Stmt visit(const Store *op) override {
        if (op->name != buffer)
            return IRMutator::visit(op);
        return Store::make(op->name, mutate(op->value), shifted(op->index), op->param,
                           op->predicate, ModulusRemainder());
    }
    Stmt visit(const Free *op) override {
        return op->name == buffer ? Evaluate::make(0) : Stmt(op);
    }
    Stmt visit(const Allocate *op) override {
        return op->name == buffer ? mutate(op->body) : IRMutator::visit(op);
    }
    Expr visit(const Call *op) override {
        if (ir::dma_site(op) != site_a) {
            // Another transfer that reads or writes the buffer (a put straight from the staged
            // tile: a copy whose output was not staged, an edge tile's) uses this iteration's
            // slot too.
            std::optional<ir::DmaRequest> r = ir::as_dma_request(op);
            if (r && r->ldm_buffer == buffer && fixed_slot < 0) {
                r->ldm_index = simplify(mutate(r->ldm_index) + offset());
                return ir::dma_request(*r);
            }
            return IRMutator::visit(op);
        }
        const int site = fixed_slot == 1 ? site_b : site_a;
        if (std::optional<ir::DmaRequest> r = ir::as_dma_request(op)) {
            r->site = site;
            r->ldm_index = simplify(mutate(r->ldm_index) + offset());
            return ir::dma_request(*r);
        }
        return ir::with_dma_site(op, site);
    }
};

class Transform : public IRMutator {
public:
    Transform(CpeKernel &k, const std::string &buffer, int site, int64_t slot_elems, Type type)
        : k(k), buffer(buffer), site(site), slot_elems(slot_elems), type(type) {}
    bool done = false;

private:
    using IRMutator::visit;
    CpeKernel &k;
    const std::string &buffer;
    int site;
    int64_t slot_elems;
    Type type;

    Stmt visit(const For *op) override {
        if (done || op->for_type != ForType::Serial || !reaches(op->body, buffer))
            return IRMutator::visit(op);
        Stmt issue = extract_issue(op->body, site);
        if (!issue.defined())
            return IRMutator::visit(op);
        done = true;
        const int other = int(k.dma.size());
        k.dma.push_back(k.dma[size_t(site)]);
        k.dma.back().shape += " (double buffered)";

        const Expr i = Variable::make(Int(32), op->name);
        const Expr slot = simplify((i - op->min) % 2);
        UseSlots slots(buffer, site, other, slot, Expr(int32_t(slot_elems)));
        auto issue_at = [&](Expr j) {
            Stmt at = substitute(op->name, j, issue);
            Expr parity = simplify((j - op->min) % 2);
            return IfThenElse::make(parity == 0, slots.for_slot(at, 0), slots.for_slot(at, 1));
        };
        // The body: the transfer of the next iteration first, then this iteration's wait.
        Stmt body = RemoveIssue(site).mutate(op->body);
        body = slots.mutate(body);
        body = WaitForSlot(site, other, slot).mutate(body);
        Stmt prefetch = IfThenElse::make(i + 1 < op->min + op->extent, issue_at(i + 1));
        Stmt loop = For::make(op->name, op->min, op->extent, op->for_type, op->device_api,
                              Block::make(prefetch, body));
        Stmt first = issue_at(op->min);
        return Allocate::make(buffer, type, MemoryType::GPUShared, {Expr(int32_t(2 * slot_elems))},
                              const_true(), Block::make(first, loop));
    }

    /** Drops the begin and the requests of the site (they are issued ahead). */
    class RemoveIssue : public IRMutator {
    public:
        explicit RemoveIssue(int site) : site(site) {}

    private:
        using IRMutator::visit;
        int site;
        Stmt visit(const Evaluate *op) override {
            const Call *c = op->value.as<Call>();
            if ((ir::as_dma_begin(c) || ir::as_dma_request(c)) && ir::dma_site(c) == site) {
                return Evaluate::make(0);
            }
            return op;
        }
    };
    /** The wait of the site becomes a wait on the slot's reply word. */
    class WaitForSlot : public IRMutator {
    public:
        WaitForSlot(int a, int b, Expr slot) : a(a), b(b), slot(slot) {}

    private:
        using IRMutator::visit;
        int a, b;
        Expr slot;
        Stmt visit(const Evaluate *op) override {
            const Call *c = op->value.as<Call>();
            if (ir::as_dma_wait(c) != a)
                return op;
            return IfThenElse::make(slot == 0, ir::make_dma_wait(a), ir::make_dma_wait(b));
        }
    };
};

/** The DMA sites that fill \p buffer (several where Halide duplicated the loop nest). */
std::vector<int> filling_sites(const CpeKernel &k, const std::string &buffer) {
    std::vector<int> sites;
    for (size_t s = 0; s < k.dma.size(); s++) {
        if (k.dma[s].ldm_buffer == buffer && !k.dma[s].is_put)
            sites.push_back(int(s));
    }
    return sites;
}

} // namespace

void apply_double_buffering(CpeKernel &k, const Machine &m, const std::set<std::string> &marked) {
    bool changed = false;
    for (const LdmBuffer &b : std::vector<LdmBuffer>(k.ldm)) {
        if (!marked.count(b.name))
            continue;
        // Where the buffer is not filled by DMA at the top of a serial loop (e.g. a copy
        // InjectDma could not turn into DMA), it stays single-buffered and the report says so.
        const std::vector<int> sites = filling_sites(k, b.name);
        if (sites.empty()) {
            k.notes.push_back("double_buffer(" + b.name + ") not applied: not filled by DMA");
            continue;
        }
        const int64_t slot_elems = align_up(b.bytes, m.ldm_alignment) / b.type.bytes();
        k.slot_bytes[b.name] = b.bytes;
        for (int site : sites) {
            Transform t(k, b.name, site, slot_elems, b.type);
            k.body = t.mutate(k.body);
            if (!t.done) {
                k.notes.push_back("double_buffer(" + b.name +
                                  ") not applied to one of its transfers: not "
                                  "staged at the top of a serial loop");
            }
        }
        changed = true;
    }
    if (changed) {
        // The two slots count in the budget.
        k.ldm.clear();
        place_ldm_buffers(k, m);
    }
}

} // namespace sw
