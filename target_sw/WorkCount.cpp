/** \file
 * Counting the work of straight-line CPE code.
 */
#include "target_sw/WorkCount.h"

#include "target_sw/PromoteAccumulators.h"

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

    // Integer subexpressions (address arithmetic) are computed once per region, as any
    // compiler's common-subexpression elimination does: later occurrences are free.
    std::set<Expr, IRDeepCompare> seen;
    bool repeated_int(const Expr &e) {
        if (e.type().is_float() || is_const(e) || e.as<Variable>()) return false;
        if (invariant(e)) return true;
        return !seen.insert(e).second;
    }
    /** In a loop body, integer work that does not change with the loop is hoisted out of it
     * by any compiler (loop-invariant code motion): it is not counted per iteration. */
    bool invariant(const Expr &e) const {
        if (variant.empty()) return false;
        for (const std::string &v : variant) {
            if (expr_uses_var(e, v)) return false;
        }
        return true;
    }

public:
    std::set<std::string> variant;  ///< the loop variable and the lets that depend on it

private:
    /** Visits an address as a compiler computes it: the sum is reassociated, its constant
     * terms become the load/store displacement (free), the terms invariant in the loop are
     * added up once outside it (free per iteration), and the rest is computed per
     * iteration: each term's own work, one add per further term, one to add the invariant
     * base; loads and stores with the same variable part share it. */
    void address(const Expr &index) {
        Expr base = index;
        if (const Ramp *r = base.as<Ramp>()) base = r->base;
        std::vector<Expr> terms, varying;
        flatten_sum(base, terms);
        Expr key, invariant_base;
        for (const Expr &t : terms) {
            if (is_const(t)) continue;
            if (invariant(t)) {
                invariant_base = invariant_base.defined() ? invariant_base + t : t;
                continue;
            }
            varying.push_back(t);
            key = key.defined() ? key + t : t;
        }
        if (varying.empty()) return;
        for (const Expr &t : varying) visit_operand(t);
        // The variable part plus the invariant base, added up once per distinct pair.
        if (invariant_base.defined()) key = key + invariant_base;
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
    void visit_operand(const Expr &e) {
        if (!repeated_int(e)) e.accept(this);
    }

    void arith(const Type &t, const Expr &a, const Expr &b, int64_t flops) {
        visit_operand(a);
        visit_operand(b);
        if (t.is_float()) {
            w.p0++;
            w.flops += flops * lanes(t);
        } else {
            w.either++;
        }
    }
    void visit(const Add *op) override {
        const Mul *mul = op->a.as<Mul>() ? op->a.as<Mul>() : op->b.as<Mul>();
        if (op->type.is_float() && mul) {
            // a*b + c issues as one fused multiply-add.
            mul->a.accept(this);
            mul->b.accept(this);
            (op->a.as<Mul>() ? op->b : op->a).accept(this);
            w.p0++;
            w.flops += 2 * lanes(op->type);
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
        if (!op->type.is_float() && !is_const(op->b)) w.either += 3;
    }
    void visit(const Min *op) override { arith(op->type, op->a, op->b, 0); }
    void visit(const Max *op) override { arith(op->type, op->a, op->b, 0); }
    void compare(const Expr &a, const Expr &b) {
        visit_operand(a);
        visit_operand(b);
        if (a.type().is_float()) {
            w.p0++;
        } else {
            w.either++;
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
        op->a.accept(this);
        w.either++;
    }
    void visit(const Select *op) override {
        IRVisitor::visit(op);
        if (op->type.is_float()) {
            w.p0++;
        } else {
            w.either++;
        }
    }
    void visit(const Broadcast *op) override {
        // A splat of a scalar into a vector register; the same splat twice in a region is
        // made once (common-subexpression elimination).
        if (!seen.insert(Expr(op)).second) return;
        op->value.accept(this);
        w.p0++;
    }
    void visit(const Cast *op) override {
        op->value.accept(this);
        if (op->type.is_float() != op->value.type().is_float()) w.p0++;
    }
    void access(const std::string &buffer) {
        if (buffer.rfind(register_prefix, 0) == 0) return;  // a promoted accumulator: a register
        w.p1++;
        if (ldm.count(buffer)) {
            w.ldm_accesses++;
        } else {
            w.direct_accesses++;
            w.slow_cycles += m.direct_access_cycles;
        }
    }
    void visit(const Load *op) override {
        address(op->index);
        access(op->name);
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type != Call::PureExtern && op->call_type != Call::Extern) return;
        const std::string &n = op->name;
        if (n.rfind("sw_", 0) == 0) return;  // DMA and launch intrinsics: timed by the emulator
        w.p0++;
        if (n.rfind("sqrt", 0) == 0) {
            w.slow_cycles += m.sqrt_cycles;
        } else if (n.rfind("exp", 0) == 0 || n.rfind("log", 0) == 0 || n.rfind("pow", 0) == 0) {
            w.slow_cycles += m.transcendental_cycles;
        }
    }

    void visit(const LetStmt *op) override {
        op->value.accept(this);
        if (!variant.empty() && !invariant(op->value)) variant.insert(op->name);
        op->body.accept(this);
    }

    // Statements: count this region only.
    void visit(const Store *op) override {
        op->value.accept(this);
        address(op->index);
        access(op->name);
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

}  // namespace

Work count_straight_line(const Stmt &region, bool loop_body, const std::set<std::string> &ldm_buffers,
                         const Machine &m, const std::string &loop_var) {
    Counter c(ldm_buffers, m);
    if (!loop_var.empty()) c.variant.insert(loop_var);
    region.accept(&c);
    if (loop_body) {
        c.w.either++;  // the increment
        c.w.p1++;      // the compare and branch back
    }
    return c.w;
}

}  // namespace sw
