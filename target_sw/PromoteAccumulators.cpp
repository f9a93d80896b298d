/** \file
 * Promoting loop-invariant LDM accumulators to registers.
 */
#include "target_sw/PromoteAccumulators.h"

#include "target_sw/PassSupport.h"
#include "target_sw/SunwayIR.h"

#include <cstdlib>
#include <set>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** The accesses to LDM buffers inside a loop nest, and the names the nest defines. */
class Accesses : public IRVisitor {
public:
    std::map<std::string, std::vector<Expr>> indices; // buffer -> every index used
    std::map<std::string, Type> types;
    std::set<std::string> stored, defined;
    /** The buffers allocated inside the nest: they do not exist before or after it. */
    std::set<std::string> allocated;
    bool has_dma = false;

private:
    using IRVisitor::visit;
    LetScope lets; // lets of the nest around this point

    /** \p e with the nest's own lets substituted, so that equal indices compare equal. */
    Expr expand(const Expr &e) const { return simplify(lets.expand(e)); }
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
        lets.push(op->name, op->value);
        op->body.accept(this);
        lets.pop();
    }
    void visit(const Let *op) override {
        defined.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Allocate *op) override {
        allocated.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        has_dma |= ir::is_dma_intrinsic(op);
        IRVisitor::visit(op);
    }
};

/** The index of a whole register of type \p t: 0, or the lanes 0..n-1 of a vector. */
Expr register_index(const Type &t) {
    return t.is_vector() ? Ramp::make(0, 1, t.lanes()) : Expr(0);
}

/** Replaces the accesses buf[index] by the register variable. */
class UseRegister : public IRMutator {
public:
    UseRegister(const std::string &buffer, const std::string &reg, const Expr &index)
        : buffer(buffer), reg(reg), index(index) {}

private:
    using IRMutator::visit;
    const std::string &buffer, &reg;
    Expr index;
    LetScope lets;

    /** Whether an access at \p i (with the enclosing lets substituted) is this register's. */
    bool mine(const Expr &i) const { return equal(simplify(lets.expand(i)), index); }
    Stmt visit(const LetStmt *op) override {
        // The value may read the accumulator too (Halide's CSE writes acc * acc as
        // let t = acc[i] in t * t): it reads the register like any other access.
        const Expr value = mutate(op->value);
        lets.push(op->name, op->value);
        Stmt body = mutate(op->body);
        lets.pop();
        return value.same_as(op->value) && body.same_as(op->body)
                   ? Stmt(op)
                   : LetStmt::make(op->name, value, body);
    }
    Expr visit(const Load *op) override {
        if (op->name != buffer || !mine(op->index))
            return IRMutator::visit(op);
        return Load::make(op->type, reg, register_index(op->type), Buffer<>(), Parameter(),
                          op->predicate, ModulusRemainder());
    }
    Stmt visit(const Store *op) override {
        if (op->name != buffer || !mine(op->index))
            return IRMutator::visit(op);
        return Store::make(reg, mutate(op->value), register_index(op->value.type()), Parameter(),
                           op->predicate, ModulusRemainder());
    }
};

class Promote : public IRMutator {
public:
    Promote(const std::set<std::string> &ldm, int registers)
        : ldm(ldm), free_registers(registers) {}

private:
    using IRMutator::visit;
    const std::set<std::string> &ldm;
    /** Registers left for accumulators here (those of enclosing nests taken). */
    int free_registers;

    Stmt visit(const For *op) override {
        Accesses a;
        op->accept(&a);
        if (a.has_dma)
            return IRMutator::visit(op);
        for (const std::string &buffer : a.stored) {
            // A buffer allocated inside the nest cannot be loaded before it or stored after.
            if (!ldm.count(buffer) || a.allocated.count(buffer))
                continue;
            // The distinct indices of the buffer in the nest: each must be invariant, and
            // they must be provably disjoint (constant offsets at least a vector apart).
            const std::vector<Expr> &idx = a.indices[buffer];
            const Type t = a.types[buffer];
            std::vector<Expr> distinct;
            bool ok = idx.size() >= 2;
            for (const Expr &i : idx) {
                for (const std::string &d : a.defined)
                    ok &= !expr_uses_var(i, d);
                bool seen = false;
                for (const Expr &j : distinct)
                    seen |= equal(i, j);
                if (!seen)
                    distinct.push_back(i);
            }
            for (size_t p = 0; ok && p < distinct.size(); p++) {
                for (size_t q = p + 1; ok && q < distinct.size(); q++) {
                    const Expr base_p =
                        distinct[p].as<Ramp>() ? distinct[p].as<Ramp>()->base : distinct[p];
                    const Expr base_q =
                        distinct[q].as<Ramp>() ? distinct[q].as<Ramp>()->base : distinct[q];
                    // Keep the simplified difference alive: as_const_int points into its node.
                    const Expr diff_expr = simplify(base_p - base_q);
                    const int64_t *diff = as_const_int(diff_expr);
                    ok = diff && std::abs(*diff) >= t.lanes();
                }
            }
            // A register block larger than the registers left stays in the LDM (spilling it
            // would not be free: Machine::vector_registers, operand_registers).
            if (!ok || int(distinct.size()) > free_registers)
                continue;
            Stmt body = op;
            std::vector<std::pair<std::string, Expr>> regs;
            for (const Expr &index : distinct) {
                const std::string reg = ir::new_register_name();
                body = UseRegister(buffer, reg, index).mutate(body);
                regs.push_back({reg, index});
            }
            // Other accumulators of the same nest get their own registers further down.
            free_registers -= int(distinct.size());
            body = mutate(body);
            free_registers += int(distinct.size());
            const Expr all = const_true(t.lanes());
            std::vector<Stmt> before, after;
            for (const auto &[reg, index] : regs) {
                before.push_back(Store::make(
                    reg,
                    Load::make(t, buffer, index, Buffer<>(), Parameter(), all, ModulusRemainder()),
                    register_index(t), Parameter(), all, ModulusRemainder()));
                after.push_back(Store::make(buffer,
                                            Load::make(t, reg, register_index(t), Buffer<>(),
                                                       Parameter(), all, ModulusRemainder()),
                                            index, Parameter(), all, ModulusRemainder()));
            }
            Stmt result = Block::make(before);
            result = Block::make({result, body, Block::make(after)});
            for (const auto &[reg, index] : regs) {
                result = Allocate::make(reg, t.element_of(), MemoryType::Register, {t.lanes()},
                                        const_true(), result);
            }
            return result;
        }
        return IRMutator::visit(op);
    }
};

} // namespace

void promote_accumulators(CpeKernel &k, const Machine &m) {
    std::set<std::string> ldm;
    for (const LdmBuffer &b : k.ldm)
        ldm.insert(b.name);
    k.body = Promote(ldm, m.vector_registers - m.operand_registers).mutate(k.body);
}

} // namespace sw
