/** \file
 * Staging an output Func's CPE tiles through the LDM (see StageOutput.h for the rule).
 */
#include "target_sw/StageOutput.h"

#include "target_sw/PassSupport.h"

#include <map>
#include <sstream>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** Whether the closure buffer \p buffer is the marked Func \p func (or one of its Tuple
 * components, func.0, func.1, ...). */
bool is_buffer_of(const std::string &buffer, const std::string &func) {
    if (buffer == func)
        return true;
    if (buffer.size() <= func.size() + 1 || buffer.compare(0, func.size() + 1, func + ".") != 0)
        return false;
    return buffer.find_first_not_of("0123456789", func.size() + 1) == std::string::npos;
}

class StoresInto : public IRVisitor {
public:
    explicit StoresInto(const std::string &buffer) : buffer(buffer) {}
    bool found = false;

private:
    using IRVisitor::visit;
    const std::string &buffer;
    void visit(const Store *op) override {
        found |= op->name == buffer;
        if (!found)
            IRVisitor::visit(op);
    }
};

bool stores_into(const Stmt &s, const std::string &buffer) {
    StoresInto v(buffer);
    s.accept(&v);
    return v.found;
}

/** One store into the output inside a nest. */
struct StoreSite {
    const Store *store;
    std::vector<const For *> loops; ///< enclosing loops of the nest, outermost first
    Expr index;                     ///< with the nest's lets substituted
    bool guarded;                   ///< under a branch inside the nest
};

/** The stores into the output of one nest, the nest's loop bounds (lets substituted), and
 * whether the nest reads the output. */
class NestScan : public IRVisitor {
public:
    explicit NestScan(const std::string &buffer) : buffer(buffer) {}
    std::vector<StoreSite> stores;
    std::map<const For *, std::pair<Expr, Expr>> bounds;
    bool reads = false;

private:
    using IRVisitor::visit;
    const std::string &buffer;
    std::vector<const For *> loops;
    LetScope lets;
    int branches = 0;

    Expr expand(const Expr &e) const { return lets.expand(e); }
    void visit(const LetStmt *op) override {
        op->value.accept(this);
        lets.push(op->name, op->value);
        op->body.accept(this);
        lets.pop();
    }
    void visit(const For *op) override {
        op->min.accept(this);
        op->extent.accept(this);
        bounds[op] = {expand(op->min), expand(op->extent)};
        loops.push_back(op);
        op->body.accept(this);
        loops.pop_back();
    }
    void visit(const IfThenElse *op) override {
        op->condition.accept(this);
        branches++;
        op->then_case.accept(this);
        if (op->else_case.defined())
            op->else_case.accept(this);
        branches--;
    }
    void visit(const Load *op) override {
        reads |= op->name == buffer;
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        IRVisitor::visit(op);
        if (op->name == buffer)
            stores.push_back({op, loops, expand(op->index), branches > 0});
    }
};

/** The nest's stores into the output, redirected to the LDM buffer. */
class Redirect : public IRMutator {
public:
    Redirect(const std::map<const Store *, Expr> &local, const std::string &staged)
        : local(local), staged(staged) {}

private:
    using IRMutator::visit;
    const std::map<const Store *, Expr> &local;
    const std::string &staged;
    Stmt visit(const Store *op) override {
        auto it = local.find(op);
        if (it == local.end())
            return IRMutator::visit(op);
        return Store::make(staged, mutate(op->value), it->second, Parameter(),
                           const_true(op->value.type().lanes()), ModulusRemainder());
    }
};

class StageNests : public IRMutator {
public:
    StageNests(CpeKernel &k, const std::string &buffer) : k(k), buffer(buffer) {}
    int staged = 0;

private:
    using IRMutator::visit;
    CpeKernel &k;
    const std::string &buffer;
    bool noted_loose = false;

    void note(const std::string &why) {
        k.notes.push_back("stage_output(" + buffer + ") not applied to a loop nest: " + why +
                          "; its stores stay direct main-memory accesses");
    }

    Stmt visit(const Store *op) override {
        // A store outside any loop of the kernel body: one element, left as it is.
        if (op->name == buffer && !noted_loose) {
            noted_loose = true;
            k.notes.push_back("stage_output(" + buffer +
                              "): a store outside any loop stays a direct access");
        }
        return IRMutator::visit(op);
    }

    Stmt visit(const For *op) override {
        if (!stores_into(op, buffer))
            return op;
        Stmt s = stage(op);
        return s.defined() ? s : Stmt(op);
    }

    static bool uses_any(const Expr &e, const std::vector<const For *> &loops) {
        for (const For *f : loops) {
            if (expr_uses_var(e, f->name))
                return true;
        }
        return false;
    }

    /** The nest rooted at \p root with its output tile staged in LDM, or undefined (noted). */
    Stmt stage(const For *root) {
        NestScan scan(buffer);
        root->accept(&scan);
        if (scan.reads)
            return note("the nest reads the output back"), Stmt();
        const std::vector<const For *> &loops = scan.stores[0].loops;
        const Type elem = scan.stores[0].store->value.type().element_of();
        const int lanes = scan.stores[0].store->value.type().lanes();
        for (const StoreSite &s : scan.stores) {
            if (s.loops != loops)
                return note("its stores sit in different loops"), Stmt();
            if (s.guarded)
                return note("a store sits under a branch inside the nest (e.g. GuardWithIf)"),
                       Stmt();
            if (!is_const_one(s.store->predicate))
                return note("a predicated store"), Stmt();
            if (s.store->value.type().lanes() != lanes)
                return note("stores of different vector widths"), Stmt();
        }
        for (const For *f : loops) {
            if (f->for_type != ForType::Serial && f->for_type != ForType::Unrolled) {
                return note("loop " + f->name + " is neither serial nor unrolled"), Stmt();
            }
            const auto &b = scan.bounds.at(f);
            if (uses_any(b.first, loops) || uses_any(b.second, loops)) {
                return note("the bounds of loop " + f->name +
                            " depend on an enclosing loop (not a box)"),
                       Stmt();
            }
        }
        // Each store's main-memory index: a scalar, or a dense vector (Ramp) whose base and
        // stride are affine in the nest's variables.
        std::vector<Expr> bases, strides;
        for (const StoreSite &s : scan.stores) {
            Expr base = s.index, stride = 0;
            if (lanes > 1) {
                const Ramp *r = s.index.as<Ramp>();
                if (!r || !r->base.type().is_scalar())
                    return note("a vector store whose index is not a ramp"), Stmt();
                base = r->base, stride = r->stride;
                if (uses_any(stride, loops))
                    return note("a vector store whose stride varies in the nest"), Stmt();
            }
            for (const For *f : loops) {
                const Expr v = Variable::make(Int(32), f->name);
                const Expr step = simplify(substitute(f->name, v + 1, base) - base);
                if (uses_any(step, loops)) {
                    std::ostringstream why;
                    why << "the store index " << s.index << " is not affine in loop " << f->name;
                    return note(why.str()), Stmt();
                }
            }
            bases.push_back(base), strides.push_back(stride);
        }

        // The LDM tile: one region per store, the loops in row-major order, lanes innermost.
        const std::string staged_name = buffer + "$ldm" + (staged ? std::to_string(staged) : "");
        Expr points = 1, lin = 0;
        for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
            const auto &b = scan.bounds.at(*it);
            lin = lin + (Variable::make(Int(32), (*it)->name) - b.first) * points;
            points = points * b.second;
        }
        points = simplify(points);
        lin = simplify(lin);
        const Expr region = simplify(points * lanes);
        std::map<const Store *, Expr> local;
        std::vector<Stmt> copies;
        for (size_t s = 0; s < scan.stores.size(); s++) {
            const Expr first = simplify(int(s) * region + lin * lanes);
            local[scan.stores[s].store] = lanes > 1 ? Ramp::make(first, 1, lanes) : first;
            // The copy back: output[index] = staged[local index], lanes as the innermost loop.
            const std::string lane_name = unique_name("sw_lane");
            const Expr lane = lanes > 1 ? Variable::make(Int(32), lane_name) : Expr(0);
            const Expr main_index = lanes > 1 ? bases[s] + lane * strides[s] : bases[s];
            Stmt copy = Store::make(
                buffer,
                Load::make(elem, staged_name, simplify(first + lane), Buffer<>(), Parameter(),
                           const_true(), ModulusRemainder()),
                main_index, scan.stores[s].store->param, const_true(), ModulusRemainder());
            if (lanes > 1)
                copy = For::make(lane_name, 0, lanes, ForType::Serial, DeviceAPI::None, copy);
            for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
                const auto &b = scan.bounds.at(*it);
                copy = For::make((*it)->name, b.first, b.second, ForType::Serial, DeviceAPI::None,
                                 copy);
            }
            copies.push_back(copy);
        }
        staged++;
        Stmt nest = Redirect(local, staged_name).mutate(Stmt(root));
        copies.insert(copies.begin(), nest);
        const Expr size = simplify(int(scan.stores.size()) * region);
        return Allocate::make(staged_name, elem, MemoryType::GPUShared, {size}, const_true(),
                              Block::make(copies));
    }
};

} // namespace

void stage_outputs(CpeKernel &k, const std::set<std::string> &marked) {
    for (const ClosureArg &a : k.args) {
        if (!a.is_buffer || !a.written)
            continue;
        bool is_marked = false;
        for (const std::string &f : marked)
            is_marked |= is_buffer_of(a.name, f);
        if (!is_marked)
            continue;
        StageNests s(k, a.name);
        k.body = s.mutate(k.body);
    }
}

} // namespace sw
