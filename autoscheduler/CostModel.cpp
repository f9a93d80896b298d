/** \file
 * The autoscheduler's closed-form timing model.
 */
#include "autoscheduler/CostModel.h"

#include "target_sw/BroadcastDma.h"
#include "target_sw/SplitPhases.h"
#include "target_sw/SwModule.h"
#include "target_sw/WorkCount.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace sw_auto {

namespace {

/** Integer work of one iteration of a vectorised inner loop (addresses, counter), from the
 * generated conv loops' counters. */
constexpr double kVectorLoopIntOps = 6;
/** Integer work of one iteration of the loop over the reduction's vectors of an rfactor plan
 * (addresses of its loads, counter), from the generated dense loops' counters. */
constexpr double kRfactorLoopIntOps = 8;

/** Which end of the compute band a count is for: ideal P0/P1 dual issue (region_cycles) or
 * no pairing at all (region_unpaired_cycles). An enum, so that no count of instructions can be
 * passed for it by mistake. */
enum class Issue { Paired, Unpaired };

/** Cycles of one straight-line region, by the rule the generated code's counters use
 * (WorkCount.h, region_cycles: issue rate, floating-point dependency chains, slow cycles);
 * Issue::Unpaired: the same region with no P0/P1 pairing (region_unpaired_cycles). */
double region(const sw::Machine &m, Issue issue, double p0, double p1, double either,
              double chain = 0, double slow = 0) {
    sw::Work work;
    work.p0 = std::llround(p0), work.p1 = std::llround(p1), work.either = std::llround(either);
    work.chain = std::llround(chain), work.slow_cycles = std::llround(slow);
    return double(issue == Issue::Unpaired ? sw::region_unpaired_cycles(work, m)
                                           : sw::region_cycles(work, m));
}

int64_t prod(const std::vector<int64_t> &extents) {
    int64_t product = 1;
    for (int64_t extent : extents)
        product *= extent;
    return product;
}

/** The DMA requests InjectDma makes for a box of a dense buffer: the contiguous dimensions
 * merged, the next one as the blocks of a strided request, one request per outer point. */
struct Transfer {
    double requests = 0, blocks = 0, bytes = 0, line_bytes = 0;
};

/** At most 8 dimensions, without allocating. */
struct SmallDims {
    std::array<int64_t, 8> v{};
    size_t n = 0;
    void push_back(int64_t x) { v[n++] = x; }
    size_t size() const { return n; }
    int64_t &operator[](size_t i) { return v[i]; }
    int64_t operator[](size_t i) const { return v[i]; }
    int64_t &back() { return v[n - 1]; }
};

/** transfer() of a box whose dimensions are those of the DMA loop nest. */
Transfer transfer_of_box(const std::vector<int64_t> &full_box,
                         const std::vector<int64_t> &full_source, const sw::Machine &m,
                         bool packed_rows, bool guarded) {
    Transfer result;
    if (prod(full_box) == 0)
        return result;
    if (full_box.size() > SmallDims().v.size())
        throw std::logic_error("transfer of a box of more than 8 dimensions");
    // A dimension of one point is no loop of the copy (Halide removes loops of one
    // iteration, InjectDma sees only the others): the next dimension's rows are the blocks of
    // the strided request (a tile of 224 x 1 x 24 of a map seen as one row: 24 blocks).
    // Its start still steps by its source stride (in the line granule below).
    // (Small vectors on the stack: this runs for every region of every plan costed.)
    SmallDims box, source, strides;
    int64_t granule_stride = 4, removed_stride_gcd = 0;
    for (size_t d = 0; d < full_box.size(); d++) {
        if (d == 0 || full_box[d] != 1) {
            box.push_back(full_box[d]);
            source.push_back(d < full_source.size() ? full_source[d] : 1);
            strides.push_back(granule_stride);
        } else if (d < full_source.size() && full_source[d] > 1) {
            removed_stride_gcd = std::gcd(removed_stride_gcd, granule_stride);
            // One point of several: the runs before it do not continue into the next kept
            // dimension (nothing merges across it).
            source.back() = std::max(source.back(), box.back() + 1);
        }
        granule_stride *= d < full_source.size() ? full_source[d] : 1;
    }
    size_t last_merged = 0; // the outermost dimension merged into one contiguous run
    int64_t run = box[0];
    // A guarded copy makes one request per point of its dimensions from the third on: rows
    // as the blocks of a strided request, or one block when they are whole source rows.
    const size_t merge_limit = guarded ? 1 : box.size();
    while (last_merged + 1 < box.size() && last_merged < merge_limit &&
           box[last_merged] >= source[last_merged] && packed_rows) {
        run *= box[++last_merged];
    }
    double blocks = 1, requests = 1;
    if (!packed_rows) {
        for (size_t d = 1; d < box.size(); d++)
            requests *= box[d];
    } else if (guarded) {
        if (last_merged == 0 && box.size() > 1)
            blocks = box[1];
        for (size_t d = 2; d < box.size(); d++)
            requests *= box[d];
    } else {
        // The dimensions past the contiguous run, but those of one point (their loops are
        // gone): the first gives the blocks of a strided request, the others the requests (a
        // tile of 56 x 1 pixels x 64 channels of a 112 x 112 map: one request of 64 blocks).
        bool first = true;
        for (size_t d = last_merged + 1; d < box.size(); d++) {
            if (box[d] == 1)
                continue;
            (first ? blocks : requests) *= box[d];
            first = false;
        }
    }
    const double block_bytes = 4.0 * run;
    // Lines a block touches. The tensors start on a line (as sw_net allocates them and athread
    // code aligns its arrays), so a block starts at a multiple of g bytes within its line: g
    // divides the line, the source's strides and the tile's steps along the merged dimensions
    // (tiles start at multiples of their size; a whole dimension starts at 0). A block of b
    // bytes starting at offset o touches ceil((o + b) / line) lines; averaged over the offsets
    // that are multiples of g.
    const int64_t line = m.dma_line_bytes;
    int64_t start_granule = line; // g above
    if (removed_stride_gcd)
        start_granule = std::gcd(start_granule, removed_stride_gcd);
    for (size_t d = 0; d < box.size(); d++) {
        const int64_t stride = strides[d]; // the bytes between points along d
        if (d > last_merged) {
            start_granule = std::gcd(start_granule, stride);
        } else if (d >= source.size() || box[d] < source[d]) {
            start_granule = std::gcd(
                start_granule,
                stride * box[d]); // a partial dimension: tiles start at multiples of box[d]
        }
    }
    start_granule = std::max<int64_t>(start_granule, 1);
    double lines = 0;
    for (int64_t offset = 0; offset < line; offset += start_granule) {
        lines += double((offset + int64_t(block_bytes) + line - 1) / line);
    }
    lines /= double(line / start_granule);
    result.requests = requests;
    result.blocks = requests * blocks;
    result.bytes = requests * blocks * block_bytes;
    result.line_bytes = result.blocks * lines * m.dma_line_bytes;
    return result;
}

Transfer transfer(const std::vector<int64_t> &window, const std::vector<int64_t> &source,
                  const sw::Machine &m, bool packed_rows = true, bool guarded = false) {
    // A copy's loop nest has no loop of one iteration (Halide removes them), so InjectDma sees
    // only the other dimensions: where the source has one point there too, the next
    // dimension's rows follow each other in main memory (a flattened map's channel rows are
    // the blocks of one strided request, not one request each). A guarded copy moves only the
    // in-bounds part of its (zero-padded) window, never more than the source along any
    // dimension.
    std::vector<int64_t> box, kept_source;
    for (size_t d = 0; d < window.size() && d < source.size(); d++) {
        if (d == 0 || window[d] > 1 || source[d] > 1) {
            box.push_back(guarded ? std::min(window[d], source[d]) : window[d]);
            kept_source.push_back(source[d]);
        }
    }
    return transfer_of_box(box, kept_source, m, packed_rows, guarded);
}

void add(Transfer &total, const Transfer &more) {
    total.requests += more.requests, total.blocks += more.blocks, total.bytes += more.bytes,
        total.line_bytes += more.line_bytes;
}

/** P1 instructions of a splat of a value staged in the LDM (WorkCount.h): one simd_loade
 * where the CPE has it (Machine::broadcast_load), else a scalar load and a splat (the Pro's
 * simd_vcpyfs). */
double ldm_splat_p1(const sw::Machine &m) {
    return m.broadcast_load ? 1.0 : 1.0 + double(m.splat_p1);
}

/** Loads of the main update's accumulator, which is a register (PromoteAccumulators). */
constexpr double kAccumulatorLoads = 1;

/** What a plan fixes before anything is costed: the bindings of a tile near the middle and
 * of a chunk (plan_bindings), the numbers of tiles and chunks, and the main stage's width
 * rounded up to whole iterations of its vector loop. */
struct PlanShape {
    Bindings bindings;
    int64_t tiles = 1;
    int64_t chunk = 0;  ///< reduction points per chunk (the whole reduction when not chunked)
    int64_t chunks = 1; ///< chunks per tile
    int64_t vector_loop_width = 1; ///< points per iteration of the main stage's vector loop
    int64_t rounded_width = 0;
    bool double_buffered = false; ///< chunks prefetched (there are at least two)
    bool phase_split = false;     ///< the gathered windows also split into phases
};

PlanShape shape_of(const PipelineInfo &info, const Plan &plan, const sw::Machine &m) {
    PlanShape shape;
    shape.bindings = plan_bindings(info, plan, m.simd_float_lanes);
    for (size_t d = 0; d < info.out_extents.size(); d++) {
        const int64_t extent = info.out_extents[d], tile = std::min<int64_t>(plan.tile[d], extent);
        shape.tiles *= (extent + tile - 1) / tile;
    }
    shape.chunk = shape.bindings.at(chunk_size_var);
    shape.chunks = (info.reduction + shape.chunk - 1) / shape.chunk;
    shape.vector_loop_width =
        plan.vector == Plan::Vector::Pure ? int64_t(m.simd_float_lanes) * plan.block : 1;
    shape.rounded_width = shape.bindings.at(rounded_width_var);
    shape.double_buffered = plan.double_buffer && shape.chunks > 1;
    shape.phase_split = plan.phases && plan.vector == Plan::Vector::Pure && info.gather_stride > 1;
    return shape;
}

/** Extents of regions under a plan's shape, memoised over the plans that share them
 * (PipelineInfo::extents_cache). */
class RegionExtents {
public:
    RegionExtents(const PipelineInfo &info, const Plan &plan, const PlanShape &shape)
        : info_(info), plan_(plan), shape_(shape) {}

    const std::vector<int64_t> &operator()(const SymBox &box) const {
        PipelineInfo::ExtentsKey key;
        key.box = &box, key.chunk = shape_.chunk, key.rounded = shape_.rounded_width;
        for (size_t d = 0; d < plan_.tile.size() && d < key.tile.size(); d++)
            key.tile[d] = plan_.tile[d];
        auto it = info_.extents_cache->find(key);
        if (it == info_.extents_cache->end())
            it = info_.extents_cache->emplace(key, extents(box, shape_.bindings)).first;
        return it->second;
    }

private:
    const PipelineInfo &info_;
    const Plan &plan_;
    const PlanShape &shape_;
};

/** The LDM row of staging \p name whose box is \p row wide along x: rounded up to whole
 * vectors where the plan aligns the window (aligned_window). */
int64_t ldm_row(const PipelineInfo &info, const Plan &plan, const std::string &name, int64_t row) {
    return aligned_window(info, plan, name, row) ? sw::align_up(row, plan.lanes) : row;
}

/** Mean P1 instructions of a unit-stride vector load of the window a vectorised main stage
 * reads along x (AlignVectorAccesses: one when provably aligned, else
 * Machine::unaligned_vector_access_p1). The window's rows lie in the LDM with a pitch of its
 * extent along x (rounded up to whole vectors where the plan aligns it, ldm_row); when that
 * pitch is a whole number of vectors, every row and channel starts
 * on a vector, and a vector of the block at tap r (the innermost reduction variable, which
 * steps the index by one) starts at r modulo the lanes L from the window's start: the taps
 * r = 0, L, 2L, ... are aligned. The window is the widest chunk-staged (else tile-staged) region
 * along x. */
double unit_stride_load_p1(const PipelineInfo &info, const Plan &plan,
                           const RegionExtents &region_extents, const sw::Machine &m) {
    const double unaligned_p1 = double(m.unaligned_vector_access_p1);
    int64_t pitch = 0;
    const std::map<std::string, SymBox> &regions =
        info.chunk_region.empty() ? info.tile_region : info.chunk_region;
    for (const auto &kv : regions) {
        if (kv.first == info.main || kv.second.empty())
            continue;
        pitch = std::max(pitch, ldm_row(info, plan, kv.first, region_extents(kv.second)[0]));
    }
    const int64_t lanes = m.simd_float_lanes;
    if (pitch <= 0 || pitch % lanes != 0 || info.rvar_extents.empty())
        return unaligned_p1;
    const int64_t taps = info.rvar_extents[0], aligned = (taps + lanes - 1) / lanes;
    return unaligned_p1 - double(aligned) / double(taps) * (unaligned_p1 - 1);
}

/** Mean P1 instructions of a vector load from the phase planes of a window split by
 * sw::split_phases (SplitPhases.h): unit-stride, aligned where the tap's offset within its
 * plane row is a multiple of the lanes (the plane rows are whole vectors; the x taps are unrolled
 * and step through the planes: tap r reads plane r mod S at offset r / S). */
double phase_load_p1(const PipelineInfo &info, const sw::Machine &m) {
    const double unaligned_p1 = double(m.unaligned_vector_access_p1);
    if (info.rvar_extents.empty() || info.chunk_rvar == 0 || info.gather_stride < 2)
        return unaligned_p1;
    const int64_t taps = info.rvar_extents[0];
    int64_t aligned = 0;
    for (int64_t tap = 0; tap < taps; tap++)
        aligned += (tap / info.gather_stride) % m.simd_float_lanes == 0;
    return unaligned_p1 - double(aligned) / double(taps) * (unaligned_p1 - 1);
}

/** The phase planes of a staged window of extents \p box (SplitPhases.h): their LDM bytes and
 * the cycles of the copy into them (per row of the window, per group of S = \p stride
 * elements S loads and S stores in a loop). */
std::pair<int64_t, double> phase_planes(const std::vector<int64_t> &box, int stride,
                                        const sw::Machine &m, Issue issue) {
    if (box.empty() || box[0] <= 0 || stride < 2)
        return {0, 0.0};
    int64_t rows = 1;
    for (size_t d = 1; d < box.size(); d++)
        rows *= box[d];
    const int64_t bytes = 4 * stride * sw::phase_planes(box[0], rows, stride).plane_elements;
    if (stride == 2) {
        // Per two vectors of elements (8 on floatv4) two loads (unaligned unless the rows are
        // whole vectors: two P1 each), two shuffles, two aligned stores.
        const int64_t lanes = m.simd_float_lanes;
        const int64_t groups = (box[0] + 2 * lanes - 1) / (2 * lanes);
        const double loads = box[0] % lanes == 0 ? 2.0 : 4.0;
        const double cycles = double(rows) * (double(groups) * region(m, issue, 2, loads + 2, 1) +
                                              region(m, issue, 0, 0, 1));
        return {bytes, cycles};
    }
    const int64_t groups = (box[0] + stride - 1) / stride;
    const double cycles = double(rows) * (double(groups) * region(m, issue, 0, 2.0 * stride, 1) +
                                          region(m, issue, 0, 0, 1));
    return {bytes, cycles};
}

/** The fill of a zero-padded window and the spread of its compact rows, in cycles. */
struct PaddingFill {
    double fill = 0, spread = 0;
};

/** Cycles per chunk of the fill of a zero-padded window (InjectDma's guarded copy: the
 * in-bounds box comes by DMA straight to its place, only the elements outside it are
 * filled), averaged over the tiles. Along each dimension the tiles' windows are in bounds
 * by a share that depends only on the tile's position along it, so the mean in-bounds part
 * is the window times the product of the per-dimension means. Each filled element is a
 * store in a loop (WorkCount: 2 cycles); each window row of a tile with any padding costs
 * its bounds test and the heads of its fill loops; a box whose rows are whole source rows
 * narrower than the LDM rows comes compactly and is moved once, row by row, in vectors and
 * then one by one (InjectDma.cpp, compact_then_spread), unless \p rows_in_place (a window
 * shared by broadcast DMA: its rows come one request each, InjectDma.h). */
PaddingFill padding_fill_cycles(const PipelineInfo &info, const std::string &producer,
                                const Plan &plan, const Bindings &bindings, const sw::Machine &m,
                                Issue issue, bool rows_in_place) {
    const SymBox &window = info.chunk_region.at(producer);
    const SymBox *in_bounds = nullptr; // the region of the input the producer pads
    int64_t source_width = 0;
    for (const std::string &input : info.producer_inputs) {
        auto it = info.chunk_region.find(input);
        if (it != info.chunk_region.end() && it->second.size() == window.size()) {
            in_bounds = &it->second;
            const Stage &input_stage = info.stages[info.by_name.at(input)];
            source_width = input_stage.source_extents.empty() ? 0 : input_stage.source_extents[0];
        }
    }
    const std::vector<int64_t> box = extents(window, bindings);
    if (!in_bounds || prod(box) == 0)
        return {};
    // Mean in-bounds share; share of tiles without padding; share of tiles whose box rows are
    // whole source rows shorter than the LDM rows (they come compactly and are spread).
    double inside = 1, whole = 1, spread = 0;
    for (size_t d = 0; d < box.size() && d < info.out_extents.size(); d++) {
        const int64_t extent = info.out_extents[d], tile = std::min<int64_t>(plan.tile[d], extent);
        // The means along d depend only on the tile size there, the chunk and the rounded
        // width: memoised.
        const PipelineInfo::FillKey key{
            &m, &window, int(d), tile, bindings.at(chunk_size_var), bindings.at(rounded_width_var)};
        auto it = info.fill_cache->find(key);
        if (it == info.fill_cache->end()) {
            Bindings at_tile = bindings;
            std::array<double, 3> mean{0, 0, 0}; // in-bounds share, unpadded tiles, spread tiles
            double tiles = 0;
            for (int64_t origin = 0; origin < extent; origin += tile, tiles++) {
                at_tile[tile_origin_var(int(d))] =
                    std::min(origin, extent - tile); // the last tile shifted inwards
                const int64_t window_extent = extents(window, at_tile)[d];
                const int64_t in_bounds_extent = extents(*in_bounds, at_tile)[d];
                mean[0] += window_extent ? double(std::min(in_bounds_extent, window_extent)) /
                                               double(window_extent)
                                         : 1.0;
                mean[1] += in_bounds_extent >= window_extent ? 1 : 0;
                mean[2] +=
                    in_bounds_extent >= source_width && window_extent > in_bounds_extent ? 1 : 0;
            }
            for (double &share : mean)
                share /= tiles;
            it = info.fill_cache->emplace(key, mean).first;
        }
        inside *= it->second[0];
        whole *= it->second[1];
        if (d == 0)
            spread = it->second[2];
    }
    const double points = double(prod(box)), rows = points / double(box[0]);
    // The spread moves each whole source row (source_width elements) backwards in vectors (an
    // unaligned load and store, two P1 each, and the loop), then its first source_width % lanes
    // elements one by one, in a loop per row.
    const double spread_rows =
        source_width && !rows_in_place ? points * inside * spread / double(source_width) : 0;
    const int64_t lanes = m.simd_float_lanes;
    const double spread_row_cycles = double(source_width / lanes) * region(m, issue, 0, 4, 5) +
                                     double(source_width % lanes) * region(m, issue, 0, 2, 4) +
                                     region(m, issue, 0, 0, 2);
    return {points * (1 - inside) * region(m, issue, 0, 2, 1) +
                rows * (1 - whole) * region(m, issue, 0, 4, 4),
            spread_rows * spread_row_cycles};
}

/** What each tile costs its CPE: DMA transfers and compute, per tile and per chunk of the
 * reduction. */
struct TileWork {
    Transfer tile_get, chunk_get, put;
    /** Per block, the inputs kept over its pixel tiles in turn (stationary_input): fetched
     * once at the block's start, before its first pixel tile, by every CPE at once. */
    Transfer block_get;
    /** Per tile, the inputs first read after the chunk loop (PipelineInfo::after_main): with
     * a double-buffered chunk loop their get is issued after its last prefetch
     * (DeferTileGets.h); otherwise estimate() moves them into tile_get. */
    Transfer tile_late;
    /** The put's rows are compacted in the LDM first (not one plain request per tile). */
    bool put_compacted = false;
    /** Inputs read once by CPE 0 and shared with every CPE (Plan::share). Under
     * Plan::Share::Mesh, chunk_shared holds those shared along the mesh rows (each fetched
     * by the row's CPE in column 0) and chunk_column those shared down the columns. */
    Transfer tile_shared, chunk_shared, chunk_column;
    /** Mesh: the bytes of one LDM slot of the row and of the column stagings (what the
     * sharing passes on: the whole window, its padding too). */
    double row_slot_bytes = 0, column_slot_bytes = 0;
    double tile_compute = 0, chunk_compute = 0;
};

/** Counts a tile's work stage by stage, and the LDM buffers it stages (into the estimate). */
class TileWorkCounter {
public:
    /** \p issue: Issue::Unpaired costs every region with no P0/P1 pairing. */
    TileWorkCounter(const PipelineInfo &info, const Plan &plan, const sw::Machine &m,
                    const PlanShape &shape, Estimate &est, bool ldm_detail,
                    Issue issue = Issue::Paired)
        : info_(info), plan_(plan), m_(m), shape_(shape), est_(est), ldm_detail_(ldm_detail),
          issue_(issue), region_extents_(info, plan, shape), shared_(shared_inputs(info, plan)),
          unaligned_p1_(double(m.unaligned_vector_access_p1)), lanes_(m.simd_float_lanes) {}

    TileWork count() {
        for (const Stage &s : info_.stages)
            count_stage(s);
        count_computing_output();
        count_result();
        return work_;
    }

private:
    const PipelineInfo &info_;
    const Plan &plan_;
    const sw::Machine &m_;
    const PlanShape &shape_;
    Estimate &est_;
    const bool ldm_detail_;
    const Issue issue_;
    const RegionExtents region_extents_;
    const std::vector<std::string> shared_;
    /** Vector loads and stores are unaligned (simd_loadu / simd_storeu) unless proved
     * otherwise. */
    const double unaligned_p1_;
    /** Lanes of a CPE float vector (Machine::simd_float_lanes). */
    const int lanes_;
    TileWork work_;

    void count_stage(const Stage &s) {
        if (s.is_output)
            return;
        const bool producer = contains(info_.producers, s.name);
        if ((producer && plan_.inline_producers) || contains(info_.wrappers, s.name))
            return;
        if (s.is_input) {
            if (contains(info_.indirect_inputs, s.name))
                return; // read where it is (PipelineInfo::indirect_inputs)
            return count_staged_input(s);
        }
        if (!info_.tile_region.count(s.name))
            return;
        if (producer)
            return count_staged_producer(s);
        count_computed_stage(s);
    }

    /** An LDM buffer, aligned as PlaceLdmBuffers does. */
    void buffer(const std::string &name, int64_t bytes) {
        const int64_t aligned = sw::align_up(bytes, m_.ldm_alignment);
        est_.ldm_bytes += aligned;
        if (ldm_detail_)
            est_.ldm_detail += (est_.ldm_detail.empty() ? "" : ", ") + name + ": " +
                               std::to_string(aligned) + " B";
    }

    /** A window read by gathered vectors, split into phases: its planes and their copy. */
    void split_window(const std::string &stage, const std::string &name,
                      const std::vector<int64_t> &box, double &compute) {
        if (!shape_.phase_split || !contains(info_.gathered, stage))
            return;
        const auto [bytes, cycles] = phase_planes(box, info_.gather_stride, m_, issue_);
        buffer(name, bytes);
        compute += cycles;
    }

    void count_staged_input(const Stage &s) {
        if (staged_by_producer(info_, plan_, s.name)) {
            // Read by a staged producer: the producer's guarded copy moves its in-bounds box
            // (once for every CPE when the producer is shared). Of a window read by gathered
            // vectors (a stride > 1) only the points of the tile's own outputs are copied: the
            // vectors' lanes past the tile widen its LDM rows, not the box (a conv of stride 3
            // on a 9-wide map: rows of 8 of 9 points, one block each).
            std::vector<int64_t> box = region_extents_(info_.chunk_region.at(s.name));
            if (info_.gather_stride > 1 &&
                shape_.rounded_width != shape_.bindings.at(tile_size_var(0))) {
                Bindings unrounded = shape_.bindings;
                unrounded[rounded_width_var] =
                    std::min<int64_t>(unrounded.at(tile_size_var(0)),
                                      info_.out_extents.empty() ? 1 : info_.out_extents[0]);
                box = extents(info_.chunk_region.at(s.name), unrounded);
            }
            bool padded_rows = false;
            std::string sharer; // the shared producer whose staging this copy fills
            for (const std::string &p : info_.producers) {
                if (sharer.empty() && contains(shared_, p))
                    sharer = p;
                // The window's LDM rows are wider than whole source rows: rows in place come
                // one request each (InjectDma.h), else compactly (one block) and are spread.
                const std::vector<int64_t> window = region_extents_(info_.chunk_region.at(p));
                padded_rows |= !window.empty() && !box.empty() && !s.source_extents.empty() &&
                               box[0] >= s.source_extents[0] && window[0] > box[0];
            }
            const bool one_per_row = padded_rows && rows_in_place(!sharer.empty());
            add(sharer.empty() ? work_.chunk_get : chunk_transfer(sharer),
                transfer(box, s.source_extents, m_, !one_per_row, true));
            return;
        }
        // Kept over the pixel tiles in turn (stationary_input): its whole reduction once per
        // block (TileWork::block_get).
        if (stationary_input(info_, plan_, s.name)) {
            Bindings whole = shape_.bindings;
            whole[chunk_origin_var] = 0;
            whole[chunk_size_var] = info_.reduction;
            const bool per_chunk = info_.chunk_region.count(s.name) > 0;
            const std::vector<int64_t> box =
                extents((per_chunk ? info_.chunk_region : info_.tile_region).at(s.name), whole);
            buffer(s.name + ".in()", 4 * prod(box));
            add(work_.block_get, transfer(box, s.source_extents, m_));
            return;
        }
        // The inputs of an inlined or computing producer are staged per chunk on their own.
        const bool chunk_level =
            contains(info_.chunk_staged, s.name) || contains(info_.producer_inputs, s.name);
        const bool shared = contains(shared_, s.name);
        if (!s.callers.empty() && chunk_level && info_.chunk_region.count(s.name)) {
            const std::vector<int64_t> &box = region_extents_(info_.chunk_region.at(s.name));
            buffer(s.name + ".in()", 4 * prod(box) * (two_slots(shared) ? 2 : 1));
            count_mesh_slot(s.name, box);
            add(chunk_transfer(s.name), transfer(box, s.source_extents, m_));
            split_window(s.name, s.name + ".in() phases", box, work_.chunk_compute);
        } else if (info_.tile_region.count(s.name)) {
            const std::vector<int64_t> &box = region_extents_(info_.tile_region.at(s.name));
            const bool late = !shared && contains(info_.after_main, s.name);
            // Read by an epilogue on whole vectors (a fused residual add) over a tile as wide
            // as the map: its LDM rows are rounded up to whole vectors, wider than the source's
            // rows, so each row comes in bounds as a request of its own (a 28-wide map on
            // floatv8: 64 requests of 112 bytes a tile, not 16 blocks of 448; on the Pro's
            // emulator 224 line bytes a row, not 144).
            const bool wider_rows =
                late && !box.empty() && !s.source_extents.empty() && box[0] > s.source_extents[0];
            // Tiles in turn: the next tile's staging prefetched into a second slot.
            buffer(s.name + ".in()", 4 * prod(box) * (plan_.serial_tiles > 1 ? 2 : 1));
            add(shared ? work_.tile_shared
                : late ? work_.tile_late
                       : work_.tile_get,
                transfer(box, s.source_extents, m_, !wider_rows, wider_rows));
            split_window(s.name, s.name + ".in() phases", box, work_.tile_compute);
        }
    }

    /** Where the transfer of chunk staging \p stage counts: fetched by every CPE, or shared
     * (on the mesh: down the columns, chunk_column, or along the rows). */
    Transfer &chunk_transfer(const std::string &stage) {
        if (!contains(shared_, stage))
            return work_.chunk_get;
        return mesh_axis(info_, plan_, stage) == MeshAxis::Column ? work_.chunk_column
                                                                  : work_.chunk_shared;
    }

    /** A staging shared on the mesh: the bytes of one LDM slot of \p box, which the sharing
     * passes on (TileWork::row_slot_bytes, column_slot_bytes). */
    void count_mesh_slot(const std::string &stage, const std::vector<int64_t> &box) {
        if (plan_.share != Plan::Share::Mesh || !contains(shared_, stage))
            return;
        const bool column = mesh_axis(info_, plan_, stage) == MeshAxis::Column;
        (column ? work_.column_slot_bytes : work_.row_slot_bytes) += 4.0 * double(prod(box));
    }

    /** Whether a chunk staging has two slots: double buffered, shared ones too when they are
     * broadcast one chunk ahead or shared over the mesh's rows or columns (not when shared by
     * register communication over the whole mesh); with tiles in
     * turn (one chunk: staged per tile) the next tile's staging prefetched. */
    bool two_slots(bool shared) const {
        return (shape_.double_buffered && (!shared || plan_.share != Plan::Share::RegComm)) ||
               plan_.serial_tiles > 1;
    }

    /** Whether the rows of a zero-padded window whose box rows are whole source rows come one
     * request each straight to their place (the lowering's rule, InjectDma.h: the window is
     * shared by broadcast DMA, or marked by Plan::place_rows) rather than compactly and then
     * spread. */
    bool rows_in_place(bool shared) const {
        return (shared && plan_.share == Plan::Share::Dma) || plan_.place_rows;
    }

    /** A producer staged per chunk: its window filled around its input's guarded copy. */
    void count_staged_producer(const Stage &s) {
        const std::vector<int64_t> &box = region_extents_(info_.chunk_region.at(s.name));
        if (contains(info_.computing_producers, s.name)) {
            // Computed from its stagings in LDM, one slot: point by point (a scalar loop: its
            // loads, its operations, one store) or on vectors (a vector load of the window,
            // a splat of each value invariant along x, its constants splatted, a min / max
            // as a subtraction and a select, a store).
            buffer(s.name, 4 * prod(box));
            const OpCount &ops = info_.ops.at(s.name)[0];
            if (const int vectors = producer_vectors(info_, plan_, s.name)) {
                // Per run of `vectors` vectors (unrolled): an aligned load and store each, the
                // splats once (WorkCount counts a repeated splat once), about four integer
                // operations of address arithmetic each (what WorkCount counts on the generated
                // code: 33 cycles for 7 vectors of a ReLU prologue); their chains overlap.
                const double p1 = 2.0 * vectors + double(ops.loads - 1) * ldm_splat_p1(m_) +
                                  double(ops.float_constants * m_.splat_p1);
                work_.chunk_compute +=
                    double(prod(box)) / (lanes_ * vectors) *
                    region(m_, issue_, double(vectors) * (ops.float_ops + ops.float_min_max), p1,
                           4.0 * vectors, ops.chain + ops.float_min_max, ops.slow_cycles);
            } else {
                work_.chunk_compute +=
                    double(prod(box)) * region(m_, issue_, ops.float_ops, ops.loads + 2,
                                               ops.int_ops + 2, ops.chain, ops.slow_cycles);
            }
            split_window(s.name, s.name + " phases", box, work_.chunk_compute);
            return;
        }
        const bool shared = contains(shared_, s.name);
        // Its LDM rows padded to whole vectors where the plan aligns it (aligned_window).
        std::vector<int64_t> ldm_box = box;
        if (!ldm_box.empty())
            ldm_box[0] = ldm_row(info_, plan_, s.name, ldm_box[0]);
        buffer(s.name, 4 * prod(ldm_box) * (two_slots(shared) ? 2 : 1));
        count_mesh_slot(s.name, ldm_box);
        const PaddingFill fill = padding_fill_cycles(info_, s.name, plan_, shape_.bindings, m_,
                                                     issue_, rows_in_place(shared));
        // Without a spread the fill is written once per LDM slot before the chunk loop
        // (HoistPaddingFill.h), not after every chunk's transfer.
        if (fill.spread == 0 && shape_.chunks >= 2) {
            work_.tile_compute += fill.fill * (two_slots(shared) ? 2 : 1);
        } else {
            work_.chunk_compute += fill.fill + fill.spread;
        }
        split_window(s.name, s.name + " phases", box, work_.chunk_compute);
    }

    /** A stage computed per tile in LDM, definition by definition. */
    void count_computed_stage(const Stage &s) {
        const std::vector<OpCount> &definitions = info_.ops.at(s.name);
        const std::vector<int64_t> &box = region_extents_(info_.tile_region.at(s.name));
        const int64_t points = prod(box);
        buffer(s.name, 4 * points);
        for (size_t k = 0; k < definitions.size(); k++) {
            const bool is_main_update = s.name == info_.main && int(k) == info_.main_update + 1;
            if (!is_main_update) {
                const bool on_vectors =
                    s.name == info_.main && ((k == 0 && shape_.vector_loop_width > 1) ||
                                             vectorised_definition(info_, plan_, int(k)));
                count_scalar_definition(on_vectors, definitions[k], points,
                                        epilogue_unroll(info_, plan_, int(k)));
            } else if (plan_.vector == Plan::Vector::Pure) {
                count_main_update_on_vectors(definitions[k], points);
            } else if (plan_.vector == Plan::Vector::Reduction) {
                count_main_update_by_rfactor(definitions[k], points);
            } else {
                count_main_update_on_scalars(definitions[k], points);
            }
        }
        if (s.name == info_.main && plan_.vector == Plan::Vector::Reduction)
            buffer(s.name + ".rfactor", 4 * lanes_ * points);
    }

    /** A scalar loop over the points (a definition of a vectorised main stage on whole vectors:
     * its pure definition, its epilogue updates; their loads of values invariant along x are
     * splats), one store each, loads of its inputs and of itself. */
    void count_scalar_definition(bool whole_vectors, const OpCount &ops, int64_t points,
                                 int unroll = 1) {
        // On vectors a min / max adds its select (to the issue and to the chain) and each float
        // constant is a splat (WorkCount.h). Unrolled, an iteration issues `unroll` vectors'
        // work whose chains are independent (epilogue_unroll).
        const double p1 = whole_vectors ? ops.loads * ldm_splat_p1(m_) + unaligned_p1_ + 1 +
                                              double(ops.float_constants * m_.splat_p1)
                                        : ops.loads + 2;
        const int64_t extra = whole_vectors ? ops.float_min_max : 0;
        const double u = unroll;
        const double per_iteration =
            region(m_, issue_, u * double(ops.float_ops + extra), u * p1,
                   u * double(ops.int_ops) + 2, double(ops.chain + extra), u * ops.slow_cycles);
        const double iterations =
            double(points) * ops.reduction_points / (whole_vectors ? lanes_ : 1) / u;
        work_.tile_compute += iterations * per_iteration;
    }

    /** The main update vectorised along x in register blocks: per chunk, over the tile and
     * the chunk's reduction points. */
    void count_main_update_on_vectors(const OpCount &ops, int64_t points) {
        const double chunk_points = double(shape_.chunk) * info_.taps;
        const double lines = plan_.block_lines;
        const double blocks = double(points) / (lanes_ * plan_.block * lines);
        // Per reduction point: the block's FMAs, its vector loads (simd_loadu; each serves
        // every line of the block, ShareOperands), and the loads of values invariant along x,
        // each splatted once for the block, or once per line of the block when they vary
        // along its second dimension.
        // (A float min / max on vectors is a subtraction and a select, both in the chain.)
        const double p0 = (ops.float_ops + ops.float_min_max) * plan_.block * lines;
        const double chain = double(ops.chain + ops.float_min_max);
        // A gathered vector: a load per lane and a simd_set; from phase planes, a
        // unit-stride load.
        const double gathered_p1 =
            shape_.phase_split ? phase_load_p1(info_, m_) : lanes_ + double(m_.vector_set_p1);
        const double unit_stride_p1 = unit_stride_load_p1(info_, plan_, region_extents_, m_);
        // The accumulators stay in registers over an inner reduction loop
        // (PromoteAccumulators); with every tap unrolled and one point per chunk there is none,
        // and each tap loads and stores them. Each accumulator's updates form one dependency
        // chain.
        const bool promoted = !(plan_.unroll_taps && shape_.chunk == 1);
        // Without promotion every update stores to the accumulator buffer it also reads, which
        // ends ShareOperands' runs at each store: each update loads (or gathers) its own input
        // vector and splats its own invariant values.
        const double per_line = promoted ? 1 : lines;
        const double p1 =
            promoted
                ? (info_.loads_varying - info_.loads_gather) * plan_.block * unit_stride_p1 +
                      info_.loads_gather * plan_.block * gathered_p1 +
                      info_.loads_invariant_block * lines * ldm_splat_p1(m_) +
                      (info_.loads_invariant - info_.loads_invariant_block) * ldm_splat_p1(m_)
                : plan_.block * per_line *
                      ((info_.loads_varying - info_.loads_gather) * unit_stride_p1 +
                       info_.loads_gather * gathered_p1 + info_.loads_invariant * ldm_splat_p1(m_));
        const double accumulator_p1 = promoted ? 0 : 2 * plan_.block * lines * unaligned_p1_;
        if (promoted) {
            // Promoted, the block's accumulators are loaded before each chunk's reduction and
            // stored after it (one region per block and chunk); aligned where every tile's
            // accumulator rows start on a vector: the rows are the rounded width, and the tiles
            // along x start on multiples of the tile (none shifted inwards) that are whole
            // vectors.
            const int64_t out_width = info_.out_extents.empty() ? 1 : info_.out_extents[0];
            const int64_t tile_width = std::min<int64_t>(plan_.tile[0], out_width);
            const bool aligned = out_width % tile_width == 0 &&
                                 (tile_width % lanes_ == 0 || tile_width == out_width);
            work_.chunk_compute +=
                blocks *
                region(m_, issue_, 0, 2 * plan_.block * lines * (aligned ? 1.0 : unaligned_p1_), 1);
        }
        if (plan_.unroll_taps) {
            work_.chunk_compute +=
                blocks * shape_.chunk *
                region(m_, issue_, p0 * info_.taps, (p1 + accumulator_p1) * info_.taps + 1,
                       kVectorLoopIntOps + (promoted ? 0 : 4 * info_.taps), chain * info_.taps);
        } else if (shape_.phase_split && !info_.rvar_extents.empty() && info_.chunk_rvar != 0) {
            // The taps along x unrolled (ApplyPlan): one loop iteration per x_taps of them.
            const double x_taps = double(info_.rvar_extents[0]);
            work_.chunk_compute +=
                blocks * chunk_points / x_taps *
                region(m_, issue_, p0 * x_taps, p1 * x_taps + 1, kVectorLoopIntOps, chain * x_taps);
        } else {
            work_.chunk_compute +=
                blocks * chunk_points * region(m_, issue_, p0, p1 + 1, kVectorLoopIntOps, chain);
        }
    }

    /** The main update vectorised along the reduction (rfactor): per point and chunk, the loop
     * over the reduction's vectors (its integer work from the generated rfactor loops'
     * counters) and its own set-up. With a register block of block x lines points, each
     * iteration over the reduction's vectors serves the whole block: its FMAs, each vector
     * varying along one dimension loaded once per row or column (aligned when the chunk is
     * whole vectors: the staged rows start on vectors). */
    void count_main_update_by_rfactor(const OpCount &ops, int64_t points) {
        const double chunk_points = double(shape_.chunk) * info_.taps;
        const double loads = std::max(0.0, ops.loads - kAccumulatorLoads);
        const double block = plan_.block, lines = plan_.block_lines;
        const double row_load_p1 = shape_.chunk % lanes_ == 0 ? 1.0 : unaligned_p1_;
        const double block_loads =
            info_.rloads_first + info_.rloads_second + info_.rloads_both + info_.rloads_neither > 0
                ? info_.rloads_first * block + info_.rloads_second * lines +
                      info_.rloads_both * block * lines + info_.rloads_neither
                : loads * block * lines;
        work_.chunk_compute +=
            double(points) / (block * lines) *
            (chunk_points / lanes_ *
                 region(m_, issue_, ops.float_ops * block * lines, block_loads * row_load_p1 + 1,
                        kRfactorLoopIntOps, ops.chain) +
             region(m_, issue_, 0, 2, kRfactorLoopIntOps) * block * lines);
        work_.tile_compute += double(points) * (lanes_ + 2) * 2; // the lanes added up at the end
    }

    /** The main update on scalars. Per point: the accumulator loaded and stored around the
     * reduction loops; each outer reduction loop's iteration: its branch, increment and the
     * bases of the loads' addresses; innermost, each load's address is its varying part plus a
     * base hoisted out of the loop (WorkCount: one add each), and the increment; the
     * accumulator's updates are one dependency chain. Loops of extent 1 are not generated;
     * the innermost loop that is costs its overhead in the tap's own region below. */
    void count_main_update_on_scalars(const OpCount &ops, int64_t points) {
        const double chunk_points = double(shape_.chunk) * info_.taps;
        const double loads = std::max(0.0, ops.loads - kAccumulatorLoads);
        std::vector<double> loops; // extents of the generated reduction loops, outermost first
        for (size_t k = info_.rvar_extents.size(); k-- > 0;) {
            const double extent =
                int(k) == info_.chunk_rvar ? double(shape_.chunk) : double(info_.rvar_extents[k]);
            if (extent > 1)
                loops.push_back(extent);
        }
        double per_point = region(m_, issue_, 0, 3, 2 + loads), runs = 1;
        for (size_t k = 0; k + 1 < loops.size(); k++) {
            runs *= loops[k];
            per_point += runs * region(m_, issue_, 0, 1, 1 + 2 * loads);
        }
        // Inlined producers (a zero-padded input) add their work to each tap: their select
        // continues the chain, the half of their bounds tests and clamps that varies along the
        // innermost reduction variable is integer work.
        // A computing producer (a prologue) also loads its other inputs at each tap.
        double float_ops = ops.float_ops, chain = ops.chain, int_ops = loads + 1,
               slow_cycles = ops.slow_cycles, p1 = loads + 1;
        if (plan_.inline_producers) {
            for (const std::string &producer : info_.producers) {
                const OpCount &producer_ops = info_.ops.at(producer)[0];
                float_ops += producer_ops.float_ops, chain += producer_ops.chain,
                    int_ops += producer_ops.int_ops / 2.0, slow_cycles += producer_ops.slow_cycles;
                if (contains(info_.computing_producers, producer))
                    p1 += double(std::max<int64_t>(producer_ops.loads - 1, 0));
            }
        }
        per_point += chunk_points * region(m_, issue_, float_ops, p1, int_ops, chain, slow_cycles);
        work_.chunk_compute += double(points) * per_point;
    }

    /** An output that computes its values itself is staged in LDM too (sw::stage_output). */
    void count_computing_output() {
        if (!info_.output_computes)
            return;
        int64_t points = 1;
        for (size_t d = 0; d < info_.out_extents.size(); d++)
            points *= std::min<int64_t>(plan_.tile[d], info_.out_extents[d]);
        buffer(info_.output + " (staged output)", 4 * points);
        // Its own loop over the tile's points: loads, its operations, the store into LDM.
        const OpCount &ops = info_.ops.at(info_.output)[0];
        work_.tile_compute += double(points) * region(m_, issue_, ops.float_ops, ops.loads + 2,
                                                      ops.int_ops + 2, ops.chain, ops.slow_cycles);
    }

    /** The result: the output's tile written back from the LDM. */
    void count_result() {
        std::vector<int64_t> box;
        for (size_t d = 0; d < info_.out_extents.size(); d++)
            box.push_back(std::min<int64_t>(plan_.tile[d], info_.out_extents[d]));
        // The LDM rows are padded to the vector-rounded width only where the main stage's rows
        // are the output's (a global pool's main stage runs along the channels: its output
        // rows of one point stay packed).
        const Stage &out = info_.stages[info_.by_name.at(info_.output)];
        const bool main_rows = !info_.main.empty() && !out.args.empty() &&
                               !info_.stages[info_.by_name.at(info_.main)].args.empty() &&
                               info_.stages[info_.by_name.at(info_.main)].args[0] == out.args[0];
        const bool packed =
            shape_.rounded_width == box[0] || !info_.main_width.defined() || !main_rows;
        // LDM rows padded to whole vectors, each a whole output row (a narrow map): InjectDma
        // compacts them in the LDM first (compact_rows) and puts them as one block per
        // request instead of one request per row.
        size_t next = 1; // the first dimension of more than one point after x
        while (next < box.size() && box[next] == 1)
            next++;
        const bool compacted = !packed && box[0] >= info_.out_extents[0] && next < box.size() &&
                               next == 1 && shape_.rounded_width > box[0];
        work_.put = transfer(box, info_.out_extents, m_, packed || compacted);
        work_.put_compacted = compacted;
        if (compacted) {
            // After the compaction each outer point is a request of one block of its own.
            work_.put.requests = work_.put.blocks;
            // Per request, every row but the first moved in vectors (an unaligned load and
            // store, two P1 each, and the loop), then its last width % lanes elements.
            const double rows = double(prod(box) / box[0]);
            const int64_t width = box[0];
            const double row_cycles = double(width / lanes_) * region(m_, issue_, 0, 4, 5) +
                                      double(width % lanes_) * region(m_, issue_, 0, 2, 4) +
                                      region(m_, issue_, 0, 0, 2);
            work_.tile_compute += (rows - work_.put.requests) * row_cycles;
        }
    }
};

/** How the tiles run on the core group: in waves of one tile per CPE, the CPEs in step. */
struct CoreGroupRun {
    double waves = 0;          ///< tiles of the busiest CPE
    double active_cpes = 0;    ///< CPEs with a tile
    double last_wave_cpes = 0; ///< CPEs with a tile in the last round of the spread tiles
    double rounds = 0;         ///< rounds of the spread tiles (waves = serial tiles x rounds)
};

/** The tiles spread over the CPEs; with Plan::serial_pixels each CPE also runs every tile of
 * the first two dimensions in turn. */
CoreGroupRun core_group_run(const PipelineInfo &info, const Plan &plan, const sw::Machine &m) {
    const TileCounts n = tile_counts(info, plan);
    CoreGroupRun run;
    run.waves = double(n.serial * ((n.spread + m.cpes_per_core_group - 1) / m.cpes_per_core_group));
    run.active_cpes = double(std::min<int64_t>(n.spread, m.cpes_per_core_group));
    run.rounds = double((n.spread + m.cpes_per_core_group - 1) / m.cpes_per_core_group);
    run.last_wave_cpes = double(n.spread - (int64_t(run.rounds) - 1) * m.cpes_per_core_group);
    return run;
}

/** Cycles of a transfer's setups and data, pipelined: a request's data moves after its own
 * setup; the next request's setup overlaps it. */
double pipelined(const Transfer &t, double block_cycles, double bytes_per_cycle) {
    if (t.blocks == 0)
        return 0.0;
    const double setup = t.blocks * block_cycles, data = t.line_bytes / bytes_per_cycle,
                 n = std::max(1.0, t.requests);
    return std::max(setup + data / n, setup / n + data);
}

/** Cycles of a get at \p bytes_per_cycle, its latency waited for. */
double get_cycles(const Transfer &t, double bytes_per_cycle, const sw::DmaTiming &dma) {
    return t.blocks == 0
               ? 0.0
               : pipelined(t, dma.get_block_cycles, bytes_per_cycle) + dma.get_latency_cycles;
}

/** Cycles of a put at \p bytes_per_cycle, its latency waited for (the tile's LDM is freed or
 * reused after it). */
double put_cycles(const Transfer &t, double bytes_per_cycle, const sw::DmaTiming &dma) {
    return t.blocks == 0
               ? 0.0
               : pipelined(t, dma.put_block_cycles, bytes_per_cycle) + dma.put_latency_cycles;
}

/** Cycles of the shared transfers of a tile and of a chunk. */
struct SharedCycles {
    double per_tile = 0, per_chunk = 0;
};

/** One issuer's part of a broadcast DMA of \p t, cut as BroadcastDma cuts it
 * (sw::split_broadcast), or, too small to cut, its requests dealt to the issuers in turn; and
 * the number of issuers. */
std::pair<Transfer, double> broadcast_piece(const Transfer &t) {
    const double rows = t.blocks / std::max(1.0, t.requests);
    const sw::BroadcastSplit cut = sw::split_broadcast(
        std::max<int64_t>(1, std::llround(rows)),
        std::max<int64_t>(1, std::llround(t.bytes / std::max(1.0, t.blocks) / 4)), rows <= 1.0, 4);
    // Cut requests: every issuer has a piece of each; whole requests (too small to cut):
    // dealt to the issuers in turn.
    const bool dealt = cut.pieces == 1;
    const double n =
        dealt ? std::min<double>(sw::kBroadcastIssuers, std::max(1.0, t.requests)) : cut.pieces;
    return {Transfer{dealt ? std::ceil(t.requests / n) : t.requests,
                     cut.by_rows || dealt ? t.blocks / n : t.blocks, t.bytes / n, t.line_bytes / n},
            n};
}

/** A shared transfer, once for all CPEs (the others wait for it). By broadcast DMA, each
 * request cut among its issuers as BroadcastDma cuts it (sw::split_broadcast), or, too small
 * to cut, the requests dealt to the issuers in turn: every issuer moves its part, the issuers
 * sharing the channel. By register communication, CPE 0 alone
 * moves the data, then passes each floatv4 along its row and every row-0 CPE down its column:
 * per vector a relay's get, store and put on P1, or the round trip of a receive buffer's
 * entries when that is longer, plus the two hops' latency. */
double shared_transfer_cycles(const Transfer &t, const Plan &plan, const sw::Machine &m) {
    if (t.blocks == 0)
        return 0.0;
    const sw::DmaTiming &dma = m.dma_timing;
    if (plan.share == Plan::Share::Dma) {
        const auto [piece, n] = broadcast_piece(t);
        return get_cycles(piece, std::min(dma.cpe_cap_bytes_per_cycle, dma.get_bytes_per_cycle / n),
                          dma);
    }
    double cycles =
        get_cycles(t, std::min(dma.cpe_cap_bytes_per_cycle, dma.get_bytes_per_cycle), dma);
    if (plan.share == Plan::Share::RegComm && !m.regcomm.available) {
        // The Pro: one RMA broadcast of the bytes from CPE 0 (sw_rma_share), after a barrier.
        const sw::Rma &rma = m.rma;
        cycles += double(sw::rma_share_work(m).cycles) + rma.issue_cycles + rma.latency_cycles +
                  t.bytes / rma.bytes_per_cycle;
    } else if (plan.share == Plan::Share::RegComm) {
        const sw::RegComm &rc = m.regcomm;
        const double relay = rc.get_cycles + 1 + rc.put_cycles;
        const double per_vector = std::max(relay, (rc.latency_cycles + relay) / rc.buffer_entries);
        cycles +=
            std::ceil(t.bytes / (4.0 * m.simd_float_lanes)) * per_vector + 2 * rc.latency_cycles;
    }
    return cycles;
}

/** Plan::Share::Mesh, per chunk: the sources' gets, every CPE's part in passing the
 * stagings on, and the sources. The CPE in column 0 of each mesh row with blocks fetches its
 * row's staging and the CPE in row 0 of each column its column's, all at once; CPE (0, 0),
 * which fetches both, is the slowest. Then every CPE passes on or receives each floatv4 of
 * both LDM slots (sw_regcomm_row, sw_regcomm_column: the helper's loop as WorkCount counts
 * it and the put or get, or a receive buffer's round trip when that is longer) and waits one
 * hop's latency per staging. With Plan::mesh_row_dma the row's staging is broadcast to the
 * row by DMA instead, its pieces issued by the row's CPEs (CPE (0, 0) one piece of it) and
 * not passed on. */
struct MeshChunk {
    double fetch = 0, relay = 0, relay_unpaired = 0;
    double rows = 0, columns = 0; ///< the sources of row and of column stagings
};
MeshChunk mesh_chunk(const TileWork &work, const CoreGroupRun &run, const Plan &plan,
                     const sw::Machine &m) {
    MeshChunk c;
    const sw::DmaTiming &dma = m.dma_timing;
    const Transfer &row = work.chunk_shared, &column = work.chunk_column;
    // The sources of a round: a mesh row's or column's first CPE fetches only when it has a
    // block of that round (a last round of 40 blocks has five rows of sources, not eight):
    // per round, their mean over the rounds.
    const double full_rounds = std::max(0.0, run.rounds - 1);
    auto mean_over_rounds = [&](auto sources) {
        return run.rounds > 0
                   ? (full_rounds * sources(run.active_cpes) + sources(run.last_wave_cpes)) /
                         run.rounds
                   : 0.0;
    };
    c.rows = row.blocks > 0 ? mean_over_rounds([&](double cpes) {
        return std::min<double>(m.cpe_mesh_rows, std::ceil(cpes / m.cpe_mesh_cols));
    })
                            : 0.0;
    c.columns =
        column.blocks > 0
            ? mean_over_rounds([&](double cpes) { return std::min<double>(m.cpe_mesh_cols, cpes); })
            : 0.0;
    // The channel shared by every source and every CPE's own gets: CPE (0, 0), with the most
    // bytes, finishes when the channel has moved them all (processor sharing), or at its cap.
    Transfer both = plan.mesh_row_dma && row.blocks > 0 ? broadcast_piece(row).first : row;
    add(both, column);
    const double channel = c.rows * row.line_bytes + c.columns * column.line_bytes +
                           run.active_cpes * work.chunk_get.line_bytes;
    const double rate =
        both.line_bytes <= 0
            ? dma.cpe_cap_bytes_per_cycle
            : std::min(dma.cpe_cap_bytes_per_cycle,
                       dma.get_bytes_per_cycle * both.line_bytes / std::max(channel, 1.0));
    c.fetch = get_cycles(both, rate, dma);
    const sw::RegComm &rc = m.regcomm;
    for (const double bytes :
         {plan.mesh_row_dma ? 0.0 : work.row_slot_bytes, work.column_slot_bytes}) {
        if (bytes <= 0)
            continue;
        if (!m.regcomm.available) {
            // The Pro: the source's RMA broadcast to its row or column (sw_rma_row /
            // sw_rma_column): the helper's work, the issue, then the bytes landing.
            const sw::ShareWork w = sw::rma_share_work(m);
            const double move =
                m.rma.issue_cycles + m.rma.latency_cycles + bytes / m.rma.bytes_per_cycle;
            c.relay += double(w.cycles) + move;
            c.relay_unpaired += double(w.unpaired_cycles) + move;
            continue;
        }
        const sw::ShareWork w = sw::regcomm_share_work(int64_t(std::llround(bytes)), m);
        const double vectors = std::ceil(bytes / (4.0 * m.simd_float_lanes));
        const double round_trip =
            vectors * (rc.latency_cycles + rc.put_cycles + rc.get_cycles + 1) / rc.buffer_entries;
        c.relay +=
            std::max(double(w.cycles) + vectors * rc.put_cycles, round_trip) + rc.latency_cycles;
        c.relay_unpaired +=
            std::max(double(w.unpaired_cycles) + vectors * rc.put_cycles, round_trip) +
            rc.latency_cycles;
    }
    return c;
}

SharedCycles shared_cycles(const TileWork &work, const Plan &plan, const sw::Machine &m) {
    return {shared_transfer_cycles(work.tile_shared, plan, m),
            shared_transfer_cycles(work.chunk_shared, plan, m)};
}

/** The busiest CPE's time, and its DMA and compute parts. */
struct CpeCycles {
    double total = 0, dma = 0, compute = 0;
};

/** A CPE's get and put rates when the active CPEs move data at once: an equal share of the
 * channel, at most one CPE's cap. */
std::pair<double, double> cpe_rates(const CoreGroupRun &run, const sw::DmaTiming &dma) {
    const double cpes = std::max(1.0, run.active_cpes);
    return {std::min(dma.cpe_cap_bytes_per_cycle, dma.get_bytes_per_cycle / cpes),
            std::min(dma.cpe_cap_bytes_per_cycle, dma.put_bytes_per_cycle / cpes)};
}

/** Of a transfer of n requests only the first request's setup leaves the channel idle (the
 * next setups overlap the data of the previous requests). */
double first_setup(const Transfer &t, double block_cycles) {
    return t.blocks * block_cycles / std::max(1.0, t.requests);
}

/** One CPE's DMA engine as the emulator replays it (athread_emu timing.cpp): the setups of
 * its requests in order, then their line bytes in order at the CPE's rate, then the latency.
 * The CPEs run in step, so each moves its data at its share of the channel. */
class InStepEngine {
public:
    InStepEngine(const sw::DmaTiming &dma, double get_rate, double put_rate)
        : dma_(dma), get_rate_(get_rate), put_rate_(put_rate) {}

    /** Issues \p t (its requests of equal size, one after the other) at \p at; returns when
     * its last request is done. */
    double issue(const Transfer &t, bool put, double at) {
        if (t.blocks <= 0)
            return at;
        const double n = std::max(1.0, std::round(t.requests));
        const double setup = t.blocks / n * (put ? dma_.put_block_cycles : dma_.get_block_cycles);
        const double data = t.line_bytes / n / (put ? put_rate_ : get_rate_);
        double done = at;
        for (double k = 0; k < n; k++) {
            setup_free_ = std::max(at, setup_free_) + setup;
            data_start_ = std::max(setup_free_, data_free_);
            data_free_ = data_start_ + data;
            done = data_free_ + (put ? dma_.put_latency_cycles : dma_.get_latency_cycles);
        }
        return done;
    }

    /** When the data of the last request issued begins and ends moving. */
    std::pair<double, double> last_data() const { return {data_start_, data_free_}; }

private:
    const sw::DmaTiming &dma_;
    const double get_rate_, put_rate_;
    double setup_free_ = 0, data_free_ = 0, data_start_ = 0;
};

/** A chunk's broadcast (Plan::Share::Dma) from its issue until it is done: each issuer's
 * piece \p mine, issued with every active CPE's own chunk get \p own, on the channel as the
 * emulator shares it (equal shares of the channel's time among the CPEs moving data): while the
 * CPEs move their own gets, each issuer moves its piece at one CPE's share; then the issuers
 * alone, at the channel over the issuers; while the CPEs move put data (from \p puts_from
 * after the issue, for \p puts_cycles: tile pieces in flight), at one CPE's share again. */
double broadcast_chunk_cycles(const Transfer &mine, double issuers, const Transfer &own,
                              double puts_from, double puts_cycles, double cpes,
                              const sw::DmaTiming &dma) {
    const double n = std::max(cpes, issuers), GB = dma.get_bytes_per_cycle;
    const double all_rate = std::min(dma.cpe_cap_bytes_per_cycle, GB / n),
                 alone_rate = std::min(dma.cpe_cap_bytes_per_cycle, GB / issuers);
    const double setup = first_setup(mine, dma.get_block_cycles), bytes = mine.line_bytes;
    const double own_setup = own.blocks > 0 ? first_setup(own, dma.get_block_cycles) : 0.0;
    const double own_done = own.blocks > 0 ? own_setup + n * own.line_bytes / GB : 0.0;
    double need = bytes - std::max(0.0, own_done - setup) * all_rate;
    double t = std::max(own_done, setup);
    if (need <= 0)
        return setup + bytes / all_rate + dma.get_latency_cycles;
    // The puts that still move after t.
    const double puts_end = puts_cycles > 0 ? puts_from + puts_cycles : 0.0;
    const double from =
        puts_end > t ? std::max(t, puts_from) : std::numeric_limits<double>::infinity();
    if (need <= (from - t) * alone_rate)
        return t + need / alone_rate + dma.get_latency_cycles;
    need -= (from - t) * alone_rate;
    t = from;
    const double puts = puts_end - from;
    if (need <= puts * all_rate)
        return t + need / all_rate + dma.get_latency_cycles;
    return t + puts + (need - puts * all_rate) / alone_rate + dma.get_latency_cycles;
}

/** Pixel tiles in turn with the put in pieces (PipelineTilePuts.h), one round of \p tiles in
 * turn replayed in the generated order (or a CPE's blocks in turn, PipelineRoundPuts.h, all in
 * one round), the CPEs in step: at the top of tile p, tile p - 2's
 * put is waited for, the tile's own gets issued and waited for and its first chunk issued;
 * iteration k of the chunk loop waits for chunk k's broadcast (\p shared_chunk from its issue;
 * the CPEs meet), issues chunk k + 1's gets and broadcast, then tile p - 1's piece k (blocks
 * [ceil(k R / n), ceil((k + 1) R / n)) of R, or of a put of several requests its requests so
 * shared out), then waits for chunk k's own gets and computes
 * it; after the last tile, its put whole. A piece delays the transfers behind it in the
 * engine, and the tile two later, not the chunk ahead of it; with \p broadcast_dma, a
 * broadcast shares the channel with the piece whose data moves meanwhile
 * (broadcast_chunk_cycles). Returns the round's cycles. */
double piped_round_cycles(const TileWork &work, double shared_tile, double shared_chunk,
                          bool broadcast_dma, int64_t chunks, int64_t tiles, double late_exposed,
                          const CoreGroupRun &run, const sw::DmaTiming &dma) {
    if (tiles < 1 || chunks < 1)
        return 0;
    const auto [get_rate, put_rate] = cpe_rates(run, dma);
    InStepEngine engine(dma, get_rate, put_rate);
    // The pieces share out the put's blocks, or, a put of several requests (a loop of them,
    // PipelineRoundPuts.h), its requests, each whole.
    const double R = std::round(work.put.blocks), n = double(chunks);
    const double requests = std::max(1.0, std::round(work.put.requests));
    const double units = requests > 1 ? requests : R;
    auto piece = [&](int64_t k) {
        const double mine = std::ceil(double(k + 1) * units / n) - std::ceil(double(k) * units / n);
        const double part = mine / std::max(1.0, units);
        return Transfer{requests > 1 ? mine : (mine > 0 ? 1.0 : 0.0), R * part,
                        work.put.bytes * part, work.put.line_bytes * part};
    };
    // Tile p's put done, by slot (p % 2).
    std::array<double, 2> put_done{0.0, 0.0};
    double t = 0, shared_done = 0;
    // A broadcast issued at \p at, behind the previous one (its latency overlapping), sharing
    // the channel with the last piece's data if that still moves.
    const auto [mine, issuers] =
        broadcast_dma ? broadcast_piece(work.chunk_shared) : std::pair<Transfer, double>{};
    std::pair<double, double> puts{0.0, 0.0}; // the last piece's data, from and to
    auto broadcast = [&](double at) {
        if (shared_chunk <= 0)
            return at;
        double cycles = shared_chunk;
        if (broadcast_dma && puts.second > at)
            cycles = std::max(cycles, broadcast_chunk_cycles(mine, issuers, work.chunk_get,
                                                             std::max(0.0, puts.first - at),
                                                             puts.second - std::max(puts.first, at),
                                                             run.active_cpes, dma));
        shared_done = std::max(at, shared_done - dma.get_latency_cycles) + cycles;
        return shared_done;
    };
    // The rounds settle within a few tiles: past kReplayed, each tile takes the mean of the
    // last two replayed (the model is called for every plan of the search).
    constexpr int64_t kReplayed = 5;
    const int64_t replayed = std::min(tiles, kReplayed);
    std::array<double, kReplayed> tile_end{};
    for (int64_t p = 0; p < replayed; p++) {
        if (p >= 2)
            t = std::max(t, put_done[size_t(p % 2)]);
        t = engine.issue(work.tile_get, false, t) + shared_tile;
        double own = engine.issue(work.chunk_get, false, t), shared = broadcast(t);
        for (int64_t k = 0; k < chunks; k++) {
            // The chunk's broadcast is waited for (the CPEs meet) before the next one is
            // issued; its own gets once the next chunk's transfers and the piece are issued.
            t = std::max(t, shared);
            const Transfer part = p > 0 ? piece(k) : Transfer{};
            const double next_own = k + 1 < chunks ? engine.issue(work.chunk_get, false, t) : 0.0;
            if (part.blocks > 0) {
                put_done[size_t((p - 1) % 2)] = engine.issue(part, true, t);
                puts = engine.last_data();
            }
            if (k + 1 < chunks)
                shared = broadcast(t);
            t = std::max(t, own) + work.chunk_compute;
            own = next_own;
        }
        t += late_exposed + work.tile_compute;
        tile_end[size_t(p)] = t;
    }
    put_done[size_t((replayed - 1) % 2)] = engine.issue(work.put, true, t);
    const double settled =
        tiles > replayed
            ? double(tiles - replayed) * (tile_end[kReplayed - 1] - tile_end[kReplayed - 3]) / 2
            : 0.0;
    return std::max({t, put_done[0], put_done[1]}) + settled;
}

/** The CPEs run in step (every tile does the same work), so their transfers overlap: each
 * moves its data at an equal share of the channel among the active CPEs. The chunks' shared
 * transfers are already in work.chunk_compute (\p broadcast_dma: they are broadcast DMA). */
CpeCycles busiest_cpe_cycles(const TileWork &work, const SharedCycles &shared,
                             const PlanShape &shape, const CoreGroupRun &run, bool shared_ahead,
                             bool broadcast_dma, double piped_rounds, const sw::Machine &m) {
    const sw::DmaTiming &dma = m.dma_timing;
    const auto [get_rate, put_rate] = cpe_rates(run, dma);
    const double tile_get = get_cycles(work.tile_get, get_rate, dma) + shared.per_tile;
    const double chunk_get = get_cycles(work.chunk_get, get_rate, dma);
    // The tile's result is waited for before its LDM is freed: the put's latency counts.
    const double put = put_cycles(work.put, put_rate, dma);
    // Double buffered (DoubleBuffer.h): chunk i+1 is requested at the top of iteration i and
    // waited for one iteration later, so in steady state an iteration takes the larger of its
    // compute, half of a request's time plus half the compute (two requests overlap), and the
    // engine's own time per request (its latency overlaps the next one). A shared transfer is
    // issued by CPE 0 behind its own requests and ahead of the next prefetch: it adds to the
    // engine's time per chunk.
    // Broadcast one chunk ahead (shared_ahead): the shared transfer of chunk i + 1 runs
    // beside the compute of chunk i, each iteration taking at least its time.
    const double chunk_compute = work.chunk_compute;
    const double period = shared_ahead
                              ? std::max({chunk_compute, (chunk_get + chunk_compute) / 2,
                                          chunk_get - dma.get_latency_cycles, shared.per_chunk})
                              : std::max({chunk_compute, (chunk_get + chunk_compute) / 2,
                                          chunk_get - dma.get_latency_cycles + shared.per_chunk});
    const double first_chunk = shared_ahead ? std::max(chunk_get, shared.per_chunk) : chunk_get;
    double chunks_cycles = shape.double_buffered
                               ? first_chunk + (shape.chunks - 1) * period + chunk_compute
                               : shape.chunks * (chunk_get + chunk_compute);
    // A get issued after the last prefetch (DeferTileGets.h) moves behind it, while the last
    // two chunks are computed; what is left of it is waited for after the loop.
    const double late =
        work.tile_late.blocks == 0 ? 0.0 : get_cycles(work.tile_late, get_rate, dma);
    const double late_exposed = std::max(0.0, late - 2 * chunk_compute);
    double tile = tile_get + chunks_cycles + late_exposed + work.tile_compute + put;
    if (piped_rounds > 0) {
        // Pixel tiles in turn with the put in pieces (PipelineTilePuts.h): a round of tiles
        // in turn replayed (piped_round_cycles), at least its engine's work: every chunk's
        // transfer and every piece (R blocks, each its setup and its line bytes at the CPE's
        // share), in order. A shared chunk not broadcast ahead (register communication) is
        // fetched by CPE 0 behind its piece, then passed on: it adds to the engine's time per
        // chunk (and is in the chunk's compute); one broadcast ahead is in the replay, its
        // latency and its sharing of the channel no work of the engine.
        const double R = std::round(work.put.blocks);
        const double pieces_cycles = R * dma.put_block_cycles + work.put.line_bytes / put_rate;
        const double chunk_dma =
            chunk_get - dma.get_latency_cycles + (shared_ahead ? 0.0 : shared.per_chunk);
        const int64_t serial = std::max<int64_t>(1, std::llround(run.waves / piped_rounds));
        const double round =
            piped_round_cycles(work, shared.per_tile, shared_ahead ? shared.per_chunk : 0.0,
                               broadcast_dma, shape.chunks, serial, late_exposed, run, dma);
        tile = std::max(round / double(serial), double(shape.chunks) * chunk_dma + pieces_cycles);
    }
    CpeCycles cycles;
    cycles.total = run.waves * tile;
    cycles.dma =
        run.waves * (tile_get + late + shape.chunks * (chunk_get + shared.per_chunk) + put);
    cycles.compute =
        run.waves * (shape.chunks * (chunk_compute - (shared_ahead ? 0.0 : shared.per_chunk)) +
                     work.tile_compute);
    return cycles;
}

/** The channel's time for every tile's put: its line bytes at the core group's put rate. */
double channel_put_cycles(const TileWork &work, const PlanShape &shape, const sw::Machine &m) {
    return double(shape.tiles) * work.put.line_bytes / m.dma_timing.put_bytes_per_cycle;
}

/** The channel's time: all line bytes at the core group's bandwidth. */
double channel_busy_cycles(const TileWork &work, const PlanShape &shape, const sw::Machine &m) {
    return double(shape.tiles) *
               (work.tile_get.line_bytes + work.tile_late.line_bytes +
                shape.chunks * work.chunk_get.line_bytes) /
               m.dma_timing.get_bytes_per_cycle +
           channel_put_cycles(work, shape, m);
}

/** The CPEs run in step (same work per tile): while they set up requests, wait for the
 * latency or compute without a transfer of theirs in flight, the channel idles. Those parts
 * add to the channel's time; double buffering hides them behind the data. A shared transfer
 * leaves the channel to one CPE: counted as idle, its bytes not again. */
double channel_idle_cycles(const TileWork &work, const SharedCycles &shared, const PlanShape &shape,
                           const CoreGroupRun &run, bool shared_ahead, double piped_rounds,
                           const sw::Machine &m) {
    const sw::DmaTiming &dma = m.dma_timing;
    const double latency = dma.get_latency_cycles;
    const double chunk_setup = first_setup(work.chunk_get, dma.get_block_cycles);
    const double tile_setup = first_setup(work.tile_get, dma.get_block_cycles);
    const double idle_in_chunks =
        shape.double_buffered ? chunk_setup + latency + work.chunk_compute +
                                    (shared_ahead ? 0.0 : (shape.chunks - 1) * shared.per_chunk)
                              : shape.chunks * (chunk_setup + latency + work.chunk_compute);
    const double put_idle = first_setup(work.put, dma.put_block_cycles) +
                            (work.put.blocks ? dma.put_latency_cycles : 0);
    const double tile_get_idle = work.tile_get.blocks ? tile_setup + latency : 0;
    if (piped_rounds > 0) {
        // A put in pieces over the next tile (PipelineTilePuts.h) keeps the channel busy while
        // the CPEs compute: the compute leaves it idle only in the first tile of each round,
        // and the put's setup and latency only after the last.
        const double first = shape.chunks * work.chunk_compute + work.tile_compute;
        return run.waves * (chunk_setup + latency + tile_get_idle + shared.per_tile) +
               piped_rounds * (first + put_idle);
    }
    return run.waves *
           (idle_in_chunks + tile_get_idle + shared.per_tile + work.tile_compute + put_idle);
}

/** Plan::serial_tiles with the output tile in two slots (PipelineTilePuts.h), the CPEs in step
 * (every active CPE runs the same tiles' work at the same moments), replayed in the generated
 * order: before tile i, tile i - 2's put is waited for and tile i + 1's gets are issued; then
 * tile i's gets are waited for, it is computed and its put issued. In step, the CPEs set up
 * their puts' blocks at the same moments, leaving the channel idle meanwhile unless earlier
 * requests' data still moves. Returns the busiest CPE's cycles. */
double in_step_tiles_in_slots_cycles(const Transfer &gets, const Transfer &put, double compute,
                                     int64_t tiles, const CoreGroupRun &run,
                                     const sw::DmaTiming &dma) {
    if (tiles < 1)
        return 0;
    const auto [get_rate, put_rate] = cpe_rates(run, dma);
    InStepEngine engine(dma, get_rate, put_rate);
    std::vector<double> got(size_t(tiles), 0.0), put_done(size_t(tiles), 0.0);
    double t = 0;
    got[0] = engine.issue(gets, false, t);
    for (int64_t i = 0; i < tiles; i++) {
        if (i >= 2)
            t = std::max(t, put_done[size_t(i - 2)]);
        if (i + 1 < tiles)
            got[size_t(i + 1)] = engine.issue(gets, false, t);
        t = std::max(t, got[size_t(i)]) + compute;
        put_done[size_t(i)] = engine.issue(put, true, t);
    }
    for (int64_t i = std::max<int64_t>(0, tiles - 2); i < tiles; i++)
        t = std::max(t, put_done[size_t(i)]);
    return t;
}

/** Plan::serial_tiles: each CPE runs its tiles in turn (one reduction chunk each), the next
 * tile's stagings requested at the top of each iteration (DoubleBuffer.h). A CPE's engine
 * moves its requests' data in order, so the put of tile i moves after the get of tile i + 1:
 * an iteration takes the get's overlap with the compute (as for double-buffered chunks), then
 * the put, waited for (the tile's LDM is freed); or, with \p puts_in_slots (the output tile
 * in two slots, PipelineTilePuts.h), the put moves during the next tile's compute and an
 * iteration takes the longer of its compute and its engine's get and put. Returns the busiest
 * CPE's cycles and the time the CPEs leave the channel idle: the first get's setup and
 * latency, the compute that outlasts a prefetch (and, in slots, the put), the last compute,
 * and every put's first setup and latency (in slots, the last one's). */
std::pair<CpeCycles, double> serial_tiles_cycles(const TileWork &work, const CoreGroupRun &run,
                                                 bool puts_in_slots, double channel_per_tile,
                                                 double put_channel_per_tile,
                                                 const sw::Machine &m) {
    const sw::DmaTiming &dma = m.dma_timing;
    const auto [get_rate, put_rate] = cpe_rates(run, dma);
    Transfer gets = work.tile_get;
    add(gets, work.chunk_get);
    const double latency = dma.get_latency_cycles;
    const double get = get_cycles(gets, get_rate, dma);
    const double compute = work.tile_compute + work.chunk_compute;
    const double put = put_cycles(work.put, put_rate, dma);
    const double tiles = run.waves;
    const double put_setup = first_setup(work.put, dma.put_block_cycles);
    const double put_idle = work.put.blocks ? put_setup + dma.put_latency_cycles : 0;
    const double get_idle = gets.blocks ? first_setup(gets, dma.get_block_cycles) + latency : 0;
    CpeCycles cycles;
    cycles.dma = tiles * (get + put);
    cycles.compute = tiles * compute;
    if (puts_in_slots) {
        // The output tile in two slots (PipelineTilePuts.h): tile i's put, issued after its
        // compute and behind tile i + 1's prefetch, moves while tile i + 1 computes; the
        // engine serves a get and a put per tile. The CPEs no longer move their data in step
        // (one sets up its blocks while the others' data moves), so a CPE's engine is bound by
        // its setups and its cap, and the channel by everyone's line bytes (estimate(): the
        // kernel takes at least the channel's time).
        const double engine = get_cycles(gets, dma.cpe_cap_bytes_per_cycle, dma) +
                              put_cycles(work.put, dma.cpe_cap_bytes_per_cycle, dma);
        const double period = std::max(compute, engine - latency);
        cycles.total = get + (tiles - 1) * period + compute + put;
        // Out of step, the CPEs leave the channel idle between the first get and the last
        // compute only while their compute outlasts the channel's work of a tile round.
        // The last tile: its put's setup S (put_setup) begins when the previous put's setup
        // is done (the engine sets up in order: a = max(compute, S) after the tile starts)
        // and ends S later; the previous put's data (D, put_channel_per_tile: the round's share
        // of the channel) moves from S on. The channel idles for what of [0, a + S] that data
        // does not fill, then the latency. (With one tile: its compute, then its put's setup
        // and latency.)
        const double a = std::max(compute, put_setup);
        const double tail =
            tiles >= 2 && work.put.blocks
                ? a + put_setup - std::min(put_channel_per_tile, a) + dma.put_latency_cycles
                : compute + put_idle;
        const double idle =
            get_idle + (tiles - 1) * std::max(0.0, compute - channel_per_tile) + tail;
        // The CPEs in step: every put's block setups at the same moments, the channel idle
        // meanwhile unless earlier data still moves (MobileNetV2's 24 -> 144 expansion, 24
        // blocks of 512 bytes per put: 0.215 ms predicted without this, 0.243 emulated).
        cycles.total =
            std::max(cycles.total, in_step_tiles_in_slots_cycles(gets, work.put, compute,
                                                                 std::llround(tiles), run, dma));
        return {cycles, idle};
    }
    const double period = std::max({compute, (get + compute) / 2, get - latency}) + put;
    cycles.total = get + (tiles - 1) * period + compute + put;
    const double idle = get_idle + (tiles - 1) * std::max(0.0, compute - (get - latency)) +
                        compute + tiles * put_idle;
    return {cycles, idle};
}

/** The kernel's bytes: requested (whole kernel) and moved in 128-byte lines; \p blocks the
 * blocks spread over the CPEs (their stationary inputs, once each). */
void count_traffic(const TileWork &work, const PlanShape &shape, const CoreGroupRun &run,
                   double blocks, const MeshChunk *mesh, Estimate &est) {
    const double tiles = double(shape.tiles);
    const int64_t chunks = shape.chunks;
    // Shared stagings: once per round (by CPE 0), or on the mesh once per source.
    const double rows = mesh ? mesh->rows : 1.0, columns = mesh ? mesh->columns : 0.0;
    est.dma_get_bytes = int64_t(
        blocks * work.block_get.bytes +
        tiles * (work.tile_get.bytes + work.tile_late.bytes + chunks * work.chunk_get.bytes) +
        run.waves * (work.tile_shared.bytes + chunks * (rows * work.chunk_shared.bytes +
                                                        columns * work.chunk_column.bytes)));
    est.dma_put_bytes = int64_t(tiles * work.put.bytes);
    est.line_bytes = blocks * work.block_get.line_bytes +
                     tiles * (work.tile_get.line_bytes + work.tile_late.line_bytes +
                              chunks * work.chunk_get.line_bytes + work.put.line_bytes) +
                     run.waves * (work.tile_shared.line_bytes +
                                  chunks * (rows * work.chunk_shared.line_bytes +
                                            columns * work.chunk_column.line_bytes));
}

} // namespace

Estimate estimate(const PipelineInfo &info, const Plan &plan, const sw::Machine &m,
                  bool ldm_detail) {
    Estimate est;
    const PlanShape shape = shape_of(info, plan, m);
    est.tiles = shape.tiles;
    TileWork work = TileWorkCounter(info, plan, m, shape, est, ldm_detail).count();
    // Pixel tiles in turn, chunks double buffered: each tile's put goes in pieces over the next
    // tile's chunks (PipelineTilePuts.h), the put's LDM tile in two slots.
    const int64_t serial_tiles = tile_counts(info, plan).serial;
    // As the pass requires: one put request per tile (no compaction, no loop of requests).
    const bool piped = plan.serial_pixels && serial_tiles >= 2 && shape.double_buffered &&
                       shape.chunks >= 2 && plan.serial_tiles <= 1 && work.put.blocks > 0 &&
                       work.put.requests == 1 && !work.put_compacted;
    const int64_t put_slot =
        sw::align_up(int64_t(work.put.bytes / std::max(1.0, work.put.requests)), m.ldm_alignment);
    // A CPE's rounds of blocks in turn (PipelineRoundPuts.h): the blocks a multiple (>= 2) of
    // the CPEs, a double-buffered chunk loop, the put one request or a loop of them (not
    // compacted); each block's put goes in pieces over the next block's chunks from a second
    // slot of the output tile (the whole tile), where the LDM has room for it (else the
    // lowering keeps one slot and waits for each put).
    const TileCounts counts = tile_counts(info, plan);
    const int64_t tile_slot = sw::align_up(int64_t(work.put.bytes), m.ldm_alignment);
    // (SW26010 only, as the pass.)
    const bool piped_blocks = !m.crts_runtime && !plan.serial_pixels && plan.serial_tiles <= 1 &&
                              counts.serial == 1 && counts.spread % m.cpes_per_core_group == 0 &&
                              counts.spread >= 2 * m.cpes_per_core_group && shape.double_buffered &&
                              shape.chunks >= 2 && work.put.blocks > 0 && !work.put_compacted &&
                              est.ldm_bytes + tile_slot <= m.ldm_data_budget();
    // Tiles in turn, prefetched: the output tile in two slots, each put waited for two tiles
    // later (PipelineTilePuts.h, without a chunk loop), where the LDM has room for the second
    // slot (else the lowering keeps one slot and waits for each put at once).
    // (A put of rows compacted in the LDM first is one request too when the tile is one
    // plane: a 14x14 depthwise tile of 3 channels seen as one row of 588.)
    const bool tiles_in_slots = plan.serial_tiles > 1 && work.put.blocks > 0 &&
                                work.put.requests == 1 &&
                                est.ldm_bytes + put_slot <= m.ldm_data_budget();
    if (piped || tiles_in_slots || piped_blocks) {
        est.ldm_bytes += piped_blocks ? tile_slot : put_slot;
        if (ldm_detail)
            est.ldm_detail += ", second slot of the put tile";
    }
    // DeferTileGets moves a late get into a double-buffered chunk loop of two or more chunks;
    // elsewhere it is issued with the tile's other gets.
    if (!(shape.double_buffered && shape.chunks >= 2 && plan.serial_tiles <= 1)) {
        add(work.tile_get, work.tile_late);
        work.tile_late = Transfer{};
    }
    est.fits = est.ldm_bytes <= m.ldm_data_budget();

    const CoreGroupRun run = core_group_run(info, plan, m);
    SharedCycles shared = shared_cycles(work, plan, m);
    if (plan.share == Plan::Share::Dma && work.chunk_shared.blocks > 0) {
        // The broadcast shares the channel with every active CPE's own chunk gets, issued at
        // the same moment.
        const auto [mine, issuers] = broadcast_piece(work.chunk_shared);
        shared.per_chunk =
            std::max(shared.per_chunk, broadcast_chunk_cycles(mine, issuers, work.chunk_get, 0, 0,
                                                              run.active_cpes, m.dma_timing));
    }
    // On the mesh the sources' gets take the place of the shared transfer; every CPE's part
    // in passing the stagings on is compute. The next chunk's get and the passing on of this
    // one are taken not to overlap: the source issues the get first, so in principle they
    // could, but on the emulator they do not (nine mesh plans, 1x1 and 3x3 convs at batch 1
    // and 8: 3-16% slower than predicted with the overlap, within 10% without it; the cause
    // is not established).
    const bool on_mesh = plan.share == Plan::Share::Mesh;
    const MeshChunk mesh = on_mesh ? mesh_chunk(work, run, plan, m) : MeshChunk{};
    if (on_mesh) {
        shared.per_chunk = mesh.fetch + mesh.relay;
        work.chunk_compute += mesh.relay;
    }
    // The shared transfer of each chunk runs before its compute, not overlapped, unless it is
    // broadcast (or, on the mesh, fetched) one chunk ahead (double buffered).
    const bool shared_ahead = shape.double_buffered && (plan.share == Plan::Share::Dma || on_mesh);
    if (!shared_ahead)
        work.chunk_compute += shared.per_chunk;
    // All line bytes at the channel's rates (a tile round's share prices tiles in turn).
    const double channel_busy = channel_busy_cycles(work, shape, m);
    // Pipelined puts: replayed in rounds of the serial pixel tiles, or (the blocks in turn) in
    // one round of all of a CPE's blocks.
    const double piped_rounds = piped ? run.waves / double(serial_tiles) : piped_blocks ? 1.0 : 0.0;
    CpeCycles cpe;
    double serial_idle = 0;
    if (plan.serial_tiles > 1) {
        const double waves = std::max(1.0, run.waves);
        std::tie(cpe, serial_idle) =
            serial_tiles_cycles(work, run, tiles_in_slots, channel_busy / waves,
                                channel_put_cycles(work, shape, m) / waves, m);
    } else {
        cpe = busiest_cpe_cycles(work, shared, shape, run, shared_ahead,
                                 plan.share == Plan::Share::Dma, piped_rounds, m);
    }
    est.dma_cycles = cpe.dma, est.compute_cycles = cpe.compute;
    // The whole kernel cannot beat the channel plus the time the CPEs leave it idle, and pays
    // the launch and join.
    // The shared bytes: broadcast ahead, once per chunk; on the mesh, once per source.
    const double shared_lines = on_mesh ? mesh.rows * work.chunk_shared.line_bytes +
                                              mesh.columns * work.chunk_column.line_bytes
                                        : (shared_ahead ? work.chunk_shared.line_bytes : 0.0);
    const double channel = channel_busy + run.waves * double(shape.chunks) * shared_lines /
                                              m.dma_timing.get_bytes_per_cycle,
                 idle = plan.serial_tiles > 1 ? serial_idle
                                              : channel_idle_cycles(work, shared, shape, run,
                                                                    shared_ahead, piped_rounds, m);
    // The stationary inputs: every active CPE fetches its block's at once, at the block's
    // start, with nothing to overlap; the CPE's next block waits for them again.
    const double block_wait =
        run.rounds * get_cycles(work.block_get, cpe_rates(run, m.dma_timing).first, m.dma_timing);
    est.dma_cycles += block_wait;
    const double cycles = std::max(cpe.total, channel + idle) + block_wait +
                          m.dma_timing.spawn_cycles + m.dma_timing.join_cycles;

    est.seconds = cycles / (m.clock_ghz * 1e9);
    est.gflops = info.total_flops / est.seconds / 1e9;
    count_traffic(work, shape, run, double(counts.spread), on_mesh ? &mesh : nullptr, est);

    // No P0/P1 pairing: the busiest CPE's compute counted again region by region with
    // region_unpaired_cycles; its extra cycles added to the kernel's, every DMA wait kept (the
    // emulator's no-pairing bound, athread_emu.h).
    Estimate scratch; // the LDM buffers are counted once, above
    TileWork unpaired =
        TileWorkCounter(info, plan, m, shape, scratch, false, Issue::Unpaired).count();
    unpaired.chunk_compute += mesh.relay_unpaired;
    est.compute_cycles_unpaired =
        run.waves * (double(shape.chunks) * unpaired.chunk_compute + unpaired.tile_compute);
    const double extra = std::max(0.0, est.compute_cycles_unpaired - est.compute_cycles);
    est.seconds_unpaired = (cycles + extra) / (m.clock_ghz * 1e9);
    est.gflops_unpaired = info.total_flops / est.seconds_unpaired / 1e9;
    return est;
}

} // namespace sw_auto
