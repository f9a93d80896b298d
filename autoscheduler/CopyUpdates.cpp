/** \file
 * Copy pipelines: see CopyUpdates.h.
 */
#include "autoscheduler/CopyUpdates.h"

#include "autoscheduler/Analysis.h"
#include "autoscheduler/ApplyPlan.h"
#include "autoscheduler/CostModel.h"
#include "target_sw/Errors.h"

#include <chrono>
#include <cstdio>
#include <map>

namespace sw_auto {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** The copy dimension of a concat (x, y, c, n). */
constexpr int kCopyDim = 2;

bool is_var(const Expr &e, const std::string &name) {
    const Variable *v = e.as<Variable>();
    return v && v->name == name;
}

/** The best plan (by the cost model) of the point-wise copy of one update's slice, among
 * those a concat update can take: tiles of one image, no vectors (a copy computes nothing),
 * nothing shared. */
Estimate best_copy_plan(const CopyUpdate &u, const sw::Machine &m, Plan *best,
                        int64_t *considered) {
    ImageParam in(Float(32), 4, "copy_in");
    Var x("x"), y("y"), c("c"), n("n");
    Func out("copy_out");
    out(x, y, c, n) = in(x, y, c, n);
    int stride = 1;
    for (int d = 0; d < 4; d++) {
        const int e = int(u.extents[size_t(d)]);
        in.dim(d).set_bounds(0, e).set_stride(stride);
        out.output_buffer().dim(d).set_bounds(0, e).set_stride(stride);
        stride *= e;
    }
    const PipelineInfo info = analyze(Pipeline(out));
    Estimate best_e;
    for (const Plan &plan : enumerate_plans(info, m)) {
        if (plan.tile.size() != 4 || plan.tile[3] != 1 || plan.vector != Plan::Vector::None ||
            plan.share != Plan::Share::None || plan.chunk != 0 || plan.double_buffer) {
            continue;
        }
        const Estimate e = estimate(info, plan, m);
        ++*considered;
        if (e.fits && (!best_e.fits || e.seconds < best_e.seconds)) {
            best_e = e;
            *best = plan;
        }
    }
    return best_e;
}

} // namespace

std::vector<CopyUpdate> copy_updates(const Pipeline &p, const std::vector<int64_t> &out_extents) {
    if (p.outputs().size() != 1 || out_extents.size() != 4)
        return {};
    const Function f = p.outputs()[0].function();
    if (f.dimensions() != 4 || f.updates().empty() || f.values().size() != 1)
        return {};
    const Call *init = f.values()[0].as<Call>();
    if (!init || !init->is_intrinsic(Call::undef))
        return {};
    std::vector<CopyUpdate> ups;
    int64_t next = 0; // the slices must cover the output in order
    for (const Definition &u : f.updates()) {
        const std::vector<ReductionVariable> &rv = u.schedule().rvars();
        if (rv.size() != 1 || u.values().size() != 1 || u.args().size() != 4 ||
            !u.split_predicate().empty())
            return {};
        const Expr min = simplify(rv[0].min), extent = simplify(rv[0].extent);
        const Expr offset = simplify(u.args()[kCopyDim] - Variable::make(Int(32), rv[0].var));
        const int64_t *mn = as_const_int(min), *ext = as_const_int(extent),
                      *off = as_const_int(offset);
        if (!mn || *mn != 0 || !ext || !off || *off != next)
            return {};
        const Call *c = u.values()[0].as<Call>();
        if (!c || (c->call_type != Call::Halide && c->call_type != Call::Image) ||
            c->args.size() != 4)
            return {};
        for (int d = 0; d < 4; d++) {
            const std::string &v = d == kCopyDim ? rv[0].var : f.args()[size_t(d)];
            if (!is_var(c->args[size_t(d)], v) ||
                (d != kCopyDim && !is_var(u.args()[size_t(d)], v)))
                return {};
        }
        CopyUpdate cu;
        cu.input = c->name;
        cu.offset = *off;
        cu.extents = out_extents;
        cu.extents[kCopyDim] = *ext;
        ups.push_back(cu);
        next += *ext;
    }
    if (next != out_extents[kCopyDim])
        return {};
    return ups;
}

Result autoschedule_copies(const Pipeline &p, const PipelineInfo &info,
                           const std::vector<CopyUpdate> &updates, const sw::Machine &m,
                           const std::string &function_name) {
    const auto start = std::chrono::steady_clock::now();
    const Function f = p.outputs()[0].function();
    std::map<std::string, Function> env;
    env.insert({f.name(), f});
    for (const auto &kv : find_transitive_calls(f))
        env.insert(kv);
    std::vector<std::string> inputs;
    std::vector<std::array<int, 3>> tiles;

    Result r;
    Estimate &total = r.chosen.estimate;
    total.fits = true;
    std::string notes;
    for (size_t k = 0; k < updates.size(); k++) {
        Plan plan;
        const Estimate e = best_copy_plan(updates[k], m, &plan, &r.considered);
        if (!e.fits) {
            throw sw::UserError("no tile of update " + std::to_string(k) + " of " + function_name +
                                " (the copy of " + updates[k].input + ") fits the LDM of " +
                                m.name);
        }
        inputs.push_back(updates[k].input);
        tiles.push_back({plan.tile[0], plan.tile[1], plan.tile[2]});
        if (k == 0)
            r.chosen.plan = plan;
        total.seconds += e.seconds;
        total.ldm_bytes = std::max(total.ldm_bytes, e.ldm_bytes);
        total.dma_get_bytes += e.dma_get_bytes;
        total.dma_put_bytes += e.dma_put_bytes;
        total.dma_cycles += e.dma_cycles;
        total.line_bytes += e.line_bytes;
        total.tiles += e.tiles;
        char line[512];
        std::snprintf(line, sizeof line,
                      "    // update %zu: %s into channels %lld..%lld, %s, predicted %.4g ms\n", k,
                      updates[k].input.c_str(), (long long)updates[k].offset,
                      (long long)(updates[k].offset + updates[k].extents[kCopyDim] - 1),
                      plan.describe().c_str(), e.seconds * 1e3);
        notes += line;
    }
    const std::string body = apply_copy_plan(info, inputs, tiles, env);
    r.ranked = {r.chosen};
    r.passed = 1;
    char head[512];
    std::snprintf(
        head, sizeof head,
        "    // Sunway autoscheduler, %s: a copy pipeline of %zu updates, one kernel each,\n"
        "    // tiles by the cost model of each update's copy\n"
        "    // predicted %.4g ms, LDM %lld of %lld bytes per CPE, DMA get %lld B, put %lld B\n"
        "    // (%lld plans costed)\n",
        m.name.c_str(), updates.size(), total.seconds * 1e3, (long long)total.ldm_bytes,
        (long long)m.ldm_data_budget(), (long long)total.dma_get_bytes,
        (long long)total.dma_put_bytes, (long long)r.considered);
    r.schedule_source = std::string(head) + notes + body;
    r.info = info;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

} // namespace sw_auto
