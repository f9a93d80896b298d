/** \file
 * Recognising LDM <-> main-memory copy nests and emitting DMA requests.
 */
#include "target_sw/InjectDma.h"

#include "target_sw/ConstantBounds.h"

#include <set>
#include <sstream>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

struct Dim {
    std::string var;
    Expr min, extent;
    Expr ldm_step, main_step;
};

bool proved(const Expr &cond) { return is_const_one(simplify(cond)); }

bool same_value(const Expr &a, const Expr &b) { return is_const_zero(simplify(a - b)); }

class DmaInjector : public IRMutator {
public:
    DmaInjector(CpeKernel &k, const std::set<std::string> &ldm, const std::set<std::string> &main)
        : k(k), ldm(ldm), main(main) {}

private:
    using IRMutator::visit;
    CpeKernel &k;
    const std::set<std::string> &ldm, &main;
    int next_site = 0;

    Stmt visit(const For *op) override {
        if (op->for_type != ForType::Serial && op->for_type != ForType::Unrolled) {
            return IRMutator::visit(op);
        }
        Stmt s = lower_copy(op);
        return s.defined() ? s : IRMutator::visit(op);
    }
    Stmt visit(const Store *op) override {
        // A lone copy outside any loop: one element.
        std::vector<const For *> none;
        Stmt s = lower_nest(op, op, none, {});
        return s.defined() ? s : IRMutator::visit(op);
    }

    /** The copy nest rooted at \p root, as DMA, or an undefined Stmt. */
    Stmt lower_copy(const For *root) {
        std::vector<const For *> loops;
        std::vector<std::pair<std::string, Expr>> lets;
        Stmt s = root;
        while (true) {
            if (const For *f = s.as<For>()) {
                if (f->for_type != ForType::Serial && f->for_type != ForType::Unrolled) return Stmt();
                loops.push_back(f);
                s = f->body;
            } else if (const LetStmt *l = s.as<LetStmt>()) {
                lets.push_back({l->name, l->value});
                s = l->body;
            } else {
                break;
            }
        }
        const Store *store = s.as<Store>();
        if (!store) return Stmt();
        return lower_nest(root, store, loops, lets);
    }

    Stmt lower_nest(const Stmt &root, const Store *store, const std::vector<const For *> &loops,
                    const std::vector<std::pair<std::string, Expr>> &lets) {
        const Load *load = store->value.as<Load>();
        if (!load || !store->value.type().is_scalar() || !is_const_one(store->predicate) ||
            !is_const_one(load->predicate) || load->type != store->value.type()) {
            return Stmt();
        }
        bool is_put;
        if (ldm.count(store->name) && main.count(load->name)) {
            is_put = false;
        } else if (main.count(store->name) && ldm.count(load->name)) {
            is_put = true;
        } else {
            return Stmt();
        }
        const std::string ldm_name = is_put ? load->name : store->name;
        const std::string main_name = is_put ? store->name : load->name;
        Expr ldm_index = is_put ? load->index : store->index;
        Expr main_index = is_put ? store->index : load->index;
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
            ldm_index = substitute(it->first, it->second, ldm_index);
            main_index = substitute(it->first, it->second, main_index);
        }
        const int site = next_site++;
        const int bytes = load->type.bytes();

        std::vector<Dim> dims;  // innermost first
        bool affine = true;
        std::set<std::string> nest_vars;
        for (const For *f : loops) nest_vars.insert(f->name);
        for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
            const For *f = *it;
            for (const std::string &v : nest_vars) {
                affine &= !expr_uses_var(f->min, v) && !expr_uses_var(f->extent, v);
            }
            for (const auto &l : lets) {
                affine &= !expr_uses_var(f->min, l.first) && !expr_uses_var(f->extent, l.first);
            }
            if (is_const_one(f->extent)) {
                // A loop of one iteration is no dimension of the transfer.
                ldm_index = substitute(f->name, f->min, ldm_index);
                main_index = substitute(f->name, f->min, main_index);
                continue;
            }
            Var v(f->name);
            Dim d{f->name, f->min, f->extent,
                  simplify(substitute(f->name, v + 1, ldm_index) - ldm_index),
                  simplify(substitute(f->name, v + 1, main_index) - main_index)};
            for (const std::string &n : nest_vars) {
                affine &= !expr_uses_var(d.ldm_step, n) && !expr_uses_var(d.main_step, n);
            }
            dims.push_back(d);
        }
        auto at_mins = [&](Expr e, size_t from, size_t to) {
            for (size_t i = from; i < to; i++) e = substitute(dims[i].var, dims[i].min, e);
            return simplify(e);
        };
        // Each first difference is free of the nest's variables, so on the integer
        // lattice each index is exactly its value at the mins plus sum (v - min) * step.
        DmaSite info{ldm_name, main_name, is_put, ""};
        std::ostringstream shape;
        Stmt request_nest;
        if (!affine || (!dims.empty() && (!is_const_one(dims[0].ldm_step) ||
                                          !is_const_one(dims[0].main_step)))) {
            // One request per element, inside the original loops.
            Stmt req = request(is_put, ldm_name, ldm_index, main_name, main_index, 1, 1, 1, site);
            request_nest = rebuild_original(root, req);
            shape << "1 request per element (" << bytes << " B each): the copy is "
                  << (affine ? "not contiguous in its innermost dimension" : "not affine");
        } else {
            // Merge contiguous dimensions into one block.
            // No dimension left (one element): a block of one element.
            size_t used = dims.empty() ? 0 : 1;
            Expr block = dims.empty() ? Expr(1) : dims[0].extent;
            while (used < dims.size() && same_value(dims[used].ldm_step, block) &&
                   same_value(dims[used].main_step, block)) {
                block = simplify(block * dims[used].extent);
                used++;
            }
            Expr rows = 1, pitch = block;
            bool strided = false;
            if (used < dims.size() && same_value(dims[used].ldm_step, block)) {
                rows = dims[used].extent;
                pitch = dims[used].main_step;
                strided = true;
                used++;
            }
            Expr li = at_mins(ldm_index, 0, used), mi = at_mins(main_index, 0, used);
            Stmt req = request(is_put, ldm_name, li, main_name, mi, block, rows, pitch, site);
            if (strided && !proved(pitch >= block)) {
                // Rows overlap or run backwards in main memory: one request per row.
                Var r(unique_name("dma_row"));
                Stmt per_row = For::make(
                    r.name(), 0, rows, ForType::Serial, DeviceAPI::None,
                    request(is_put, ldm_name, li + r * block, main_name, mi + r * pitch, block, 1,
                            block, site));
                req = IfThenElse::make(pitch >= block, req, per_row);
            }
            for (size_t i = used; i < dims.size(); i++) {
                req = For::make(dims[i].var, dims[i].min, dims[i].extent, ForType::Serial,
                                DeviceAPI::None, req);
            }
            request_nest = req;
            Expr outer = 1;
            for (size_t i = used; i < dims.size(); i++) outer = outer * dims[i].extent;
            shape << simplify(outer) << " request(s) of " << simplify(rows) << " block(s) x "
                  << simplify(block * bytes) << " B";
            if (strided) shape << ", main-memory pitch " << simplify(pitch * bytes) << " B";
        }
        info.shape = shape.str();
        k.dma.push_back(info);
        Expr id = site;
        return Block::make({Evaluate::make(Call::make(Int(32), dma_begin_intrinsic, {id}, Call::Extern)),
                            request_nest,
                            Evaluate::make(Call::make(Int(32), dma_wait_intrinsic, {id}, Call::Extern))});
    }

    static Stmt request(bool is_put, const std::string &ldm_name, Expr ldm_index,
                        const std::string &main_name, Expr main_index, Expr block, Expr rows,
                        Expr pitch, int site) {
        std::vector<Expr> args(DmaArgCount);
        args[DmaIsPut] = is_put ? 1 : 0;
        args[DmaLdmBuffer] = StringImm::make(ldm_name);
        args[DmaLdmIndex] = simplify(ldm_index);
        args[DmaMainBuffer] = StringImm::make(main_name);
        args[DmaMainIndex] = simplify(main_index);
        args[DmaBlockElems] = simplify(block);
        args[DmaRows] = simplify(rows);
        args[DmaPitchElems] = simplify(pitch);
        args[DmaSiteId] = site;
        return Evaluate::make(Call::make(Int(32), dma_request_intrinsic, args, Call::Extern));
    }

    /** The original loops and lets of the nest, with \p inner in place of the store. */
    static Stmt rebuild_original(const Stmt &s, const Stmt &inner) {
        if (const For *f = s.as<For>()) {
            return For::make(f->name, f->min, f->extent, f->for_type, f->device_api,
                             rebuild_original(f->body, inner));
        }
        if (const LetStmt *l = s.as<LetStmt>()) {
            return LetStmt::make(l->name, l->value, rebuild_original(l->body, inner));
        }
        return inner;
    }
};

/** Names of main-memory buffers still loaded or stored directly. */
class DirectAccesses : public IRVisitor {
public:
    explicit DirectAccesses(const std::set<std::string> &main) : main(main) {}
    std::set<std::string> found;

private:
    using IRVisitor::visit;
    const std::set<std::string> &main;
    void visit(const Load *op) override {
        if (main.count(op->name)) found.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        if (main.count(op->name)) found.insert(op->name);
        IRVisitor::visit(op);
    }
};

}  // namespace

void inject_dma(CpeKernel &k) {
    std::set<std::string> ldm, main;
    for (const LdmBuffer &b : k.ldm) ldm.insert(b.name);
    for (const ClosureArg &a : k.args) {
        if (a.is_buffer) main.insert(a.name);
    }
    k.body = DmaInjector(k, ldm, main).mutate(k.body);
    DirectAccesses direct(main);
    k.body.accept(&direct);
    k.direct_accesses.assign(direct.found.begin(), direct.found.end());
}

}  // namespace sw
