/** \file
 * Finding CPE kernels (GPUBlock loop nests) and their closures.
 */
#include "target_sw/FindCpeKernels.h"

#include "target_sw/Errors.h"
#include "target_sw/MergeBlockPartitions.h"
#include "target_sw/SunwayIR.h"

#include <map>
#include <set>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** Collects free variables and the buffers loaded or stored, outside of what the body defines. */
class Closure : public IRGraphVisitor {
public:
    std::map<std::string, Type> vars;
    std::map<std::string, std::pair<Type, bool>> buffers; // name -> element type, written
    std::set<std::string> defined;

private:
    using IRGraphVisitor::visit;

    void define(const std::string &name) { defined.insert(name); }

    void visit(const Variable *op) override {
        if (!defined.count(op->name))
            vars.emplace(op->name, op->type);
    }
    void visit(const Let *op) override {
        op->value.accept(this);
        define(op->name);
        op->body.accept(this);
    }
    void visit(const LetStmt *op) override {
        op->value.accept(this);
        define(op->name);
        op->body.accept(this);
    }
    void visit(const For *op) override {
        op->min.accept(this);
        op->extent.accept(this);
        define(op->name);
        op->body.accept(this);
    }
    void visit(const Allocate *op) override {
        for (const Expr &e : op->extents)
            e.accept(this);
        op->condition.accept(this);
        define(op->name);
        op->body.accept(this);
    }
    void visit(const Load *op) override {
        IRGraphVisitor::visit(op);
        if (!defined.count(op->name)) {
            buffers.emplace(op->name, std::make_pair(op->type.element_of(), false));
        }
    }
    void visit(const Store *op) override {
        IRGraphVisitor::visit(op);
        if (!defined.count(op->name)) {
            auto it =
                buffers.emplace(op->name, std::make_pair(op->value.type().element_of(), true));
            it.first->second.second = true;
        }
    }
};

/** Rejects loop kinds that cannot appear inside a CPE kernel. */
class CheckKernelLoops : public IRVisitor {
    using IRVisitor::visit;
    void visit(const For *loop) override {
        if (loop->for_type == ForType::GPUBlock) {
            throw UserError("gpu_blocks loop " + loop->name +
                            " is nested inside another CPE kernel's body; fuse the block "
                            "variables or make them adjacent");
        }
        if (loop->for_type == ForType::GPUThread || loop->for_type == ForType::GPULane) {
            throw UserError("loop " + loop->name + " uses gpu_threads inside a CPE kernel");
        }
        if (loop->for_type == ForType::Parallel) {
            throw UserError("loop " + loop->name +
                            " is parallel inside a CPE kernel; the CPEs already share the blocks");
        }
        IRVisitor::visit(loop);
    }
};

class ReplaceKernels : public IRMutator {
public:
    explicit ReplaceKernels(SwFunction &f) : f(f) {}

private:
    using IRMutator::visit;
    SwFunction &f;

    Stmt visit(const For *op) override {
        if (op->for_type == ForType::GPUThread || op->for_type == ForType::GPULane) {
            throw UserError("loop " + op->name +
                            " is scheduled with gpu_threads/gpu_lanes; the Sunway target "
                            "maps only gpu_blocks(v, DeviceAPI::Host) loops to the CPEs");
        }
        if (op->for_type != ForType::GPUBlock)
            return IRMutator::visit(op);

        CpeKernel k;
        k.name = f.name + "_k" + std::to_string(f.kernels.size());
        Stmt body = op;
        std::vector<std::string> block_vars;
        while (const For *loop = body.as<For>()) {
            if (loop->for_type != ForType::GPUBlock)
                break;
            k.blocks.push_back({loop->name, loop->min, loop->extent});
            block_vars.push_back(loop->name);
            body = merge_block_partitions(loop->body);
        }
        check_body(body);
        k.body = body;
        k.args = kernel_closure(body, block_vars);
        // Block bounds computed on the host must reach the kernel too.
        for (const BlockLoop &b : k.blocks) {
            for (const ClosureArg &a : kernel_closure(Evaluate::make(b.min + b.extent), {})) {
                bool seen = false;
                for (const ClosureArg &x : k.args)
                    seen |= x.name == a.name;
                if (!seen)
                    k.args.push_back(a);
            }
        }
        const int index = int(f.kernels.size());
        f.kernels.push_back(std::move(k));
        return ir::make_launch(index);
    }

    static void check_body(const Stmt &body) {
        CheckKernelLoops check;
        body.accept(&check);
    }
};

} // namespace

std::vector<ClosureArg> kernel_closure(const Stmt &body, const std::vector<std::string> &bound) {
    Closure c;
    for (const std::string &b : bound)
        c.defined.insert(b);
    body.accept(&c);
    std::vector<ClosureArg> args;
    for (const auto &[name, type] : c.buffers) {
        args.push_back({name, type.first, true, type.second});
    }
    for (const auto &[name, type] : c.vars) {
        if (c.buffers.count(name))
            continue; // the host pointer of a buffer
        if (type.is_handle()) {
            throw UserError("a CPE kernel uses " + name +
                            ", a handle (halide_buffer_t or pointer) the CPEs cannot use");
        }
        args.push_back({name, type, false, false});
    }
    return args;
}

void find_cpe_kernels(const Stmt &body, SwFunction &f) {
    f.host_body = ReplaceKernels(f).mutate(body);
}

} // namespace sw
