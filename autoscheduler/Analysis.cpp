/** \file
 * Pipeline analysis of the Sunway autoscheduler.
 */
#include "autoscheduler/Analysis.h"

#include "target_sw/Errors.h"

#include <algorithm>
#include <cstdlib>

namespace sw_auto {

using namespace Halide;
using namespace Halide::Internal;

const char *const chunk_origin_var = "sw_chunk_origin";
const char *const chunk_size_var = "sw_chunk_size";
const char *const rounded_width_var = "sw_rounded_width";
std::string tile_origin_var(int dim) { return "sw_tile_origin" + std::to_string(dim); }
std::string tile_size_var(int dim) { return "sw_tile_size" + std::to_string(dim); }

namespace {

int64_t floor_div(int64_t a, int64_t b) {
    if (b == 0) return 0;  // Halide's convention: x / 0 == 0
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

std::string pos(const std::string &what, const std::string &name) { return what + " '" + name + "'"; }

/** Counts one definition's operations by the rules of WorkCount.h. */
class OpCounter : public IRVisitor {
public:
    explicit OpCounter(const Scope<Interval> &ranges) : ranges(ranges) {}
    OpCount c;

private:
    using IRVisitor::visit;
    const Scope<Interval> &ranges;  ///< the pure variables' ranges over the output
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
        if (!op->type.is_float() && (is_const(op->a) || is_const(op->b))) return;  // displacement
        flt(op->type, 1);
    }
    void visit(const Sub *op) override {
        IRVisitor::visit(op);
        if (!op->type.is_float() && is_const(op->b)) return;
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
            if (!is_const(divisor)) c.slow_cycles += 30, c.vector_safe = false;
        }
    }
    void visit(const Mod *op) override { IRVisitor::visit(op), flt(op->type, 0); }
    // The CPE code generator's floatv4 has + - * and a*b+c only: min/max stay scalar.
    void visit(const Min *op) override { IRVisitor::visit(op), flt(op->type, 0), c.vector_safe &= !op->type.is_float(); }
    void visit(const Max *op) override { IRVisitor::visit(op), flt(op->type, 0), c.vector_safe &= !op->type.is_float(); }
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
        if (op->type.is_float() != op->value.type().is_float()) c.float_ops++, c.vector_safe = false;
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type == Call::Halide || op->call_type == Call::Image) {
            c.loads++;
        } else if (op->call_type == Call::PureExtern || op->call_type == Call::Extern) {
            c.float_ops++;
            c.vector_safe = false;
            c.slow_cycles += 80;  // sqrt, exp, log, pow: software or unpipelined (Machine.h [U])
        } else if (!op->is_intrinsic(Call::likely) && !op->is_intrinsic(Call::likely_if_innermost)) {
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
        for (const Expr &e : es) d = std::max(d, of(e));
        return d;
    }
    void result(const Type &t, int64_t d) { depth = t.is_float() ? d + 1 : d; }
    void visit(const Add *op) override {
        const Mul *m = op->a.as<Mul>() ? op->a.as<Mul>() : op->b.as<Mul>();
        if (op->type.is_float() && m) return result(op->type, children({m->a, m->b, op->a.as<Mul>() ? op->b : op->a}));
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
            depth = 0;  // a load
            return;
        }
        const int64_t d = children(op->args);
        depth = (op->call_type == Call::PureExtern || op->call_type == Call::Extern) && op->type.is_float() ? d + 1 : d;
    }
};

OpCount count_ops(const std::vector<Expr> &values, const std::vector<Expr> &args, const Scope<Interval> &ranges) {
    OpCounter oc(ranges);
    for (const Expr &e : values) e.accept(&oc);
    for (const Expr &e : args) e.accept(&oc);
    ChainCounter cc;
    for (const Expr &e : values) oc.c.chain = std::max(oc.c.chain, cc.of(e));
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
        if (op->call_type == Call::Halide || op->call_type == Call::Image) calls.push_back(op);
    }
};

std::vector<const Call *> calls_in(const Definition &d) {
    CallCollector cc;
    for (const Expr &e : d.values()) e.accept(&cc);
    for (const Expr &e : d.args()) e.accept(&cc);
    return cc.calls;
}

/** The constant extent of a reduction variable (checked constant by analyze()). The
 * simplified Expr is held while its value is read: as_const_int points into its node. */
int64_t constant_extent(const ReductionVariable &v) {
    const Expr e = simplify(v.extent);
    const int64_t *k = as_const_int(e);
    if (!k) throw sw::UserError("the reduction variable " + v.var + " has no constant extent");
    return *k;
}

/** d e / d var, when it is a constant; nullopt-like flag otherwise. */
bool coefficient(const Expr &e, const std::string &var, int64_t *out) {
    Expr v = Variable::make(Int(32), var);
    Expr d = simplify(substitute(var, v + 1, e) - e);
    const int64_t *k = as_const_int(d);
    if (!k) return false;
    *out = *k;
    return true;
}

/** Whether \p e is constant over every aligned run of \p l values of \p var (var = j * l + i,
 * i < l). */
bool constant_over_runs(const Expr &e, const std::string &var, int l) {
    const Expr j = Variable::make(Int(32), var + ".sw_run");
    const Expr base = substitute(var, j * l, e);
    for (int i = 1; i < l; i++) {
        if (!is_const_zero(simplify(substitute(var, j * l + i, e) - base))) return false;
    }
    return true;
}

Scope<Interval> scope_for(const Definition &d, const std::vector<std::string> &pure_args, const SymBox &region,
                          int chunk_rvar_index = -1) {
    Scope<Interval> s;
    for (size_t i = 0; i < pure_args.size() && i < region.size(); i++) {
        s.push(pure_args[i], Interval(region[i].first, region[i].second));
    }
    if (d.schedule().rvars().empty()) return s;
    const std::vector<ReductionVariable> &rv = d.schedule().rvars();
    for (size_t i = 0; i < rv.size(); i++) {
        if (int(i) == chunk_rvar_index) {
            Expr o = Variable::make(Int(32), chunk_origin_var), c = Variable::make(Int(32), chunk_size_var);
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
        if (kv.first == self) continue;
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
    for (const Expr &e : d.values()) add(e);
    for (const Expr &e : d.args()) add(e);
    return all;
}

std::vector<const Definition *> definitions(const Function &f) {
    std::vector<const Definition *> defs{&f.definition()};
    for (const Definition &u : f.updates()) defs.push_back(&u);
    return defs;
}

void simplify_box(SymBox &b) {
    for (auto &d : b) d.first = simplify(d.first), d.second = simplify(d.second);
}

/** Flops of the whole pipeline (for GFLOPS): every stage over its whole region. */
void count_flops_impl(PipelineInfo &info) {
    for (const Stage &s : info.stages) {
        if (s.is_input) continue;
        auto it = info.tile_region.find(s.name);
        if (it == info.tile_region.end()) continue;
        Bindings full;
        for (size_t d = 0; d < info.out_extents.size(); d++) {
            full[tile_origin_var(int(d))] = 0;
            full[tile_size_var(int(d))] = info.out_extents[d];
        }
        full[rounded_width_var] = info.main_width.defined() ? evaluate(info.main_width, full) : 1;
        int64_t points = 1;
        for (int64_t e : extents(it->second, full)) points *= e;
        for (const OpCount &o : info.ops.at(s.name)) info.total_flops += double(points) * o.reduction_points * o.flops;
    }
}

/** Whether the output computes its values itself (PipelineInfo::output_computes): anything
 * but one pure definition out(args) = f(args) with f a computed stage that every plan stages
 * in LDM per tile (not an input, not an inlined wrapper). SW_AUTOSCHEDULE_STAGE_OUTPUT=0 in
 * the environment says no (the schedules of before sw::stage_output, for comparisons). */
bool output_computes(const PipelineInfo &info) {
    if (const char *e = std::getenv("SW_AUTOSCHEDULE_STAGE_OUTPUT")) {
        if (std::string(e) == "0") return false;
    }
    const Stage &o = info.stages[info.by_name.at(info.output)];
    if (!o.func.updates().empty() || o.func.definition().values().size() != 1) return true;
    const Call *c = o.func.definition().values()[0].as<Call>();
    if (!c || c->call_type != Call::Halide || !info.by_name.count(c->name) || c->args.size() != o.args.size()) return true;
    const Stage &f = info.stages[info.by_name.at(c->name)];
    if (f.is_input || std::find(info.wrappers.begin(), info.wrappers.end(), f.name) != info.wrappers.end()) return true;
    for (size_t d = 0; d < o.args.size(); d++) {
        const Variable *v = c->args[d].as<Variable>();
        if (!v || v->name != o.args[d]) return true;
    }
    return false;
}

}  // namespace

namespace {

/** The values of the Lets around a point of evaluate(), innermost last (a Let's body sees
 * them before the bindings; no copy of the bindings per Let). */
using LetValues = std::vector<std::pair<const std::string *, int64_t>>;

int64_t evaluate_in(const Expr &e, const Bindings &b, LetValues &lets) {
    if (const IntImm *i = e.as<IntImm>()) return i->value;
    if (const UIntImm *u = e.as<UIntImm>()) return int64_t(u->value);
    if (const Variable *v = e.as<Variable>()) {
        for (auto l = lets.rbegin(); l != lets.rend(); ++l) {
            if (*l->first == v->name) return l->second;
        }
        auto it = b.find(v->name);
        if (it == b.end()) throw sw::UserError("the autoscheduler met an unknown value '" + v->name + "'");
        return it->second;
    }
    if (const Add *o = e.as<Add>()) return evaluate_in(o->a, b, lets) + evaluate_in(o->b, b, lets);
    if (const Sub *o = e.as<Sub>()) return evaluate_in(o->a, b, lets) - evaluate_in(o->b, b, lets);
    if (const Mul *o = e.as<Mul>()) return evaluate_in(o->a, b, lets) * evaluate_in(o->b, b, lets);
    if (const Div *o = e.as<Div>()) return floor_div(evaluate_in(o->a, b, lets), evaluate_in(o->b, b, lets));
    if (const Mod *o = e.as<Mod>()) {
        int64_t a = evaluate_in(o->a, b, lets), m = evaluate_in(o->b, b, lets);
        return m == 0 ? 0 : a - floor_div(a, m) * m;
    }
    if (const Min *o = e.as<Min>()) return std::min(evaluate_in(o->a, b, lets), evaluate_in(o->b, b, lets));
    if (const Max *o = e.as<Max>()) return std::max(evaluate_in(o->a, b, lets), evaluate_in(o->b, b, lets));
    if (const Select *o = e.as<Select>()) return evaluate_in(o->condition, b, lets) ? evaluate_in(o->true_value, b, lets) : evaluate_in(o->false_value, b, lets);
    if (const LT *o = e.as<LT>()) return evaluate_in(o->a, b, lets) < evaluate_in(o->b, b, lets);
    if (const LE *o = e.as<LE>()) return evaluate_in(o->a, b, lets) <= evaluate_in(o->b, b, lets);
    if (const GT *o = e.as<GT>()) return evaluate_in(o->a, b, lets) > evaluate_in(o->b, b, lets);
    if (const GE *o = e.as<GE>()) return evaluate_in(o->a, b, lets) >= evaluate_in(o->b, b, lets);
    if (const EQ *o = e.as<EQ>()) return evaluate_in(o->a, b, lets) == evaluate_in(o->b, b, lets);
    if (const NE *o = e.as<NE>()) return evaluate_in(o->a, b, lets) != evaluate_in(o->b, b, lets);
    if (const And *o = e.as<And>()) return evaluate_in(o->a, b, lets) && evaluate_in(o->b, b, lets);
    if (const Or *o = e.as<Or>()) return evaluate_in(o->a, b, lets) || evaluate_in(o->b, b, lets);
    if (const Not *o = e.as<Not>()) return !evaluate_in(o->a, b, lets);
    if (const Cast *o = e.as<Cast>()) return evaluate_in(o->value, b, lets);
    if (const Let *o = e.as<Let>()) {
        lets.push_back({&o->name, evaluate_in(o->value, b, lets)});
        const int64_t r = evaluate_in(o->body, b, lets);
        lets.pop_back();
        return r;
    }
    if (const Call *c = e.as<Call>()) {
        if (c->is_intrinsic(Call::likely) || c->is_intrinsic(Call::likely_if_innermost) ||
            c->is_intrinsic(Call::promise_clamped) || c->is_intrinsic(Call::unsafe_promise_clamped)) {
            return evaluate_in(c->args[0], b, lets);
        }
    }
    std::ostringstream s;
    s << e;
    throw sw::UserError("the autoscheduler cannot evaluate the bound " + s.str());
}

}  // namespace

int64_t evaluate(const Expr &e, const Bindings &b) {
    LetValues lets;
    return evaluate_in(e, b, lets);
}

std::vector<int64_t> extents(const SymBox &box, const Bindings &b) {
    std::vector<int64_t> e;
    for (const auto &d : box) e.push_back(std::max<int64_t>(0, evaluate(d.second, b) - evaluate(d.first, b) + 1));
    return e;
}

std::vector<std::string> shared_inputs(const PipelineInfo &info, const Plan &plan) {
    std::vector<std::string> out;
    // Only inputs staged per chunk of a chunked reduction (a dense layer's input): a broadcast
    // per tile puts the CPEs in step at every tile, so that all their puts coincide, which
    // the cost model does not price (VGG-19 conv1_1 with shared weights: 28% slower than
    // predicted).
    const bool chunked = info.chunk_rvar >= 0 && plan.chunk > 0 && plan.chunk < info.reduction;
    if (plan.share == Plan::Share::None || !chunked) return out;
    for (size_t d = 0; d < info.out_extents.size(); d++) {
        if (info.out_extents[d] % std::min<int64_t>(plan.tile[d], info.out_extents[d]) != 0) return out;
    }
    for (const auto &[name, moves] : info.region_moves) {
        const Stage &s = info.stages[info.by_name.at(name)];
        const bool by_producer = std::find(info.producer_inputs.begin(), info.producer_inputs.end(), name) !=
                                 info.producer_inputs.end();
        const bool per_chunk = std::find(info.chunk_staged.begin(), info.chunk_staged.end(), name) !=
                               info.chunk_staged.end();
        if (s.callers.empty() || by_producer || !per_chunk) continue;
        bool same = true;
        for (int d : moves) same &= plan.tile[size_t(d)] >= info.out_extents[size_t(d)];
        if (same) out.push_back(name);
    }
    return out;
}

PipelineInfo analyze(const Pipeline &p) {
    PipelineInfo info;
    std::vector<Function> outputs;
    for (const Func &f : p.outputs()) outputs.push_back(f.function());
    if (outputs.size() != 1) throw sw::UserError("the Sunway autoscheduler takes pipelines with one output");
    std::map<std::string, Function> env;
    for (const Function &f : outputs) {
        for (const auto &kv : find_transitive_calls(f)) env.insert(kv);
    }
    const std::vector<std::string> order = topological_order(outputs, env);
    info.output = outputs[0].name();

    // Stages, inputs and callers.
    for (size_t i = 0; i < order.size(); i++) {
        Stage s;
        s.func = env.at(order[i]);
        s.name = order[i];
        s.index = int(i);
        s.is_output = s.name == info.output;
        s.args = s.func.args();
        const std::vector<Expr> &vals = s.func.definition().values();
        const Call *c = vals.size() == 1 ? vals[0].as<Call>() : nullptr;
        if (c && c->call_type == Call::Image && s.func.updates().empty()) {
            s.is_input = true;
            s.source_name = c->name;
            for (int d = 0; d < s.func.dimensions(); d++) {
                Expr ext;
                if (c->param.defined()) ext = c->param.extent_constraint(d);
                if (c->image.defined()) ext = c->image.dim(d).extent();
                if (ext.defined()) ext = simplify(ext);  // ext owns the node *k points into
                const int64_t *k = ext.defined() ? as_const_int(ext) : nullptr;
                if (!k) {
                    throw sw::UserError("the Sunway autoscheduler needs constant extents for input " + c->name +
                                        " (set_bounds on every dimension)");
                }
                s.source_extents.push_back(*k);
            }
        }
        info.by_name[s.name] = int(i);
        info.stages.push_back(s);
    }
    for (Stage &s : info.stages) {
        for (const auto &kv : find_direct_calls(s.func)) {
            if (kv.first != s.name) info.stages[info.by_name.at(kv.first)].callers.insert(s.name);
        }
    }

    // The output's extents: buffer constraints, else estimates.
    const Function &out = outputs[0];
    if (out.dimensions() > int(std::tuple_size<decltype(PipelineInfo::ExtentsKey::tile)>::value)) {
        throw sw::UserError("the Sunway autoscheduler takes outputs of at most 8 dimensions; " + out.name() +
                            " has " + std::to_string(out.dimensions()));
    }
    for (int d = 0; d < out.dimensions(); d++) {
        Expr ext;
        if (!out.output_buffers().empty()) ext = out.output_buffers()[0].extent_constraint(d);
        if (!ext.defined()) {
            for (const Bound &b : out.schedule().estimates()) {
                if (b.var == out.args()[d]) ext = b.extent;
            }
        }
        if (ext.defined()) ext = simplify(ext);  // ext owns the node *k points into
        const int64_t *k = ext.defined() ? as_const_int(ext) : nullptr;
        if (!k || *k < 1) {
            throw sw::UserError("the Sunway autoscheduler needs a constant extent for dimension " +
                                std::to_string(d) + " of output " + out.name() +
                                " (set_bounds or set_estimate)");
        }
        info.out_extents.push_back(*k);
    }

    // Per-definition op counts; a stage's pure variables named as the output's range over the
    // output's extents.
    Scope<Interval> ranges;
    for (int d = 0; d < out.dimensions() && d < int(info.out_extents.size()); d++) {
        ranges.push(out.args()[d], Interval(0, int(info.out_extents[d] - 1)));
    }
    for (const Stage &s : info.stages) {
        for (const Definition *d : definitions(s.func)) {
            OpCount c = count_ops(d->values(), d->args(), ranges);
            for (const ReductionVariable &v : d->schedule().rvars()) {
                const Expr extent = simplify(v.extent);  // owns the node *k points into
                const int64_t *k = as_const_int(extent);
                if (!k) throw sw::UserError(pos("the reduction of", s.name) + " has no constant extent");
                c.reduction_points *= *k;
            }
            info.ops[s.name].push_back(c);
        }
    }

    // The main stage: the biggest reduction.
    int64_t best = 0;
    for (const Stage &s : info.stages) {
        if (s.is_output || s.is_input) continue;
        for (size_t u = 0; u < s.func.updates().size(); u++) {
            if (s.func.updates()[u].schedule().rvars().empty()) continue;
            const int64_t vol = info.ops.at(s.name)[u + 1].reduction_points;
            if (vol > best) best = vol, info.main = s.name, info.main_update = int(u);
        }
    }
    if (info.main.empty()) {
        for (const Stage &s : info.stages) {
            if (!s.is_output && !s.is_input) info.main = s.name;
        }
    }

    // Symbolic per-tile regions: output tile, then every stage from its consumers.
    SymBox out_box;
    for (int d = 0; d < out.dimensions(); d++) {
        Expr o = Variable::make(Int(32), tile_origin_var(d)), t = Variable::make(Int(32), tile_size_var(d));
        out_box.push_back({o, o + t - 1});
    }
    info.tile_region[info.output] = out_box;
    for (int i = int(info.stages.size()) - 1; i >= 0; i--) {
        const Stage &s = info.stages[i];
        auto it = info.tile_region.find(s.name);
        if (it == info.tile_region.end()) continue;
        simplify_box(it->second);
        if (s.name == info.main && !it->second.empty()) {
            // The vectorised main stage may compute a width rounded up to whole vectors.
            info.main_width = simplify(it->second[0].second - it->second[0].first + 1);
            Expr w = Variable::make(Int(32), rounded_width_var);
            it->second[0].second = it->second[0].first + w - 1;
        }
        const SymBox region = it->second;
        for (const Definition *d : definitions(s.func)) {
            merge_into(info.tile_region, required(*d, scope_for(*d, s.args, region)), s.name);
        }
    }

    // The main update's reduction, what it reads, and how.
    if (info.main_update < 0) {
        count_flops_impl(info);
        info.output_computes = output_computes(info);
        return info;
    }
    const Stage &m = info.stages[info.by_name.at(info.main)];
    const Definition &upd = m.func.updates()[info.main_update];
    info.rvars = upd.schedule().rvars();
    int64_t widest = 16;  // reductions this short are staged whole
    for (size_t i = 0; i < info.rvars.size(); i++) {
        const int64_t ext = constant_extent(info.rvars[i]);
        if (ext > widest) widest = ext, info.chunk_rvar = int(i);
    }
    // A reduction over a few channels and many taps (a first conv layer: 3 channels, 11 x 11
    // taps): its outermost variable (the channels) may still be chunked, so that a chunk's
    // staging can be double buffered behind the previous chunk's compute.
    // Only when every index is affine in the stage's variables: a grouped convolution's tile
    // may straddle two groups, whose per-chunk windows the cost model does not size.
    if (info.chunk_rvar < 0 && info.rvars.size() >= 3 && constant_extent(info.rvars.back()) >= 2) {
        int64_t taps = 1;
        for (size_t i = 0; i + 1 < info.rvars.size(); i++) taps *= constant_extent(info.rvars[i]);
        bool affine = true;
        for (const Call *c : calls_in(upd)) {
            for (const Expr &a : c->args) {
                for (const std::string &v : m.args) {
                    int64_t k = 0;
                    affine &= coefficient(a, v, &k);
                }
            }
        }
        if (taps > 16 && affine) info.chunk_rvar = int(info.rvars.size()) - 1;
    }
    for (size_t i = 0; i < info.rvars.size(); i++) {
        const int64_t ext = constant_extent(info.rvars[i]);
        info.rvar_extents.push_back(ext);
        if (int(i) == info.chunk_rvar) {
            info.reduction = ext;
        } else {
            info.taps *= ext;
        }
    }
    // Stages read only by the main update.
    std::set<std::string> in_update, elsewhere;
    for (const Call *c : calls_in(upd)) in_update.insert(c->name);
    for (const Definition *d : definitions(m.func)) {
        if (d == &upd) continue;
        for (const Call *c : calls_in(*d)) elsewhere.insert(c->name);
    }
    for (const std::string &n : in_update) {
        if (n == m.name || elsewhere.count(n)) continue;
        const Stage &s = info.stages[info.by_name.at(n)];
        if (s.callers.size() != 1) continue;
        info.chunk_staged.push_back(n);
        if (!s.is_input) info.producers.push_back(n);
    }
    for (const std::string &pname : info.producers) {
        const Stage &ps = info.stages[info.by_name.at(pname)];
        for (const auto &kv : find_direct_calls(ps.func)) {
            const Stage &in = info.stages[info.by_name.at(kv.first)];
            if (in.is_input && in.callers.size() == 1) info.producer_inputs.push_back(in.name);
        }
    }
    // Chunk regions: the main update over one chunk of the reduction, then the producers.
    {
        const SymBox region = info.tile_region.at(m.name);
        std::map<std::string, SymBox> chunk;
        merge_into(chunk, required(upd, scope_for(upd, m.args, region, info.chunk_rvar)), m.name);
        for (const std::string &n : info.chunk_staged) {
            info.chunk_region[n] = chunk.at(n);
            simplify_box(info.chunk_region[n]);
        }
        for (const std::string &pname : info.producers) {
            const Stage &ps = info.stages[info.by_name.at(pname)];
            std::map<std::string, SymBox> inner;
            for (const Definition *d : definitions(ps.func)) {
                merge_into(inner, required(*d, scope_for(*d, ps.args, info.chunk_region.at(pname))), pname);
            }
            for (const std::string &n : info.producer_inputs) {
                if (inner.count(n)) info.chunk_region[n] = inner.at(n), simplify_box(info.chunk_region[n]);
            }
        }
    }
    // Stages that only move data, inlined by every plan.
    for (const Stage &s : info.stages) {
        if (s.is_input || s.is_output || s.name == info.main || !s.func.updates().empty() ||
            std::find(info.producers.begin(), info.producers.end(), s.name) != info.producers.end()) {
            continue;
        }
        const OpCount &o = info.ops.at(s.name)[0];
        if (o.float_ops == 0 && o.slow_cycles == 0) info.wrappers.push_back(s.name);
    }
    // Vectorisation along the innermost pure dimension, or along the reduction.
    const std::string d0 = m.args.empty() ? "" : m.args[0];
    bool pure_ok = !d0.empty(), rvar_ok = info.chunk_rvar >= 0, round_up = true;
    const std::string rv = rvar_ok ? info.rvars[info.chunk_rvar].var : "";
    for (const Call *c : calls_in(upd)) {
        bool varies = false;
        for (size_t k = 0; k < c->args.size(); k++) {
            int64_t a = 0, b = 0;
            const bool ka = coefficient(c->args[k], d0, &a);
            // Another Func's innermost index may step by more than one along x (a conv of
            // stride > 1): its vectors are gathered from four scalars.
            const bool gather = ka && k == 0 && a > 1 && c->name != m.name;
            if (!ka || (k > 0 && a != 0) || (k == 0 && a != 0 && a != 1 && !gather)) pure_ok = false;
            if (gather) {
                info.loads_gather++;
                if (std::find(info.gathered.begin(), info.gathered.end(), c->name) == info.gathered.end()) {
                    info.gathered.push_back(c->name);
                }
                info.gather_stride = info.gather_stride ? std::min<int>(info.gather_stride, int(a)) : int(a);
            }
            if (ka && a != 0) varies = true;
            if (c->name == m.name) continue;
            if (!rv.empty()) {
                const bool kb = coefficient(c->args[k], rv, &b);
                if (!kb || (k > 0 && b != 0) || (k == 0 && b != 0 && b != 1)) rvar_ok = false;
            }
        }
        if (c->name != m.name) (varies ? info.loads_varying : info.loads_invariant)++;
        if (varies && c->name != m.name) {
            const auto st = info.by_name.find(c->name);
            if (st == info.by_name.end() || info.stages[st->second].is_input ||
                std::find(info.producers.begin(), info.producers.end(), c->name) == info.producers.end()) {
                round_up = false;
            }
        }
    }
    const std::vector<OpCount> &mo = info.ops.at(m.name);
    pure_ok = pure_ok && mo[0].vector_safe && mo[info.main_update + 1].vector_safe;
    for (const Call *c : calls_in(m.func.definition())) {
        for (size_t k = 0; k < c->args.size(); k++) {
            int64_t a = 0;
            if (!coefficient(c->args[k], d0, &a) || (k > 0 && a != 0) || (k == 0 && a != 0 && a != 1)) pure_ok = false;
        }
    }
    // The update must accumulate: f(args) = f(args) + e (rfactor needs an associative update).
    const Add *acc = upd.values().size() == 1 ? upd.values()[0].as<Add>() : nullptr;
    rvar_ok = rvar_ok && acc && mo[info.main_update + 1].vector_safe;
    // Register blocks of an rfactor plan over the first two pure dimensions (see
    // PipelineInfo::rloads_first): which loads vary along which.
    if (rvar_ok && !pure_ok && m.args.size() >= 2) {
        for (const Call *c : calls_in(upd)) {
            if (c->name == m.name) continue;
            bool v0 = false, v1 = false, known = true;
            for (const Expr &a : c->args) {
                int64_t k0 = 0, k1 = 0;
                known = known && coefficient(a, m.args[0], &k0) && coefficient(a, m.args[1], &k1);
                v0 |= k0 != 0, v1 |= k1 != 0;
            }
            if (!known || (v0 && v1)) {
                info.rloads_both++;
            } else if (v0) {
                info.rloads_first++;
            } else if (v1) {
                info.rloads_second++;
            } else {
                info.rloads_neither++;
            }
        }
    }
    // A second register-block dimension (see PipelineInfo::block_dim). An index that is not
    // affine along it but constant over every aligned run of l points (a grouped
    // convolution's input channel (c / out_per_group) * in_per_group + r) counts as invariant
    // there for blocks of l lines, for each l whose runs it is constant over (checked per l:
    // 3 lines suit 6 channels per group, 4 do not).
    for (size_t d = 1; pure_ok && d < m.args.size() && info.block_dim < 0; d++) {
        bool ok = true;
        int along = 0;
        uint32_t lines_allowed = 0x1fffe;  // bits 1..16
        for (const Call *c : calls_in(upd)) {
            if (c->name == m.name) continue;
            bool vx = false, vd = false;
            for (const Expr &a : c->args) {
                int64_t kx = 0, kd = 0;
                if (!coefficient(a, d0, &kx)) ok = false;
                if (!coefficient(a, m.args[d], &kd)) {
                    for (int l = 2; l <= 16; l++) {
                        if ((lines_allowed >> l & 1) && !constant_over_runs(a, m.args[d], l)) {
                            lines_allowed &= ~(uint32_t(1) << l);
                        }
                    }
                    if (lines_allowed == 2) ok = false;  // runs of one point only
                }
                vx |= kx != 0, vd |= kd != 0;
            }
            if (vx && vd) ok = false;
            if (vd) along++;
        }
        if (ok && along > 0) {
            info.block_dim = int(d), info.loads_invariant_block = along, info.block_lines_allowed = lines_allowed;
        }
    }
    info.vector_pure = pure_ok;
    info.vector_rvar = rvar_ok && !pure_ok;
    info.round_up_safe = pure_ok && round_up;

    // Along which output dimensions each staged input's region moves with the tile.
    for (const Stage &s : info.stages) {
        if (!s.is_input) continue;
        const auto chunk = info.chunk_region.find(s.name);
        const auto tile = info.tile_region.find(s.name);
        const SymBox *box = chunk != info.chunk_region.end() ? &chunk->second
                            : tile != info.tile_region.end() ? &tile->second : nullptr;
        if (!box) continue;
        std::set<int> &moves = info.region_moves[s.name];
        for (size_t d = 0; d < info.out_extents.size(); d++) {
            for (const auto &[lo, hi] : *box) {
                if (expr_uses_var(lo, tile_origin_var(int(d))) || expr_uses_var(hi, tile_origin_var(int(d)))) {
                    moves.insert(int(d));
                }
            }
        }
    }

    count_flops_impl(info);
    info.output_computes = output_computes(info);
    return info;
}

}  // namespace sw_auto
