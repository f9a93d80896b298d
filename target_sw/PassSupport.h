/** \file
 * What several Sunway passes share: the enclosing lets of a point in the IR, the statements
 * of a Block tree, the call of an Evaluate, the variables a node reads and the names it binds.
 */
#ifndef SW_PASS_SUPPORT_H
#define SW_PASS_SUPPORT_H

#include "Halide.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace sw {

/** The LetStmts around a point of a walk, outermost first: a visitor pushes a let before its
 * body and pops it after. */
class LetScope {
public:
    void push(const std::string &name, const Halide::Expr &value) {
        lets_.push_back({name, value});
    }
    void pop() { lets_.pop_back(); }
    /** \p e with the enclosing lets substituted (innermost first), so that it names only
     * variables defined outside them. */
    Halide::Expr expand(Halide::Expr e) const {
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) {
            if (Halide::Internal::expr_uses_var(e, it->first))
                e = Halide::Internal::substitute(it->first, it->second, e);
        }
        return e;
    }

private:
    std::vector<std::pair<std::string, Halide::Expr>> lets_;
};

/** A mutator that keeps the LetStmts around the point it visits in \p lets (their values
 * unchanged; a subclass that overrides visit(LetStmt) keeps them itself). */
class LetTrackingMutator : public Halide::Internal::IRMutator {
protected:
    using Halide::Internal::IRMutator::visit;
    LetScope lets;
    Halide::Internal::Stmt visit(const Halide::Internal::LetStmt *op) override {
        lets.push(op->name, op->value);
        Halide::Internal::Stmt body = mutate(op->body);
        lets.pop();
        return body.same_as(op->body) ? Halide::Internal::Stmt(op)
                                      : Halide::Internal::LetStmt::make(op->name, op->value, body);
    }
};

/** The statements of a tree of Blocks, in order (a statement that is not a Block: itself). */
inline std::vector<Halide::Internal::Stmt> flatten_blocks(const Halide::Internal::Stmt &s) {
    std::vector<Halide::Internal::Stmt> flat, todo = {s};
    while (!todo.empty()) {
        Halide::Internal::Stmt t = todo.back();
        todo.pop_back();
        if (const Halide::Internal::Block *b = t.as<Halide::Internal::Block>()) {
            todo.push_back(b->rest);
            todo.push_back(b->first);
        } else {
            flat.push_back(t);
        }
    }
    return flat;
}

/** The call of Evaluate(call) (e.g. a DMA intrinsic), or nullptr. */
inline const Halide::Internal::Call *evaluated_call(const Halide::Internal::Stmt &s) {
    const Halide::Internal::Evaluate *e = s.as<Halide::Internal::Evaluate>();
    return e ? e->value.as<Halide::Internal::Call>() : nullptr;
}

/** Collects the names of the variables an expression or statement reads (visit with it, then
 * read `names`). */
class VariableNames : public Halide::Internal::IRVisitor {
public:
    std::set<std::string> names;

private:
    using Halide::Internal::IRVisitor::visit;
    void visit(const Halide::Internal::Variable *op) override { names.insert(op->name); }
};

/** Collects the names a statement binds anywhere in it: LetStmts, Lets, loop variables and
 * allocations (visit with it, then read `names`). */
class BoundNames : public Halide::Internal::IRVisitor {
public:
    std::set<std::string> names;

private:
    using Halide::Internal::IRVisitor::visit;
    void visit(const Halide::Internal::LetStmt *op) override {
        names.insert(op->name);
        Halide::Internal::IRVisitor::visit(op);
    }
    void visit(const Halide::Internal::Let *op) override {
        names.insert(op->name);
        Halide::Internal::IRVisitor::visit(op);
    }
    void visit(const Halide::Internal::For *op) override {
        names.insert(op->name);
        Halide::Internal::IRVisitor::visit(op);
    }
    void visit(const Halide::Internal::Allocate *op) override {
        names.insert(op->name);
        Halide::Internal::IRVisitor::visit(op);
    }
};

} // namespace sw

#endif
