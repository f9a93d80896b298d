/** \file
 * Loading repeated operands of a straight run of stores once.
 */
#include "target_sw/ShareOperands.h"

#include "target_sw/PassSupport.h"

#include <map>
#include <set>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** The shareable operands of an expression, in the order they are met: vector loads of the
 * LDM and splats. */
class Operands : public IRVisitor {
public:
    explicit Operands(const std::set<std::string> &ldm) : ldm(ldm) {}
    std::vector<Expr> found;
    std::set<std::string> loaded;

private:
    using IRVisitor::visit;
    const std::set<std::string> &ldm;
    void visit(const Load *op) override {
        if (ldm.count(op->name))
            loaded.insert(op->name);
        if (op->type.is_vector() && ldm.count(op->name)) {
            found.push_back(op);
            return;
        }
        IRVisitor::visit(op);
    }
    void visit(const Broadcast *op) override {
        if (op->type.is_float())
            found.push_back(op); // not the all-true predicate of an access
        IRVisitor::visit(op);
    }
};

/** Replaces the operands bound to a local by the local. */
class UseLocals : public IRMutator {
public:
    explicit UseLocals(const std::map<Expr, std::string, IRDeepCompare> &locals) : locals(locals) {}

private:
    using IRMutator::visit;
    const std::map<Expr, std::string, IRDeepCompare> &locals;
    Expr local(const Expr &e) {
        auto it = locals.find(e);
        return it == locals.end() ? Expr() : Variable::make(e.type(), it->second);
    }
    Expr visit(const Load *op) override {
        Expr l = local(op);
        return l.defined() ? l : IRMutator::visit(op);
    }
    Expr visit(const Broadcast *op) override {
        Expr l = local(op);
        return l.defined() ? l : IRMutator::visit(op);
    }
};

/** Drops the LetStmts whose variable their body no longer uses, innermost first, so that a
 * chain of lets used only by dead lets goes too (see ShareOperands.h). */
class DropDeadLets : public IRMutator {
    using IRMutator::visit;
    Stmt visit(const LetStmt *op) override {
        Stmt body = mutate(op->body);
        if (!stmt_uses_var(body, op->name))
            return body;
        return body.same_as(op->body) ? Stmt(op) : LetStmt::make(op->name, op->value, body);
    }
};

class Share : public IRMutator {
public:
    explicit Share(const std::set<std::string> &ldm) : ldm(ldm) {}

private:
    using IRMutator::visit;
    const std::set<std::string> &ldm;

    /** A run of stores: its repeated operands bound before their first use. */
    Stmt share_run(const std::vector<Stmt> &run) {
        std::vector<std::vector<Expr>> per_store(run.size());
        std::map<Expr, int, IRDeepCompare> uses;
        std::set<std::string> loaded, stored;
        for (size_t i = 0; i < run.size(); i++) {
            const Store *st = run[i].as<Store>();
            Operands o(ldm);
            st->value.accept(&o);
            st->index.accept(&o);
            per_store[i] = o.found;
            for (const Expr &e : o.found)
                uses[e]++;
            loaded.insert(o.loaded.begin(), o.loaded.end());
            stored.insert(st->name);
        }
        // A load of a buffer the run writes may not move.
        for (const std::string &b : stored) {
            if (loaded.count(b))
                return Stmt();
        }
        std::map<Expr, std::string, IRDeepCompare> locals;
        std::vector<std::vector<std::pair<std::string, Expr>>> lets(run.size());
        for (size_t i = 0; i < run.size(); i++) {
            for (const Expr &e : per_store[i]) {
                if (uses[e] < 2 || locals.count(e))
                    continue;
                const std::string name = unique_name(e.as<Broadcast>() ? "sw_splat" : "sw_vec");
                // Its own operands may be shared ones bound before it.
                lets[i].push_back({name, UseLocals(locals).mutate(e)});
                locals[e] = name;
            }
        }
        if (locals.empty())
            return Stmt();
        Stmt rest;
        for (size_t i = run.size(); i-- > 0;) {
            // Bind the operands first used by this store's value, which may refer to earlier
            // ones: the value is rewritten with every local known so far.
            const Store *st = run[i].as<Store>();
            Stmt s = Store::make(st->name, UseLocals(locals).mutate(st->value),
                                 UseLocals(locals).mutate(st->index), st->param, st->predicate,
                                 st->alignment);
            rest = rest.defined() ? Block::make(s, rest) : s;
            for (auto it = lets[i].rbegin(); it != lets[i].rend(); ++it)
                rest = LetStmt::make(it->first, it->second, rest);
        }
        return rest;
    }

    Stmt visit(const Block *op) override {
        const std::vector<Stmt> parts = flatten_blocks(op);
        std::vector<Stmt> out;
        std::vector<Stmt> run;
        auto end_run = [&]() {
            if (run.size() >= 2) {
                Stmt s = share_run(run);
                if (s.defined()) {
                    out.push_back(s);
                    run.clear();
                    return;
                }
            }
            out.insert(out.end(), run.begin(), run.end());
            run.clear();
        };
        for (const Stmt &s : parts) {
            if (s.as<Store>()) {
                run.push_back(s);
            } else {
                end_run();
                out.push_back(mutate(s));
            }
        }
        end_run();
        return Block::make(out);
    }
};

} // namespace

void share_operands(CpeKernel &k) {
    std::set<std::string> ldm;
    for (const LdmBuffer &b : k.ldm)
        ldm.insert(b.name);
    k.body = Share(ldm).mutate(DropDeadLets().mutate(k.body));
}

} // namespace sw
