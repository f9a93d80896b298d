#include "target_sw/HoistPaddingFill.h"

#include "target_sw/PassSupport.h"
#include "target_sw/SunwayIR.h"

#include <set>
#include <string>
#include <vector>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** The names a statement binds (lets, loops, allocations). */
std::set<std::string> defined_in(const Stmt &s) {
    BoundNames d;
    s.accept(&d);
    return std::move(d.names);
}

/** The variables and buffers a statement reads or writes (those it binds itself included). */
class FreeNames : public IRVisitor {
public:
    std::set<std::string> names;

private:
    using IRVisitor::visit;
    void visit(const Variable *op) override { names.insert(op->name); }
    void visit(const Load *op) override {
        names.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        names.insert(op->name);
        IRVisitor::visit(op);
    }
};

/** Whether \p s reads or writes a name of \p defined_inside that it does not bind itself. */
bool uses_any(const Stmt &s, const std::set<std::string> &defined_inside) {
    FreeNames f;
    s.accept(&f);
    const std::set<std::string> own = defined_in(s);
    for (const std::string &n : f.names) {
        if (!own.count(n) && defined_inside.count(n))
            return true;
    }
    return false;
}

/** Replaces (v + c) % 2, v the loop variable and c a constant, by the variable \p slot: the
 * LDM slot of a double-buffered staging (DoubleBuffer.h). */
class SlotOf : public IRMutator {
public:
    SlotOf(const std::string &loop_var, const std::string &slot) : var_(loop_var), slot_(slot) {}
    int64_t offset = 0;    ///< c of the replaced expressions
    bool mismatch = false; ///< two replaced expressions with different c

private:
    using IRMutator::visit;
    const std::string var_, slot_;
    bool found_ = false;

    Expr visit(const Mod *op) override {
        const int64_t *two = as_const_int(op->b);
        if (two && *two == 2 && expr_uses_var(op->a, var_)) {
            const Expr c = simplify(op->a - Variable::make(op->a.type(), var_));
            const int64_t *k = as_const_int(c);
            if (k) {
                if (found_ && *k != offset)
                    mismatch = true;
                found_ = true, offset = *k;
                return Variable::make(op->type, slot_);
            }
        }
        return IRMutator::visit(op);
    }
};

/** Hoists each marked fill out of the innermost loop around it where the fill allows it;
 * removes every mark. */
class Hoist : public IRMutator {
private:
    using IRMutator::visit;

    /** The innermost loop around the point visited, and the fills hoisted out of it. */
    const For *loop_ = nullptr;
    std::vector<Stmt> *hoisted_ = nullptr;

    Stmt visit(const For *op) override {
        std::vector<Stmt> mine;
        std::vector<Stmt> *outer_hoisted = hoisted_;
        const For *outer_loop = loop_;
        hoisted_ = &mine, loop_ = op;
        Stmt body = mutate(op->body);
        hoisted_ = outer_hoisted, loop_ = outer_loop;
        Stmt loop = For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        if (mine.empty())
            return loop;
        mine.push_back(loop);
        return Block::make(mine);
    }

    Stmt visit(const ProducerConsumer *op) override {
        const auto fill = ir::as_padding_fill(Stmt(op));
        if (!fill)
            return IRMutator::visit(op);
        const Stmt body = mutate(fill->second);
        if (!loop_)
            return body;
        // Its uses of the loop variable: only as the slot (v + c) % 2, or none.
        const std::string slot = unique_name("sw_fill_slot");
        SlotOf slots(loop_->name, slot);
        const Stmt by_slot = slots.mutate(body);
        std::set<std::string> inside = defined_in(loop_->body);
        inside.insert(loop_->name);
        if (slots.mismatch || uses_any(by_slot, inside) || inside.count(fill->first))
            return body;
        if (!stmt_uses_var(by_slot, slot)) {
            hoisted_->push_back(body);
            return Evaluate::make(0);
        }
        // Both slots; the second only where the loop runs a second iteration.
        const Expr first = loop_->min + Expr(int32_t(slots.offset));
        const Expr second = simplify(loop_->extent > 1);
        for (int k = 0; k < 2; k++) {
            const Stmt at = LetStmt::make(slot, simplify((first + k) % 2), by_slot);
            hoisted_->push_back(k == 0 || is_const_one(second) ? at : IfThenElse::make(second, at));
        }
        return Evaluate::make(0);
    }
};

} // namespace

void hoist_padding_fill(CpeKernel &k) {
    k.body = Hoist().mutate(k.body);
}

} // namespace sw
