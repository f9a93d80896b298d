/** \file
 * Bounding and budgeting the LDM buffers of a CPE kernel.
 */
#include "target_sw/PlaceLdmBuffers.h"

#include "target_sw/ConstantBounds.h"
#include "target_sw/Errors.h"
#include "target_sw/PassSupport.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class LdmPlanner : public IRVisitor {
public:
    LdmPlanner(CpeKernel &k, const Machine &m) : k(k), m(m) {
        for (const BlockLoop &b : k.blocks)
            blocks.push_back({b.var, b.min, b.extent});
    }

    std::vector<std::pair<std::string, int64_t>> live, live_at_peak;
    int64_t peak = 0;

private:
    using IRVisitor::visit;
    CpeKernel &k;
    const Machine &m;
    std::vector<LoopRange> blocks, loops;
    LetScope lets; // enclosing lets

    Expr expand(const Expr &e) const { return lets.expand(e); }

    void visit(const LetStmt *op) override {
        op->value.accept(this);
        lets.push(op->name, op->value);
        op->body.accept(this);
        lets.pop();
    }
    void visit(const For *op) override {
        loops.push_back({op->name, expand(op->min), expand(op->extent)});
        op->body.accept(this);
        loops.pop_back();
    }
    void visit(const Allocate *op) override {
        if (op->memory_type == MemoryType::Register) {
            // PromoteAccumulators' registers (a pass placing the buffers again after it).
            op->body.accept(this);
            return;
        }
        Expr size = make_const(Int(64), op->type.bytes());
        for (const Expr &e : op->extents)
            size = size * cast<int64_t>(e);
        std::optional<int64_t> bound = constant_upper_bound(expand(size), blocks, loops);
        if (!bound) {
            std::ostringstream msg;
            msg << "kernel " << k.name << ": cannot find a constant bound for the size of LDM "
                << "buffer " << op->name << " (" << size << " bytes); give the Func a "
                << "constant-size tile (split/tile with constant factors, bound_extent)";
            throw UserError(msg.str());
        }
        const int64_t bytes = std::max<int64_t>(*bound, 0);
        auto found = std::find_if(k.ldm.begin(), k.ldm.end(),
                                  [&](const LdmBuffer &b) { return b.name == op->name; });
        if (found == k.ldm.end()) {
            k.ldm.push_back({op->name, op->type, bytes});
        } else {
            found->bytes = std::max(found->bytes, bytes);
        }
        live.push_back({op->name, align_up(bytes, m.ldm_alignment)});
        note_peak();
        op->body.accept(this);
        release(op->name);
    }
    void visit(const Free *op) override { release(op->name); }

    void release(const std::string &name) {
        auto it = std::find_if(live.begin(), live.end(), [&](auto &p) { return p.first == name; });
        if (it != live.end())
            live.erase(it);
    }
    void note_peak() {
        int64_t total = 0;
        for (auto &p : live)
            total += p.second;
        if (total > peak) {
            peak = total;
            live_at_peak = live;
        }
    }
};

} // namespace

void place_ldm_buffers(CpeKernel &k, const Machine &m) {
    LdmPlanner planner(k, m);
    k.body.accept(&planner);
    k.ldm_peak_bytes = planner.peak;
    if (planner.peak > m.ldm_data_budget()) {
        std::ostringstream msg;
        msg << "the schedule does not fit the LDM of a " << m.name << " CPE: kernel " << k.name
            << " needs " << planner.peak << " bytes of LDM at once, the limit is "
            << m.ldm_data_budget() << " bytes (" << m.ldm_bytes << " bytes of LDM minus "
            << m.ldm_stack_reserve << " kept for the stack). Buffers live at the peak:";
        for (auto &[name, bytes] : planner.live_at_peak) {
            msg << "\n  " << name << ": " << bytes << " bytes";
        }
        msg << "\nUse smaller tiles, or stage less data in LDM at once.";
        throw UserError(msg.str());
    }
}

} // namespace sw
