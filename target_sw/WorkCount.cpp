/** \file
 * Counting the work of straight-line CPE code.
 */
#include "target_sw/WorkCount.h"

#include "target_sw/SunwayIR.h"

#include <algorithm>
#include <map>
#include <set>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class Counter : public IRVisitor {
public:
    Counter(const std::set<std::string> &ldm, const Machine &m) : ldm(ldm), m(m) {}
    Work w;

private:
    using IRVisitor::visit;
    const std::set<std::string> &ldm;
    const Machine &m;

    static int lanes(const Type &t) { return t.lanes(); }

    // Dependency chains of floating-point operations (see WorkCount.h): depth_ is the chain
    // length of the value of the expression visited last; a load from a place stored earlier
    // in the region, or a variable, continues the chain of the value stored or bound.
    int64_t depth_ = 0;
    std::map<std::string, std::map<Expr, int64_t, IRDeepCompare>> stored_depth;
    std::map<std::string, int64_t> var_depth;
    std::map<Expr, int64_t, IRDeepCompare> splat_depth;
    /** Visits \p e and returns its chain length. */
    int64_t sub(const Expr &e) {
        depth_ = 0;
        e.accept(this);
        return depth_;
    }
    /** Sets the result of a floating-point operation over operands of chain length \p d. */
    void fp_result(int64_t d) {
        depth_ = d + 1;
        w.chain = std::max(w.chain, depth_);
    }

    // Integer subexpressions (address arithmetic) are computed once per region, as any
    // compiler's common-subexpression elimination does: later occurrences are free.
    std::set<Expr, IRDeepCompare> seen;
    bool repeated_int(const Expr &e) {
        if (e.type().is_float() || is_const(e) || e.as<Variable>())
            return false;
        if (invariant(e))
            return true;
        return !seen.insert(e).second;
    }
    /** In a loop body, integer work that does not change with the loop is hoisted out of it
     * by any compiler (loop-invariant code motion): it is not counted per iteration. */
    bool invariant(const Expr &e) const {
        if (variant.empty())
            return false;
        for (const std::string &v : variant) {
            if (expr_uses_var(e, v))
                return false;
        }
        return true;
    }

public:
    std::set<std::string> variant; ///< the loop variable and the lets that depend on it

private:
    /** Visits an address as a compiler computes it: the sum is reassociated, its constant
     * terms become the load/store displacement (free), the terms invariant in the loop are
     * added up once outside it (free per iteration), and the rest is computed per
     * iteration: each term's own work, one add per further term, one to add the invariant
     * base; loads and stores with the same variable part share it. */
    void address(const Expr &index) {
        Expr base = index;
        if (const Ramp *r = base.as<Ramp>())
            base = r->base;
        std::vector<Expr> terms, varying;
        flatten_sum(base, terms);
        Expr key, invariant_base;
        for (const Expr &t : terms) {
            if (is_const(t))
                continue;
            if (invariant(t)) {
                invariant_base = invariant_base.defined() ? invariant_base + t : t;
                continue;
            }
            varying.push_back(t);
            key = key.defined() ? key + t : t;
        }
        if (varying.empty())
            return;
        for (const Expr &t : varying)
            visit_operand(t);
        // The variable part plus the invariant base, added up once per distinct pair.
        if (invariant_base.defined())
            key = key + invariant_base;
        if (seen.insert(key).second) {
            w.either += int64_t(varying.size()) - 1 + (invariant_base.defined() ? 1 : 0);
        }
    }
    static void flatten_sum(const Expr &e, std::vector<Expr> &terms) {
        if (const Add *a = e.as<Add>()) {
            flatten_sum(a->a, terms);
            flatten_sum(a->b, terms);
        } else {
            terms.push_back(e);
        }
    }
    int64_t visit_operand(const Expr &e) {
        depth_ = 0;
        if (!repeated_int(e))
            e.accept(this);
        return depth_;
    }

    void arith(const Type &t, const Expr &a, const Expr &b, int64_t flops) {
        const int64_t da = visit_operand(a), db = visit_operand(b);
        if (t.is_float()) {
            w.p0++;
            w.flops += flops * lanes(t);
            fp_result(std::max(da, db));
        } else {
            w.either++;
            depth_ = std::max(da, db);
        }
    }
    void visit(const Add *op) override {
        const Mul *mul = op->a.as<Mul>() ? op->a.as<Mul>() : op->b.as<Mul>();
        if (op->type.is_float() && mul) {
            // a*b + c issues as one fused multiply-add.
            const int64_t da = sub(mul->a), db = sub(mul->b),
                          dc = sub(op->a.as<Mul>() ? op->b : op->a);
            w.p0++;
            w.flops += 2 * lanes(op->type);
            fp_result(std::max({da, db, dc}));
            return;
        }
        arith(op->type, op->a, op->b, 1);
    }
    void visit(const Sub *op) override { arith(op->type, op->a, op->b, 1); }
    void visit(const Mul *op) override { arith(op->type, op->a, op->b, 1); }
    void visit(const Div *op) override {
        arith(op->type, op->a, op->b, 1);
        if (op->type.is_float()) {
            w.slow_cycles += m.div_cycles;
        } else if (!is_const(op->b)) {
            w.either += 3;
        }
    }
    void visit(const Mod *op) override {
        arith(op->type, op->a, op->b, 0);
        if (!op->type.is_float() && !is_const(op->b))
            w.either += 3;
    }
    // A floatv4 lane shuffle of two vectors (CodeGen_CPE: simd_vshff): one vector
    // instruction on P0 [U] (SW26010.md: P0 takes floating point and vector instructions).
    void visit(const Shuffle *op) override {
        int64_t d = 0;
        for (const Expr &v : op->vectors)
            d = std::max(d, sub(v));
        w.p0++;
        fp_result(d);
    }
    // A floatv4 min / max is a subtraction and a select (CodeGen_CPE: simd_vsellts).
    void visit(const Min *op) override { min_max(op->type, op->a, op->b); }
    void visit(const Max *op) override { min_max(op->type, op->a, op->b); }
    void min_max(const Type &t, const Expr &a, const Expr &b) {
        arith(t, a, b, 0);
        if (t.is_float() && t.lanes() > 1) {
            w.p0++;
            fp_result(depth_);
        }
    }
    void compare(const Expr &a, const Expr &b) {
        const int64_t da = visit_operand(a), db = visit_operand(b);
        if (a.type().is_float()) {
            w.p0++;
            fp_result(std::max(da, db));
        } else {
            w.either++;
            depth_ = std::max(da, db);
        }
    }
    void visit(const EQ *op) override { compare(op->a, op->b); }
    void visit(const NE *op) override { compare(op->a, op->b); }
    void visit(const LT *op) override { compare(op->a, op->b); }
    void visit(const LE *op) override { compare(op->a, op->b); }
    void visit(const GT *op) override { compare(op->a, op->b); }
    void visit(const GE *op) override { compare(op->a, op->b); }
    void visit(const And *op) override { arith(op->type, op->a, op->b, 0); }
    void visit(const Or *op) override { arith(op->type, op->a, op->b, 0); }
    void visit(const Not *op) override {
        sub(op->a);
        w.either++;
    }
    void visit(const Select *op) override {
        const int64_t d = std::max({sub(op->condition), sub(op->true_value), sub(op->false_value)});
        if (op->type.is_float()) {
            w.p0++;
            fp_result(d);
        } else {
            w.either++;
            depth_ = d;
        }
    }
    void visit(const Broadcast *op) override {
        // A splat of a scalar into a vector register, printed as simd_set_floatv4: the real
        // simd.h builds the vector through a union in memory (Machine::splat_p1); the same
        // splat twice in a region is made once (common-subexpression elimination).
        auto it = splat_depth.find(Expr(op));
        if (it != splat_depth.end()) {
            depth_ = it->second;
            return;
        }
        const Load *l = op->value.as<Load>();
        int64_t d;
        if (l && ldm.count(l->name) && m.broadcast_load) {
            // A value of the LDM splatted by one load that broadcasts it (simd_loade, ldse):
            // its address, and one P1 instruction instead of a scalar load and a splat.
            address(l->index);
            w.p1 += 1;
            w.ldm_accesses++;
            d = 0;
        } else {
            d = sub(op->value);
            w.p1 += m.splat_p1;
        }
        splat_depth[Expr(op)] = d;
        depth_ = d;
    }
    void visit(const Cast *op) override {
        const int64_t d = sub(op->value);
        if (op->type.is_float() != op->value.type().is_float()) {
            w.p0++;
            fp_result(d);
        } else {
            depth_ = d;
        }
    }
    void visit(const Variable *op) override {
        auto it = var_depth.find(op->name);
        depth_ = it == var_depth.end() ? 0 : it->second;
    }
    void visit(const Let *op) override {
        var_depth[op->name] = sub(op->value);
        sub(op->body);
    }
    /** One load or store of \p type from or to \p buffer. */
    void access(const std::string &buffer, const Type &type, const ModulusRemainder &alignment,
                bool gather = false) {
        if (ir::is_register(buffer))
            return; // a promoted accumulator: a register
        // Vector accesses proved aligned (AlignVectorAccesses.h) are printed as simd_load /
        // simd_store, one P1 instruction; the others as simd_loadu/simd_storeu, two each
        // (vlds_ul + vlds_uh) [V] DOC; scalar ones one.
        // A gathered vector: one scalar load per lane and the simd_set_floatv4 that builds it.
        if (gather) {
            w.p1 += type.lanes() + m.vector_set_p1;
        } else {
            const bool unaligned = type.lanes() > 1 && !ir::vector_access_aligned(type, alignment);
            w.p1 += unaligned ? m.unaligned_vector_access_p1 : 1;
        }
        if (ldm.count(buffer)) {
            w.ldm_accesses++;
        } else {
            w.direct_accesses++;
            w.slow_cycles += m.direct_access_cycles;
        }
    }
    void visit(const Load *op) override {
        address(op->index);
        // A strided vector load is printed as four scalar loads built into a vector
        // (sw_gather4: simd_set_floatv4, Machine::splat_p1).
        const Ramp *r = op->index.as<Ramp>();
        access(op->name, op->type, op->alignment, r && !is_const_one(r->stride));
        depth_ = 0;
        auto b = stored_depth.find(op->name);
        if (b != stored_depth.end()) {
            auto it = b->second.find(op->index);
            if (it != b->second.end())
                depth_ = it->second;
        }
    }
    void visit(const Call *op) override {
        int64_t d = 0;
        for (const Expr &a : op->args)
            d = std::max(d, sub(a));
        depth_ = d;
        if (op->call_type != Call::PureExtern && op->call_type != Call::Extern)
            return;
        // DMA and launch intrinsics: timed by the emulator; the register-communication sharing:
        // counted where it is printed (regcomm_share_work), its puts and gets by the emulator.
        if (ir::is_sunway_intrinsic(op))
            return;
        const std::string &n = op->name;
        w.p0++;
        if (op->type.is_float())
            fp_result(d);
        if (n.rfind("sqrt", 0) == 0) {
            w.slow_cycles += m.sqrt_cycles;
        } else if (n.rfind("exp", 0) == 0 || n.rfind("log", 0) == 0 || n.rfind("pow", 0) == 0) {
            w.slow_cycles += m.transcendental_cycles;
        }
    }

    void visit(const LetStmt *op) override {
        var_depth[op->name] = sub(op->value);
        if (!variant.empty() && !invariant(op->value))
            variant.insert(op->name);
        op->body.accept(this);
    }

    // Statements: count this region only.
    void visit(const Store *op) override {
        const int64_t d = sub(op->value);
        address(op->index);
        access(op->name, op->value.type(), op->alignment);
        stored_depth[op->name][op->index] = d;
    }
    void visit(const For *op) override {
        op->min.accept(this);
        op->extent.accept(this);
    }
    void visit(const IfThenElse *op) override {
        op->condition.accept(this);
        w.p1++;
    }
};

} // namespace

Work count_straight_line(const Stmt &region, bool loop_body,
                         const std::set<std::string> &ldm_buffers, const Machine &m,
                         const std::string &loop_var) {
    Counter c(ldm_buffers, m);
    if (!loop_var.empty())
        c.variant.insert(loop_var);
    region.accept(&c);
    if (loop_body) {
        c.w.either++; // the increment
        c.w.p1++;     // the compare and branch back
    }
    return c.w;
}

int64_t region_cycles(const Work &w, const Machine &m) {
    const int64_t dual = (w.p0 + w.p1 + w.either + 1) / 2;
    return std::max({w.p0, w.p1, dual, w.chain * m.fp_latency_cycles}) + w.slow_cycles;
}

int64_t region_unpaired_cycles(const Work &w, const Machine &m) {
    return std::max(w.p0 + w.p1 + w.either, w.chain * m.fp_latency_cycles) + w.slow_cycles;
}

ShareWork regcomm_share_work(int64_t bytes, const Machine &m) {
    const int64_t vectors = bytes / 16, tail = bytes % 16;
    ShareWork s;
    // Set-up: the CPE's id (one instruction), its row and column and the vector and tail
    // counts (shifts and masks of constants), the initial vector (simd_set_floatv4), the two
    // role tests and the tail test.
    Work setup;
    setup.either = 1 + 4 + 2;
    setup.p1 = m.splat_p1 + 3;
    s.cycles += region_cycles(setup, m);
    s.unpaired_cycles += region_unpaired_cycles(setup, m);
    // Per vector: its aligned load (CPE (0, 0)) or store (the receivers); the loop's increment,
    // the address and the compare-and-branch. (Its puts and gets: timed by the emulator.)
    Work per_vector;
    per_vector.p1 = 1 + 1;
    per_vector.either = 2;
    s.cycles += vectors * region_cycles(per_vector, m);
    s.unpaired_cycles += vectors * region_unpaired_cycles(per_vector, m);
    s.ldm_accesses += vectors;
    if (tail) {
        // The last bytes through a 16-byte local: zeroing it, its unaligned vector load
        // (CPE (0, 0)) or store (the receivers), then per byte a load, a store and the loop.
        Work around;
        around.p1 = 2 * m.unaligned_vector_access_p1;
        around.either = 2;
        s.cycles += region_cycles(around, m);
        s.unpaired_cycles += region_unpaired_cycles(around, m);
        Work per_byte;
        per_byte.p1 = 2 + 1;
        per_byte.either = 1;
        s.cycles += tail * region_cycles(per_byte, m);
        s.unpaired_cycles += tail * region_unpaired_cycles(per_byte, m);
        s.ldm_accesses += 2 + 2 * tail;
    }
    return s;
}

ShareWork rma_share_work(const Machine &m) {
    Work w;
    w.either = 4; // the CPE's row or column and the role test, the arguments
    w.p1 = 2;     // the arrival word's reset and its test
    ShareWork s;
    s.cycles = region_cycles(w, m);
    s.unpaired_cycles = region_unpaired_cycles(w, m);
    s.ldm_accesses = 1;
    return s;
}

} // namespace sw
