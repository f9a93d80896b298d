/** \file
 * Pipeline analysis of the Sunway autoscheduler.
 */
#include "autoscheduler/Analysis.h"

#include "target_sw/Errors.h"
#include "target_sw/SwModule.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace sw_auto {

using namespace Halide;
using namespace Halide::Internal;

const char *const chunk_origin_var = "sw_chunk_origin";
const char *const chunk_size_var = "sw_chunk_size";
const char *const rounded_width_var = "sw_rounded_width";
std::string tile_origin_var(int dim) {
    return "sw_tile_origin" + std::to_string(dim);
}
std::string tile_size_var(int dim) {
    return "sw_tile_size" + std::to_string(dim);
}

namespace {

int64_t floor_div(int64_t a, int64_t b) {
    if (b == 0)
        return 0; // Halide's convention: x / 0 == 0
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

std::string pos(const std::string &what, const std::string &name) {
    return what + " '" + name + "'";
}

/** Counts one definition's operations by the rules of WorkCount.h. */
class OpCounter : public IRVisitor {
public:
    explicit OpCounter(const Scope<Interval> &ranges) : ranges(ranges) {}
    OpCount c;

private:
    using IRVisitor::visit;
    const Scope<Interval> &ranges; ///< the pure variables' ranges over the output
    void flt(const Type &t, int flops) {
        if (t.is_float()) {
            c.float_ops++;
            c.flops += flops;
        } else {
            c.int_ops++;
        }
    }
    void visit(const Add *op) override {
        const Mul *m = op->a.as<Mul>() ? op->a.as<Mul>() : op->b.as<Mul>();
        if (op->type.is_float() && m) {
            m->a.accept(this);
            m->b.accept(this);
            (op->a.as<Mul>() ? op->b : op->a).accept(this);
            c.float_ops++;
            c.flops += 2;
            return;
        }
        IRVisitor::visit(op);
        if (!op->type.is_float() && (is_const(op->a) || is_const(op->b)))
            return; // displacement
        flt(op->type, 1);
    }
    void visit(const Sub *op) override {
        IRVisitor::visit(op);
        if (!op->type.is_float() && is_const(op->b))
            return;
        flt(op->type, 1);
    }
    void visit(const Mul *op) override { IRVisitor::visit(op), flt(op->type, 1); }
    void visit(const Div *op) override {
        IRVisitor::visit(op);
        flt(op->type, 1);
        // Halide's lowering turns a division by a float constant into a multiplication; so it
        // does when the divisor is one constant over the whole output (e.g. an average pool's
        // window count when every window lies inside the counted area).
        if (op->type.is_float() && !is_const(op->b)) {
            const Expr divisor = simplify(op->b, true, ranges);
            if (!is_const(divisor))
                c.slow_cycles += 30; // floatv4 too (simd_vdivs: one unpipelined vdivs)
        }
    }
    void visit(const Mod *op) override { IRVisitor::visit(op), flt(op->type, 0); }
    // The CPE code generator's floatv4 has + - * and a*b+c, and min / max as a subtraction and
    // a select (simd_vsellts); integer min / max stay scalar.
    void visit(const Min *op) override { min_max(op); }
    void visit(const Max *op) override { min_max(op); }
    template <typename T> void min_max(const T *op) {
        IRVisitor::visit(op), flt(op->type, 0), c.vector_safe &= op->type.is_float();
        c.float_min_max += op->type.is_float();
    }
    void visit(const FloatImm *) override { c.float_constants++; }
    void visit(const Select *op) override {
        IRVisitor::visit(op);
        flt(op->type, 0);
        c.vector_safe = false;
    }
    void cmp(const Expr &a) { flt(a.type(), 0); }
    void visit(const LT *op) override { IRVisitor::visit(op), cmp(op->a); }
    void visit(const LE *op) override { IRVisitor::visit(op), cmp(op->a); }
    void visit(const GT *op) override { IRVisitor::visit(op), cmp(op->a); }
    void visit(const GE *op) override { IRVisitor::visit(op), cmp(op->a); }
    void visit(const EQ *op) override { IRVisitor::visit(op), cmp(op->a); }
    void visit(const NE *op) override { IRVisitor::visit(op), cmp(op->a); }
    void visit(const Cast *op) override {
        IRVisitor::visit(op);
        if (op->type.is_float() != op->value.type().is_float())
            c.float_ops++, c.vector_safe = false;
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type == Call::Halide || op->call_type == Call::Image) {
            c.loads++;
        } else if (op->call_type == Call::PureExtern || op->call_type == Call::Extern) {
            c.float_ops++;
            c.vector_safe = false;
            c.slow_cycles += 80; // sqrt, exp, log, pow: software or unpipelined (Machine.h [U])
        } else if (!op->is_intrinsic(Call::likely) &&
                   !op->is_intrinsic(Call::likely_if_innermost)) {
            c.vector_safe = false;
        }
    }
};

/** The longest chain of dependent floating-point operations of an expression (WorkCount.h:
 * a fused a*b+c is one operation; loads start a chain at 0). */
class ChainCounter : public IRVisitor {
public:
    int64_t depth = 0;
    int64_t of(const Expr &e) {
        depth = 0;
        e.accept(this);
        return depth;
    }

private:
    using IRVisitor::visit;
    int64_t children(const std::vector<Expr> &es) {
        int64_t d = 0;
        for (const Expr &e : es)
            d = std::max(d, of(e));
        return d;
    }
    void result(const Type &t, int64_t d) { depth = t.is_float() ? d + 1 : d; }
    void visit(const Add *op) override {
        const Mul *m = op->a.as<Mul>() ? op->a.as<Mul>() : op->b.as<Mul>();
        if (op->type.is_float() && m)
            return result(op->type, children({m->a, m->b, op->a.as<Mul>() ? op->b : op->a}));
        result(op->type, children({op->a, op->b}));
    }
    void visit(const Sub *op) override { result(op->type, children({op->a, op->b})); }
    void visit(const Mul *op) override { result(op->type, children({op->a, op->b})); }
    void visit(const Div *op) override { result(op->type, children({op->a, op->b})); }
    void visit(const Min *op) override { result(op->type, children({op->a, op->b})); }
    void visit(const Max *op) override { result(op->type, children({op->a, op->b})); }
    void visit(const Select *op) override {
        result(op->type, children({op->condition, op->true_value, op->false_value}));
    }
    void visit(const Cast *op) override {
        const int64_t d = of(op->value);
        depth = op->type.is_float() != op->value.type().is_float() ? d + 1 : d;
    }
    void visit(const Call *op) override {
        if (op->call_type == Call::Halide || op->call_type == Call::Image) {
            depth = 0; // a load
            return;
        }
        const int64_t d = children(op->args);
        depth = (op->call_type == Call::PureExtern || op->call_type == Call::Extern) &&
                        op->type.is_float()
                    ? d + 1
                    : d;
    }
};

OpCount count_ops(const std::vector<Expr> &values, const std::vector<Expr> &args,
                  const Scope<Interval> &ranges) {
    OpCounter oc(ranges);
    for (const Expr &e : values)
        e.accept(&oc);
    for (const Expr &e : args)
        e.accept(&oc);
    ChainCounter cc;
    for (const Expr &e : values)
        oc.c.chain = std::max(oc.c.chain, cc.of(e));
    return oc.c;
}

/** All calls (to Funcs and buffers) in \p exprs. */
class CallCollector : public IRVisitor {
public:
    std::vector<const Call *> calls;

private:
    using IRVisitor::visit;
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type == Call::Halide || op->call_type == Call::Image)
            calls.push_back(op);
    }
};

std::vector<const Call *> calls_in(const Definition &d) {
    CallCollector cc;
    for (const Expr &e : d.values())
        e.accept(&cc);
    for (const Expr &e : d.args())
        e.accept(&cc);
    return cc.calls;
}

/** Whether \p e loads from a Func or an input, directly or through a variable of
 * \p loaded (lets bound to such values): an index read from memory. */
bool loads_memory(const Expr &e, const std::set<std::string> &loaded) {
    class Finder : public IRVisitor {
    public:
        explicit Finder(const std::set<std::string> &l) : loaded(l) {}
        const std::set<std::string> &loaded;
        bool found = false;
        using IRVisitor::visit;
        void visit(const Call *op) override {
            found |= op->call_type == Call::Halide || op->call_type == Call::Image;
            IRVisitor::visit(op);
        }
        void visit(const Variable *op) override { found |= loaded.count(op->name) > 0; }
    } f(loaded);
    e.accept(&f);
    return f.found;
}

/** The lets in \p e whose values load memory (loads_memory), in \p loaded. */
void find_loaded_lets(const Expr &e, std::set<std::string> &loaded) {
    class Lets : public IRVisitor {
    public:
        explicit Lets(std::set<std::string> &l) : loaded(l) {}
        std::set<std::string> &loaded;
        using IRVisitor::visit;
        void visit(const Let *op) override {
            if (loads_memory(op->value, loaded))
                loaded.insert(op->name);
            IRVisitor::visit(op);
        }
    } lets(loaded);
    e.accept(&lets);
}

/** The constant extent of a reduction variable (checked constant by analyze()). The
 * simplified Expr is held while its value is read: as_const_int points into its node. */
int64_t constant_extent(const ReductionVariable &v) {
    const Expr e = simplify(v.extent);
    const int64_t *k = as_const_int(e);
    if (!k)
        throw sw::UserError("the reduction variable " + v.var + " has no constant extent");
    return *k;
}

/** d e / d var, when it is a constant; nullopt-like flag otherwise. */
bool coefficient(const Expr &e, const std::string &var, int64_t *out) {
    Expr v = Variable::make(Int(32), var);
    Expr d = simplify(substitute(var, v + 1, e) - e);
    const int64_t *k = as_const_int(d);
    if (!k)
        return false;
    *out = *k;
    return true;
}

/** Whether \p e is constant over every aligned run of \p l values of \p var (var = j * l + i,
 * i < l). */
bool constant_over_runs(const Expr &e, const std::string &var, int l) {
    const Expr j = Variable::make(Int(32), var + ".sw_run");
    const Expr base = substitute(var, j * l, e);
    for (int i = 1; i < l; i++) {
        if (!is_const_zero(simplify(substitute(var, j * l + i, e) - base)))
            return false;
    }
    return true;
}

Scope<Interval> scope_for(const Definition &d, const std::vector<std::string> &pure_args,
                          const SymBox &region, int chunk_rvar_index = -1) {
    Scope<Interval> s;
    for (size_t i = 0; i < pure_args.size() && i < region.size(); i++) {
        s.push(pure_args[i], Interval(region[i].first, region[i].second));
    }
    if (d.schedule().rvars().empty())
        return s;
    const std::vector<ReductionVariable> &rv = d.schedule().rvars();
    for (size_t i = 0; i < rv.size(); i++) {
        if (int(i) == chunk_rvar_index) {
            Expr o = Variable::make(Int(32), chunk_origin_var),
                 c = Variable::make(Int(32), chunk_size_var);
            s.push(rv[i].var, Interval(rv[i].min + o, rv[i].min + o + c - 1));
        } else {
            s.push(rv[i].var, Interval(rv[i].min, simplify(rv[i].min + rv[i].extent - 1)));
        }
    }
    return s;
}

void merge_into(std::map<std::string, SymBox> &regions, const std::map<std::string, Box> &boxes,
                const std::string &self) {
    for (const auto &kv : boxes) {
        if (kv.first == self)
            continue;
        SymBox b;
        for (const Interval &i : kv.second.bounds) {
            if (!i.is_bounded()) {
                throw sw::UserError("the autoscheduler cannot bound the region of '" + kv.first +
                                    "' that one tile needs");
            }
            b.push_back({i.min, i.max});
        }
        auto it = regions.find(kv.first);
        if (it == regions.end()) {
            regions[kv.first] = b;
            continue;
        }
        for (size_t d = 0; d < b.size() && d < it->second.size(); d++) {
            it->second[d].first = min(it->second[d].first, b[d].first);
            it->second[d].second = max(it->second[d].second, b[d].second);
        }
    }
}

std::map<std::string, Box> required(const Definition &d, const Scope<Interval> &s) {
    std::map<std::string, Box> all;
    auto add = [&](const Expr &e) {
        for (const auto &kv : boxes_required(e, s)) {
            auto it = all.find(kv.first);
            if (it == all.end()) {
                all[kv.first] = kv.second;
            } else {
                merge_boxes(it->second, kv.second);
            }
        }
    };
    for (const Expr &e : d.values())
        add(e);
    for (const Expr &e : d.args())
        add(e);
    return all;
}

std::vector<const Definition *> definitions(const Function &f) {
    std::vector<const Definition *> defs{&f.definition()};
    for (const Definition &u : f.updates())
        defs.push_back(&u);
    return defs;
}

void simplify_box(SymBox &b) {
    for (auto &d : b)
        d.first = simplify(d.first), d.second = simplify(d.second);
}

/** Flops of the whole pipeline (for GFLOPS): every stage over its whole region. */
void count_flops(PipelineInfo &info) {
    for (const Stage &s : info.stages) {
        if (s.is_input)
            continue;
        auto it = info.tile_region.find(s.name);
        if (it == info.tile_region.end())
            continue;
        Bindings full;
        for (size_t d = 0; d < info.out_extents.size(); d++) {
            full[tile_origin_var(int(d))] = 0;
            full[tile_size_var(int(d))] = info.out_extents[d];
        }
        full[rounded_width_var] = info.main_width.defined() ? evaluate(info.main_width, full) : 1;
        int64_t points = 1;
        for (int64_t e : extents(it->second, full))
            points *= e;
        for (const OpCount &o : info.ops.at(s.name))
            info.total_flops += double(points) * o.reduction_points * o.flops;
    }
}

/** Whether the output computes its values itself (PipelineInfo::output_computes): anything
 * but one pure definition out(args) = f(args) with f a computed stage that every plan stages
 * in LDM per tile (not an input, not an inlined wrapper). SW_AUTOSCHEDULE_STAGE_OUTPUT=0 in
 * the environment says no (the schedules of before sw::stage_output, for comparisons). */
bool output_computes(const PipelineInfo &info) {
    if (const char *e = std::getenv("SW_AUTOSCHEDULE_STAGE_OUTPUT")) {
        if (std::string(e) == "0")
            return false;
    }
    const Stage &o = info.stages[info.by_name.at(info.output)];
    if (!o.func.updates().empty() || o.func.definition().values().size() != 1)
        return true;
    const Call *c = o.func.definition().values()[0].as<Call>();
    if (!c || c->call_type != Call::Halide || !info.by_name.count(c->name) ||
        c->args.size() != o.args.size())
        return true;
    const Stage &f = info.stages[info.by_name.at(c->name)];
    if (f.is_input ||
        std::find(info.wrappers.begin(), info.wrappers.end(), f.name) != info.wrappers.end())
        return true;
    for (size_t d = 0; d < o.args.size(); d++) {
        const Variable *v = c->args[d].as<Variable>();
        if (!v || v->name != o.args[d])
            return true;
    }
    return false;
}

} // namespace

namespace {

/** The values of the Lets around a point of evaluate(), innermost last (a Let's body sees
 * them before the bindings; no copy of the bindings per Let). */
using LetValues = std::vector<std::pair<const std::string *, int64_t>>;

int64_t evaluate_in(const Expr &e, const Bindings &b, LetValues &lets);

/** A float-typed bound term (a resize's source coordinate: double arithmetic on the loop
 * variables, then cast to an integer), evaluated in double. */
double evaluate_float_in(const Expr &e, const Bindings &b, LetValues &lets) {
    if (const FloatImm *f = e.as<FloatImm>())
        return f->value;
    if (const Cast *o = e.as<Cast>()) {
        return o->value.type().is_float() ? evaluate_float_in(o->value, b, lets)
                                          : double(evaluate_in(o->value, b, lets));
    }
    if (const Add *o = e.as<Add>())
        return evaluate_float_in(o->a, b, lets) + evaluate_float_in(o->b, b, lets);
    if (const Sub *o = e.as<Sub>())
        return evaluate_float_in(o->a, b, lets) - evaluate_float_in(o->b, b, lets);
    if (const Mul *o = e.as<Mul>())
        return evaluate_float_in(o->a, b, lets) * evaluate_float_in(o->b, b, lets);
    if (const Div *o = e.as<Div>())
        return evaluate_float_in(o->a, b, lets) / evaluate_float_in(o->b, b, lets);
    if (const Min *o = e.as<Min>())
        return std::min(evaluate_float_in(o->a, b, lets), evaluate_float_in(o->b, b, lets));
    if (const Max *o = e.as<Max>())
        return std::max(evaluate_float_in(o->a, b, lets), evaluate_float_in(o->b, b, lets));
    if (const Select *o = e.as<Select>()) {
        return evaluate_in(o->condition, b, lets) ? evaluate_float_in(o->true_value, b, lets)
                                                  : evaluate_float_in(o->false_value, b, lets);
    }
    if (const Call *c = e.as<Call>()) {
        if (c->args.size() == 1 && (c->name == "floor_f32" || c->name == "floor_f64"))
            return std::floor(evaluate_float_in(c->args[0], b, lets));
        if (c->args.size() == 1 && (c->name == "ceil_f32" || c->name == "ceil_f64"))
            return std::ceil(evaluate_float_in(c->args[0], b, lets));
    }
    std::ostringstream s;
    s << e;
    throw sw::UserError("the autoscheduler cannot evaluate the bound " + s.str());
}

/** A comparison of \p a and \p b, in double when they are floats. */
template <typename Cmp>
int64_t compare_in(const Expr &a, const Expr &b, const Bindings &bind, LetValues &lets, Cmp cmp) {
    if (a.type().is_float())
        return cmp(evaluate_float_in(a, bind, lets), evaluate_float_in(b, bind, lets));
    return cmp(evaluate_in(a, bind, lets), evaluate_in(b, bind, lets));
}

int64_t evaluate_in(const Expr &e, const Bindings &b, LetValues &lets) {
    if (const IntImm *i = e.as<IntImm>())
        return i->value;
    if (const UIntImm *u = e.as<UIntImm>())
        return int64_t(u->value);
    if (const Variable *v = e.as<Variable>()) {
        for (auto l = lets.rbegin(); l != lets.rend(); ++l) {
            if (*l->first == v->name)
                return l->second;
        }
        auto it = b.find(v->name);
        if (it == b.end())
            throw sw::UserError("the autoscheduler met an unknown value '" + v->name + "'");
        return it->second;
    }
    if (const Add *o = e.as<Add>())
        return evaluate_in(o->a, b, lets) + evaluate_in(o->b, b, lets);
    if (const Sub *o = e.as<Sub>())
        return evaluate_in(o->a, b, lets) - evaluate_in(o->b, b, lets);
    if (const Mul *o = e.as<Mul>())
        return evaluate_in(o->a, b, lets) * evaluate_in(o->b, b, lets);
    if (const Div *o = e.as<Div>())
        return floor_div(evaluate_in(o->a, b, lets), evaluate_in(o->b, b, lets));
    if (const Mod *o = e.as<Mod>()) {
        int64_t a = evaluate_in(o->a, b, lets), m = evaluate_in(o->b, b, lets);
        return m == 0 ? 0 : a - floor_div(a, m) * m;
    }
    if (const Min *o = e.as<Min>())
        return std::min(evaluate_in(o->a, b, lets), evaluate_in(o->b, b, lets));
    if (const Max *o = e.as<Max>())
        return std::max(evaluate_in(o->a, b, lets), evaluate_in(o->b, b, lets));
    if (const Select *o = e.as<Select>())
        return evaluate_in(o->condition, b, lets) ? evaluate_in(o->true_value, b, lets)
                                                  : evaluate_in(o->false_value, b, lets);
    if (const LT *o = e.as<LT>())
        return compare_in(o->a, o->b, b, lets, [](auto x, auto y) { return x < y; });
    if (const LE *o = e.as<LE>())
        return compare_in(o->a, o->b, b, lets, [](auto x, auto y) { return x <= y; });
    if (const GT *o = e.as<GT>())
        return compare_in(o->a, o->b, b, lets, [](auto x, auto y) { return x > y; });
    if (const GE *o = e.as<GE>())
        return compare_in(o->a, o->b, b, lets, [](auto x, auto y) { return x >= y; });
    if (const EQ *o = e.as<EQ>())
        return evaluate_in(o->a, b, lets) == evaluate_in(o->b, b, lets);
    if (const NE *o = e.as<NE>())
        return evaluate_in(o->a, b, lets) != evaluate_in(o->b, b, lets);
    if (const And *o = e.as<And>())
        return evaluate_in(o->a, b, lets) && evaluate_in(o->b, b, lets);
    if (const Or *o = e.as<Or>())
        return evaluate_in(o->a, b, lets) || evaluate_in(o->b, b, lets);
    if (const Not *o = e.as<Not>())
        return !evaluate_in(o->a, b, lets);
    if (const Cast *o = e.as<Cast>()) {
        if (o->value.type().is_float()) // C's conversion: truncation
            return int64_t(evaluate_float_in(o->value, b, lets));
        return evaluate_in(o->value, b, lets);
    }
    if (const Let *o = e.as<Let>()) {
        lets.push_back({&o->name, evaluate_in(o->value, b, lets)});
        const int64_t r = evaluate_in(o->body, b, lets);
        lets.pop_back();
        return r;
    }
    if (const Call *c = e.as<Call>()) {
        if (c->is_intrinsic(Call::likely) || c->is_intrinsic(Call::likely_if_innermost) ||
            c->is_intrinsic(Call::promise_clamped) ||
            c->is_intrinsic(Call::unsafe_promise_clamped)) {
            return evaluate_in(c->args[0], b, lets);
        }
    }
    std::ostringstream s;
    s << e;
    throw sw::UserError("the autoscheduler cannot evaluate the bound " + s.str());
}

} // namespace

int64_t evaluate(const Expr &e, const Bindings &b) {
    LetValues lets;
    return evaluate_in(e, b, lets);
}

std::vector<int64_t> extents(const SymBox &box, const Bindings &b) {
    std::vector<int64_t> e;
    for (const auto &d : box)
        e.push_back(std::max<int64_t>(0, evaluate(d.second, b) - evaluate(d.first, b) + 1));
    return e;
}

bool vectorised_definition(const PipelineInfo &info, const Plan &plan, int d) {
    if (d <= 0 || d == info.main_update + 1 || d >= int(info.main_vectorisable.size()) ||
        !info.main_vectorisable[size_t(d)]) {
        return false;
    }
    if (plan.vector == Plan::Vector::Pure)
        return true;
    return plan.vector == Plan::Vector::Reduction && !info.out_extents.empty() &&
           std::min<int64_t>(plan.tile[0], info.out_extents[0]) % plan.lanes == 0;
}

int epilogue_unroll(const PipelineInfo &info, const Plan &plan, int d) {
    const bool epilogue = info.main_update >= 0 && d > info.main_update + 1;
    return epilogue && plan.vector == Plan::Vector::Pure && plan.block > 1 &&
                   vectorised_definition(info, plan, d)
               ? plan.block
               : 1;
}

bool serial_dim(const Plan &plan, int d) {
    return plan.serial_pixels && d < 2;
}

TileCounts tile_counts(const PipelineInfo &info, const Plan &plan) {
    TileCounts n;
    for (size_t d = 0; d < info.out_extents.size(); d++) {
        const int64_t extent = info.out_extents[d], tile = std::min<int64_t>(plan.tile[d], extent);
        (serial_dim(plan, int(d)) ? n.serial : n.spread) *= (extent + tile - 1) / tile;
    }
    if (plan.serial_tiles > 1) { // the search takes serial_tiles dividing the tiles
        n.spread = n.spread * n.serial / plan.serial_tiles;
        n.serial = plan.serial_tiles;
    }
    return n;
}

bool stationary_input(const PipelineInfo &info, const Plan &plan, const std::string &name) {
    const bool per_chunk = contains(info.chunk_staged, name);
    if (!plan.serial_pixels || plan.vector == Plan::Vector::Reduction || info.taps != 1 ||
        info.out_extents.size() < 3 || (!per_chunk && !info.tile_region.count(name)) ||
        contains(info.producer_inputs, name) || !info.by_name.count(name) ||
        !info.stages[info.by_name.at(name)].is_input)
        return false;
    const auto moves = info.region_moves.find(name);
    if (moves == info.region_moves.end())
        return false;
    for (int d : moves->second) {
        if (d == 0 || d == 1)
            return false;
    }
    return !contains(shared_inputs(info, plan), name);
}

Bindings plan_bindings(const PipelineInfo &info, const Plan &plan, int lanes) {
    Bindings b;
    for (size_t d = 0; d < info.out_extents.size(); d++) {
        const int64_t extent = info.out_extents[d], tile = std::min<int64_t>(plan.tile[d], extent);
        b[tile_size_var(int(d))] = tile;
        b[tile_origin_var(int(d))] = std::max<int64_t>(0, (extent - tile) / 2 / tile * tile);
    }
    const bool chunked = info.chunk_rvar >= 0 && plan.chunk > 0 && plan.chunk < info.reduction;
    b[chunk_origin_var] = 0;
    b[chunk_size_var] = chunked ? plan.chunk : info.reduction;
    const int64_t width = info.main_width.defined() ? evaluate(info.main_width, b) : 1;
    const int64_t loop = plan.vector == Plan::Vector::Pure ? int64_t(lanes) * plan.block : 1;
    b[rounded_width_var] = sw::align_up(width, loop);
    return b;
}

bool aligned_window(const PipelineInfo &info, const Plan &plan, const std::string &name,
                    int64_t row) {
    if (plan.vector != Plan::Vector::Pure || plan.inline_producers || plan.phases ||
        info.gather_stride >= 2 || !contains(info.producers, name) ||
        contains(info.computing_producers, name) || row <= 0 || plan.lanes <= 1)
        return false;
    const int64_t extra = sw::align_up(row, plan.lanes) - row;
    return extra > 0 && 8 * extra <= row;
}

bool staged_by_producer(const PipelineInfo &info, const Plan &plan, const std::string &name) {
    if (plan.inline_producers || !contains(info.producer_inputs, name))
        return false;
    for (const std::string &producer : info.producers) {
        if (contains(info.computing_producers, producer))
            continue;
        const Stage &ps = info.stages[info.by_name.at(producer)];
        for (const auto &kv : find_direct_calls(ps.func)) {
            if (kv.first == name)
                return true;
        }
    }
    return false;
}

int producer_vectors(const PipelineInfo &info, const Plan &plan, const std::string &name) {
    if (!contains(info.vector_producers, name) || plan.inline_producers ||
        plan.vector != Plan::Vector::Pure || info.out_extents.empty() ||
        !info.chunk_region.count(name)) {
        return 0;
    }
    // Every tile along x as wide (the output divides into tiles), its window along x whole
    // vectors: the extent at any tile position (the window is not clamped) and chunk.
    const int64_t extent = info.out_extents[0], tile = std::min<int64_t>(plan.tile[0], extent);
    if (extent % tile != 0)
        return 0;
    Bindings b;
    for (size_t d = 0; d < info.out_extents.size(); d++) {
        b[tile_size_var(int(d))] = std::min<int64_t>(plan.tile[d], info.out_extents[d]);
        b[tile_origin_var(int(d))] = 0;
    }
    const bool chunked = info.chunk_rvar >= 0 && plan.chunk > 0 && plan.chunk < info.reduction;
    b[chunk_origin_var] = 0;
    b[chunk_size_var] = chunked ? plan.chunk : info.reduction;
    const int64_t width = info.main_width.defined() ? evaluate(info.main_width, b) : 1;
    const int64_t loop = int64_t(plan.lanes) * std::max(plan.block, 1);
    b[rounded_width_var] = (width + loop - 1) / loop * loop;
    const std::vector<int64_t> box = extents(info.chunk_region.at(name), b);
    if (box.empty() || box[0] <= 0 || box[0] % plan.lanes != 0)
        return 0;
    for (int unroll = 8; unroll > 1; unroll--) {
        if (box[0] / plan.lanes % unroll == 0)
            return unroll;
    }
    return 1;
}

std::vector<std::string> shared_inputs(const PipelineInfo &info, const Plan &plan) {
    std::vector<std::string> out;
    // Only inputs staged per chunk of a chunked reduction (a dense layer's input): a broadcast
    // per tile puts the CPEs in step at every tile, so that all their puts coincide, which
    // the cost model does not price (VGG-19 conv1_1 with shared weights: 28% slower than
    // predicted).
    const bool chunked = info.chunk_rvar >= 0 && plan.chunk > 0 && plan.chunk < info.reduction;
    if (plan.share == Plan::Share::None || !chunked)
        return out;
    const bool mesh = plan.share == Plan::Share::Mesh;
    if (mesh && plan.mesh_dim < 0)
        return out;
    // Tiles that divide the output, except along a matrix's rows on the mesh (its rows and
    // columns of CPEs share the edge tiles' shifted boxes too: MergeBlockPartitions.h).
    const bool matrix_on_mesh = mesh && info.out_extents.size() == 2;
    for (size_t d = 0; d < (matrix_on_mesh ? 1 : info.out_extents.size()); d++) {
        if (info.out_extents[d] % std::min<int64_t>(plan.tile[d], info.out_extents[d]) != 0)
            return out;
    }
    for (const auto &[name, moves] : info.region_moves) {
        const Stage &s = info.stages[info.by_name.at(name)];
        // An input read by a staged producer moves with the producer's window (shared as the
        // producer: its input's box by DMA, then its padding on every CPE); an inlined
        // producer is not staged.
        // A computing producer (a prologue) is computed by every CPE from its inputs, of which
        // the window (the one of the producer's rank) is shared instead; the others (a
        // prologue's scale and shift, a few values per chunk) are not worth a broadcast.
        const bool by_producer = contains(info.producer_inputs, name);
        const bool producer = contains(info.producers, name);
        bool per_chunk = contains(info.chunk_staged, name);
        if (by_producer && !plan.inline_producers && !staged_by_producer(info, plan, name) &&
            info.chunk_region.count(name)) {
            for (const std::string &p : info.computing_producers) {
                const auto window = info.chunk_region.find(p);
                per_chunk |= window != info.chunk_region.end() &&
                             window->second.size() == info.chunk_region.at(name).size();
            }
        } else if (by_producer) {
            continue;
        }
        if (s.callers.empty() || !per_chunk || (producer && plan.inline_producers) ||
            contains(info.computing_producers, name))
            continue;
        if (mesh) {
            if (mesh_axis(info, plan, name) != MeshAxis::None)
                out.push_back(name);
            continue;
        }
        bool same = true;
        for (int d : moves)
            same &= plan.tile[size_t(d)] >= info.out_extents[size_t(d)] || serial_dim(plan, d);
        if (same)
            out.push_back(name);
    }
    return out;
}

int mesh_column_dim(const PipelineInfo &info, const std::vector<int> &tile, int columns, int dim) {
    const size_t dims = info.out_extents.size();
    if (dims < 2 || tile.size() != dims || dim >= int(dims))
        return -1;
    const int d = dim >= 0 ? dim : dims >= 3 ? 2 : 0;
    auto tiles = [&](size_t k) {
        const int64_t extent = info.out_extents[k];
        const int64_t size = std::min<int64_t>(tile[k], extent);
        return (extent + size - 1) / size;
    };
    const int64_t along = tiles(size_t(d));
    if (along == columns)
        return d;
    // Several rounds of columns: the round loop outermost, so the blocks of one round of the
    // mesh (columns x columns of them) share one round of columns only when the other tiles
    // come in whole mesh heights.
    int64_t others = 1;
    for (size_t k = 0; k < dims; k++) {
        if (int(k) != d)
            others *= tiles(k);
    }
    return along > columns && along % columns == 0 && others % columns == 0 ? d : -1;
}

MeshAxis mesh_axis(const PipelineInfo &info, const Plan &plan, const std::string &name) {
    const auto moves = info.region_moves.find(name);
    if (plan.share != Plan::Share::Mesh || plan.mesh_dim < 0 || moves == info.region_moves.end())
        return MeshAxis::None;
    bool along_mesh_dim = false, along_others = false;
    for (int d : moves->second) {
        if (plan.tile[size_t(d)] >= info.out_extents[size_t(d)])
            continue; // one tile
        (d == plan.mesh_dim ? along_mesh_dim : along_others) = true;
    }
    if (!along_mesh_dim)
        return plan.mesh_rows ? MeshAxis::Row : MeshAxis::None;
    return along_others || !plan.mesh_columns ? MeshAxis::None : MeshAxis::Column;
}

namespace {

/** The pipeline's one output. */
Function the_output(const Pipeline &p) {
    std::vector<Function> outputs;
    for (const Func &f : p.outputs())
        outputs.push_back(f.function());
    if (outputs.size() != 1)
        throw sw::UserError("the Sunway autoscheduler takes pipelines with one output");
    return outputs[0];
}

/** The input buffer's dense extents, as Stage::source_extents. */
std::vector<int64_t> source_extents(const Stage &s, const Call *image) {
    std::vector<int64_t> extents;
    for (int d = 0; d < s.func.dimensions(); d++) {
        Expr extent;
        if (image->param.defined())
            extent = image->param.extent_constraint(d);
        if (image->image.defined())
            extent = image->image.dim(d).extent();
        if (extent.defined())
            extent = simplify(extent); // extent owns the node *k points into
        const int64_t *k = extent.defined() ? as_const_int(extent) : nullptr;
        if (!k) {
            throw sw::UserError("the Sunway autoscheduler needs constant extents for input " +
                                image->name + " (set_bounds on every dimension)");
        }
        extents.push_back(*k);
    }
    return extents;
}

/** Stages, inputs and callers, in Halide's topological order. */
void collect_stages(const Function &output, PipelineInfo &info) {
    std::map<std::string, Function> env;
    for (const auto &kv : find_transitive_calls(output))
        env.insert(kv);
    const std::vector<std::string> order = topological_order({output}, env);
    info.output = output.name();
    for (size_t i = 0; i < order.size(); i++) {
        Stage s;
        s.func = env.at(order[i]);
        s.name = order[i];
        s.index = int(i);
        s.is_output = s.name == info.output;
        s.args = s.func.args();
        const std::vector<Expr> &values = s.func.definition().values();
        const Call *image = values.size() == 1 ? values[0].as<Call>() : nullptr;
        if (image && image->call_type == Call::Image && s.func.updates().empty()) {
            s.is_input = true;
            s.source_name = image->name;
            s.source_extents = source_extents(s, image);
        }
        info.by_name[s.name] = int(i);
        info.stages.push_back(s);
    }
    for (Stage &s : info.stages) {
        for (const auto &kv : find_direct_calls(s.func)) {
            if (kv.first != s.name)
                info.stages[info.by_name.at(kv.first)].callers.insert(s.name);
        }
    }
}

/** The output's extents: buffer constraints, else estimates. */
std::vector<int64_t> output_extents(const Function &out) {
    if (out.dimensions() > int(std::tuple_size<decltype(PipelineInfo::ExtentsKey::tile)>::value)) {
        throw sw::UserError("the Sunway autoscheduler takes outputs of at most 8 dimensions; " +
                            out.name() + " has " + std::to_string(out.dimensions()));
    }
    std::vector<int64_t> extents;
    for (int d = 0; d < out.dimensions(); d++) {
        Expr extent;
        if (!out.output_buffers().empty())
            extent = out.output_buffers()[0].extent_constraint(d);
        if (!extent.defined()) {
            for (const Bound &b : out.schedule().estimates()) {
                if (b.var == out.args()[d])
                    extent = b.extent;
            }
        }
        if (extent.defined())
            extent = simplify(extent); // extent owns the node *k points into
        const int64_t *k = extent.defined() ? as_const_int(extent) : nullptr;
        if (!k || *k < 1) {
            throw sw::UserError("the Sunway autoscheduler needs a constant extent for dimension " +
                                std::to_string(d) + " of output " + out.name() +
                                " (set_bounds or set_estimate)");
        }
        extents.push_back(*k);
    }
    return extents;
}

/** Per-definition op counts; a stage's pure variables named as the output's range over the
 * output's extents. */
void count_operations(const Function &out, PipelineInfo &info) {
    Scope<Interval> ranges;
    for (int d = 0; d < out.dimensions() && d < int(info.out_extents.size()); d++) {
        ranges.push(out.args()[d], Interval(0, int(info.out_extents[d] - 1)));
    }
    for (const Stage &s : info.stages) {
        for (const Definition *d : definitions(s.func)) {
            OpCount ops = count_ops(d->values(), d->args(), ranges);
            for (const ReductionVariable &v : d->schedule().rvars()) {
                const Expr extent = simplify(v.extent); // owns the node *k points into
                const int64_t *k = as_const_int(extent);
                if (!k)
                    throw sw::UserError(pos("the reduction of", s.name) +
                                        " has no constant extent");
                ops.reduction_points *= *k;
            }
            info.ops[s.name].push_back(ops);
        }
    }
}

/** The main stage: the biggest reduction (else the last computed stage). */
void choose_main_stage(PipelineInfo &info) {
    int64_t biggest = 0;
    for (const Stage &s : info.stages) {
        if (s.is_output || s.is_input)
            continue;
        for (size_t u = 0; u < s.func.updates().size(); u++) {
            if (s.func.updates()[u].schedule().rvars().empty())
                continue;
            const int64_t points = info.ops.at(s.name)[u + 1].reduction_points;
            if (points > biggest)
                biggest = points, info.main = s.name, info.main_update = int(u);
        }
    }
    if (info.main.empty()) {
        for (const Stage &s : info.stages) {
            if (!s.is_output && !s.is_input)
                info.main = s.name;
        }
    }
}

/** Symbolic per-tile regions: output tile, then every stage from its consumers. */
void derive_tile_regions(const Function &out, PipelineInfo &info) {
    SymBox out_box;
    for (int d = 0; d < out.dimensions(); d++) {
        Expr origin = Variable::make(Int(32), tile_origin_var(d)),
             size = Variable::make(Int(32), tile_size_var(d));
        out_box.push_back({origin, origin + size - 1});
    }
    info.tile_region[info.output] = out_box;
    for (int i = int(info.stages.size()) - 1; i >= 0; i--) {
        const Stage &s = info.stages[i];
        auto it = info.tile_region.find(s.name);
        if (it == info.tile_region.end())
            continue;
        simplify_box(it->second);
        if (s.name == info.main && !it->second.empty()) {
            // The vectorised main stage may compute a width rounded up to whole vectors.
            info.main_width = simplify(it->second[0].second - it->second[0].first + 1);
            Expr rounded_width = Variable::make(Int(32), rounded_width_var);
            it->second[0].second = it->second[0].first + rounded_width - 1;
        }
        const SymBox region = it->second;
        for (const Definition *d : definitions(s.func)) {
            merge_into(info.tile_region, required(*d, scope_for(*d, s.args, region)), s.name);
        }
    }
}

/** The main update's reduction variables, the one that may be split into chunks, and the
 * points of the reduction in and outside it. */
void choose_chunked_reduction(const Stage &main, const Definition &update, PipelineInfo &info) {
    info.rvars = update.schedule().rvars();
    int64_t widest = 16; // reductions this short are staged whole
    for (size_t i = 0; i < info.rvars.size(); i++) {
        const int64_t extent = constant_extent(info.rvars[i]);
        if (extent > widest)
            widest = extent, info.chunk_rvar = int(i);
    }
    // A reduction over a few channels and many taps (a first conv layer: 3 channels, 11 x 11
    // taps), or over 16 channels and a few taps (SqueezeNet's expand3x3): its outermost
    // variable (the channels) may still be chunked, so that a chunk's staging can be double
    // buffered behind the previous chunk's compute (SqueezeNet's 16 -> 64 3x3 on 55x55: 0.228
    // -> 0.185 ms on the emulator). (Not a 3x3 over fewer channels: nothing to overlap, and
    // such a chunked analysis let 1-wide tiles of a 2-wide map round up to a vector, 21%
    // slower on the emulator than the cost model said.)
    // Only when every index is affine in the stage's variables: a grouped convolution's tile
    // may straddle two groups, whose per-chunk windows the cost model does not size.
    const int64_t channels = info.rvars.empty() ? 0 : constant_extent(info.rvars.back());
    if (info.chunk_rvar < 0 && info.rvars.size() >= 3 && channels >= 2) {
        int64_t taps = 1;
        for (size_t i = 0; i + 1 < info.rvars.size(); i++)
            taps *= constant_extent(info.rvars[i]);
        bool affine = true;
        for (const Call *call : calls_in(update)) {
            for (const Expr &index : call->args) {
                for (const std::string &v : main.args) {
                    int64_t step = 0;
                    affine &= coefficient(index, v, &step);
                }
            }
        }
        // A pointwise conv over a few channels (taps == 1: 16 -> 96 channels) keeps its
        // channel loop too: fully unrolled, its accumulators would be loaded and stored at
        // every channel instead of staying in registers over the loop.
        if ((taps > 16 || taps == 1 || channels >= 16) && affine)
            info.chunk_rvar = int(info.rvars.size()) - 1;
    }
    for (size_t i = 0; i < info.rvars.size(); i++) {
        const int64_t extent = constant_extent(info.rvars[i]);
        info.rvar_extents.push_back(extent);
        if (int(i) == info.chunk_rvar) {
            info.reduction = extent;
        } else {
            info.taps *= extent;
        }
    }
}

/** Stages read only by the main update (staged per chunk), the producers among them, and the
 * inputs only the producers read. */
void find_chunk_staged(const Stage &main, const Definition &update, PipelineInfo &info) {
    std::set<std::string> in_update, elsewhere;
    for (const Call *call : calls_in(update))
        in_update.insert(call->name);
    for (const Definition *d : definitions(main.func)) {
        if (d == &update)
            continue;
        for (const Call *call : calls_in(*d))
            elsewhere.insert(call->name);
    }
    for (const std::string &name : in_update) {
        if (name == main.name || elsewhere.count(name))
            continue;
        const Stage &s = info.stages[info.by_name.at(name)];
        if (s.callers.size() != 1)
            continue;
        info.chunk_staged.push_back(name);
        if (!s.is_input)
            info.producers.push_back(name);
    }
    for (const std::string &producer : info.producers) {
        const Stage &ps = info.stages[info.by_name.at(producer)];
        for (const auto &kv : find_direct_calls(ps.func)) {
            const Stage &input = info.stages[info.by_name.at(kv.first)];
            if (input.is_input && input.callers.size() == 1)
                info.producer_inputs.push_back(input.name);
        }
        // A zero-padding copy reads one Func and does no arithmetic besides its select.
        const OpCount &ops = info.ops.at(producer)[0];
        if (!ps.func.updates().empty() || ops.flops > 0 || ops.float_min_max > 0 || ops.loads > 1)
            info.computing_producers.push_back(producer);
    }
}

/** Inputs that only the main stage reads, and only in its definitions after the main update. */
void find_after_main(const Stage &main, PipelineInfo &info) {
    const std::vector<const Definition *> defs = definitions(main.func);
    std::set<std::string> before, after;
    for (size_t d = 0; d < defs.size(); d++) {
        // defs[0] is the pure definition, defs[u + 1] update u.
        for (const Call *call : calls_in(*defs[d]))
            (int(d) > info.main_update + 1 ? after : before).insert(call->name);
    }
    for (const std::string &name : after) {
        if (name == main.name || before.count(name) || !info.by_name.count(name))
            continue;
        const Stage &s = info.stages[info.by_name.at(name)];
        if (s.is_input && s.callers.size() == 1)
            info.after_main.push_back(name);
    }
}

/** Chunk regions: the main update over one chunk of the reduction, then the producers. */
void derive_chunk_regions(const Stage &main, const Definition &update, PipelineInfo &info) {
    const SymBox region = info.tile_region.at(main.name);
    std::map<std::string, SymBox> chunk;
    merge_into(chunk, required(update, scope_for(update, main.args, region, info.chunk_rvar)),
               main.name);
    for (const std::string &name : info.chunk_staged) {
        info.chunk_region[name] = chunk.at(name);
        simplify_box(info.chunk_region[name]);
    }
    for (const std::string &producer : info.producers) {
        const Stage &ps = info.stages[info.by_name.at(producer)];
        std::map<std::string, SymBox> inner;
        for (const Definition *d : definitions(ps.func)) {
            merge_into(inner, required(*d, scope_for(*d, ps.args, info.chunk_region.at(producer))),
                       producer);
        }
        for (const std::string &name : info.producer_inputs) {
            if (inner.count(name))
                info.chunk_region[name] = inner.at(name), simplify_box(info.chunk_region[name]);
        }
    }
}

/** Stages that only move data, inlined by every plan. */
void find_wrappers(PipelineInfo &info) {
    for (const Stage &s : info.stages) {
        if (s.is_input || s.is_output || s.name == info.main || !s.func.updates().empty() ||
            std::find(info.producers.begin(), info.producers.end(), s.name) !=
                info.producers.end()) {
            continue;
        }
        const OpCount &ops = info.ops.at(s.name)[0];
        if (ops.float_ops == 0 && ops.slow_cycles == 0)
            info.wrappers.push_back(s.name);
    }
}

/** What the main update's loads allow so far: vectors along the innermost pure dimension x,
 * along the chunked reduction variable, and a width rounded up past the tile. */
struct VectorAxes {
    bool along_x = false, along_reduction = false, round_up = true;
};

/** The main update's loads (the accumulator excluded), by how their indices step along x
 * (varying, invariant, gathered) and along the chunked reduction variable. */
VectorAxes classify_update_loads(const Stage &main, const Definition &update, PipelineInfo &info) {
    const std::string x = main.args.empty() ? "" : main.args[0];
    VectorAxes axes;
    axes.along_x = !x.empty(), axes.along_reduction = info.chunk_rvar >= 0;
    const std::string chunk_var = axes.along_reduction ? info.rvars[info.chunk_rvar].var : "";
    for (const Call *call : calls_in(update)) {
        bool varies = false;
        for (size_t k = 0; k < call->args.size(); k++) {
            int64_t step_x = 0, step_r = 0;
            const bool affine_x = coefficient(call->args[k], x, &step_x);
            // Another Func's innermost index may step by more than one along x (a conv of
            // stride > 1): its vectors are gathered from one scalar per lane.
            const bool gather = affine_x && k == 0 && step_x > 1 && call->name != main.name;
            if (!affine_x || (k > 0 && step_x != 0) ||
                (k == 0 && step_x != 0 && step_x != 1 && !gather)) {
                axes.along_x = false;
            }
            if (gather) {
                info.loads_gather++;
                if (std::find(info.gathered.begin(), info.gathered.end(), call->name) ==
                    info.gathered.end()) {
                    info.gathered.push_back(call->name);
                }
                info.gather_stride = info.gather_stride
                                         ? std::min<int>(info.gather_stride, int(step_x))
                                         : int(step_x);
            }
            if (affine_x && step_x != 0)
                varies = true;
            if (call->name == main.name)
                continue;
            if (!chunk_var.empty()) {
                const bool affine_r = coefficient(call->args[k], chunk_var, &step_r);
                if (!affine_r || (k > 0 && step_r != 0) || (k == 0 && step_r != 0 && step_r != 1)) {
                    axes.along_reduction = false;
                }
            }
        }
        if (call->name != main.name)
            (varies ? info.loads_varying : info.loads_invariant)++;
        if (varies && call->name != main.name) {
            const auto stage = info.by_name.find(call->name);
            if (stage == info.by_name.end() || info.stages[stage->second].is_input ||
                std::find(info.producers.begin(), info.producers.end(), call->name) ==
                    info.producers.end()) {
                axes.round_up = false;
            } else if (contains(info.computing_producers, call->name) &&
                       !info.stages[stage->second].func.values()[0].as<Select>()) {
                // A computing producer without the zero padding's select (an unpadded
                // convolution's prologue) reads its input unclamped: not defined past it.
                axes.round_up = false;
            }
        }
    }
    return axes;
}

/** Whether every index of definition \p d of the main stage is unit-stride or invariant along
 * x (the pure definition by default). */
bool definition_unit_stride(const Stage &main, const Definition *d = nullptr) {
    const std::string x = main.args.empty() ? "" : main.args[0];
    bool unit_stride = true;
    for (const Call *call : calls_in(d ? *d : main.func.definition())) {
        for (size_t k = 0; k < call->args.size(); k++) {
            int64_t step = 0;
            if (!coefficient(call->args[k], x, &step) || (k > 0 && step != 0) ||
                (k == 0 && step != 0 && step != 1)) {
                unit_stride = false;
            }
        }
    }
    return unit_stride;
}

/** Register blocks of an rfactor plan over the first two pure dimensions (see
 * PipelineInfo::rloads_first): which loads vary along which. */
void count_rfactor_block_loads(const Stage &main, const Definition &update, PipelineInfo &info) {
    for (const Call *call : calls_in(update)) {
        if (call->name == main.name)
            continue;
        bool varies_first = false, varies_second = false, known = true;
        for (const Expr &index : call->args) {
            int64_t step_first = 0, step_second = 0;
            known = known && coefficient(index, main.args[0], &step_first) &&
                    coefficient(index, main.args[1], &step_second);
            varies_first |= step_first != 0, varies_second |= step_second != 0;
        }
        if (!known || (varies_first && varies_second)) {
            info.rloads_both++;
        } else if (varies_first) {
            info.rloads_first++;
        } else if (varies_second) {
            info.rloads_second++;
        } else {
            info.rloads_neither++;
        }
    }
}

/** A second register-block dimension (see PipelineInfo::block_dim). An index that is not
 * affine along it but constant over every aligned run of l points (a grouped convolution's
 * input channel (c / out_per_group) * in_per_group + r) counts as invariant there for blocks
 * of l lines, for each l whose runs it is constant over (checked per l: 3 lines suit 6
 * channels per group, 4 do not). */
void find_register_block_dim(const Stage &main, const Definition &update, PipelineInfo &info) {
    const std::string x = main.args.empty() ? "" : main.args[0];
    for (size_t d = 1; d < main.args.size() && info.block_dim < 0; d++) {
        bool ok = true;
        int loads_along = 0;
        uint32_t lines_allowed = 0x1fffe; // bits 1..16
        for (const Call *call : calls_in(update)) {
            if (call->name == main.name)
                continue;
            bool varies_x = false, varies_d = false;
            for (const Expr &index : call->args) {
                int64_t step_x = 0, step_d = 0;
                if (!coefficient(index, x, &step_x))
                    ok = false;
                if (!coefficient(index, main.args[d], &step_d)) {
                    for (int lines = 2; lines <= 16; lines++) {
                        if ((lines_allowed >> lines & 1) &&
                            !constant_over_runs(index, main.args[d], lines)) {
                            lines_allowed &= ~(uint32_t(1) << lines);
                        }
                    }
                    if (lines_allowed == 2)
                        ok = false; // runs of one point only
                }
                varies_x |= step_x != 0, varies_d |= step_d != 0;
            }
            if (varies_x && varies_d)
                ok = false;
            if (varies_d)
                loads_along++;
        }
        if (ok && loads_along > 0) {
            info.block_dim = int(d), info.loads_invariant_block = loads_along,
            info.block_lines_allowed = lines_allowed;
        }
    }
}

/** Vectorisation along the innermost pure dimension, or along the reduction. */
void analyse_vectorisation(const Stage &main, const Definition &update, PipelineInfo &info) {
    const VectorAxes axes = classify_update_loads(main, update, info);
    const std::vector<OpCount> &main_ops = info.ops.at(main.name);
    bool along_x =
        axes.along_x && main_ops[0].vector_safe && main_ops[info.main_update + 1].vector_safe;
    if (!definition_unit_stride(main))
        along_x = false;
    // The update must accumulate: f(args) = f(args) + e (rfactor needs an associative update).
    const Add *sum = update.values().size() == 1 ? update.values()[0].as<Add>() : nullptr;
    const bool along_reduction =
        axes.along_reduction && sum && main_ops[info.main_update + 1].vector_safe;
    if (along_reduction && !along_x && main.args.size() >= 2)
        count_rfactor_block_loads(main, update, info);
    if (along_x)
        find_register_block_dim(main, update, info);
    info.vector_pure = along_x;
    info.vector_rvar = along_reduction && !along_x;
    info.round_up_safe = along_x && axes.round_up;
}

/** Inputs read at an index loaded from memory (PipelineInfo::indirect_inputs). */
void find_indirect_inputs(PipelineInfo &info) {
    for (const Stage &s : info.stages) {
        if (s.is_input)
            continue;
        for (const Definition *d : definitions(s.func)) {
            std::set<std::string> loaded;
            for (const Expr &e : d->values())
                find_loaded_lets(e, loaded);
            for (const Call *call : calls_in(*d)) {
                const auto callee = info.by_name.find(call->name);
                if (callee == info.by_name.end() || !info.stages[callee->second].is_input ||
                    contains(info.indirect_inputs, call->name))
                    continue;
                for (const Expr &a : call->args) {
                    if (loads_memory(a, loaded)) {
                        info.indirect_inputs.push_back(call->name);
                        break;
                    }
                }
            }
        }
    }
}

/** Along which output dimensions each staged input's (and each producer's) region moves
 * with the tile. */
void find_region_moves(PipelineInfo &info) {
    for (const Stage &s : info.stages) {
        if (!s.is_input && !contains(info.producers, s.name))
            continue;
        const auto chunk = info.chunk_region.find(s.name);
        const auto tile = info.tile_region.find(s.name);
        const SymBox *box = chunk != info.chunk_region.end() ? &chunk->second
                            : tile != info.tile_region.end() ? &tile->second
                                                             : nullptr;
        if (!box)
            continue;
        std::set<int> &moves = info.region_moves[s.name];
        for (size_t d = 0; d < info.out_extents.size(); d++) {
            for (const auto &[lo, hi] : *box) {
                if (expr_uses_var(lo, tile_origin_var(int(d))) ||
                    expr_uses_var(hi, tile_origin_var(int(d)))) {
                    moves.insert(int(d));
                }
            }
        }
    }
}

} // namespace

PipelineInfo analyze(const Pipeline &p) {
    PipelineInfo info;
    const Function output = the_output(p);
    collect_stages(output, info);
    find_indirect_inputs(info);
    info.out_extents = output_extents(output);
    count_operations(output, info);
    choose_main_stage(info);
    derive_tile_regions(output, info);
    // The main update's reduction, what it reads, and how.
    if (info.main_update >= 0) {
        const Stage &main = info.stages[info.by_name.at(info.main)];
        const Definition &update = main.func.updates()[info.main_update];
        choose_chunked_reduction(main, update, info);
        find_chunk_staged(main, update, info);
        find_after_main(main, info);
        derive_chunk_regions(main, update, info);
        find_wrappers(info);
        for (const std::string &producer : info.computing_producers) {
            const Stage &ps = info.stages[info.by_name.at(producer)];
            if (ps.func.updates().empty() && !ps.args.empty() &&
                info.ops.at(producer)[0].vector_safe && definition_unit_stride(ps))
                info.vector_producers.push_back(producer);
        }
        analyse_vectorisation(main, update, info);
        find_region_moves(info);
    } else if (!info.main.empty()) {
        // An element-wise main stage (no reduction) may run on whole floatv4 vectors along x.
        const Stage &main = info.stages[info.by_name.at(info.main)];
        info.vector_pure = !main.args.empty() && info.ops.at(main.name)[0].vector_safe &&
                           definition_unit_stride(main);
    }
    if (!info.main.empty()) {
        const Stage &main = info.stages[info.by_name.at(info.main)];
        const std::vector<OpCount> &ops = info.ops.at(main.name);
        for (size_t d = 0; d < ops.size(); d++) {
            const Definition *def = d == 0 ? nullptr : &main.func.updates()[d - 1];
            info.main_vectorisable.push_back(!main.args.empty() && ops[d].vector_safe &&
                                             definition_unit_stride(main, def));
        }
    }
    count_flops(info);
    info.output_computes = output_computes(info);
    return info;
}

} // namespace sw_auto
