/** \file
 * Recognising LDM <-> main-memory copy nests and emitting DMA requests.
 */
#include "target_sw/InjectDma.h"

#include "target_sw/ConstantBounds.h"

#include <set>
#include <sstream>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

struct Dim {
    std::string var;
    Expr min, extent;
    Expr ldm_step, main_step;
};

bool proved(const Expr &cond) { return is_const_one(simplify(cond)); }

bool same_value(const Expr &a, const Expr &b) { return is_const_zero(simplify(a - b)); }

/** Removes the clamps max(min(e, hi), lo) / min(max(e, lo), hi) around expressions of the
 * nest variables whose bounds do not depend on them (valid inside the in-bounds box). */
class StripClamps : public IRMutator {
public:
    explicit StripClamps(const std::vector<std::string> &vars) : vars(vars) {}

private:
    using IRMutator::visit;
    const std::vector<std::string> &vars;
    bool uses(const Expr &e) const {
        for (const std::string &v : vars) {
            if (expr_uses_var(e, v)) return true;
        }
        return false;
    }
    Expr visit(const Max *op) override {
        if (const Min *m = op->a.as<Min>()) {
            if (uses(m->a) && !uses(m->b) && !uses(op->b)) return mutate(m->a);
        }
        if (uses(op->a) && !uses(op->b)) return mutate(op->a);
        return IRMutator::visit(op);
    }
    Expr visit(const Min *op) override {
        if (const Max *m = op->a.as<Max>()) {
            if (uses(m->a) && !uses(m->b) && !uses(op->b)) return mutate(m->a);
        }
        if (uses(op->a) && !uses(op->b)) return mutate(op->a);
        return IRMutator::visit(op);
    }
};

class DmaInjector : public IRMutator {
public:
    DmaInjector(CpeKernel &k, const std::set<std::string> &ldm, const std::set<std::string> &main)
        : k(k), ldm(ldm), main(main) {}

private:
    using IRMutator::visit;
    CpeKernel &k;
    const std::set<std::string> &ldm, &main;
    int next_site = 0;

    Stmt visit(const For *op) override {
        if (op->for_type != ForType::Serial && op->for_type != ForType::Unrolled) {
            return IRMutator::visit(op);
        }
        Stmt s = lower_copy(op);
        return s.defined() ? s : IRMutator::visit(op);
    }
    Stmt visit(const Store *op) override {
        // A lone copy outside any loop: one element.
        std::vector<const For *> none;
        Stmt s = lower_nest(op, op, none, {});
        return s.defined() ? s : IRMutator::visit(op);
    }

    /** The copy nest rooted at \p root, as DMA, or an undefined Stmt. */
    Stmt lower_copy(const For *root) {
        std::vector<const For *> loops;
        std::vector<std::pair<std::string, Expr>> lets;
        Stmt s = root;
        while (true) {
            if (const For *f = s.as<For>()) {
                if (f->for_type != ForType::Serial && f->for_type != ForType::Unrolled) return Stmt();
                loops.push_back(f);
                s = f->body;
            } else if (const LetStmt *l = s.as<LetStmt>()) {
                lets.push_back({l->name, l->value});
                s = l->body;
            } else {
                break;
            }
        }
        const Store *store = s.as<Store>();
        if (!store) return Stmt();
        return lower_nest(root, store, loops, lets);
    }

    Stmt lower_nest(const Stmt &root, const Store *store, const std::vector<const For *> &loops,
                    const std::vector<std::pair<std::string, Expr>> &lets) {
        if (const Select *sel = store->value.as<Select>()) {
            return lower_guarded(store, sel, loops, lets);
        }
        const Load *load = store->value.as<Load>();
        if (!load || !store->value.type().is_scalar() || !is_const_one(store->predicate) ||
            !is_const_one(load->predicate) || load->type != store->value.type()) {
            return Stmt();
        }
        bool is_put;
        if (ldm.count(store->name) && main.count(load->name)) {
            is_put = false;
        } else if (main.count(store->name) && ldm.count(load->name)) {
            is_put = true;
        } else {
            return Stmt();
        }
        const std::string ldm_name = is_put ? load->name : store->name;
        const std::string main_name = is_put ? store->name : load->name;
        Expr ldm_index = is_put ? load->index : store->index;
        Expr main_index = is_put ? store->index : load->index;
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
            ldm_index = substitute(it->first, it->second, ldm_index);
            main_index = substitute(it->first, it->second, main_index);
        }
        const int site = next_site++;
        const int bytes = load->type.bytes();

        std::vector<Dim> dims;  // innermost first
        bool affine = true;
        std::set<std::string> nest_vars;
        for (const For *f : loops) nest_vars.insert(f->name);
        for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
            const For *f = *it;
            for (const std::string &v : nest_vars) {
                affine &= !expr_uses_var(f->min, v) && !expr_uses_var(f->extent, v);
            }
            for (const auto &l : lets) {
                affine &= !expr_uses_var(f->min, l.first) && !expr_uses_var(f->extent, l.first);
            }
            if (is_const_one(f->extent)) {
                // A loop of one iteration is no dimension of the transfer.
                ldm_index = substitute(f->name, f->min, ldm_index);
                main_index = substitute(f->name, f->min, main_index);
                continue;
            }
            Var v(f->name);
            Dim d{f->name, f->min, f->extent,
                  simplify(substitute(f->name, v + 1, ldm_index) - ldm_index),
                  simplify(substitute(f->name, v + 1, main_index) - main_index)};
            for (const std::string &n : nest_vars) {
                affine &= !expr_uses_var(d.ldm_step, n) && !expr_uses_var(d.main_step, n);
            }
            dims.push_back(d);
        }
        auto at_mins = [&](Expr e, size_t from, size_t to) {
            for (size_t i = from; i < to; i++) e = substitute(dims[i].var, dims[i].min, e);
            return simplify(e);
        };
        // Each first difference is free of the nest's variables, so on the integer
        // lattice each index is exactly its value at the mins plus sum (v - min) * step.
        DmaSite info{ldm_name, main_name, is_put, ""};
        std::ostringstream shape;
        Stmt request_nest;
        if (!affine || (!dims.empty() && (!is_const_one(dims[0].ldm_step) ||
                                          !is_const_one(dims[0].main_step)))) {
            // One request per element, inside the original loops.
            Stmt req = request(is_put, ldm_name, ldm_index, main_name, main_index, 1, 1, 1, site);
            request_nest = rebuild_original(root, req);
            shape << "1 request per element (" << bytes << " B each): the copy is "
                  << (affine ? "not contiguous in its innermost dimension" : "not affine");
        } else {
            // Merge contiguous dimensions into one block.
            // No dimension left (one element): a block of one element.
            size_t used = dims.empty() ? 0 : 1;
            Expr block = dims.empty() ? Expr(1) : dims[0].extent;
            while (used < dims.size() && same_value(dims[used].ldm_step, block) &&
                   same_value(dims[used].main_step, block)) {
                block = simplify(block * dims[used].extent);
                used++;
            }
            Expr rows = 1, pitch = block;
            bool strided = false;
            if (used < dims.size() && same_value(dims[used].ldm_step, block)) {
                rows = dims[used].extent;
                pitch = dims[used].main_step;
                strided = true;
                used++;
            }
            Expr li = at_mins(ldm_index, 0, used), mi = at_mins(main_index, 0, used);
            Stmt req = request(is_put, ldm_name, li, main_name, mi, block, rows, pitch, site);
            if (strided && !proved(pitch >= block)) {
                // Rows overlap or run backwards in main memory: one request per row.
                Var r(unique_name("dma_row"));
                Stmt per_row = For::make(
                    r.name(), 0, rows, ForType::Serial, DeviceAPI::None,
                    request(is_put, ldm_name, li + r * block, main_name, mi + r * pitch, block, 1,
                            block, site));
                req = IfThenElse::make(pitch >= block, req, per_row);
            }
            for (size_t i = used; i < dims.size(); i++) {
                req = For::make(dims[i].var, dims[i].min, dims[i].extent, ForType::Serial,
                                DeviceAPI::None, req);
            }
            request_nest = req;
            Expr outer = 1;
            for (size_t i = used; i < dims.size(); i++) outer = outer * dims[i].extent;
            shape << simplify(outer) << " request(s) of " << simplify(rows) << " block(s) x "
                  << simplify(block * bytes) << " B";
            if (strided) shape << ", main-memory pitch " << simplify(pitch * bytes) << " B";
        }
        info.shape = shape.str();
        k.dma.push_back(info);
        return Block::make({dma_marker(dma_begin_intrinsic, site), request_nest, dma_marker(dma_wait_intrinsic, site)});
    }

    /** A zero-padded (guarded) staging copy, ldm[i(v)] = cond(v) ? main[j(v)] : fill, as
     * produced by staging a boundary-conditioned Func: the in-bounds box of each dimension
     * is solved from the condition; the box is brought by DMA compactly to the start of the
     * LDM buffer (one strided request per outer iteration), then, if the box is not the
     * whole buffer, spread out in place to its padded layout (backwards, so nothing is
     * overwritten before it is read) and the rest filled. Returns an undefined Stmt when the
     * copy is not of that form (it then stays CPE code). */
    Stmt lower_guarded(const Store *store, const Select *sel, const std::vector<const For *> &loops,
                       const std::vector<std::pair<std::string, Expr>> &lets) {
        const Load *load = sel->true_value.as<Load>();
        Expr fill = sel->false_value, cond = sel->condition;
        if (!load) {
            load = sel->false_value.as<Load>();
            fill = sel->true_value;
            cond = !sel->condition;
        }
        if (!load || !ldm.count(store->name) || !main.count(load->name) || !store->value.type().is_scalar() ||
            load->type != store->value.type() || !is_const_one(store->predicate) ||
            !is_const_one(load->predicate) || loops.empty()) {
            return Stmt();
        }
        Expr ldm_index = store->index, main_index = load->index;
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
            ldm_index = substitute(it->first, it->second, ldm_index);
            main_index = substitute(it->first, it->second, main_index);
            cond = substitute(it->first, it->second, cond);
            fill = substitute(it->first, it->second, fill);
        }
        std::vector<std::string> vars;  // innermost first
        for (auto it = loops.rbegin(); it != loops.rend(); ++it) vars.push_back((*it)->name);
        auto uses_nest = [&](const Expr &e) {
            for (const std::string &v : vars) {
                if (expr_uses_var(e, v)) return true;
            }
            return false;
        };
        if (uses_nest(fill)) return Stmt();
        for (const For *f : loops) {
            if (uses_nest(f->min) || uses_nest(f->extent)) return Stmt();
        }
        // Inside the box the clamps of the boundary condition are the identity.
        main_index = StripClamps(vars).mutate(main_index);

        // Conjuncts of the condition, grouped by the one nest variable each uses.
        std::vector<Expr> conjuncts, todo = {simplify(cond)};
        while (!todo.empty()) {
            Expr e = todo.back();
            todo.pop_back();
            if (const And *a = e.as<And>()) {
                todo.push_back(a->a);
                todo.push_back(a->b);
            } else {
                conjuncts.push_back(e);
            }
        }
        const size_t n = loops.size();
        std::vector<Expr> per_var(n, const_true());
        for (const Expr &c : conjuncts) {
            int which = -1;
            for (size_t d = 0; d < n; d++) {
                if (expr_uses_var(c, vars[d])) {
                    if (which >= 0) return Stmt();
                    which = int(d);
                }
            }
            if (which < 0) return Stmt();  // a condition that does not depend on the loops
            per_var[size_t(which)] = per_var[size_t(which)] && c;
        }
        std::vector<Expr> lo(n), hi(n), ext(n), full_min(n), full_ext(n);
        for (size_t d = 0; d < n; d++) {
            const For *f = loops[n - 1 - d];
            full_min[d] = f->min;
            full_ext[d] = f->extent;
            Expr l = f->min, h = simplify(f->min + f->extent - 1);
            if (!is_const_one(per_var[d])) {
                Interval i = solve_for_inner_interval(per_var[d], vars[d]);
                if (i.is_empty()) return Stmt();
                if (i.has_lower_bound()) l = max(l, i.min);
                if (i.has_upper_bound()) h = min(h, i.max);
            }
            lo[d] = simplify(l);
            hi[d] = simplify(h);
            ext[d] = simplify(max(h - l + 1, 0));
        }
        // Steps: the LDM side must be the dense padded layout, the main side contiguous in
        // the innermost dimension.
        std::vector<Expr> main_step(n);
        Expr dense = 1;
        for (size_t d = 0; d < n; d++) {
            Var v(vars[d]);
            const Expr ls = simplify(substitute(vars[d], v + 1, ldm_index) - ldm_index);
            main_step[d] = simplify(substitute(vars[d], v + 1, main_index) - main_index);
            if (!same_value(ls, dense) || uses_nest(main_step[d])) return Stmt();
            dense = simplify(dense * full_ext[d]);
        }
        if (!is_const_one(main_step[0])) return Stmt();

        const int site = next_site++;
        auto at = [&](Expr e, const std::vector<Expr> &values, size_t from) {
            for (size_t d = from; d < n; d++) e = substitute(vars[d], values[d], e);
            return simplify(e);
        };
        // The DMA: compact box rows, one strided request per outer iteration.
        std::vector<Expr> box_vars(n);
        for (size_t d = 0; d < n; d++) box_vars[d] = Variable::make(Int(32), vars[d]);
        std::vector<Expr> first = box_vars;
        first[0] = lo[0];
        if (n > 1) first[1] = lo[1];
        Expr compact = 0, cstride = 1;
        for (size_t d = 0; d < n; d++) {
            compact = compact + (box_vars[d] - lo[d]) * cstride;
            cstride = cstride * ext[d];
        }
        const Expr rows = n > 1 ? ext[1] : Expr(1), pitch = n > 1 ? main_step[1] : ext[0];
        Expr req_ldm = at(compact, first, 0), req_main = at(main_index, first, 0);
        Stmt req = request(false, store->name, req_ldm, load->name, req_main, ext[0], rows, pitch, site);
        if (n > 1 && !proved(pitch >= ext[0])) {
            Var r(unique_name("dma_row"));
            Stmt per_row = For::make(r.name(), 0, rows, ForType::Serial, DeviceAPI::None,
                                     request(false, store->name, req_ldm + r * ext[0], load->name, req_main + r * pitch,
                                             ext[0], 1, ext[0], site));
            req = IfThenElse::make(pitch >= ext[0], req, per_row);
        }
        for (size_t d = 2; d < n; d++) {
            req = For::make(vars[d], lo[d], ext[d], ForType::Serial, DeviceAPI::None, req);
        }
        Expr nonempty = const_true();
        for (size_t d = 0; d < n; d++) nonempty = nonempty && ext[d] > 0;
        req = IfThenElse::make(simplify(nonempty), req);

        // Spread the box to the padded layout, backwards, and fill the rest.
        Expr partial = const_false();
        for (size_t d = 0; d < n; d++) partial = partial || lo[d] != full_min[d] || ext[d] != full_ext[d];
        partial = simplify(partial);
        Stmt fix;
        if (!is_const_zero(partial)) {
            const Type t = store->value.type();
            std::vector<Expr> back(n);
            std::vector<std::string> rev(n);
            for (size_t d = 0; d < n; d++) {
                rev[d] = unique_name("spread");
                back[d] = hi[d] - Variable::make(Int(32), rev[d]);
            }
            Stmt spread = Store::make(store->name, Load::make(t, store->name, at(compact, back, 0), Buffer<>(), Parameter(), const_true(), ModulusRemainder()),
                                      at(ldm_index, back, 0), Parameter(), const_true(), ModulusRemainder());
            for (size_t d = 0; d < n; d++) {
                spread = For::make(rev[d], 0, ext[d], ForType::Serial, DeviceAPI::None, spread);
            }
            Expr inside = const_true();
            for (size_t d = 0; d < n; d++) inside = inside && box_vars[d] >= lo[d] && box_vars[d] <= hi[d];
            Stmt zero = IfThenElse::make(!inside, Store::make(store->name, fill, ldm_index, Parameter(), const_true(),
                                                              ModulusRemainder()));
            for (size_t d = 0; d < n; d++) {
                zero = For::make(vars[d], full_min[d], full_ext[d], ForType::Serial, DeviceAPI::None, zero);
            }
            fix = IfThenElse::make(partial, Block::make(spread, zero));
        }
        std::ostringstream shape;
        shape << "zero-padded window: the in-bounds box by " << (n > 2 ? "one strided request per outer iteration" : "one strided request")
              << " (rows of up to " << simplify(full_ext[0] * load->type.bytes()) << " B), spread in LDM at the image edges";
        k.dma.push_back({store->name, load->name, false, shape.str()});
        std::vector<Stmt> parts = {dma_marker(dma_begin_intrinsic, site), req, dma_marker(dma_wait_intrinsic, site)};
        if (fix.defined()) parts.push_back(fix);
        return Block::make(parts);
    }

    static Stmt request(bool is_put, const std::string &ldm_name, Expr ldm_index,
                        const std::string &main_name, Expr main_index, Expr block, Expr rows,
                        Expr pitch, int site) {
        std::vector<Expr> args(DmaArgCount);
        args[DmaIsPut] = is_put ? 1 : 0;
        args[DmaLdmBuffer] = StringImm::make(ldm_name);
        args[DmaLdmIndex] = simplify(ldm_index);
        args[DmaMainBuffer] = StringImm::make(main_name);
        args[DmaMainIndex] = simplify(main_index);
        args[DmaBlockElems] = simplify(block);
        args[DmaRows] = simplify(rows);
        args[DmaPitchElems] = simplify(pitch);
        args[DmaSiteId] = site;
        return Evaluate::make(Call::make(Int(32), dma_request_intrinsic, args, Call::Extern));
    }

    /** The original loops and lets of the nest, with \p inner in place of the store. */
    static Stmt rebuild_original(const Stmt &s, const Stmt &inner) {
        if (const For *f = s.as<For>()) {
            return For::make(f->name, f->min, f->extent, f->for_type, f->device_api,
                             rebuild_original(f->body, inner));
        }
        if (const LetStmt *l = s.as<LetStmt>()) {
            return LetStmt::make(l->name, l->value, rebuild_original(l->body, inner));
        }
        return inner;
    }
};

/** Names of main-memory buffers still loaded or stored directly. */
class DirectAccesses : public IRVisitor {
public:
    explicit DirectAccesses(const std::set<std::string> &main) : main(main) {}
    std::set<std::string> found;

private:
    using IRVisitor::visit;
    const std::set<std::string> &main;
    void visit(const Load *op) override {
        if (main.count(op->name)) found.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        if (main.count(op->name)) found.insert(op->name);
        IRVisitor::visit(op);
    }
};

}  // namespace

Stmt dma_marker(const char *intrinsic, int site) {
    return Evaluate::make(Call::make(Int(32), intrinsic, {site}, Call::Extern));
}

void inject_dma(CpeKernel &k) {
    std::set<std::string> ldm, main;
    for (const LdmBuffer &b : k.ldm) ldm.insert(b.name);
    for (const ClosureArg &a : k.args) {
        if (a.is_buffer) main.insert(a.name);
    }
    k.body = DmaInjector(k, ldm, main).mutate(k.body);
    DirectAccesses direct(main);
    k.body.accept(&direct);
    k.direct_accesses.assign(direct.found.begin(), direct.found.end());
}

}  // namespace sw
