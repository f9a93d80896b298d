/** \file
 * Proving floatv4 LDM accesses aligned.
 */
#include "target_sw/AlignVectorAccesses.h"

#include "target_sw/PromoteAccumulators.h"

#include <set>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class Align : public IRMutator {
public:
    explicit Align(const std::set<std::string> &ldm) : ldm(ldm) {}

private:
    using IRMutator::visit;
    const std::set<std::string> &ldm;
    Scope<ModulusRemainder> lets;

    /** The alignment of the base of a dense vector index into an LDM buffer; (1, 0) (nothing
     * known) for anything else. */
    ModulusRemainder base_alignment(const std::string &buffer, const Expr &index) const {
        const Ramp *r = index.as<Ramp>();
        if (!ldm.count(buffer) || !r || !is_const_one(r->stride))
            return ModulusRemainder();
        return modulus_remainder(r->base, lets);
    }
    Expr visit(const Load *op) override {
        Expr index = mutate(op->index), predicate = mutate(op->predicate);
        return Load::make(op->type, op->name, index, op->image, op->param, predicate,
                          base_alignment(op->name, index));
    }
    Stmt visit(const Store *op) override {
        Expr value = mutate(op->value), index = mutate(op->index),
             predicate = mutate(op->predicate);
        return Store::make(op->name, value, index, op->param, predicate,
                           base_alignment(op->name, index));
    }
    template <typename LetOrLetStmt> auto visit_let(const LetOrLetStmt *op) -> decltype(op->body) {
        const Expr value = mutate(op->value);
        if (value.type() == Int(32)) {
            ScopedBinding<ModulusRemainder> bind(lets, op->name, modulus_remainder(value, lets));
            return LetOrLetStmt::make(op->name, value, mutate(op->body));
        }
        return LetOrLetStmt::make(op->name, value, mutate(op->body));
    }
    Expr visit(const Let *op) override { return visit_let(op); }
    Stmt visit(const LetStmt *op) override { return visit_let(op); }
};

} // namespace

void align_vector_accesses(CpeKernel &k) {
    std::set<std::string> ldm;
    for (const LdmBuffer &b : k.ldm)
        ldm.insert(b.name);
    k.body = Align(ldm).mutate(k.body);
}

} // namespace sw
