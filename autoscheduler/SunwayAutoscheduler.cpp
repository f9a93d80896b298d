/** \file
 * The Sunway autoscheduler's orchestrator and search.
 */
#include "autoscheduler/SunwayAutoscheduler.h"

#include "autoscheduler/Analysis.h"
#include "autoscheduler/ApplyPlan.h"
#include "autoscheduler/CopyUpdates.h"
#include "target_sw/Divisors.h"
#include "target_sw/Errors.h"
#include "target_sw/SunwayLowering.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <sstream>

namespace sw_auto {

using namespace Halide;
using Halide::Internal::Function;

namespace {

/** Tile sizes tried along a dimension of extent \p e: powers of two, the divisors up to 256
 * (tiles without a remainder) and the whole extent; and, where \p e has no divisor that
 * makes a whole number of mesh rounds (a prime such as ViT's 197 tokens), the sizes that cut
 * it into 1 or 2 rounds of \p mesh tiles (the last tile shifted inwards), rounded up to a
 * multiple of 4 where that keeps the count (25 -> 28 for 197 in 8). This is the outermost
 * dimension (a matrix's rows) or a map's rows (55 rows in 8 tiles of 7: with 8 tiles of
 * output channels, all 64 CPEs), never vectorised: the 4 is not a vector's lanes but the
 * largest register block along it (blocks of 1, 2 or 4 lines must divide the tile). */
std::vector<int> tile_sizes(int64_t e, int64_t cap, int mesh) {
    std::set<int> s;
    for (int64_t k = mesh; k <= 2 * mesh && mesh > 0; k += mesh) {
        if (e % k == 0 || e <= k)
            continue;
        const int64_t t = (e + k - 1) / k, four = (t + 3) / 4 * 4;
        s.insert(int((e + four - 1) / four == k ? four : t));
    }
    for (int64_t t = 1; t < e && t <= cap; t *= 2)
        s.insert(int(t));
    for (int64_t d = 1; d <= std::min<int64_t>(e, std::min<int64_t>(cap, 256)); d++) {
        if (e % d == 0)
            s.insert(int(d));
    }
    if (e <= std::max<int64_t>(cap, 1) || s.empty())
        s.insert(int(std::min(e, std::max<int64_t>(cap, 1))));
    return std::vector<int>(s.rbegin(), s.rend());
}

/** Plan::serial_pixels (set in \p plan) is worth costing: a convolution-like output (pixels,
 * then channels and images), several tiles along the pixels, enough tiles of the rest to keep
 * most CPEs busy, and an input that only the pixels move (shared only this way). */
bool serial_pixels_useful(const PipelineInfo &info, const Plan &plan, const sw::Machine &m) {
    if (info.out_extents.size() < 3)
        return false;
    const TileCounts n = tile_counts(info, plan);
    if (n.serial < 2 || 2 * n.spread < m.cpes_per_core_group)
        return false;
    Plan spread_only = plan;
    spread_only.serial_pixels = false;
    return shared_inputs(info, plan).size() > shared_inputs(info, spread_only).size();
}

std::vector<int> divisors(int64_t n) {
    const std::vector<int64_t> d = sw::divisors_desc(n);
    return std::vector<int>(d.begin(), d.end());
}

} // namespace

std::vector<Plan> enumerate_plans(const PipelineInfo &info, const sw::Machine &m) {
    const int lanes = m.simd_float_lanes; // of a CPE float vector (floatv4, the Pro's floatv8)
    // The windows of gathered vectors split into phases only where the code generator has the
    // de-interleaving shuffle SplitPhases needs (Machine::even_odd_shuffle: floatv4's vshff;
    // not the SW26010-Pro's).
    const bool phase_shuffles = m.even_odd_shuffle;
    // Sharing by broadcast DMA (Sharing::Dma, Sharing::DmaRow): BCAST_MODE is SW26010's; the
    // Pro's RMA sharing is not generated yet.
    const bool broadcast_dma = !m.crts_runtime;
    // Sharing between CPEs' LDMs: SW26010's register communication, or the Pro's RMA (the same
    // sharings, printed as RMA broadcasts by CodeGen_CPE and priced as such by the cost model).
    const bool ldm_sharing = m.regcomm.available || m.rma.available;
    // Tile shapes: every dimension from its sizes, the outermost (images) at most 16.
    std::vector<std::vector<int>> sizes;
    for (size_t d = 0; d < info.out_extents.size(); d++) {
        const bool outermost = d + 1 == info.out_extents.size() && d > 0;
        const bool rows = d == 1 && info.out_extents.size() >= 3;
        sizes.push_back(tile_sizes(info.out_extents[d], outermost ? 16 : 1 << 20,
                                   (outermost || rows) && ldm_sharing ? m.cpe_mesh_cols : 0));
    }
    std::vector<std::vector<int>> tiles{{}};
    for (const std::vector<int> &opts : sizes) {
        std::vector<std::vector<int>> next;
        for (const auto &t : tiles) {
            for (int s : opts) {
                std::vector<int> u = t;
                u.push_back(s);
                next.push_back(u);
            }
        }
        tiles.swap(next);
    }
    std::vector<int> chunks{0};
    if (info.chunk_rvar >= 0)
        chunks = divisors(info.reduction);
    std::vector<Plan> plans;
    const bool producers = !info.producers.empty();
    // A mesh plan whose zero-padded window is passed along the mesh rows, also with the
    // window's rows placed by the fetching CPE's requests (Plan::place_rows), where its box
    // rows are whole source rows (the tile as wide as the map): per row a request on one CPE
    // of the mesh row, or the spread on every CPE (ResNet's 64 -> 64 3x3 on 56x56: 0.470 ->
    // 0.436 ms on the emulator; on a 7x7 map the requests of 28 bytes cost more). (Not with
    // the whole core group's sharing from CPE 0: its 64 rows' requests on one CPE, a 32 -> 64
    // 3x3 on 14x14 0.076 -> 0.086 ms, and the cost model 9% under the emulator there; nor
    // where every CPE fetches its own window: its rows in 256-byte lines from 64 engines,
    // SqueezeNet's 16 -> 64 3x3 on 55x55 0.175 -> 0.203 ms.)
    auto push_rows_placed = [&](const Plan &p) {
        if (producers && !p.inline_producers && !p.tile.empty() && !info.out_extents.empty() &&
            p.tile[0] >= info.out_extents[0]) {
            Plan placed = p;
            placed.place_rows = true;
            plans.push_back(placed);
        }
    };
    for (const auto &t : tiles) {
        for (int c : chunks) {
            for (int inl = 0; inl <= (producers ? 1 : 0); inl++) {
                Plan p;
                p.tile = t;
                p.lanes = lanes;
                p.chunk = c == int(info.reduction) ? 0 : c;
                p.inline_producers = inl;
                std::vector<Plan> variants;
                variants.push_back(p); // scalar
                // A matrix's vectors along x only in tiles of whole vectors that divide it (or
                // one tile): the loop partitions of a shifted or rounded-up edge tile along x
                // differ in structure, and the lowering cannot merge them
                // (MergeBlockPartitions.h).
                const bool x_tiles_fit = info.out_extents.size() != 2 ||
                                         t[0] >= info.out_extents[0] ||
                                         (info.out_extents[0] % t[0] == 0 && t[0] % lanes == 0);
                if (info.vector_pure && !inl && x_tiles_fit) {
                    // Register blocks of b vectors x l points along the block dimension: at
                    // most 16 accumulators (expert kernels' 4x4, SW26010.md); l must divide
                    // the tile there (the block must not compute past it).
                    const int bd = info.block_dim;
                    const int64_t along =
                        bd >= 0 ? std::min<int64_t>(t[bd], info.out_extents[bd]) : 1;
                    // 1, 2 or 4 vectors, and a block as wide as a narrow tile row (3, 5, 6, 7
                    // or 8 vectors: on floatv4 a row of 27 is 7 vectors, 28 lanes, where blocks
                    // of 2 or 4 vectors round it up to 32).
                    // (An element-wise main stage, without an update: one vector at a time.)
                    std::vector<int> widths{1};
                    const int row =
                        int((std::min<int64_t>(t[0], info.out_extents[0]) + lanes - 1) / lanes);
                    if (info.main_update >= 0) {
                        widths = {1, 2, 4};
                        if (row > 2 && row <= 8 && row != 4)
                            widths.push_back(row);
                        // A wide row split into exact blocks of 3, 5, 6, 7 or 8 vectors (a
                        // 14x14 map seen as one row of 196 is 49 vectors: blocks of 7).
                        for (int b = 8; b >= 3 && row > 8; b--) {
                            if (b != 4 && row % b == 0) {
                                widths.push_back(b);
                                break;
                            }
                        }
                    }
                    for (int b : widths) {
                        // Per b: no second dimension, or the largest l that divides the tile
                        // (smaller blocks lose to it on both pipelines; not searched, for speed),
                        // any divisor (a tile of 6 or 12 channels takes blocks of 3 or 6 lines)
                        // that the loads allow (PipelineInfo::block_lines_allowed).
                        int lmax = 1;
                        for (int l = 16 / b; l >= 2 && lmax == 1; l--) {
                            if (along % l == 0 && (info.block_lines_allowed >> l & 1))
                                lmax = l;
                        }
                        std::vector<int> lines{1};
                        if (lmax > 1 && info.main_update >= 0)
                            lines.push_back(lmax);
                        for (int l : lines) {
                            // Four vectors only where they round the width up no further than
                            // two do: tiles wider than two vectors (on floatv4 a tile 9-15 wide
                            // is four vectors either way).
                            if (b == 4 && t[0] <= 2 * lanes)
                                continue;
                            Plan v = p;
                            v.vector = Plan::Vector::Pure;
                            v.block = b;
                            v.block_lines = l;
                            // Rounding the width up must stay inside what is defined.
                            if (!info.round_up_safe && t[0] % (lanes * b) != 0)
                                continue;
                            v.unroll_taps = info.taps > 1 && info.taps <= 25;
                            // With one reduction point per chunk (a depthwise conv: one input
                            // channel per group) and every tap unrolled, no reduction loop is
                            // left to keep the accumulators in registers over: each tap loads
                            // and stores them. The taps also as loops (the taps along x still
                            // unrolled over phase planes), the accumulators promoted over them.
                            const bool rolled_too =
                                v.unroll_taps && info.chunk_rvar < 0 && info.reduction == 1;
                            for (const bool unroll : {true, false}) {
                                if (!unroll && !rolled_too)
                                    continue;
                                Plan u = v;
                                u.unroll_taps = v.unroll_taps && unroll;
                                variants.push_back(u);
                                // Gathered vectors (a stride > 1): also with the windows split
                                // into phases, where they are unit-stride.
                                if (info.loads_gather > 0 && phase_shuffles) {
                                    u.phases = true;
                                    variants.push_back(u);
                                }
                            }
                        }
                    }
                }
                if (info.vector_rvar && (c == 0 ? info.reduction : c) % lanes == 0) {
                    // Register blocks of b x l points over the first two pure dimensions
                    // (dividing the tile), at most 16 partial-sum vectors; only with tiles
                    // that divide the output (Halide's shifted edge tiles and the block's
                    // split make loop nests the Sunway lowering rejects), except along a
                    // matrix's rows (a dense layer's 197 tokens: the lowering merges the loop
                    // partitions of those edge tiles, MergeBlockPartitions.h; those along x,
                    // or of a convolution's edge tiles, differ in structure).
                    const bool divides_x = info.out_extents[0] % t[0] == 0;
                    const bool whole = (info.out_extents.size() == 2 && divides_x) ||
                                       (info.out_extents.size() > 2 && divides_x &&
                                        info.out_extents[1] % t[1] == 0);
                    const bool two = whole && info.rloads_first + info.rloads_second > 0;
                    const int64_t e0 = std::min<int64_t>(t[0], info.out_extents[0]);
                    const int64_t e1 = two ? std::min<int64_t>(t[1], info.out_extents[1]) : 1;
                    for (int b : {1, 2, 4}) {
                        for (int l : {1, 2, 4}) {
                            if (e0 % b || e1 % l || (!two && b * l > 1))
                                continue;
                            Plan v = p;
                            v.vector = Plan::Vector::Reduction;
                            v.block = b;
                            v.block_lines = l;
                            variants.push_back(v);
                        }
                    }
                }
                for (const Plan &v : variants) {
                    std::vector<Plan> buffered{v};
                    if (v.chunk > 0) {
                        buffered.push_back(v);
                        buffered.back().double_buffer = true;
                    }
                    for (const Plan &d : buffered) {
                        plans.push_back(d);
                        // Tiles in turn on each CPE, the next one's stagings prefetched: the
                        // two fewest per CPE that divide the tiles and fill at most 64 CPEs
                        // (with at least 32 busy). Only where no reduction may be chunked (a
                        // pooling, a depthwise conv, an element-wise layer) or it is short (a
                        // pointwise conv over 16 to 32 channels, MobileNetV2's expansions):
                        // elsewhere the chunks are double buffered instead, and these plans
                        // would add a quarter to the search (VGG-19: 9.0 -> 11.2 s).
                        // Not where a staging is read at an index loaded from another
                        // (a gather's table row at its index): DoubleBuffer would prefetch the
                        // row before the index it is read at (layers_test gather_embedding,
                        // once its puts in two slots made these plans the fastest).
                        if (d.chunk == 0 && (info.chunk_rvar < 0 || info.reduction <= 32) &&
                            info.indirect_inputs.empty()) {
                            const TileCounts n = tile_counts(info, d);
                            const int64_t tiles = n.serial * n.spread;
                            int taken = 0;
                            for (int64_t serial = 2; serial <= 16 && taken < 2; serial++) {
                                if (tiles % serial || tiles / serial > m.cpes_per_core_group ||
                                    2 * (tiles / serial) < m.cpes_per_core_group) {
                                    continue;
                                }
                                Plan st = d;
                                st.serial_tiles = int(serial);
                                plans.push_back(st);
                                taken++;
                            }
                        }
                        // Sharing modes, when some input's staged box is the same on every CPE:
                        // with the tiles spread over the CPEs, or with each CPE running its
                        // pixel tiles in turn (then the CPEs work on the same pixels at once).
                        for (const bool serial : {false, true}) {
                            Plan sh = d;
                            sh.share = Plan::Share::Dma;
                            sh.serial_pixels = serial;
                            if (serial && !serial_pixels_useful(info, sh, m))
                                continue;
                            if (shared_inputs(info, sh).empty())
                                continue;
                            if (broadcast_dma)
                                plans.push_back(sh);
                            // (On the Pro, the whole mesh's sharing from CPE 0 is not searched: its
                            // plans fail the lowering often on small shapes, which ends the search
                            // before plans that pass, and the mesh's rows and columns carry it.)
                            if (m.regcomm.available) {
                                sh.share = Plan::Share::RegComm;
                                plans.push_back(sh);
                            }
                        }
                        // The mesh: the window along the rows, the weights down the columns,
                        // or only one of the two (the other fetched by every CPE: small
                        // weights by 64 engines rather than 8). The stagings along the rows
                        // passed on by register communication or broadcast to each row by
                        // DMA; a matrix's columns over the mesh columns, or its rows (its
                        // columns down the mesh rows: a dense layer's weights, the larger
                        // operand, then go to each row by DMA).
                        // By DMA to each row only for a matrix's stagings: on convolutions'
                        // windows (SqueezeNet's squeeze convs) the cost model priced it 24-28%
                        // below the emulator.
                        const bool matrix = info.out_extents.size() == 2;
                        const bool on_mesh = ldm_sharing && d.serial_tiles <= 1;
                        for (const int dim : {-1, 1}) {
                            for (const bool row_dma : {false, true}) {
                                if (!on_mesh || ((dim == 1 || row_dma) && !matrix) ||
                                    (row_dma && !broadcast_dma))
                                    continue;
                                Plan mesh = d;
                                mesh.share = Plan::Share::Mesh;
                                mesh.mesh_dim = mesh_column_dim(info, d.tile, m.cpe_mesh_cols, dim);
                                mesh.mesh_width = m.cpe_mesh_cols;
                                mesh.mesh_row_dma = row_dma;
                                const size_t both =
                                    mesh.mesh_dim >= 0 ? shared_inputs(info, mesh).size() : 0;
                                Plan rows_only = mesh;
                                rows_only.mesh_columns = false;
                                if (row_dma &&
                                    (both == 0 || shared_inputs(info, rows_only).empty()))
                                    continue; // nothing along the rows: the same plan
                                if (both > 0) {
                                    plans.push_back(mesh);
                                    if (!row_dma)
                                        push_rows_placed(mesh);
                                }
                                // One kind alone only where the plan has stagings of both
                                // (elsewhere it is the same plan); by DMA only with the rows'.
                                for (const bool rows : {true, false}) {
                                    Plan one = mesh;
                                    one.mesh_rows = rows, one.mesh_columns = !rows;
                                    const size_t n = both > 0 ? shared_inputs(info, one).size() : 0;
                                    if (n > 0 && n < both && (rows || !row_dma)) {
                                        plans.push_back(one);
                                        if (rows && !row_dma)
                                            push_rows_placed(one);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    return plans;
}

const sw::Machine &machine_for(const MachineParams &params) {
    for (const sw::Machine *m : {&sw::sw26010(), &sw::sw26010_pro()}) {
        if (params.parallelism == m->cpes_per_core_group &&
            int64_t(params.last_level_cache_size) == m->ldm_bytes) {
            return *m;
        }
    }
    throw sw::UserError(
        "the Sunway autoscheduler knows no machine with " + std::to_string(params.parallelism) +
        " CPEs and " + std::to_string(params.last_level_cache_size) +
        " bytes of LDM (machine_params: 64,65536,1 for sw26010, 64,262144,1 for sw26010-pro)");
}

namespace {

/** The search over \p plans: each costed, the best that fit lowered until enough pass
 * (Options::pick), the chosen one applied to \p p. */
Result search(const Pipeline &p, const PipelineInfo &info, const std::vector<Plan> &plans,
              const sw::Machine &m, const Options &o, const std::string &function_name,
              std::chrono::steady_clock::time_point start) {
    Result r;
    std::vector<Candidate> fit;
    Candidate smallest;
    smallest.estimate.ldm_bytes = -1;
    for (const Plan &plan : plans) {
        Estimate e = estimate(info, plan, m);
        r.considered++;
        if (e.fits) {
            fit.push_back({plan, e});
        } else if (smallest.estimate.ldm_bytes < 0 || e.ldm_bytes < smallest.estimate.ldm_bytes) {
            smallest = {plan, e};
        }
    }
    if (fit.empty()) {
        throw sw::UserError("no schedule of " + function_name + " fits the LDM of " + m.name +
                            " (" + std::to_string(m.ldm_data_budget()) +
                            " bytes per CPE for data); the smallest needs " +
                            std::to_string(smallest.estimate.ldm_bytes) +
                            " bytes: " + estimate(info, smallest.plan, m, true).ldm_detail);
    }
    // Best first; ties broken by the plan's position (deterministic).
    std::stable_sort(fit.begin(), fit.end(), [](const Candidate &a, const Candidate &b) {
        return a.estimate.seconds < b.estimate.seconds;
    });

    // Lower the best plans on a copy of the pipeline until enough pass the Sunway lowering.
    std::vector<Function> outputs;
    for (const Func &f : p.outputs())
        outputs.push_back(f.function());
    std::map<std::string, Function> env;
    for (const Function &f : outputs) {
        for (const auto &kv : Internal::find_transitive_calls(f))
            env.insert(kv);
    }
    const std::vector<Argument> args = Pipeline(p).infer_arguments();
    const size_t wanted = size_t(std::max(o.pick, 0)) + 1;
    std::string last_error;
    // Give up after 12 plans fail: when the lowering rejects every plan of a pipeline,
    // trying them all would cost one lowering per plan.
    // A plan whose lowering still reads or writes main memory directly from the CPEs (a copy
    // InjectDma could not turn into DMA) is kept only as a fallback: such accesses are slow on
    // the real machine and the cost model does not price them.
    // (At most 64 such plans are lowered: InjectDma may reject a whole family of similar tiles.)
    // On the Pro, plans that share stagings by RMA fail the lowering more often (BroadcastDma's
    // refusals: a region that depends on the block, a branch some CPEs skip); their failures,
    // and those of tiles in turn (below), have a budget of their own, so that they do not end
    // the search before the plain plans (on SW26010 every other failure counts against the 12,
    // as the search was measured).
    int failures = 0, own_budget_failures = 0;
    std::vector<Candidate> direct;
    for (size_t i = 0; i < fit.size() && r.ranked.size() < wanted && failures < 12 &&
                       own_budget_failures < 64 && direct.size() < 64;
         i++) {
        // The copy carries the plan's schedule and Sunway directives; the pipeline stays
        // as it was.
        auto copy = Internal::deep_copy(outputs, env);
        try {
            r.lowered++;
            // Analyse the copy (its own Functions) and schedule it.
            std::vector<Func> outs;
            for (const Function &f : copy.first)
                outs.push_back(Func(f));
            const Pipeline trial(outs);
            const PipelineInfo ci = analyze(trial);
            std::map<std::string, Function> cenv;
            for (const Function &f : copy.first) {
                for (const auto &kv : Internal::find_transitive_calls(f))
                    cenv.insert(kv);
            }
            const AppliedPlan applied = apply_plan(ci, fit[i].plan, cenv);
            const sw::SwFunction lowered = sw::lower_pipeline_to_sunway(
                trial, args, function_name + "_trial", m, applied.directives);
            bool direct_access = false;
            for (const sw::CpeKernel &k : lowered.kernels)
                direct_access |= !k.direct_accesses.empty();
            if (direct_access) {
                direct.push_back(fit[i]);
                last_error = "its lowering accesses main memory directly from the CPEs";
            } else {
                r.ranked.push_back(fit[i]);
            }
        } catch (const std::exception &e) { // sw::UserError, Halide::Error
            last_error = std::string(e.what()) + "\n(the plan: " + fit[i].plan.describe() + ")";
            // Tiles in turn fail where Halide bounds a staging inside the fused loop of the
            // tiles loosely (an edge pad's clamped window: its whole row, twice), which the cost
            // model does not see; since their puts go into two slots they rank high (an edge pad
            // of 9000-wide rows: its 12 best plans).
            const bool rma_sharing = !m.regcomm.available && fit[i].plan.share != Plan::Share::None;
            const bool own_budget = rma_sharing || fit[i].plan.serial_tiles > 1;
            (own_budget ? own_budget_failures : failures)++;
        }
    }
    if (r.ranked.empty())
        r.ranked = direct;
    if (r.ranked.empty()) {
        throw sw::UserError("none of the " + std::to_string(r.lowered) + " best schedules of " +
                            function_name +
                            " passed the Sunway lowering; the last error: " + last_error);
    }
    r.passed = int(r.ranked.size());
    const size_t pick = std::min(size_t(std::max(o.pick, 0)), r.ranked.size() - 1);
    r.chosen = r.ranked[pick];
    for (size_t i = 0; i < fit.size() && r.ranked.size() < size_t(o.keep); i++) {
        bool have = false;
        for (const Candidate &c : r.ranked)
            have |= c.plan.describe() == fit[i].plan.describe();
        if (!have)
            r.ranked.push_back(fit[i]);
    }

    const std::string body = apply_plan(info, r.chosen.plan, env).source;
    const Estimate &e = r.chosen.estimate;
    char head[512];
    std::snprintf(head, sizeof head,
                  "    // Sunway autoscheduler, %s: %s\n"
                  "    // predicted %.4g ms, %.1f GFLOPS, LDM %lld of %lld bytes per CPE, DMA get "
                  "%lld B, put %lld B\n"
                  "    // (%lld plans costed, %d lowered)\n",
                  m.name.c_str(), r.chosen.plan.describe().c_str(), e.seconds * 1e3, e.gflops,
                  (long long)e.ldm_bytes, (long long)m.ldm_data_budget(),
                  (long long)e.dma_get_bytes, (long long)e.dma_put_bytes, (long long)r.considered,
                  r.lowered);
    r.schedule_source = std::string(head) + body;
    r.info = info;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

} // namespace

Result autoschedule(const Pipeline &p, const sw::Machine &m, const Options &o,
                    const std::string &function_name) {
    const auto start = std::chrono::steady_clock::now();
    const PipelineInfo info = analyze(p);
    // A copy pipeline (concat): each update planned as the copy it is (CopyUpdates.h).
    const std::vector<CopyUpdate> copies = copy_updates(p, info.out_extents);
    if (!copies.empty()) {
        return autoschedule_copies(p, info, copies, m, function_name);
    }
    const std::vector<Plan> plans = enumerate_plans(info, m);
    if (!o.plan.empty() && o.pick == 0) {
        // The plan an earlier search chose: costed and checked alone. The search's trial
        // lowerings work on copies, so a plan that fails leaves the pipeline as it was.
        for (const Plan &plan : plans) {
            if (plan.describe() != o.plan)
                continue;
            try {
                return search(p, info, {plan}, m, o, function_name, start);
            } catch (const std::exception &) { // sw::UserError, Halide::Error
                break;                         // the whole search below
            }
        }
    }
    return search(p, info, plans, m, o, function_name, start);
}

} // namespace sw_auto
