/** \file
 * A CPE's rounds of blocks pipelined (see the header).
 */
#include "target_sw/PipelineRoundPuts.h"

#include "target_sw/Errors.h"
#include "target_sw/PipelineTilePuts.h"
#include "target_sw/PlaceLdmBuffers.h"
#include "target_sw/SunwayIR.h"

#include <optional>
#include <string>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** Every round active: `if (sw_active)` taken, sw_active true. */
class AllActive : public IRMutator {
    using IRMutator::visit;
    Expr visit(const Variable *op) override {
        return op->name == ir::block_active_name ? const_true() : Expr(op);
    }
    Stmt visit(const IfThenElse *op) override {
        const Variable *v = op->condition.as<Variable>();
        if (v && v->name == ir::block_active_name)
            return mutate(op->then_case);
        return IRMutator::visit(op);
    }
};

int put_sites(const CpeKernel &k) {
    int n = 0;
    for (const DmaSite &d : k.dma)
        n += d.is_put;
    return n;
}

} // namespace

void pipeline_round_puts(CpeKernel &k, const Machine &m) {
    // SW26010 only: on the Pro's emulator the rounds pipelined ran slower than the cost model
    // predicted and than the kernels they replaced (VGG-16's 3x3 convs on the mesh, their
    // stagings shared by RMA: 1.17 -> 1.30 ms; predicted 1.12 for a 1.43 ms plan); why is not
    // established.
    if (m.crts_runtime || k.rounds_in_body || k.blocks.empty() || put_sites(k) != 1)
        return;
    Expr total = 1;
    for (const BlockLoop &b : k.blocks)
        total = total * b.extent;
    const Expr blocks_e = simplify(total);
    const int64_t *blocks = as_const_int(blocks_e);
    const int64_t cpes = m.cpes_per_core_group;
    if (!blocks || *blocks % cpes != 0 || *blocks / cpes < 2)
        return;
    const CpeKernel before = k;
    // The block variables at the top of a round, as CodeGen_CPE binds them: the innermost
    // block loop's variable the fastest.
    const std::string round_name = "sw_round";
    const Expr round = Variable::make(Int(32), round_name);
    Expr rest = round * int32_t(cpes) + ir::cpe_id();
    Stmt body = AllActive().mutate(k.body);
    std::vector<std::pair<std::string, Expr>> lets;
    for (size_t i = k.blocks.size(); i-- > 0;) {
        const BlockLoop &b = k.blocks[i];
        if (i == 0) {
            lets.emplace_back(b.var, simplify(b.min + rest));
        } else {
            lets.emplace_back(b.var, simplify(b.min + rest % b.extent));
            rest = rest / b.extent;
        }
    }
    for (const auto &[name, value] : lets)
        body = LetStmt::make(name, value, body);
    const Stmt loop =
        For::make(round_name, 0, int32_t(*blocks / cpes), ForType::Serial, DeviceAPI::None, body);
    k.body = loop;
    std::string buffer;
    std::optional<Stmt> piped = pipeline_loop_puts(k, m, loop.as<For>(), buffer);
    if (!piped) {
        const std::vector<std::string> notes = k.notes;
        k = before;
        k.notes = notes;
        return;
    }
    k.body = *piped;
    k.rounds_in_body = true;
    k.ldm.clear();
    try {
        place_ldm_buffers(k, m);
    } catch (const UserError &) {
        // The two slots live through the whole loop: where the LDM's peak was elsewhere in
        // the block, they may not fit though one more slot would have.
        k = before;
        k.notes.push_back("the put of " + buffer +
                          " not pipelined over the next round: its two slots do not fit the LDM");
    }
}

} // namespace sw
