/** \file
 * Applying a plan, and printing it.
 */
#include "autoscheduler/ApplyPlan.h"

#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>
#include <sstream>

namespace sw_auto {

using namespace Halide;
using Halide::Internal::Function;

namespace {

/** A C++ identifier for a Func or variable name. */
std::string ident(const std::string &n) {
    std::string s;
    for (char c : n) s += (isalnum(static_cast<unsigned char>(c)) ? c : '_');
    return s;
}

std::string list(const std::vector<std::string> &v) {
    std::string s;
    for (size_t i = 0; i < v.size(); i++) s += (i ? ", " : "") + v[i];
    return s;
}

bool contains(const std::vector<std::string> &v, const std::string &s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

/** Applies directives and records them as source. */
class Writer {
public:
    Writer(const PipelineInfo &info, const std::map<std::string, Function> &env) : info_(info), env_(env) {}

    Func func(const std::string &name) {
        const Stage &s = info_.stages[info_.by_name.at(name)];
        if (!declared_.count(name)) {
            declared_.insert(name);
            out_ << "    Func " << ident(name) << " = pipeline.get_func(" << s.index << ");\n";
        }
        return Func(env_.at(name));
    }
    std::string var(const std::string &name) {
        if (!vars_.count(name)) {
            vars_.insert(name);
            out_ << "    Var " << ident(name) << "(\"" << name << "\");\n";
        }
        return ident(name);
    }
    std::string rvar(const std::string &name) {
        if (!vars_.count(name)) {
            vars_.insert(name);
            out_ << "    RVar " << ident(name) << "(\"" << name << "\");\n";
        }
        return ident(name);
    }
    void line(const std::string &l) { out_ << "    " << l << "\n"; }
    std::string source() const { return out_.str(); }

private:
    const PipelineInfo &info_;
    const std::map<std::string, Function> &env_;
    std::ostringstream out_;
    std::set<std::string> declared_, vars_;
};

std::vector<VarOrRVar> vrs(const std::vector<std::pair<std::string, bool>> &names) {
    std::vector<VarOrRVar> v;
    for (const auto &n : names) v.push_back(n.second ? VarOrRVar(RVar(n.first)) : VarOrRVar(Var(n.first)));
    return v;
}

}  // namespace

std::string apply_copy_plan(const PipelineInfo &info, const std::vector<std::string> &inputs,
                            const std::vector<std::array<int, 3>> &tiles, const std::map<std::string, Function> &env) {
    Writer w(info, env);
    const Stage &os = info.stages[info.by_name.at(info.output)];
    Func out = w.func(info.output);
    const std::string on = ident(info.output);
    const std::string x = os.args[0], y = os.args[1], n = os.args[3];
    for (size_t k = 0; k < inputs.size(); k++) {
        const std::string r = out.function().update(int(k)).schedule().rvars().at(0).var, sfx = "_" + std::to_string(k);
        const std::string xo = x + "_o" + sfx, xi = x + "_i" + sfx, yo = y + "_o" + sfx, yi = y + "_i" + sfx,
                          ro = "r_o" + sfx, ri = "r_i" + sfx, xy = "sw_xy" + sfx, tile = "sw_tile" + sfx;
        const auto [tx, ty, tc] = tiles[k];
        out.update(int(k))
            .split(Var(x), Var(xo), Var(xi), tx, TailStrategy::GuardWithIf)
            .split(Var(y), Var(yo), Var(yi), ty, TailStrategy::GuardWithIf)
            .split(RVar(r), RVar(ro), RVar(ri), tc, TailStrategy::GuardWithIf)
            .reorder(Var(xi), Var(yi), RVar(ri), Var(xo), Var(yo), RVar(ro), Var(n))
            .fuse(Var(xo), Var(yo), Var(xy))
            .fuse(Var(xy), RVar(ro), RVar(tile))
            .gpu_blocks(RVar(tile), Var(n), DeviceAPI::Host);
        Func in = w.func(inputs[k]);
        in.in().compute_at(out, RVar(tile)).store_in(sw::LDM);
        // The same as source: the names declared first, then the chain.
        for (const std::string &v : {x, xo, xi, y, yo, yi, xy, n}) w.var(v);
        for (const std::string &v : {r, ro, ri, tile}) w.rvar(v);
        const std::string g = ", TailStrategy::GuardWithIf)";
        w.line(on + ".update(" + std::to_string(k) + ")");
        w.line("    .split(" + ident(x) + ", " + ident(xo) + ", " + ident(xi) + ", " + std::to_string(tx) + g);
        w.line("    .split(" + ident(y) + ", " + ident(yo) + ", " + ident(yi) + ", " + std::to_string(ty) + g);
        w.line("    .split(" + ident(r) + ", " + ident(ro) + ", " + ident(ri) + ", " + std::to_string(tc) + g);
        w.line("    .reorder(" + list({ident(xi), ident(yi), ident(ri), ident(xo), ident(yo), ident(ro), ident(n)}) + ")");
        w.line("    .fuse(" + ident(xo) + ", " + ident(yo) + ", " + ident(xy) + ")");
        w.line("    .fuse(" + ident(xy) + ", " + ident(ro) + ", " + ident(tile) + ")");
        w.line("    .gpu_blocks(" + ident(tile) + ", " + ident(n) + ", ::Halide::DeviceAPI::Host);");
        w.line(ident(inputs[k]) + ".in().compute_at(" + on + ", " + ident(tile) + ").store_in(::sw::LDM);");
    }
    return w.source();
}

AppliedPlan apply_plan(const PipelineInfo &info, const Plan &plan, const std::map<std::string, Function> &env) {
    Writer w(info, env);
    sw::Directives marked;
    const Stage &os = info.stages[info.by_name.at(info.output)];
    Func out = w.func(info.output);
    const std::string on = ident(info.output);
    const size_t k = os.args.size();

    // Output tiles over the CPEs: the tiles of the inner dimensions fused into one block
    // loop, the outermost dimension's tiles (images) a second one.
    std::vector<std::string> outer, inner;
    for (size_t d = 0; d < k; d++) {
        const std::string v = os.args[d], o = v + "_o", i = v + "_i";
        const int t = std::min<int64_t>(plan.tile[d], info.out_extents[d]);
        out.split(Var(v), Var(o), Var(i), t);
        w.line(on + ".split(" + w.var(v) + ", " + w.var(o) + ", " + w.var(i) + ", " + std::to_string(t) + ");");
        outer.push_back(o), inner.push_back(i);
    }
    {
        std::vector<std::pair<std::string, bool>> order;
        std::vector<std::string> names;
        for (const std::string &i : inner) order.push_back({i, false}), names.push_back(ident(i));
        for (const std::string &o : outer) order.push_back({o, false}), names.push_back(ident(o));
        out.reorder(vrs(order));
        w.line(on + ".reorder(" + list(names) + ");");
    }
    std::string block = outer[0];
    const size_t fused_dims = k >= 2 ? k - 1 : 1;
    for (size_t d = 1; d < fused_dims; d++) {
        const std::string f = "sw_tile";
        out.fuse(Var(block), Var(outer[d]), Var(f));
        w.line(on + ".fuse(" + w.var(block) + ", " + w.var(outer[d]) + ", " + w.var(f) + ");");
        block = f;
    }
    if (k >= 2) {
        out.gpu_blocks(Var(block), Var(outer[k - 1]), DeviceAPI::Host);
        w.line(on + ".gpu_blocks(" + w.var(block) + ", " + w.var(outer[k - 1]) + ", ::Halide::DeviceAPI::Host);");
    } else {
        out.gpu_blocks(Var(block), DeviceAPI::Host);
        w.line(on + ".gpu_blocks(" + w.var(block) + ", ::Halide::DeviceAPI::Host);");
    }
    const std::string tile = ident(block);

    // The main stage's update: chunks of the reduction, vectors, loop order.
    const bool has_main = info.main_update >= 0;
    const bool chunked = has_main && info.chunk_rvar >= 0 && plan.chunk > 0 && plan.chunk < info.reduction;
    std::string stage_level;  // the loop of the main stage where per-chunk staging is computed
    std::string stage_func_ident = ident(info.main);
    const Stage *ms = info.main.empty() ? nullptr : &info.stages[info.by_name.at(info.main)];
    if (ms) {
        Func mf = w.func(info.main);
        const std::string mn = ident(info.main);
        mf.compute_at(out, Var(block)).store_in(sw::LDM);
        w.line(mn + ".compute_at(" + on + ", " + tile + ").store_in(::sw::LDM);");
        const std::string d0 = ms->args.empty() ? "" : ms->args[0];
        if (plan.vector == Plan::Vector::Pure) {
            mf.vectorize(Var(d0), 4, TailStrategy::RoundUp);
            w.line(mn + ".vectorize(" + w.var(d0) + ", 4, TailStrategy::RoundUp);");
        }
        if (has_main) {
            const std::string u = mn + ".update(" + std::to_string(info.main_update) + ")";
            Halide::Stage upd = mf.update(info.main_update);
            std::vector<std::pair<std::string, bool>> order;
            std::string rv = info.chunk_rvar >= 0 ? info.rvars[info.chunk_rvar].var : "";
            std::string rco = rv + "_o", rci = rv + "_i";
            if (plan.vector == Plan::Vector::Reduction) {
                // Lanes of partial sums (rfactor) along the unit-stride reduction.
                const std::string rio = rv + "_io", rii = rv + "_ii", lane = "sw_lane";
                const int c = chunked ? plan.chunk : int(info.reduction);
                upd.split(RVar(rv), RVar(rco), RVar(rci), c).split(RVar(rci), RVar(rio), RVar(rii), 4);
                w.line(u + ".split(" + w.rvar(rv) + ", " + w.rvar(rco) + ", " + w.rvar(rci) + ", " + std::to_string(c) +
                       ").split(" + ident(rci) + ", " + w.rvar(rio) + ", " + w.rvar(rii) + ", 4);");
                Func partial = upd.rfactor(RVar(rii), Var(lane));
                w.line("Func " + mn + "_partial = " + u + ".rfactor(" + ident(rii) + ", " + w.var(lane) + ");");
                std::vector<Var> storage{Var(lane)};
                std::vector<std::string> sn{ident(lane)};
                for (const std::string &a : ms->args) storage.push_back(Var(a)), sn.push_back(w.var(a));
                partial.compute_at(out, Var(block)).store_in(sw::LDM).reorder_storage(storage).vectorize(Var(lane));
                w.line(mn + "_partial.compute_at(" + on + ", " + tile + ").store_in(::sw::LDM).reorder_storage(" + list(sn) +
                       ").vectorize(" + ident(lane) + ");");
                // A register block of plan.block x plan.block_lines points over the first two
                // pure dimensions, unrolled inside the lanes: each loaded vector serves a row
                // or column of the block (ShareOperands).
                const int bsz[2] = {plan.block, plan.block_lines};
                std::vector<std::string> inner, outer_args;
                for (size_t a = 0; a < ms->args.size(); a++) {
                    const std::string &v = ms->args[a];
                    if (a < 2 && bsz[a] > 1) {
                        partial.update(0).split(Var(v), Var(v + "_bo"), Var(v + "_bi"), bsz[a]);
                        w.line(mn + "_partial.update(0).split(" + w.var(v) + ", " + w.var(v + "_bo") + ", " +
                               w.var(v + "_bi") + ", " + std::to_string(bsz[a]) + ");");
                        inner.push_back(v + "_bi"), outer_args.push_back(v + "_bo");
                    } else {
                        outer_args.push_back(v);
                    }
                }
                std::vector<std::pair<std::string, bool>> po{{lane, false}};
                std::vector<std::string> pn{ident(lane)};
                for (const std::string &i : inner) po.push_back({i, false}), pn.push_back(ident(i));
                po.push_back({rio, true}), pn.push_back(ident(rio));
                for (const std::string &a : outer_args) po.push_back({a, false}), pn.push_back(w.var(a));
                po.push_back({rco, true}), pn.push_back(ident(rco));
                partial.update(0).reorder(vrs(po)).vectorize(Var(lane));
                w.line(mn + "_partial.update(0).reorder(" + list(pn) + ").vectorize(" + ident(lane) + ");");
                for (const std::string &i : inner) {
                    partial.update(0).unroll(Var(i));
                    w.line(mn + "_partial.update(0).unroll(" + ident(i) + ");");
                }
                stage_func_ident = mn + "_partial";
                stage_level = ident(rco);
                // Staging below needs the partial Func itself.
                for (const std::string &n : info.chunk_staged) {
                    Func in = w.func(n);
                    Func staged = info.stages[info.by_name.at(n)].is_input ? in.in() : in;
                    staged.compute_at(partial, RVar(rco)).store_in(sw::LDM);
                    w.line(ident(n) + (info.stages[info.by_name.at(n)].is_input ? ".in()" : "") + ".compute_at(" +
                           stage_func_ident + ", " + stage_level + ").store_in(::sw::LDM);");
                }
            } else {
                if (chunked) {
                    upd.split(RVar(rv), RVar(rco), RVar(rci), plan.chunk);
                    w.line(u + ".split(" + w.rvar(rv) + ", " + w.rvar(rco) + ", " + w.rvar(rci) + ", " +
                           std::to_string(plan.chunk) + ");");
                }
                std::vector<std::string> names;
                auto push = [&](const std::string &n, bool r) {
                    order.push_back({n, r});
                    names.push_back(r ? w.rvar(n) : w.var(n));
                };
                if (plan.vector == Plan::Vector::Pure) {
                    const std::string xo = d0 + "_vo", xi = d0 + "_vi", xio = d0 + "_vio", xii = d0 + "_vii";
                    upd.split(Var(d0), Var(xo), Var(xi), 4 * plan.block, TailStrategy::RoundUp)
                        .split(Var(xi), Var(xio), Var(xii), 4);
                    w.line(u + ".split(" + w.var(d0) + ", " + w.var(xo) + ", " + w.var(xi) + ", " +
                           std::to_string(4 * plan.block) + ", TailStrategy::RoundUp).split(" + ident(xi) + ", " +
                           w.var(xio) + ", " + w.var(xii) + ", 4);");
                    push(xii, false), push(xio, false);
                    if (plan.block_lines > 1) {
                        // The block's second dimension, unrolled inside the vectors' loop.
                        const std::string bv = ms->args[info.block_dim];
                        upd.split(Var(bv), Var(bv + "_bo"), Var(bv + "_bi"), plan.block_lines);
                        w.line(u + ".split(" + w.var(bv) + ", " + w.var(bv + "_bo") + ", " + w.var(bv + "_bi") + ", " +
                               std::to_string(plan.block_lines) + ");");
                        push(bv + "_bi", false);
                    }
                }
                for (size_t i = 0; i < info.rvars.size(); i++) {
                    if (int(i) == info.chunk_rvar) continue;
                    push(info.rvars[i].var, true);
                }
                if (info.chunk_rvar >= 0) push(chunked ? rci : rv, true);
                push(plan.vector == Plan::Vector::Pure ? d0 + "_vo" : d0, false);
                for (size_t a = 1; a < ms->args.size(); a++) {
                    const bool split = plan.vector == Plan::Vector::Pure && plan.block_lines > 1 && int(a) == info.block_dim;
                    push(split ? ms->args[a] + "_bo" : ms->args[a], false);
                }
                if (chunked) push(rco, true);
                upd.reorder(vrs(order));
                w.line(u + ".reorder(" + list(names) + ");");
                if (plan.vector == Plan::Vector::Pure) {
                    upd.vectorize(Var(d0 + "_vii")).unroll(Var(d0 + "_vio"));
                    w.line(u + ".vectorize(" + ident(d0 + "_vii") + ").unroll(" + ident(d0 + "_vio") + ");");
                    if (plan.block_lines > 1) {
                        const std::string bi = ms->args[info.block_dim] + "_bi";
                        upd.unroll(Var(bi));
                        w.line(u + ".unroll(" + ident(bi) + ");");
                    }
                }
                if (plan.unroll_taps) {
                    for (size_t i = 0; i < info.rvars.size(); i++) {
                        if (int(i) == info.chunk_rvar) continue;
                        upd.unroll(RVar(info.rvars[i].var));
                        w.line(u + ".unroll(" + ident(info.rvars[i].var) + ");");
                    }
                } else if (plan.phases && info.chunk_rvar != 0 && !info.rvars.empty()) {
                    // The taps along x read their phase planes at constant offsets.
                    upd.unroll(RVar(info.rvars[0].var));
                    w.line(u + ".unroll(" + ident(info.rvars[0].var) + ");");
                }
                if (chunked) stage_level = ident(rco);
            }
        }
        for (int uu = 0; uu < int(ms->func.updates().size()); uu++) {
            if (uu == info.main_update) continue;
            mf.update(uu).unscheduled();
            w.line(mn + ".update(" + std::to_string(uu) + ").unscheduled();");
        }
    }

    // Every other stage: per chunk (read only by the main update) or per tile, in LDM.
    std::vector<std::string> double_buffered;
    for (const Stage &s : info.stages) {
        if (s.is_output || s.name == info.main) continue;
        const bool producer = contains(info.producers, s.name);
        if ((producer && plan.inline_producers) || contains(info.wrappers, s.name)) continue;
        const bool per_chunk = !stage_level.empty() &&
                               (contains(info.chunk_staged, s.name) ||
                                (plan.inline_producers && contains(info.producer_inputs, s.name)));
        if (plan.vector == Plan::Vector::Reduction && contains(info.chunk_staged, s.name)) {
            if (plan.double_buffer && chunked) double_buffered.push_back(s.name);
            continue;  // staged above at the partial sums
        }
        if (s.is_input) {
            if (s.callers.empty()) continue;
            if (!plan.inline_producers && contains(info.producer_inputs, s.name)) continue;  // moved by the producer's copy
        }
        Func f = w.func(s.name);
        Func staged = s.is_input ? f.in() : f;
        const std::string sn = ident(s.name) + (s.is_input ? ".in()" : "");
        if (per_chunk) {
            staged.compute_at(Func(env.at(info.main)), RVar(info.rvars[info.chunk_rvar].var + "_o")).store_in(sw::LDM);
            w.line(sn + ".compute_at(" + ident(info.main) + ", " + stage_level + ").store_in(::sw::LDM);");
            if (plan.double_buffer) double_buffered.push_back(s.name);
        } else {
            staged.compute_at(out, Var(block)).store_in(sw::LDM);
            w.line(sn + ".compute_at(" + on + ", " + tile + ").store_in(::sw::LDM);");
        }
        if (!s.is_input) {
            for (int uu = 0; uu < int(s.func.updates().size()); uu++) {
                f.update(uu).unscheduled();
                w.line(ident(s.name) + ".update(" + std::to_string(uu) + ").unscheduled();");
            }
        }
    }
    // Inputs whose staged box is the same on every CPE: read once, shared (not double buffered).
    const std::vector<std::string> shared = shared_inputs(info, plan);
    for (const std::string &n : shared) {
        double_buffered.erase(std::remove(double_buffered.begin(), double_buffered.end(), n), double_buffered.end());
        const bool rc = plan.share == Plan::Share::RegComm;
        const Func staged = Func(env.at(n)).in();
        const sw::Sharing how = rc ? sw::Sharing::RegComm : sw::Sharing::Dma;
        sw::broadcast(staged, how);
        marked.shared[staged.name()] = how;
        w.line("::sw::broadcast(" + ident(n) + ".in()" + (rc ? ", ::sw::Sharing::RegComm" : "") + ");");
    }
    for (const std::string &n : double_buffered) {
        const bool input = info.stages[info.by_name.at(n)].is_input;
        Func f = Func(env.at(n));
        const Func staged = input ? f.in() : f;
        sw::double_buffer(staged);
        marked.double_buffered.insert(staged.name());
        w.line("::sw::double_buffer(" + ident(n) + (input ? ".in()" : "") + ");");
    }
    // The windows read by gathered vectors, also split into their phases.
    if (plan.phases) {
        for (const std::string &n : info.gathered) {
            const bool input = info.stages[info.by_name.at(n)].is_input;
            Func f = Func(env.at(n));
            const Func staged = input ? f.in() : f;
            sw::split_phases(staged);
            marked.phase_split.insert(staged.name());
            w.line("::sw::split_phases(" + ident(n) + (input ? ".in()" : "") + ");");
        }
    }
    // An output that computes its values itself writes each tile into the LDM and puts it
    // back by DMA, instead of storing element by element into main memory.
    if (info.output_computes) {
        sw::stage_output(out);
        marked.staged_outputs.insert(out.name());
        w.line("::sw::stage_output(" + on + ");");
    }

    return {w.source(), marked};
}

std::string schedule_function(const std::string &body, const std::string &name) {
    std::ostringstream src;
    src << "inline void apply_schedule_" << ident(name) << "(::Halide::Pipeline pipeline, ::Halide::Target target) {\n"
        << "    using ::Halide::Func;\n    using ::Halide::Var;\n    using ::Halide::RVar;\n"
        << "    using ::Halide::TailStrategy;\n    (void)target;\n"
        << body << "}\n";
    return src.str();
}

}  // namespace sw_auto
