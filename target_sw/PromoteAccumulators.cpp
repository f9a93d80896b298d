/** \file
 * Promoting loop-invariant LDM accumulators to registers.
 */
#include "target_sw/PromoteAccumulators.h"

#include <set>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** The accesses to LDM buffers inside a loop nest, and the names the nest defines. */
class Accesses : public IRVisitor {
public:
    std::map<std::string, std::vector<Expr>> indices;  // buffer -> every index used
    std::map<std::string, Type> types;
    std::set<std::string> stored, defined;
    bool has_dma = false;

private:
    using IRVisitor::visit;
    std::vector<std::pair<std::string, Expr>> lets;  // lets of the nest around this point

    /** \p e with the nest's own lets substituted, so that equal indices compare equal. */
    Expr expand(Expr e) const {
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
            if (expr_uses_var(e, it->first)) e = substitute(it->first, it->second, e);
        }
        return simplify(e);
    }
    void visit(const Load *op) override {
        indices[op->name].push_back(expand(op->index));
        types[op->name] = op->type;
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        indices[op->name].push_back(expand(op->index));
        types[op->name] = op->value.type();
        stored.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const For *op) override {
        defined.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const LetStmt *op) override {
        defined.insert(op->name);
        op->value.accept(this);
        lets.push_back({op->name, op->value});
        op->body.accept(this);
        lets.pop_back();
    }
    void visit(const Let *op) override {
        defined.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        has_dma |= op->name.rfind("sw_dma", 0) == 0;
        IRVisitor::visit(op);
    }
};

/** The index of a whole register of type \p t: 0, or the lanes 0..n-1 of a vector. */
Expr register_index(const Type &t) { return t.is_vector() ? Ramp::make(0, 1, t.lanes()) : Expr(0); }

/** Replaces the accesses buf[index] by the register variable. */
class UseRegister : public IRMutator {
public:
    UseRegister(const std::string &buffer, const std::string &reg) : buffer(buffer), reg(reg) {}

private:
    using IRMutator::visit;
    const std::string &buffer, &reg;
    Expr visit(const Load *op) override {
        if (op->name != buffer) return IRMutator::visit(op);
        return Load::make(op->type, reg, register_index(op->type), Buffer<>(), Parameter(), op->predicate,
                          ModulusRemainder());
    }
    Stmt visit(const Store *op) override {
        if (op->name != buffer) return IRMutator::visit(op);
        return Store::make(reg, mutate(op->value), register_index(op->value.type()), Parameter(), op->predicate,
                           ModulusRemainder());
    }
};

class Promote : public IRMutator {
public:
    explicit Promote(const std::set<std::string> &ldm) : ldm(ldm) {}

private:
    using IRMutator::visit;
    const std::set<std::string> &ldm;

    Stmt visit(const For *op) override {
        Accesses a;
        op->accept(&a);
        if (a.has_dma) return IRMutator::visit(op);
        for (const std::string &buffer : a.stored) {
            if (!ldm.count(buffer)) continue;
            const std::vector<Expr> &idx = a.indices[buffer];
            bool invariant = true;
            for (const std::string &d : a.defined) invariant &= !expr_uses_var(idx[0], d);
            for (const Expr &i : idx) invariant &= equal(i, idx[0]);
            if (!invariant || a.indices[buffer].size() < 2) continue;
            const Type t = a.types[buffer];
            const std::string reg = unique_name(register_prefix);
            Stmt body = UseRegister(buffer, reg).mutate(Stmt(op));
            const Expr index = idx[0];
            const Expr all = const_true(t.lanes());
            Stmt load = Store::make(reg, Load::make(t, buffer, index, Buffer<>(), Parameter(), all, ModulusRemainder()),
                                    register_index(t), Parameter(), all, ModulusRemainder());
            Stmt store = Store::make(buffer, Load::make(t, reg, register_index(t), Buffer<>(), Parameter(), all,
                                                        ModulusRemainder()),
                                     index, Parameter(), all, ModulusRemainder());
            // Other accumulators of the same nest get their own registers further down.
            body = mutate(body);
            return Allocate::make(reg, t.element_of(), MemoryType::Register, {t.lanes()}, const_true(),
                                  Block::make({load, body, store}));
        }
        return IRMutator::visit(op);
    }
};

}  // namespace

void promote_accumulators(CpeKernel &k) {
    std::set<std::string> ldm;
    for (const LdmBuffer &b : k.ldm) ldm.insert(b.name);
    k.body = Promote(ldm).mutate(k.body);
}

}  // namespace sw
