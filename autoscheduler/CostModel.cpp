/** \file
 * The autoscheduler's closed-form timing model.
 */
#include "autoscheduler/CostModel.h"

#include "target_sw/SplitPhases.h"
#include "target_sw/WorkCount.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace sw_auto {

namespace {

/** Integer work of one iteration of a vectorised inner loop (addresses, counter), from the
 * generated conv loops' counters. */
constexpr double kVectorLoopIntOps = 6;
/** Integer work of one iteration of the loop over the reduction's vectors of an rfactor plan
 * (addresses of its loads, counter), from the generated dense loops' counters. */
constexpr double kRfactorLoopIntOps = 8;

/** Cycles of one straight-line region, by the rule the generated code's counters use
 * (WorkCount.h, region_cycles: issue rate, floating-point dependency chains, slow cycles). */
double region(const sw::Machine &m, double p0, double p1, double either, double chain = 0, double slow = 0) {
    sw::Work w;
    w.p0 = std::llround(p0), w.p1 = std::llround(p1), w.either = std::llround(either);
    w.chain = std::llround(chain), w.slow_cycles = std::llround(slow);
    return double(sw::region_cycles(w, m));
}

int64_t prod(const std::vector<int64_t> &v) {
    int64_t p = 1;
    for (int64_t x : v) p *= x;
    return p;
}

/** The DMA requests InjectDma makes for a box of a dense buffer: the contiguous dimensions
 * merged, the next one as the blocks of a strided request, one request per outer point. */
struct Transfer {
    double requests = 0, blocks = 0, bytes = 0, line_bytes = 0;
};

Transfer transfer(const std::vector<int64_t> &window, const std::vector<int64_t> &source, const sw::Machine &m,
                  bool packed_rows = true, bool guarded = false) {
    Transfer t;
    // A guarded copy moves only the in-bounds part of its (zero-padded) window, never more than
    // the source along any dimension.
    std::vector<int64_t> box = window;
    if (guarded) {
        for (size_t d = 0; d < box.size() && d < source.size(); d++) box[d] = std::min(box[d], source[d]);
    }
    if (prod(box) == 0) return t;
    size_t k = 0;
    int64_t run = box[0];
    // A guarded copy makes one request per point of its dimensions from the third on: rows
    // as the blocks of a strided request, or one block when they are whole source rows.
    const size_t merge_limit = guarded ? 1 : box.size();
    while (k + 1 < box.size() && k < merge_limit && box[k] >= source[k] && packed_rows) run *= box[++k];
    double blocks = 1, requests = 1;
    if (!packed_rows) {
        for (size_t d = 1; d < box.size(); d++) requests *= box[d];
    } else if (guarded) {
        if (k == 0 && box.size() > 1) blocks = box[1];
        for (size_t d = 2; d < box.size(); d++) requests *= box[d];
    } else {
        if (k + 1 < box.size()) blocks = box[k + 1];
        for (size_t d = k + 2; d < box.size(); d++) requests *= box[d];
    }
    const double block_bytes = 4.0 * run;
    // Lines a block touches. The tensors start on a line (as sw_net allocates them and athread
    // code aligns its arrays), so a block starts at a multiple of g bytes within its line: g
    // divides the line, the source's strides and the tile's steps along the merged dimensions
    // (tiles start at multiples of their size; a whole dimension starts at 0). A block of b
    // bytes starting at offset o touches ceil((o + b) / line) lines; averaged over the offsets
    // that are multiples of g.
    const int64_t line = m.dma_line_bytes;
    int64_t g = line, stride = 4;
    for (size_t d = 0; d < box.size(); d++) {
        if (d > k) {
            g = std::gcd(g, stride);
        } else if (d >= source.size() || box[d] < source[d]) {
            g = std::gcd(g, stride * box[d]);  // a partial dimension: tiles start at multiples of box[d]
        }
        stride *= d < source.size() ? source[d] : 1;
    }
    g = std::max<int64_t>(g, 1);
    double lines = 0;
    for (int64_t o = 0; o < line; o += g) lines += double((o + int64_t(block_bytes) + line - 1) / line);
    lines /= double(line / g);
    t.requests = requests;
    t.blocks = requests * blocks;
    t.bytes = requests * blocks * block_bytes;
    t.line_bytes = t.blocks * lines * m.dma_line_bytes;
    return t;
}

void add(Transfer &a, const Transfer &b) {
    a.requests += b.requests, a.blocks += b.blocks, a.bytes += b.bytes, a.line_bytes += b.line_bytes;
}

bool contains(const std::vector<std::string> &v, const std::string &s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

/** Mean P1 instructions of a unit-stride floatv4 load of the window a vectorised main stage
 * reads along x (AlignVectorAccesses: one when provably aligned, else
 * Machine::unaligned_vector_access_p1). The window's rows lie in the LDM with a pitch of its
 * extent along x; when that pitch is a whole number of vectors, every row and channel starts
 * on a vector, and a vector of the block at tap r (the innermost reduction variable, which
 * steps the index by one) starts at r modulo 4 from the window's start: the taps r = 0, 4, 8,
 * ... are aligned. The window is the widest chunk-staged (else tile-staged) region along x. */
template<typename Extents>
double unit_stride_load_p1(const PipelineInfo &info, Extents &region_extents, const sw::Machine &m) {
    const double U = double(m.unaligned_vector_access_p1);
    int64_t pitch = 0;
    const std::map<std::string, SymBox> &regions = info.chunk_region.empty() ? info.tile_region : info.chunk_region;
    for (const auto &kv : regions) {
        if (kv.first == info.main || kv.second.empty()) continue;
        pitch = std::max(pitch, region_extents(kv.second)[0]);
    }
    if (pitch <= 0 || pitch % 4 != 0 || info.rvar_extents.empty()) return U;
    const int64_t taps = info.rvar_extents[0], aligned = (taps + 3) / 4;
    return U - double(aligned) / double(taps) * (U - 1);
}

/** Mean P1 instructions of a floatv4 load from the phase planes of a window split by
 * sw::split_phases (SplitPhases.h): unit-stride, aligned where the tap's offset within its
 * plane row is a multiple of 4 (the plane rows are whole vectors; the x taps are unrolled
 * and step through the planes: tap r reads plane r mod S at offset r / S). */
double phase_load_p1(const PipelineInfo &info, const sw::Machine &m) {
    const double U = double(m.unaligned_vector_access_p1);
    if (info.rvar_extents.empty() || info.chunk_rvar == 0 || info.gather_stride < 2) return U;
    const int64_t taps = info.rvar_extents[0];
    int64_t aligned = 0;
    for (int64_t r = 0; r < taps; r++) aligned += (r / info.gather_stride) % 4 == 0;
    return U - double(aligned) / double(taps) * (U - 1);
}

/** The phase planes of a staged window of extents \p box (SplitPhases.h): their LDM bytes and
 * the cycles of the copy into them (per row of the window, per group of S elements S loads
 * and S stores in a loop). */
std::pair<int64_t, double> phase_planes(const std::vector<int64_t> &box, int S, const sw::Machine &m) {
    if (box.empty() || box[0] <= 0 || S < 2) return {0, 0.0};
    int64_t rows = 1;
    for (size_t d = 1; d < box.size(); d++) rows *= box[d];
    const int64_t groups = (box[0] + S - 1) / S;
    const int64_t bytes = 4 * S * sw::phase_planes(box[0], rows, S).plane_elements;
    const double cycles = double(rows) * (double(groups) * region(m, 0, 2.0 * S, 1) + region(m, 0, 0, 1));
    return {bytes, cycles};
}

/** Cycles per chunk of the fill of a zero-padded window (InjectDma's guarded copy: the
 * in-bounds box comes by DMA straight to its place, only the elements outside it are
 * filled), averaged over the tiles. Along each dimension the tiles' windows are in bounds
 * by a share that depends only on the tile's position along it, so the mean in-bounds part
 * is the window times the product of the per-dimension means. Each filled element is a
 * store in a loop (WorkCount: 2 cycles); each window row of a tile with any padding costs
 * its bounds test and the heads of its fill loops; a box whose rows are whole source rows
 * narrower than the LDM rows comes compactly and each of its elements is moved once (a load
 * and a store in a loop: 4 cycles). */
double padding_fill_cycles(const PipelineInfo &info, const std::string &producer, const Plan &plan, const Bindings &b,
                           const sw::Machine &m) {
    const SymBox &window = info.chunk_region.at(producer);
    const SymBox *in = nullptr;
    int64_t source_width = 0;
    for (const std::string &i : info.producer_inputs) {
        auto it = info.chunk_region.find(i);
        if (it != info.chunk_region.end() && it->second.size() == window.size()) {
            in = &it->second;
            const Stage &is = info.stages[info.by_name.at(i)];
            source_width = is.source_extents.empty() ? 0 : is.source_extents[0];
        }
    }
    const std::vector<int64_t> box = extents(window, b);
    if (!in || prod(box) == 0) return 0;
    // Mean in-bounds share; share of tiles without padding; share of tiles whose box rows are
    // whole source rows shorter than the LDM rows (they come compactly and are spread).
    double inside = 1, whole = 1, spread = 0;
    for (size_t d = 0; d < box.size() && d < info.out_extents.size(); d++) {
        const int64_t e = info.out_extents[d], t = std::min<int64_t>(plan.tile[d], e);
        // The means along d depend only on the tile size there, the chunk and the rounded
        // width: memoised.
        const PipelineInfo::FillKey key{&m, &window, int(d), t, b.at(chunk_size_var), b.at(rounded_width_var)};
        auto it = info.fill_cache->find(key);
        if (it == info.fill_cache->end()) {
            Bindings bd = b;
            std::array<double, 3> mean{0, 0, 0};  // in-bounds share, unpadded tiles, spread tiles
            double n = 0;
            for (int64_t o = 0; o < e; o += t, n++) {
                bd[tile_origin_var(int(d))] = std::min(o, e - t);  // the last tile shifted inwards
                const int64_t w = extents(window, bd)[d], i = extents(*in, bd)[d];
                mean[0] += w ? double(std::min(i, w)) / double(w) : 1.0;
                mean[1] += i >= w ? 1 : 0;
                mean[2] += i >= source_width && w > i ? 1 : 0;
            }
            for (double &v : mean) v /= n;
            it = info.fill_cache->emplace(key, mean).first;
        }
        inside *= it->second[0];
        whole *= it->second[1];
        if (d == 0) spread = it->second[2];
    }
    const double points = double(prod(box)), rows = points / double(box[0]);
    return points * (1 - inside) * region(m, 0, 2, 1) + rows * (1 - whole) * region(m, 0, 4, 4) +
           points * inside * spread * region(m, 0, 3, 4);
}

}  // namespace

Estimate estimate(const PipelineInfo &info, const Plan &plan, const sw::Machine &m, bool ldm_detail) {
    Estimate est;
    const sw::DmaTiming &dt = m.dma_timing;
    const int lanes = 4;
    // Bindings of a tile near the middle (no clamping shrinks it), and of a chunk.
    Bindings b;
    est.tiles = 1;
    for (size_t d = 0; d < info.out_extents.size(); d++) {
        const int64_t e = info.out_extents[d], t = std::min<int64_t>(plan.tile[d], e);
        b[tile_size_var(int(d))] = t;
        b[tile_origin_var(int(d))] = std::max<int64_t>(0, (e - t) / 2 / t * t);
        est.tiles *= (e + t - 1) / t;
    }
    const bool chunked = info.chunk_rvar >= 0 && plan.chunk > 0 && plan.chunk < info.reduction;
    const int64_t chunk = chunked ? plan.chunk : info.reduction;
    const int64_t chunks = chunked ? (info.reduction + chunk - 1) / chunk : 1;
    b[chunk_origin_var] = 0;
    b[chunk_size_var] = chunk;
    const int64_t width = info.main_width.defined() ? evaluate(info.main_width, b) : 1;
    const int64_t vec = plan.vector == Plan::Vector::Pure ? lanes * plan.block : 1;
    const int64_t rounded = (width + vec - 1) / vec * vec;
    b[rounded_width_var] = rounded;
    const bool db = plan.double_buffer && chunks > 1;
    const bool phases = plan.phases && plan.vector == Plan::Vector::Pure && info.gather_stride > 1;
    // Regions under these bindings, memoised over the plans that share them.
    auto region_extents = [&](const SymBox &box) -> const std::vector<int64_t> & {
        PipelineInfo::ExtentsKey key;
        key.box = &box, key.chunk = chunk, key.rounded = rounded;
        for (size_t d = 0; d < plan.tile.size() && d < key.tile.size(); d++) key.tile[d] = plan.tile[d];
        auto it = info.extents_cache->find(key);
        if (it == info.extents_cache->end()) it = info.extents_cache->emplace(key, extents(box, b)).first;
        return it->second;
    };

    // LDM buffers, aligned as PlaceLdmBuffers does.
    auto align = [&](int64_t bytes) { return (bytes + m.ldm_alignment - 1) / m.ldm_alignment * m.ldm_alignment; };
    auto buffer = [&](const std::string &name, int64_t bytes) {
        est.ldm_bytes += align(bytes);
        if (ldm_detail) est.ldm_detail += (est.ldm_detail.empty() ? "" : ", ") + name + ": " + std::to_string(align(bytes)) + " B";
    };
    Transfer tile_get, chunk_get, put;
    // Inputs read once by CPE 0 and shared with every CPE (Plan::share), per tile and per chunk.
    const std::vector<std::string> shared = shared_inputs(info, plan);
    Transfer tile_shared, chunk_shared;
    double tile_compute = 0, chunk_compute = 0;
    // A window read by gathered vectors, split into phases: its planes and their copy.
    auto split_window = [&](const std::string &stage, const std::string &name, const std::vector<int64_t> &box,
                            double &compute) {
        if (!phases || !contains(info.gathered, stage)) return;
        const auto [bytes, cycles] = phase_planes(box, info.gather_stride, m);
        buffer(name, bytes);
        compute += cycles;
    };
    for (const Stage &s : info.stages) {
        if (s.is_output) continue;
        const bool producer = contains(info.producers, s.name), chunk_level = contains(info.chunk_staged, s.name) ||
                                                                       (plan.inline_producers && contains(info.producer_inputs, s.name));
        if ((producer && plan.inline_producers) || contains(info.wrappers, s.name)) continue;
        if (s.is_input) {
            if (contains(info.producer_inputs, s.name) && !plan.inline_producers) {
                // Read by a staged producer: the producer's guarded copy moves its in-bounds box.
                const std::vector<int64_t> &box = region_extents(info.chunk_region.at(s.name));
                add(chunk_get, transfer(box, s.source_extents, m, true, true));
                continue;
            }
            const bool sh = contains(shared, s.name);
            if (!s.callers.empty() && chunk_level && info.chunk_region.count(s.name)) {
                const std::vector<int64_t> &box = region_extents(info.chunk_region.at(s.name));
                buffer(s.name + ".in()", 4 * prod(box) * (db && !sh ? 2 : 1));
                add(sh ? chunk_shared : chunk_get, transfer(box, s.source_extents, m));
                split_window(s.name, s.name + ".in() phases", box, chunk_compute);
            } else if (info.tile_region.count(s.name)) {
                const std::vector<int64_t> &box = region_extents(info.tile_region.at(s.name));
                buffer(s.name + ".in()", 4 * prod(box));
                add(sh ? tile_shared : tile_get, transfer(box, s.source_extents, m));
                split_window(s.name, s.name + ".in() phases", box, tile_compute);
            }
            continue;
        }
        if (!info.tile_region.count(s.name)) continue;
        const std::vector<OpCount> &ops = info.ops.at(s.name);
        if (producer) {
            const std::vector<int64_t> &box = region_extents(info.chunk_region.at(s.name));
            buffer(s.name, 4 * prod(box) * (db ? 2 : 1));
            chunk_compute += padding_fill_cycles(info, s.name, plan, b, m);
            split_window(s.name, s.name + " phases", box, chunk_compute);
            continue;
        }
        const std::vector<int64_t> &box = region_extents(info.tile_region.at(s.name));
        const int64_t points = prod(box);
        buffer(s.name, 4 * points);
        for (size_t k = 0; k < ops.size(); k++) {
            const OpCount &o = ops[k];
            const int64_t r = o.reduction_points;
            const bool is_main = s.name == info.main && int(k) == info.main_update + 1;
            // Vector loads and stores are unaligned (simd_loadu / simd_storeu) unless proved
            // otherwise; the values splatted are staged in the LDM, so each splat is one
            // simd_loade (WorkCount.h).
            const double U = double(m.unaligned_vector_access_p1), E = 1;
            if (!is_main) {
                // A scalar loop over the points (the pure definition of a vectorised main stage
                // on whole vectors: its loads of values invariant along x are splats), one store
                // each, loads of its inputs and of itself.
                const bool whole_vectors = s.name == info.main && k == 0 && vec > 1;
                const double p1 = whole_vectors ? o.loads * E + U + 1 : o.loads + 2;
                const double per = region(m, o.float_ops, p1, o.int_ops + 2, o.chain, o.slow_cycles);
                const double n = double(points) * r / (whole_vectors ? lanes : 1);
                tile_compute += n * per;
                continue;
            }
            // The main update: per chunk, over the tile and the chunk's reduction points.
            const double red = double(chunk) * info.taps;
            const double self = 1;  // the accumulator: a register (PromoteAccumulators)
            const double loads = std::max(0.0, o.loads - self);
            if (plan.vector == Plan::Vector::Pure) {
                const double l = plan.block_lines;
                const double blocks = double(points) / (lanes * plan.block * l);
                // Per reduction point: the block's FMAs, its vector loads (simd_loadu; each
                // serves every line of the block, ShareOperands), and the loads of values
                // invariant along x, each splatted once for the block, or once per line of the
                // block when they vary along its second dimension.
                const double p0 = o.float_ops * plan.block * l;
                // A gathered vector: a load per lane and simd_set_floatv4; from phase planes, a
                // unit-stride load.
                const double G = phases ? phase_load_p1(info, m) : lanes + double(m.splat_p1);
                const double A = unit_stride_load_p1(info, region_extents, m);
                const double p1 = (info.loads_varying - info.loads_gather) * plan.block * A +
                                  info.loads_gather * plan.block * G + info.loads_invariant_block * l * E +
                                  (info.loads_invariant - info.loads_invariant_block) * E;
                // The accumulators stay in registers over an inner reduction loop
                // (PromoteAccumulators); with every tap unrolled and one point per chunk there
                // is none, and each tap loads and stores them. Each accumulator's updates form
                // one dependency chain.
                const bool promoted = !(plan.unroll_taps && chunk == 1);
                const double acc = promoted ? 0 : 2 * plan.block * l * U;
                if (promoted) {
                    // Promoted, the block's accumulators are loaded before each chunk's
                    // reduction and stored after it (one region per block and chunk); aligned
                    // where every tile's accumulator rows start on a vector: the rows are the
                    // rounded width, and the tiles along x start on multiples of the tile
                    // (none shifted inwards) that are whole vectors.
                    const int64_t e0 = info.out_extents.empty() ? 1 : info.out_extents[0];
                    const int64_t t0 = std::min<int64_t>(plan.tile[0], e0);
                    const bool aligned = e0 % t0 == 0 && (t0 % lanes == 0 || t0 == e0);
                    chunk_compute += blocks * region(m, 0, 2 * plan.block * l * (aligned ? 1.0 : U), 1);
                }
                if (plan.unroll_taps) {
                    chunk_compute += blocks * chunk *
                                     region(m, p0 * info.taps, (p1 + acc) * info.taps + 1,
                                            kVectorLoopIntOps + (promoted ? 0 : 4 * info.taps), o.chain * info.taps);
                } else if (phases && !info.rvar_extents.empty() && info.chunk_rvar != 0) {
                    // The taps along x unrolled (ApplyPlan): one loop iteration per K of them.
                    const double K = double(info.rvar_extents[0]);
                    chunk_compute += blocks * red / K * region(m, p0 * K, p1 * K + 1, kVectorLoopIntOps, o.chain * K);
                } else {
                    chunk_compute += blocks * red * region(m, p0, p1 + 1, kVectorLoopIntOps, o.chain);
                }
            } else if (plan.vector == Plan::Vector::Reduction) {
                // Per point and chunk: the loop over the reduction's vectors (its integer work
                // from the generated rfactor loops' counters) and its own set-up.
                // With a register block of b x l points, each iteration over the reduction's
                // vectors serves the whole block: its FMAs, each vector varying along one
                // dimension loaded once per row or column (aligned when the chunk is whole
                // vectors: the staged rows start on vectors).
                const double b = plan.block, l = plan.block_lines, A = chunk % lanes == 0 ? 1.0 : U;
                const double block_loads = info.rloads_first + info.rloads_second + info.rloads_both + info.rloads_neither > 0
                                               ? info.rloads_first * b + info.rloads_second * l +
                                                     info.rloads_both * b * l + info.rloads_neither
                                               : loads * b * l;
                chunk_compute += double(points) / (b * l) *
                                 (red / lanes * region(m, o.float_ops * b * l, block_loads * A + 1, kRfactorLoopIntOps, o.chain) +
                                  region(m, 0, 2, kRfactorLoopIntOps) * b * l);
                tile_compute += double(points) * (lanes + 2) * 2;  // the lanes added up at the end
            } else {
                // Per point: the accumulator loaded and stored around the reduction loops;
                // each outer reduction loop's iteration: its branch, increment and the bases
                // of the loads' addresses; innermost, each load's address is its varying part
                // plus a base hoisted out of the loop (WorkCount: one add each), and the
                // increment; the accumulator's updates are one dependency chain.
                // Loops of extent 1 are not generated; the innermost loop that is costs its
                // overhead in the tap's own region below.
                std::vector<double> loops;  // extents of the generated reduction loops, outermost first
                for (size_t k = info.rvar_extents.size(); k-- > 0;) {
                    const double e = int(k) == info.chunk_rvar ? double(chunk) : double(info.rvar_extents[k]);
                    if (e > 1) loops.push_back(e);
                }
                double per_point = region(m, 0, 3, 2 + loads), runs = 1;
                for (size_t k = 0; k + 1 < loops.size(); k++) {
                    runs *= loops[k];
                    per_point += runs * region(m, 0, 1, 1 + 2 * loads);
                }
                // Inlined producers (a zero-padded input) add their work to each tap: their
                // select continues the chain, the half of their bounds tests and clamps that
                // varies along the innermost reduction variable is integer work.
                double fo = o.float_ops, chain = o.chain, ints = loads + 1, slow = o.slow_cycles;
                if (plan.inline_producers) {
                    for (const std::string &p : info.producers) {
                        const OpCount &po = info.ops.at(p)[0];
                        fo += po.float_ops, chain += po.chain, ints += po.int_ops / 2.0, slow += po.slow_cycles;
                    }
                }
                per_point += red * region(m, fo, loads + 1, ints, chain, slow);
                chunk_compute += double(points) * per_point;
            }
        }
        if (s.name == info.main && plan.vector == Plan::Vector::Reduction) buffer(s.name + ".rfactor", 4 * lanes * points);
    }
    // An output that computes its values itself is staged in LDM too (sw::stage_output).
    if (info.output_computes) {
        int64_t points = 1;
        for (size_t d = 0; d < info.out_extents.size(); d++) points *= std::min<int64_t>(plan.tile[d], info.out_extents[d]);
        buffer(info.output + " (staged output)", 4 * points);
        // Its own loop over the tile's points: loads, its operations, the store into LDM.
        const OpCount &o = info.ops.at(info.output)[0];
        tile_compute += double(points) * region(m, o.float_ops, o.loads + 2, o.int_ops + 2, o.chain, o.slow_cycles);
    }
    // The result: the output's tile written back from the LDM.
    {
        std::vector<int64_t> box;
        for (size_t d = 0; d < info.out_extents.size(); d++) box.push_back(std::min<int64_t>(plan.tile[d], info.out_extents[d]));
        put = transfer(box, info.out_extents, m, rounded == box[0] || info.main_width.defined() == false);
    }
    est.fits = est.ldm_bytes <= m.ldm_data_budget();

    // Time of the busiest CPE.
    const double waves = double((est.tiles + m.cpes_per_core_group - 1) / m.cpes_per_core_group);
    const double active = double(std::min<int64_t>(est.tiles, m.cpes_per_core_group));
    const double lat = dt.get_latency_cycles;
    // The CPEs run in step (every tile does the same work), so their transfers overlap: each
    // moves its data at an equal share of the channel among the active CPEs.
    double cpe_time = 0, sh_tile = 0, sh_chunk = 0;
    {
        const double rate = std::min(dt.cpe_cap_bytes_per_cycle, dt.get_bytes_per_cycle / std::max(1.0, active));
        const double put_rate = std::min(dt.cpe_cap_bytes_per_cycle, dt.put_bytes_per_cycle / std::max(1.0, active));
        // A request's data moves after its own setup; the next request's setup overlaps it.
        auto pipelined = [&](const Transfer &t, double r) {
            if (t.blocks == 0) return 0.0;
            const double setup = t.blocks * (&t == &put ? dt.put_block_cycles : dt.get_block_cycles), data = t.line_bytes / r, n = std::max(1.0, t.requests);
            return std::max(setup + data / n, setup / n + data);
        };
        auto dma = [&](const Transfer &t, double r) { return t.blocks == 0 ? 0.0 : pipelined(t, r) + lat; };
        // A shared transfer: CPE 0 alone moves the data (the others wait for it), once for all;
        // with register communication it then passes each floatv4 along its row and every row-0
        // CPE down its column: per vector a relay's get, store and put on P1, or the round
        // trip of a receive buffer's entries when that is longer, plus the two hops' latency.
        auto shared_cycles = [&](const Transfer &t) {
            if (t.blocks == 0) return 0.0;
            double c = dma(t, std::min(dt.cpe_cap_bytes_per_cycle, dt.get_bytes_per_cycle));
            if (plan.share == Plan::Share::RegComm) {
                const sw::RegComm &rc = m.regcomm;
                const double relay = rc.get_cycles + 1 + rc.put_cycles;
                const double per_vector = std::max(relay, (rc.latency_cycles + relay) / rc.buffer_entries);
                c += std::ceil(t.bytes / (4.0 * lanes)) * per_vector + 2 * rc.latency_cycles;
            }
            return c;
        };
        sh_tile = shared_cycles(tile_shared), sh_chunk = shared_cycles(chunk_shared);
        const double tg = dma(tile_get, rate) + sh_tile, cg = dma(chunk_get, rate);
        // The shared transfer of each chunk runs before its compute, not overlapped.
        chunk_compute += sh_chunk;
        // The tile's result is waited for before its LDM is freed: the put's latency counts.
        const double pt = put.blocks == 0 ? 0.0 : pipelined(put, put_rate) + dt.put_latency_cycles;
        // Double buffered (DoubleBuffer.h): chunk i+1 is requested at the top of iteration i and
        // waited for one iteration later, so in steady state an iteration takes the larger of
        // its compute, half of a request's time plus half the compute (two requests overlap),
        // and the engine's own time per request (its latency overlaps the next one).
        // A shared transfer is issued by CPE 0 behind its own requests and ahead of the next
        // prefetch: it adds to the engine's time per chunk.
        const double period = std::max({chunk_compute, (cg + chunk_compute) / 2, cg - lat + sh_chunk});
        double chunk_part = db ? cg + (chunks - 1) * period + chunk_compute : chunks * (cg + chunk_compute);
        const double tile = tg + chunk_part + tile_compute + pt;
        cpe_time = waves * tile;
        est.dma_cycles = waves * (tg + chunks * (cg + sh_chunk) + pt);
        est.compute_cycles = waves * (chunks * (chunk_compute - sh_chunk) + tile_compute);
    }
    const double tiles = double(est.tiles);
    const double channel = tiles * (tile_get.line_bytes + chunks * chunk_get.line_bytes) / dt.get_bytes_per_cycle +
                           tiles * put.line_bytes / dt.put_bytes_per_cycle;
    // The CPEs run in step (same work per tile): while they set up requests, wait for the
    // latency or compute without a transfer of theirs in flight, the channel idles. Those
    // parts add to the channel's time; double buffering hides them behind the data.
    // Of a transfer of n requests only the first request's setup leaves the channel idle (the
    // next setups overlap the data of the previous requests).
    auto first_setup = [](const Transfer &t, double block_cycles) {
        return t.blocks * block_cycles / std::max(1.0, t.requests);
    };
    const double setup_c = first_setup(chunk_get, dt.get_block_cycles), setup_t = first_setup(tile_get, dt.get_block_cycles);
    const double idle_chunks =
        db ? setup_c + lat + chunk_compute + (chunks - 1) * sh_chunk : chunks * (setup_c + lat + chunk_compute);
    // A shared transfer leaves the channel to one CPE: counted as idle, its bytes not again.
    const double idle = waves * (idle_chunks + (tile_get.blocks ? setup_t + lat : 0) + sh_tile + tile_compute +
                                 first_setup(put, dt.put_block_cycles) + (put.blocks ? dt.put_latency_cycles : 0));
    const double cycles = std::max(cpe_time, channel + idle) + dt.spawn_cycles + dt.join_cycles;
    est.seconds = cycles / (m.clock_ghz * 1e9);
    est.gflops = info.total_flops / est.seconds / 1e9;
    est.dma_get_bytes = int64_t(tiles * (tile_get.bytes + chunks * chunk_get.bytes) +
                                waves * (tile_shared.bytes + chunks * chunk_shared.bytes));
    est.dma_put_bytes = int64_t(tiles * put.bytes);
    est.line_bytes = tiles * (tile_get.line_bytes + chunks * chunk_get.line_bytes + put.line_bytes) +
                     waves * (tile_shared.line_bytes + chunks * chunk_shared.line_bytes);
    return est;
}

}  // namespace sw_auto
