/** \file
 * Merging Halide's loop partitions of a CPE kernel's block loops.
 */
#include "target_sw/MergeBlockPartitions.h"

#include <utility>
#include <vector>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** Merges two statements of the same structure under a condition (true: the first). */
class Merge {
public:
    explicit Merge(Expr condition) : condition_(std::move(condition)) {}

    bool ok() const { return ok_; }

    Stmt stmt(const Stmt &a, const Stmt &b) {
        if (!ok_ || a.same_as(b) || (!a.defined() && !b.defined()))
            return a;
        if (!a.defined() || !b.defined())
            return fail(a);
        // A let in one part only (the other part's value simplified to a constant and
        // folded): substituted into its body.
        const LetStmt *let_a = a.as<LetStmt>(), *let_b = b.as<LetStmt>();
        if (let_a && !let_b)
            return stmt(substitute(let_a->name, let_a->value, let_a->body), b);
        if (let_b && !let_a)
            return stmt(a, substitute(let_b->name, let_b->value, let_b->body));
        if (a->node_type != b->node_type)
            return fail(a);
        if (equal(a, b))
            return a;
        if (const LetStmt *x = a.as<LetStmt>()) {
            // Halide's CSE names the lets of the two parts apart: b's let takes a's name.
            const LetStmt *y = b.as<LetStmt>();
            const Stmt body_b = renamed(y->name, y->value.type(), x->name, y->body);
            if (x->value.type() != y->value.type())
                return fail(a);
            const Expr value = expr(x->value, y->value);
            ScopedBinding<> bind(inner_, x->name);
            ScopedBinding<Expr> value_b(lets_b_, x->name, y->value);
            return LetStmt::make(x->name, value, stmt(x->body, body_b));
        }
        if (const For *x = a.as<For>()) {
            const For *y = b.as<For>();
            if (x->name != y->name || x->for_type != y->for_type || x->device_api != y->device_api)
                return fail(a);
            const Expr min = expr(x->min, y->min), extent = expr(x->extent, y->extent);
            ScopedBinding<> bind(inner_, x->name);
            return For::make(x->name, min, extent, x->for_type, x->device_api,
                             stmt(x->body, y->body));
        }
        if (const Block *x = a.as<Block>()) {
            const Block *y = b.as<Block>();
            return Block::make(stmt(x->first, y->first), stmt(x->rest, y->rest));
        }
        if (const Allocate *x = a.as<Allocate>()) {
            const Allocate *y = b.as<Allocate>();
            if (x->name != y->name || x->type != y->type || x->memory_type != y->memory_type ||
                x->extents.size() != y->extents.size() || x->new_expr.defined() ||
                y->new_expr.defined() || x->free_function != y->free_function)
                return fail(a);
            std::vector<Expr> extents;
            for (size_t i = 0; i < x->extents.size(); i++)
                extents.push_back(expr(x->extents[i], y->extents[i]));
            return Allocate::make(x->name, x->type, x->memory_type, extents,
                                  expr(x->condition, y->condition), stmt(x->body, y->body), Expr(),
                                  x->free_function);
        }
        if (const ProducerConsumer *x = a.as<ProducerConsumer>()) {
            const ProducerConsumer *y = b.as<ProducerConsumer>();
            if (x->name != y->name || x->is_producer != y->is_producer)
                return fail(a);
            return ProducerConsumer::make(x->name, x->is_producer, stmt(x->body, y->body));
        }
        if (const Store *x = a.as<Store>()) {
            const Store *y = b.as<Store>();
            if (x->name != y->name || !x->param.same_as(y->param))
                return fail(a);
            return Store::make(x->name, expr(x->value, y->value), expr(x->index, y->index),
                               x->param, expr(x->predicate, y->predicate),
                               ModulusRemainder::unify(x->alignment, y->alignment));
        }
        if (const IfThenElse *x = a.as<IfThenElse>()) {
            const IfThenElse *y = b.as<IfThenElse>();
            return IfThenElse::make(expr(x->condition, y->condition),
                                    stmt(x->then_case, y->then_case),
                                    stmt(x->else_case, y->else_case));
        }
        if (const Evaluate *x = a.as<Evaluate>())
            return Evaluate::make(expr(x->value, b.as<Evaluate>()->value));
        if (const AssertStmt *x = a.as<AssertStmt>()) {
            const AssertStmt *y = b.as<AssertStmt>();
            return AssertStmt::make(expr(x->condition, y->condition), expr(x->message, y->message));
        }
        return fail(a); // Free of different names, and the nodes a kernel does not hold
    }

    Expr expr(const Expr &a, const Expr &b) {
        if (!ok_ || a.same_as(b) || (!a.defined() && !b.defined()))
            return a;
        if (!a.defined() || !b.defined() || a.type() != b.type())
            return fail(a);
        if (equal(a, b))
            return a;
        // Two scalars that use no loop or let of the parts: one or the other by the condition
        // (a select invariant over the whole body: an address stays affine in the loops,
        // InjectDma.h). Anything else that differs is merged through its parts below.
        if (a.type().is_scalar() && !expr_uses_vars(a, inner_) && !expr_uses_vars(b, inner_))
            return Select::make(condition_, a, b);
        if (a.type().is_scalar() && (a.type().is_int() || a.type().is_uint())) {
            // An integer (an address): the first plus the selected difference, where the
            // difference uses no loop of the parts. Both taken with the second part's values
            // of the merged lets: where the condition is false, the merged lets hold those,
            // and the first plus the difference is the second.
            const Expr difference = simplify(with_lets(b, lets_b_) - with_lets(a, lets_b_));
            if (is_const_zero(difference))
                return a;
            if (!expr_uses_vars(difference, inner_))
                return a + Select::make(condition_, make_zero(a.type()), difference);
        }
        // Merged through their parts where both have the same structure, so that the selects
        // are on the smallest parts that differ (a DMA's address stays a load's index, a
        // vector stays a vector: the CPE code has no vector select).
        const Let *let_a = a.as<Let>(), *let_b = b.as<Let>();
        if (let_a && !let_b)
            return expr(substitute(let_a->name, let_a->value, let_a->body), b);
        if (let_b && !let_a)
            return expr(a, substitute(let_b->name, let_b->value, let_b->body));
        if (a->node_type != b->node_type)
            return fail(a);
        if (let_a) {
            if (let_a->value.type() != let_b->value.type())
                return fail(a);
            const Expr body_b = renamed(let_b->name, let_b->value.type(), let_a->name, let_b->body);
            const Expr value = expr(let_a->value, let_b->value);
            ScopedBinding<> bind(inner_, let_a->name);
            return Let::make(let_a->name, value, expr(let_a->body, body_b));
        }
        if (const Ramp *x = a.as<Ramp>()) {
            const Ramp *y = b.as<Ramp>();
            return Ramp::make(expr(x->base, y->base), expr(x->stride, y->stride), x->lanes);
        }
        if (const Broadcast *x = a.as<Broadcast>())
            return Broadcast::make(expr(x->value, b.as<Broadcast>()->value), x->lanes);
        if (const Load *x = a.as<Load>()) {
            const Load *y = b.as<Load>();
            if (x->name != y->name || !x->image.same_as(y->image) || !x->param.same_as(y->param))
                return fail(a);
            return Load::make(x->type, x->name, expr(x->index, y->index), x->image, x->param,
                              expr(x->predicate, y->predicate),
                              ModulusRemainder::unify(x->alignment, y->alignment));
        }
        if (const Add *x = a.as<Add>())
            return Add::make(expr(x->a, b.as<Add>()->a), expr(x->b, b.as<Add>()->b));
        if (const Sub *x = a.as<Sub>())
            return Sub::make(expr(x->a, b.as<Sub>()->a), expr(x->b, b.as<Sub>()->b));
        if (const Mul *x = a.as<Mul>())
            return Mul::make(expr(x->a, b.as<Mul>()->a), expr(x->b, b.as<Mul>()->b));
        if (const Min *x = a.as<Min>())
            return Min::make(expr(x->a, b.as<Min>()->a), expr(x->b, b.as<Min>()->b));
        if (const Max *x = a.as<Max>())
            return Max::make(expr(x->a, b.as<Max>()->a), expr(x->b, b.as<Max>()->b));
        if (const Div *x = a.as<Div>())
            return Div::make(expr(x->a, b.as<Div>()->a), expr(x->b, b.as<Div>()->b));
        if (const Call *x = a.as<Call>()) {
            const Call *y = b.as<Call>();
            if (x->name != y->name || x->call_type != y->call_type ||
                x->args.size() != y->args.size() || x->value_index != y->value_index)
                return fail(a);
            std::vector<Expr> args;
            for (size_t i = 0; i < x->args.size(); i++)
                args.push_back(expr(x->args[i], y->args[i]));
            return Call::make(x->type, x->name, args, x->call_type, x->func, x->value_index,
                              x->image, x->param);
        }
        if (const Cast *x = a.as<Cast>())
            return Cast::make(x->type, expr(x->value, b.as<Cast>()->value));
        return fail(a);
    }

private:
    Expr condition_;
    bool ok_ = true;
    Scope<> inner_;      ///< the loops and lets of the parts around the node being merged
    Scope<Expr> lets_b_; ///< the second part's values of the merged lets

    /** \p e with the lets of \p lets substituted (their values use the lets outside them:
     * substituted again until none is left). */
    static Expr with_lets(Expr e, const Scope<Expr> &lets) {
        for (bool changed = true; changed;) {
            changed = false;
            for (auto it = lets.cbegin(); it != lets.cend(); ++it) {
                if (expr_uses_var(e, it.name())) {
                    e = substitute(it.name(), it.value(), e);
                    changed = true;
                }
            }
        }
        return e;
    }

    /** \p body with the let \p from (of type \p t) named \p to. */
    template <typename T>
    static T renamed(const std::string &from, Type t, const std::string &to, const T &body) {
        return from == to ? body : substitute(from, Variable::make(t, to), body);
    }

    template <typename T> T fail(const T &a) {
        ok_ = false;
        return a;
    }
};

/** The partitions under the block loops inside a part merged first (a partition of an inner
 * block loop inside each part of the outer one's). */
class MergeInnerBlockLoops : public IRMutator {
    using IRMutator::visit;
    Stmt visit(const For *op) override {
        if (op->for_type != ForType::GPUBlock)
            return IRMutator::visit(op);
        const Stmt body = merge_block_partitions(mutate(op->body));
        if (body.same_as(op->body))
            return op;
        return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
    }
};

using Lets = std::vector<std::pair<std::string, Expr>>;

Stmt peel_lets(Stmt s, Lets &lets) {
    while (const LetStmt *l = s.as<LetStmt>()) {
        lets.emplace_back(l->name, l->value);
        s = l->body;
    }
    return s;
}

Stmt wrap_lets(Stmt s, const Lets &lets) {
    for (auto it = lets.rbegin(); it != lets.rend(); ++it)
        s = LetStmt::make(it->first, it->second, s);
    return s;
}

} // namespace

Stmt merge_block_partitions(const Stmt &s) {
    Lets lets;
    Stmt body = peel_lets(s, lets);
    bool changed = false;
    while (const IfThenElse *branch = body.as<IfThenElse>()) {
        if (!branch->else_case.defined())
            break;
        Merge merge(branch->condition);
        const Stmt merged = merge.stmt(MergeInnerBlockLoops().mutate(branch->then_case),
                                       MergeInnerBlockLoops().mutate(branch->else_case));
        if (!merge.ok())
            break;
        body = peel_lets(merged, lets);
        changed = true;
    }
    // Lets before a block loop whose bounds do not use them: into its body.
    if (const For *loop = body.as<For>()) {
        bool bounds_use_lets = false;
        for (const auto &l : lets) {
            bounds_use_lets |=
                expr_uses_var(loop->min, l.first) || expr_uses_var(loop->extent, l.first);
        }
        if (loop->for_type == ForType::GPUBlock && !lets.empty() && !bounds_use_lets) {
            return For::make(loop->name, loop->min, loop->extent, loop->for_type, loop->device_api,
                             wrap_lets(loop->body, lets));
        }
    }
    return changed ? wrap_lets(body, lets) : s;
}

} // namespace sw
