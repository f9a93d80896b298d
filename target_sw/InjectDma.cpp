/** \file
 * Recognising LDM <-> main-memory copy nests and emitting DMA requests.
 */
#include "target_sw/InjectDma.h"

#include "target_sw/ConstantBounds.h"
#include "target_sw/PassSupport.h"
#include "target_sw/SunwayIR.h"

#include <optional>
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

bool proved(const Expr &cond) {
    return is_const_one(simplify(cond));
}

bool same_value(const Expr &a, const Expr &b) {
    return is_const_zero(simplify(a - b));
}

/** \p e as a < b (\p strict) or a <= b, turning > and >= around; false for other forms. */
bool as_less(const Expr &e, Expr &a, Expr &b, bool &strict) {
    if (const LT *c = e.as<LT>()) {
        a = c->a, b = c->b, strict = true;
    } else if (const LE *c = e.as<LE>()) {
        a = c->a, b = c->b, strict = false;
    } else if (const GT *c = e.as<GT>()) {
        a = c->b, b = c->a, strict = true;
    } else if (const GE *c = e.as<GE>()) {
        a = c->b, b = c->a, strict = false;
    } else {
        return false;
    }
    return true;
}

/** Appends to \p out the conjuncts of \p e (of !e if \p negate), with the comparisons of a
 * max (below a bound) or a min (above one) split into one per operand: the simplifier folds
 * the bounds tests of different dimensions into max(x, y) < n, which is x < n && y < n.
 * Returns false on a form it does not know (an equality, a disjunction). */
bool split_conjuncts(const Expr &e, bool negate, std::vector<Expr> &out) {
    if (const Not *n = e.as<Not>())
        return split_conjuncts(n->a, !negate, out);
    if (const And *a = e.as<And>()) {
        if (negate)
            return false;
        return split_conjuncts(a->a, false, out) && split_conjuncts(a->b, false, out);
    }
    if (const Or *o = e.as<Or>()) {
        if (!negate)
            return false;
        return split_conjuncts(o->a, true, out) && split_conjuncts(o->b, true, out);
    }
    if (is_const_one(e) && !negate)
        return true;
    Expr a, b;
    bool strict;
    if (!as_less(e, a, b, strict))
        return false;
    if (negate) { // !(a < b) is b <= a; !(a <= b) is b < a
        std::swap(a, b);
        strict = !strict;
    }
    auto cmp = [&](const Expr &x, const Expr &y) { return strict ? Expr(x < y) : Expr(x <= y); };
    if (const Max *m = a.as<Max>()) {
        return split_conjuncts(cmp(m->a, b), false, out) &&
               split_conjuncts(cmp(m->b, b), false, out);
    }
    if (const Min *m = b.as<Min>()) {
        return split_conjuncts(cmp(a, m->a), false, out) &&
               split_conjuncts(cmp(a, m->b), false, out);
    }
    out.push_back(cmp(a, b));
    return true;
}

/** The bound on \p var of \p c (a < b or a <= b, linear in var with a constant non-zero
 * coefficient): sets \p bound, and \p upper when it is var <= bound (else var >= bound).
 * Returns false when c is not of that form. */
bool solve_linear_bound(const Expr &c, const std::string &var, Expr &bound, bool &upper) {
    Expr a, b;
    bool strict;
    if (!as_less(c, a, b, strict))
        return false;
    const Expr diff = simplify(a - b); // c is diff < 0 (or <= 0)
    const Var v(var);
    const Expr step = simplify(substitute(var, v + 1, diff) - diff);
    const Expr rest = simplify(substitute(var, 0, diff));
    const int64_t *s = as_const_int(step);
    if (!s || *s == 0 || expr_uses_var(rest, var) || !same_value(diff, Expr(int(*s)) * v + rest))
        return false;
    // s v + rest < 0 is s v <= -rest - 1; with <= it is s v <= -rest.
    const Expr rhs = strict ? -rest - 1 : -rest;
    const int k = int(*s);
    upper = k > 0;
    // k v <= rhs: v <= floor(rhs / k) for k > 0; for k < 0, v >= ceil(rhs / k), which is
    // -floor(rhs / -k) (Halide's integer division rounds down).
    bound = upper ? simplify(rhs / k) : simplify(-(rhs / (-k)));
    return true;
}

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
            if (expr_uses_var(e, v))
                return true;
        }
        return false;
    }
    Expr visit(const Max *op) override {
        if (const Min *m = op->a.as<Min>()) {
            if (uses(m->a) && !uses(m->b) && !uses(op->b))
                return mutate(m->a);
        }
        if (uses(op->a) && !uses(op->b))
            return mutate(op->a);
        return IRMutator::visit(op);
    }
    Expr visit(const Min *op) override {
        if (const Max *m = op->a.as<Max>()) {
            if (uses(m->a) && !uses(m->b) && !uses(op->b))
                return mutate(m->a);
        }
        if (uses(op->a) && !uses(op->b))
            return mutate(op->a);
        return IRMutator::visit(op);
    }
};

class DmaInjector : public IRMutator {
public:
    DmaInjector(CpeKernel &k, const std::set<std::string> &ldm, const std::set<std::string> &main,
                const std::set<std::string> &rows_in_place, int lanes)
        : k(k), ldm(ldm), main(main), rows_in_place(rows_in_place), lanes(lanes) {}

private:
    using IRMutator::visit;
    CpeKernel &k;
    const std::set<std::string> &ldm, &main;
    const std::set<std::string> &rows_in_place; ///< inject_dma's parameter
    const int lanes; ///< of the float vectors that move data within the LDM (inject_dma)
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
                if (f->for_type != ForType::Serial && f->for_type != ForType::Unrolled)
                    return Stmt();
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
        if (!store)
            return Stmt();
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

        std::vector<Dim> dims; // innermost first
        bool affine = true;
        std::set<std::string> nest_vars;
        for (const For *f : loops)
            nest_vars.insert(f->name);
        // Affine inside the outermost loop (its variable taken as a constant): then a nest that
        // is not affine as a whole is lowered loop by loop below it.
        bool affine_inside = loops.size() > 1;
        for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
            const For *f = *it;
            const bool outermost = f == loops.front();
            for (const std::string &v : nest_vars) {
                const bool uses = expr_uses_var(f->min, v) || expr_uses_var(f->extent, v);
                affine &= !uses;
                affine_inside &= outermost || !uses;
            }
            for (const auto &l : lets) {
                const bool uses =
                    expr_uses_var(f->min, l.first) || expr_uses_var(f->extent, l.first);
                affine &= !uses;
                affine_inside &= outermost || !uses;
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
                const bool uses = expr_uses_var(d.ldm_step, n) || expr_uses_var(d.main_step, n);
                affine &= !uses;
                affine_inside &= outermost || n == loops.front()->name || !uses;
            }
            dims.push_back(d);
        }
        if (!affine && affine_inside) {
            // Not affine over the whole nest (a gather: each row's address is loaded from
            // memory): the outermost loop stays as it is and the nest inside it is tried on
            // its own (visit(For) recurses), e.g. one request per row instead of per element.
            next_site--;
            return Stmt();
        }
        auto at_mins = [&](Expr e, size_t from, size_t to) {
            for (size_t i = from; i < to; i++)
                e = substitute(dims[i].var, dims[i].min, e);
            return simplify(e);
        };
        // Each first difference is free of the nest's variables, so on the integer
        // lattice each index is exactly its value at the mins plus sum (v - min) * step.
        DmaSite info{ldm_name, main_name, is_put, ""};
        std::ostringstream shape;
        Stmt request_nest;
        if (!affine || (!dims.empty() &&
                        (!is_const_one(dims[0].ldm_step) || !is_const_one(dims[0].main_step)))) {
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
            Stmt compaction;
            if (is_put) {
                compaction =
                    compact_rows(dims, ldm_name, load->type, ldm_index, used, block, lanes);
            }
            if (compaction.defined()) {
                // The rows were compacted in the LDM: they form one block now.
            } else if (used < dims.size() && same_value(dims[used].ldm_step, block)) {
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
                Stmt per_row = For::make(r.name(), 0, rows, ForType::Serial, DeviceAPI::None,
                                         request(is_put, ldm_name, li + r * block, main_name,
                                                 mi + r * pitch, block, 1, block, site));
                req = IfThenElse::make(pitch >= block, req, per_row);
            }
            if (compaction.defined())
                req = Block::make(compaction, req);
            for (size_t i = used; i < dims.size(); i++) {
                req = For::make(dims[i].var, dims[i].min, dims[i].extent, ForType::Serial,
                                DeviceAPI::None, req);
            }
            request_nest = req;
            Expr outer = 1;
            for (size_t i = used; i < dims.size(); i++)
                outer = outer * dims[i].extent;
            shape << simplify(outer) << " request(s) of " << simplify(rows) << " block(s) x "
                  << simplify(block * bytes) << " B";
            if (strided)
                shape << ", main-memory pitch " << simplify(pitch * bytes) << " B";
            if (compaction.defined())
                shape << ", its rows first compacted in the LDM (padded LDM rows)";
        }
        info.shape = shape.str();
        k.dma.push_back(info);
        return Block::make({ir::make_dma_begin(site), request_nest, ir::make_dma_wait(site)});
    }

    /** A put of rows that follow each other in main memory (whole rows of the output: a
     * narrow map) from LDM rows padded to a longer pitch (rounded up to whole vectors): one
     * request per row costs a put block each, so the rows are first moved together in the
     * LDM, in place, forwards (row r from r * pitch to r * width: the target never lies above
     * the source, and no row is overwritten before it is read), in vectors of four then one
     * by one, and go as one block. The copy is the LDM buffer's last use (a tile's result
     * put back), so its padded layout may be given up. On success \p used and \p block
     * take in the compacted dimensions; otherwise returns an undefined Stmt. */
    static Stmt compact_rows(const std::vector<Dim> &dims, const std::string &ldm_name,
                             const Type &t, const Expr &ldm_index, size_t &used, Expr &block,
                             int lanes) {
        if (used != 1 || dims.size() < 2)
            return Stmt();
        const Expr pitch = dims[1].ldm_step;
        if (!same_value(dims[1].main_step, block) || same_value(pitch, block) ||
            !proved(pitch >= block) || !is_const(simplify(pitch)) || !is_const(simplify(block))) {
            return Stmt();
        }
        // The rows: dims[1] and the next dimensions that continue both layouts.
        size_t end = 2;
        Expr rows = dims[1].extent;
        while (end < dims.size() && same_value(dims[end].main_step, block * rows) &&
               same_value(dims[end].ldm_step, pitch * rows)) {
            rows = simplify(rows * dims[end].extent);
            end++;
        }
        Expr ldm_base = ldm_index; // the first row's start
        for (size_t i = 0; i < end; i++)
            ldm_base = substitute(dims[i].var, dims[i].min, ldm_base);
        ldm_base = simplify(ldm_base);
        auto move = [&](const Expr &from, const Expr &to, int lanes) {
            Expr f = from, d = to;
            if (lanes > 1)
                f = Ramp::make(from, 1, lanes), d = Ramp::make(to, 1, lanes);
            return Store::make(ldm_name,
                               Load::make(t.with_lanes(lanes), ldm_name, f, Buffer<>(), Parameter(),
                                          const_true(lanes), ModulusRemainder()),
                               d, Parameter(), const_true(lanes), ModulusRemainder());
        };
        const std::string r = unique_name("compact"), v = unique_name("compact"),
                          h = unique_name("compact");
        const Expr rv = Variable::make(Int(32), r), vv = Variable::make(Int(32), v),
                   hv = Variable::make(Int(32), h);
        const Expr src = ldm_base + (rv + 1) * pitch, dst = ldm_base + (rv + 1) * block;
        const Expr vectors = simplify(block / lanes), head = simplify(block / lanes * lanes);
        Stmt row = Block::make(
            For::make(v, 0, vectors, ForType::Serial, DeviceAPI::None,
                      move(simplify(src + vv * lanes), simplify(dst + vv * lanes), lanes)),
            For::make(h, 0, simplify(block - head), ForType::Serial, DeviceAPI::None,
                      move(simplify(src + head + hv), simplify(dst + head + hv), 1)));
        Stmt all = For::make(r, 0, simplify(rows - 1), ForType::Serial, DeviceAPI::None, row);
        used = end;
        block = simplify(block * rows);
        return all;
    }

    /** A guarded staging copy ldm[ldm_index] = cond ? main[main_index] : fill, the enclosing
     * lets substituted and the boundary condition's clamps stripped from main_index (inside
     * the box they are the identity). */
    struct GuardedCopy {
        const Store *store = nullptr;
        const Load *load = nullptr;
        Expr fill, cond, ldm_index, main_index;
        std::vector<std::string> vars; ///< the nest's loop variables, innermost first

        bool uses_nest(const Expr &e) const {
            for (const std::string &v : vars) {
                if (expr_uses_var(e, v))
                    return true;
            }
            return false;
        }
        /** \p e with vars[d] = values[d] for d >= from. */
        Expr at(Expr e, const std::vector<Expr> &values, size_t from = 0) const {
            for (size_t d = from; d < vars.size(); d++)
                e = substitute(vars[d], values[d], e);
            return simplify(e);
        }
    };

    /** The in-bounds box of a guarded copy, per dimension innermost first: [lo, hi] (ext
     * elements) inside the loop's [full_min, full_min + full_ext); guard: the conjuncts free
     * of the nest, which guard the whole box; the steps of the LDM and main-memory indices. */
    struct GuardedBox {
        std::vector<Expr> lo, hi, ext, full_min, full_ext, ldm_step, main_step;
        Expr guard = const_true();
    };

    /** A zero-padded (guarded) staging copy, ldm[i(v)] = cond(v) ? main[j(v)] : fill, as
     * produced by staging a boundary-conditioned Func: the in-bounds box of each dimension
     * is solved from the condition (conjuncts free of the nest's variables guard the whole
     * box); the box is brought by DMA straight to its place in the padded layout, and the
     * elements outside it are filled (fill_outside_box). Returns an undefined Stmt when the
     * copy is not of that form (it then stays CPE code). */
    Stmt lower_guarded(const Store *store, const Select *sel, const std::vector<const For *> &loops,
                       const std::vector<std::pair<std::string, Expr>> &lets) {
        std::optional<GuardedCopy> copy = match_guarded_copy(store, sel, loops, lets);
        if (!copy)
            return Stmt();
        std::optional<GuardedBox> box = solve_box(*copy, loops);
        if (!box || !find_steps(*copy, *box))
            return Stmt();
        const int site = next_site++;
        Stmt spread;
        Stmt req =
            box_requests(*copy, *box, site, spread, !rows_in_place.count(copy->store->name), lanes);
        Expr nonempty = box->guard;
        for (size_t d = 0; d < copy->vars.size(); d++)
            nonempty = nonempty && box->ext[d] > 0;
        req = IfThenElse::make(simplify(nonempty), req);
        const Stmt fix = fix_padding(*copy, *box, spread);
        record_guarded_site(*copy, *box);
        std::vector<Stmt> parts = {ir::make_dma_begin(site), req, ir::make_dma_wait(site)};
        if (fix.defined())
            parts.push_back(fix);
        return Block::make(parts);
    }

    /** The copy \p store = \p sel as a GuardedCopy, if it is one: a scalar unpredicated store
     * into an LDM buffer of a select between a main-memory load of the same type and a fill
     * free of the nest, in loops whose bounds are free of it. */
    std::optional<GuardedCopy>
    match_guarded_copy(const Store *store, const Select *sel, const std::vector<const For *> &loops,
                       const std::vector<std::pair<std::string, Expr>> &lets) const {
        GuardedCopy c;
        c.store = store;
        c.load = sel->true_value.as<Load>();
        c.fill = sel->false_value;
        c.cond = sel->condition;
        if (!c.load) {
            c.load = sel->false_value.as<Load>();
            c.fill = sel->true_value;
            c.cond = !sel->condition;
        }
        const Load *load = c.load;
        if (!load || !ldm.count(store->name) || !main.count(load->name) ||
            !store->value.type().is_scalar() || load->type != store->value.type() ||
            !is_const_one(store->predicate) || !is_const_one(load->predicate) || loops.empty()) {
            return std::nullopt;
        }
        c.ldm_index = store->index;
        c.main_index = load->index;
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
            c.ldm_index = substitute(it->first, it->second, c.ldm_index);
            c.main_index = substitute(it->first, it->second, c.main_index);
            c.cond = substitute(it->first, it->second, c.cond);
            c.fill = substitute(it->first, it->second, c.fill);
        }
        for (auto it = loops.rbegin(); it != loops.rend(); ++it)
            c.vars.push_back((*it)->name);
        if (c.uses_nest(c.fill))
            return std::nullopt;
        for (const For *f : loops) {
            if (c.uses_nest(f->min) || c.uses_nest(f->extent))
                return std::nullopt;
        }
        c.main_index = StripClamps(c.vars).mutate(c.main_index);
        return c;
    }

    /** The in-bounds box from the copy's condition: each conjunct a linear bound on one nest
     * variable, or free of them (then it guards the whole box). None if a conjunct couples
     * two dimensions or is not linear. */
    static std::optional<GuardedBox> solve_box(const GuardedCopy &c,
                                               const std::vector<const For *> &loops) {
        std::vector<Expr> conjuncts;
        if (!split_conjuncts(simplify(c.cond), false, conjuncts))
            return std::nullopt;
        const size_t n = loops.size();
        GuardedBox b;
        b.lo.resize(n);
        b.hi.resize(n);
        b.ext.resize(n);
        b.full_min.resize(n);
        b.full_ext.resize(n);
        for (size_t d = 0; d < n; d++) {
            const For *f = loops[n - 1 - d];
            b.full_min[d] = f->min;
            b.full_ext[d] = f->extent;
            b.lo[d] = f->min;
            b.hi[d] = simplify(f->min + f->extent - 1);
        }
        for (const Expr &conjunct : conjuncts) {
            int which = -1;
            for (size_t d = 0; d < n; d++) {
                if (expr_uses_var(conjunct, c.vars[d])) {
                    if (which >= 0)
                        return std::nullopt; // couples two dimensions: not a box
                    which = int(d);
                }
            }
            if (which < 0) {
                b.guard = b.guard && conjunct;
                continue;
            }
            const size_t d = size_t(which);
            Expr bound;
            bool upper;
            if (!solve_linear_bound(conjunct, c.vars[d], bound, upper))
                return std::nullopt;
            if (upper) {
                b.hi[d] = simplify(min(b.hi[d], bound));
            } else {
                b.lo[d] = simplify(max(b.lo[d], bound));
            }
        }
        for (size_t d = 0; d < n; d++)
            b.ext[d] = simplify(max(b.hi[d] - b.lo[d] + 1, 0));
        return b;
    }

    /** The index steps per dimension, into \p b. False unless the LDM side is a row-major
     * layout of the padded window (rows may be longer than the loop, e.g. rounded up for
     * vectors) and the main side is contiguous in the innermost dimension. */
    static bool find_steps(const GuardedCopy &c, GuardedBox &b) {
        const size_t n = c.vars.size();
        b.main_step.resize(n);
        b.ldm_step.resize(n);
        Expr row = 1; // the LDM span of the dimensions inside d
        for (size_t d = 0; d < n; d++) {
            Var v(c.vars[d]);
            const Expr ls = simplify(substitute(c.vars[d], v + 1, c.ldm_index) - c.ldm_index);
            b.main_step[d] = simplify(substitute(c.vars[d], v + 1, c.main_index) - c.main_index);
            if (c.uses_nest(ls) || c.uses_nest(b.main_step[d]))
                return false;
            if (d == 0 ? !is_const_one(ls) : !proved(ls >= row))
                return false;
            b.ldm_step[d] = ls;
            row = simplify(ls * b.full_ext[d]);
        }
        return is_const_one(b.main_step[0]);
    }

    /** The DMA of the box, landing straight in its padded place. The LDM side of a request is
     * contiguous, so the box rows go as one strided request when they follow each other in
     * the LDM (the box spans the padded row), else one request per row; rows that are whole
     * rows of the source go as one contiguous block. Where they are whole rows of the source
     * but not consecutive in the LDM, the box comes compactly and \p spread (set here) moves
     * it to its place; unless \p compact is false (rows_in_place): then one request per row. */
    static Stmt box_requests(const GuardedCopy &c, const GuardedBox &b, int site, Stmt &spread,
                             bool compact, int lanes) {
        const size_t n = c.vars.size();
        const std::string &ldm_name = c.store->name, &main_name = c.load->name;
        std::vector<Expr> box_vars(n);
        for (size_t d = 0; d < n; d++)
            box_vars[d] = Variable::make(Int(32), c.vars[d]);
        std::vector<Expr> first = box_vars;
        first[0] = b.lo[0];
        if (n > 1)
            first[1] = b.lo[1];
        const Expr rows = n > 1 ? b.ext[1] : Expr(1), pitch = n > 1 ? b.main_step[1] : b.ext[0];
        const Expr req_ldm = c.at(c.ldm_index, first), req_main = c.at(c.main_index, first);
        Stmt req =
            request(false, ldm_name, req_ldm, main_name, req_main, b.ext[0], rows, pitch, site);
        if (n > 1) {
            Var r(unique_name("dma_row"));
            const Stmt per_row =
                For::make(r.name(), 0, rows, ForType::Serial, DeviceAPI::None,
                          request(false, ldm_name, simplify(req_ldm + r * b.ldm_step[1]), main_name,
                                  simplify(req_main + r * pitch), b.ext[0], 1, b.ext[0], site));
            // One strided request needs consecutive LDM rows and main-memory rows that do
            // not overlap.
            const Expr strided = b.ext[0] == b.ldm_step[1] && pitch >= b.ext[0];
            if (proved(!strided)) {
                req = per_row;
            } else if (!proved(strided)) {
                req = IfThenElse::make(strided, req, per_row);
            }
            if (!proved(pitch != b.ext[0])) {
                // Rows that are whole rows of the source (the box spans its width) follow each
                // other in main memory: one contiguous block instead of one block per row.
                const Expr all = b.ext[0] * rows;
                const Stmt whole =
                    request(false, ldm_name, req_ldm, main_name, req_main, all, 1, all, site);
                const Expr both = pitch == b.ext[0] && b.ldm_step[1] == b.ext[0];
                req = proved(both) ? whole : IfThenElse::make(both, whole, req);
            }
        }
        for (size_t d = 2; d < n; d++) {
            req = For::make(c.vars[d], b.lo[d], b.ext[d], ForType::Serial, DeviceAPI::None, req);
        }
        if (compact && n > 1 && !proved(pitch != b.ext[0]))
            req = compact_then_spread(c, b, site, box_vars, first, req_main, req, spread, lanes);
        return req;
    }

    /** Box rows that are whole rows of the source (a narrow image: the box spans its width)
     * but not consecutive in the LDM: one contiguous request per outer iteration is far
     * cheaper than one per row (each costs a block), so the box comes compactly to the start
     * of the copy's region and \p spread moves it to its place in the LDM, backwards (no
     * element is overwritten before it is read), in vectors of \p lanes where the LDM rows are
     * contiguous. Returns \p req chosen at run time against the
     * compact request. */
    static Stmt compact_then_spread(const GuardedCopy &c, const GuardedBox &b, int site,
                                    const std::vector<Expr> &box_vars,
                                    const std::vector<Expr> &first, const Expr &req_main,
                                    const Stmt &req, Stmt &spread, int lanes) {
        const size_t n = c.vars.size();
        const std::string &ldm_name = c.store->name;
        const Expr rows = b.ext[1], pitch = b.main_step[1];
        const Expr compact_rows = pitch == b.ext[0] && b.ldm_step[1] != b.ext[0];
        const Expr ldm_base = c.at(c.ldm_index, b.full_min);
        Expr compact = ldm_base, cstride = 1;
        for (size_t d = 0; d < n; d++) {
            compact = compact + (box_vars[d] - b.lo[d]) * cstride;
            cstride = cstride * b.ext[d];
        }
        const Expr all = b.ext[0] * rows;
        Stmt whole = request(false, ldm_name, c.at(compact, first), c.load->name, req_main, all, 1,
                             all, site);
        for (size_t d = 2; d < n; d++) {
            whole =
                For::make(c.vars[d], b.lo[d], b.ext[d], ForType::Serial, DeviceAPI::None, whole);
        }
        const Type t = c.store->value.type();
        // Moves the \p lanes elements from \p at on along the row.
        auto move = [&](const std::vector<Expr> &at, int lanes) {
            Expr from = c.at(compact, at), to = c.at(c.ldm_index, at);
            if (lanes > 1)
                from = Ramp::make(from, 1, lanes), to = Ramp::make(to, 1, lanes);
            return Store::make(ldm_name,
                               Load::make(t.with_lanes(lanes), ldm_name, from, Buffer<>(),
                                          Parameter(), const_true(lanes), ModulusRemainder()),
                               to, Parameter(), const_true(lanes), ModulusRemainder());
        };
        std::vector<Expr> back(n);
        std::vector<std::string> rev(n);
        for (size_t d = 0; d < n; d++) {
            rev[d] = unique_name("spread");
            back[d] = b.hi[d] - Variable::make(Int(32), rev[d]);
        }
        // Each row backwards: where the row is contiguous in the LDM (the compact box is), in
        // vectors of `lanes` from its end, then its first ext % lanes elements one by one, each
        // moved before anything above it is written (the target never lies below the source).
        if (proved(b.ldm_step[0] == 1)) {
            std::vector<Expr> vec = back, head = back;
            vec[0] = b.hi[0] - lanes * Variable::make(Int(32), rev[0]) - (lanes - 1);
            const std::string h = unique_name("spread");
            head[0] = b.lo[0] + b.ext[0] % lanes - 1 - Variable::make(Int(32), h);
            spread = Block::make(For::make(rev[0], 0, simplify(b.ext[0] / lanes), ForType::Serial,
                                           DeviceAPI::None, move(vec, lanes)),
                                 For::make(h, 0, simplify(b.ext[0] % lanes), ForType::Serial,
                                           DeviceAPI::None, move(head, 1)));
        } else {
            spread =
                For::make(rev[0], 0, b.ext[0], ForType::Serial, DeviceAPI::None, move(back, 1));
        }
        for (size_t d = 1; d < n; d++) {
            spread = For::make(rev[d], 0, b.ext[d], ForType::Serial, DeviceAPI::None, spread);
        }
        spread = IfThenElse::make(simplify(compact_rows && b.guard), spread);
        return IfThenElse::make(compact_rows, whole, req);
    }

    /** What follows the DMA: the spread of a compact box (whenever the box came compactly,
     * padded or not: the LDM rows may be longer than the window's, e.g. rounded up to whole
     * vectors), then the fill, written where the box is not, and only there. */
    static Stmt fix_padding(const GuardedCopy &c, const GuardedBox &b, const Stmt &spread) {
        Expr partial = !b.guard;
        for (size_t d = 0; d < c.vars.size(); d++) {
            partial = partial || b.lo[d] != b.full_min[d] || b.ext[d] != b.full_ext[d];
        }
        partial = simplify(partial);
        Stmt fix = spread;
        if (!is_const_zero(partial)) {
            Stmt fill_rest = IfThenElse::make(
                partial, fill_outside_box(c.store, c.fill, c.ldm_index, c.vars, b.lo, b.hi,
                                          b.full_min, b.full_ext, b.guard));
            // Without a spread, nothing but the fill writes outside the box: marked, so that
            // HoistPaddingFill may write it once per slot instead of after every transfer.
            if (!spread.defined())
                fill_rest = ir::make_padding_fill(c.store->name, fill_rest);
            fix = fix.defined() ? Block::make(fix, fill_rest) : fill_rest;
        }
        return fix;
    }

    /** The kernel's report line of a zero-padded window's DMA. */
    void record_guarded_site(const GuardedCopy &c, const GuardedBox &b) {
        std::ostringstream shape;
        shape << "zero-padded window: the in-bounds box by DMA straight to its padded place ("
              << (c.vars.size() > 2 ? "per outer iteration " : "")
              << "one strided request, or one request per row when the box "
              << "is narrower than the padded row, or one contiguous request spread in the LDM "
                 "when its rows are whole "
              << "rows of the source; rows of up to "
              << simplify(b.full_ext[0] * c.load->type.bytes())
              << " B), the padding filled at the edges only";
        k.dma.push_back({c.store->name, c.load->name, false, shape.str()});
    }

    /** Stores \p fill to every element of a staged window that the in-bounds box [lo, hi]
     * does not cover: when the box is guarded off (\p box_guard false), everywhere; else, in
     * the two innermost dimensions, the rows outside the box whole and, in the rows of the
     * box, the parts left and right of it (an empty box leaves no element out). An outer
     * dimension the box may not cover whole falls back to testing every element. */
    static Stmt fill_outside_box(const Store *store, const Expr &fill, const Expr &ldm_index,
                                 const std::vector<std::string> &vars, const std::vector<Expr> &lo,
                                 const std::vector<Expr> &hi, const std::vector<Expr> &full_min,
                                 const std::vector<Expr> &full_ext, const Expr &box_guard) {
        const size_t n = vars.size();
        auto put = [&]() {
            return Store::make(store->name, fill, ldm_index, Parameter(), const_true(),
                               ModulusRemainder());
        };
        auto loop = [](const std::string &v, const Expr &min, const Expr &extent,
                       const Stmt &body) {
            return For::make(v, simplify(min), simplify(extent), ForType::Serial, DeviceAPI::None,
                             body);
        };
        auto var = [&](size_t d) { return Variable::make(Int(32), vars[d]); };
        Stmt all = put();
        for (size_t d = 0; d < n; d++)
            all = loop(vars[d], full_min[d], full_ext[d], all);
        bool outer_whole = true;
        for (size_t d = 2; d < n; d++) {
            outer_whole = outer_whole &&
                          proved(lo[d] == full_min[d] && hi[d] == full_min[d] + full_ext[d] - 1);
        }
        Stmt edges;
        if (outer_whole) {
            const Expr end0 = full_min[0] + full_ext[0];
            const Expr right_min = max(hi[0] + 1, full_min[0]);
            const Stmt row_edges = Block::make(
                loop(vars[0], full_min[0], max(min(lo[0], end0) - full_min[0], 0), put()),
                loop(vars[0], right_min, max(end0 - right_min, 0), put()));
            edges = row_edges;
            if (n > 1) {
                const Stmt row_all = loop(vars[0], full_min[0], full_ext[0], put());
                edges =
                    loop(vars[1], full_min[1], full_ext[1],
                         IfThenElse::make(var(1) < lo[1] || var(1) > hi[1], row_all, row_edges));
            }
            for (size_t d = 2; d < n; d++)
                edges = loop(vars[d], full_min[d], full_ext[d], edges);
        } else {
            Expr inside = const_true();
            for (size_t d = 0; d < n; d++)
                inside = inside && var(d) >= lo[d] && var(d) <= hi[d];
            edges = IfThenElse::make(!inside, put());
            for (size_t d = 0; d < n; d++)
                edges = loop(vars[d], full_min[d], full_ext[d], edges);
        }
        return is_const_one(box_guard) ? edges : IfThenElse::make(box_guard, edges, all);
    }

    static Stmt request(bool is_put, const std::string &ldm_name, Expr ldm_index,
                        const std::string &main_name, Expr main_index, Expr block, Expr rows,
                        Expr pitch, int site) {
        ir::DmaRequest r;
        r.is_put = is_put;
        r.ldm_buffer = ldm_name;
        r.ldm_index = simplify(ldm_index);
        r.main_buffer = main_name;
        r.main_index = simplify(main_index);
        r.block_elems = simplify(block);
        r.rows = simplify(rows);
        r.pitch_elems = simplify(pitch);
        r.site = site;
        return ir::make_dma_request(r);
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
        if (main.count(op->name))
            found.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        if (main.count(op->name))
            found.insert(op->name);
        IRVisitor::visit(op);
    }
};

} // namespace

void inject_dma(CpeKernel &k, int lanes, const std::set<std::string> &rows_in_place) {
    std::set<std::string> ldm, main;
    for (const LdmBuffer &b : k.ldm)
        ldm.insert(b.name);
    for (const ClosureArg &a : k.args) {
        if (a.is_buffer)
            main.insert(a.name);
    }
    k.body = DmaInjector(k, ldm, main, rows_in_place, lanes).mutate(k.body);
    DirectAccesses direct(main);
    k.body.accept(&direct);
    k.direct_accesses.assign(direct.found.begin(), direct.found.end());
}

} // namespace sw
