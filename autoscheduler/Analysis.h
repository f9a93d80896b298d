/** \file
 * What the Sunway autoscheduler sees of a pipeline: its stages, the output's extents, the
 * main stage (the reduction that does the work), what that stage reads and how, and the
 * regions each stage needs per output tile and per chunk of the reduction, as expressions of
 * the tile sizes (evaluated per candidate by Footprint::evaluate, without Halide's simplifier).
 *
 * The schedule family this describes (applied by ApplyPlan, costed by CostModel): the
 * output is tiled over every dimension and its tiles are spread over the CPEs; every other
 * stage is computed per tile in LDM; the main stage's reduction may be split into chunks, with
 * the inputs and producers only it reads staged in LDM per chunk; the main stage may be
 * vectorised along its innermost pure dimension (with register blocking) or, when its
 * unit-stride dimension is the reduction, along the reduction through rfactor.
 */
#ifndef SW_AUTO_ANALYSIS_H
#define SW_AUTO_ANALYSIS_H

#include "Halide.h"
#include "autoscheduler/Plan.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace sw_auto {

/** One Func of the pipeline. */
struct Stage {
    Halide::Internal::Function func;
    std::string name;
    int index = 0;         ///< position in Halide's topological order (Pipeline::get_func)
    bool is_input = false; ///< the Func of an input buffer (its value is the buffer itself)
    bool is_output = false;
    std::vector<std::string> args;       ///< pure variables, innermost first
    std::vector<int64_t> source_extents; ///< is_input: the buffer's dense extents
    std::string source_name;             ///< is_input: the buffer's name
    std::set<std::string> callers;       ///< Funcs that call it (itself excluded)
};

/** A region as per-dimension [min, max] expressions of the symbolic tile variables. */
using SymBox = std::vector<std::pair<Halide::Expr, Halide::Expr>>;

/** Values of the symbolic variables: tile origin and size per output dimension, chunk
 * origin and size, and the vector-rounded width of the main stage. */
using Bindings = std::map<std::string, int64_t>;

/** Names of the symbolic variables. */
std::string tile_origin_var(int dim);
std::string tile_size_var(int dim);
extern const char *const chunk_origin_var;
extern const char *const chunk_size_var;
extern const char *const rounded_width_var;

/** Evaluates an integer expression of the symbolic variables (throws if it cannot). */
int64_t evaluate(const Halide::Expr &e, const Bindings &b);

/** Extents of \p box under \p b (0 for an empty dimension). */
std::vector<int64_t> extents(const SymBox &box, const Bindings &b);

/** Whether \p v holds \p s (the stage lists of PipelineInfo). */
inline bool contains(const std::vector<std::string> &v, const std::string &s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

/** Mixes \p v into the hash \p h (the cost model's cache keys). */
inline void hash_combine(size_t &h, uint64_t v) {
    h ^= std::hash<uint64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
}

/** Operation counts of one evaluation of a definition, by the rules of WorkCount.h. */
struct OpCount {
    int64_t float_ops = 0;        ///< P0 operations (a fused multiply-add is one)
    int64_t flops = 0;            ///< floating-point operations (an FMA counts 2)
    int64_t loads = 0;            ///< calls of other Funcs or buffers
    int64_t int_ops = 0;          ///< index arithmetic that is not a constant offset
    int64_t slow_cycles = 0;      ///< divisions, square roots, transcendental functions
    int64_t chain = 0;            ///< longest chain of dependent floating-point operations
    bool vector_safe = true;      ///< only operations the CPE code generator vectorises
    int64_t reduction_points = 1; ///< evaluations per point of the stage (its reduction's size)
    /** Float min / max (on floatv4 each is a subtraction and a select, both in the chain) and
     * float constants (on floatv4 each is a splat, simd_set_floatv4). */
    int64_t float_min_max = 0, float_constants = 0;
};

struct PipelineInfo {
    std::vector<Stage> stages; ///< topological order
    std::map<std::string, int> by_name;
    std::string output;
    std::vector<int64_t> out_extents;

    /** The main stage: the non-output Func with the largest reduction (or, without any
     * reduction, the last non-output, non-input Func). Empty: none. */
    std::string main;
    int main_update = -1; ///< the update definition with the reduction (-1: none)
    std::vector<Halide::Internal::ReductionVariable> rvars; ///< of that update
    int chunk_rvar = -1; ///< the reduction variable that may be split into chunks (-1: none)
    /** Stages read only by the main stage's update: staged per chunk when chunking. */
    std::vector<std::string> chunk_staged;
    /** Inputs read only by the main stage's definitions after its main update (a fused
     * residual add's residual): staged per tile and first used after the chunk loop, so the
     * lowering issues their get after the loop's last prefetch (target_sw/DeferTileGets.h). */
    std::vector<std::string> after_main;
    /** The non-input ones among them (producers such as a zero-padded input), which may
     * instead be inlined (then their own inputs are staged per chunk). */
    std::vector<std::string> producers;
    /** Inputs some stage reads at an index loaded from memory (a gather's table: table(d,
     * indices(n))). Halide's bounds of such an access are the whole input (it does not know the
     * loaded value), so they are never staged as a box: the CPEs read them where they are (the
     * lowering turns a copy of one row into an LDM tile into a DMA get at the loaded
     * address, target_sw/InjectDma.h), and the cost model counts no LDM for them. */
    std::vector<std::string> indirect_inputs;
    /** Inputs read by the producers (staged per chunk when the producers are inlined). */
    std::vector<std::string> producer_inputs;
    /** The producers among them that compute their values rather than copy and pad their
     * input (a convolution's prologue: x * scale[c] + shift[c], a ReLU, before the zero
     * padding). Staged, such a producer is computed in LDM from its inputs, which are staged
     * per chunk on their own (by DMA, shared or double buffered like any chunk staging),
     * once per staged element; it is neither double buffered nor shared itself. */
    std::vector<std::string> computing_producers;
    /** The computing producers whose definition runs on floatv4 along x: only vectorisable
     * operations (no select: an unpadded convolution's prologue), every index unit-stride or
     * invariant along x (producer_vectors decides per plan). */
    std::vector<std::string> vector_producers;
    /** Computed stages that only move data (one pure definition without float work, e.g.
     * the clamps and wrappers of Halide's BoundaryConditions), other than the main stage,
     * the output and the producers: always inlined into their consumers (staging one would
     * cost an LDM copy and LDM space for nothing). */
    std::vector<std::string> wrappers;
    bool vector_pure = false; ///< vectorisable along its innermost pure dimension
    /** Per definition of the main stage (pure first, then its updates): its operations and
     * loads allow floatv4 along x (a fused ReLU's max, a residual's add). */
    std::vector<bool> main_vectorisable;
    bool vector_rvar = false; ///< vectorisable along chunk_rvar via rfactor
    /** With vector_pure: every staged stage whose index along the vectorised dimension
     * varies is a computed Func defined everywhere (not an input), so the vectorised
     * loop may round its width up past the tile. */
    bool round_up_safe = false;
    /** The output computes its values itself: its definition is not a plain copy
     * out(args) = f(args) of a stage staged in LDM per tile (e.g. an element-wise add of two
     * inputs). Its tiles are then computed into LDM and written back by DMA
     * (sw::stage_output) instead of being stored element by element into main memory. */
    bool output_computes = false;
    /** Width of the main stage's region along its innermost dimension per tile, before
     * any rounding (bind rounded_width_var to it, or to it rounded up to whole vectors). */
    Halide::Expr main_width;
    /** Calls in the main update (the accumulator itself excluded) whose index varies along
     * the main stage's innermost pure dimension, and those that do not. */
    int loads_varying = 0, loads_invariant = 0;
    /** Of the loads_varying, those whose index steps by more than one along x (gathered). */
    int loads_gather = 0;
    /** The stages those gathered loads read, and their step along x (the stride S): a plan
     * may keep each staged window also split into its S phases (Plan::phases,
     * sw::split_phases), where the gathered vectors are unit-stride loads. */
    std::vector<std::string> gathered;
    int gather_stride = 0;
    /** A second dimension for register blocks of a vectorised main stage (-1: none): a pure
     * dimension along which no load that varies along the vectorised one varies, and some
     * invariant load does (the output channels of a convolution: each input vector serves
     * every channel of the block, each weight every vector). Of the loads_invariant, those
     * that vary along it (one splat per block channel) and the others (one per block). */
    int block_dim = -1;
    int loads_invariant_block = 0;
    /** The numbers of points l (bit l, 1 <= l <= 16) a register block may have along
     * block_dim: a load whose index is constant there only over aligned runs of l points (a
     * grouped convolution's input: runs of l dividing the channels per group) allows just those. */
    uint32_t block_lines_allowed = 0x1fffe;
    /** With vector_rvar and two or more pure dimensions: the main update's loads (the
     * accumulator excluded) that vary along the first pure dimension only (a dense layer's
     * weights, along its outputs), along the second only (its input, along the images),
     * along both (or not affinely) and along neither. An rfactor plan's register block of
     * b x l points loads each first-only vector once per block column and each second-only
     * vector once per block row. */
    int rloads_first = 0, rloads_second = 0, rloads_both = 0, rloads_neither = 0;
    std::vector<int64_t> rvar_extents; ///< of rvars, innermost first
    int64_t taps = 1;                  ///< points of the reduction other than chunk_rvar
    int64_t reduction = 1;             ///< extent of chunk_rvar (1: no reduction)

    /** Per input staged in LDM (per tile or per chunk), and per producer: the output
     * dimensions along which its staged region moves with the tile (its box uses that
     * dimension's tile origin). One whose region moves along no dimension with more than one
     * tile is the same box for every CPE: a plan may share it (Plan::share, sw::broadcast; a
     * staged producer's window, e.g. a zero-padded input, is shared as a whole). */
    std::map<std::string, std::set<int>> region_moves;

    /** Per-evaluation counts of each stage's definitions (pure first, then updates). */
    std::map<std::string, std::vector<OpCount>> ops;

    /** Per tile: the region of every stage. Per chunk: the regions of the chunk-staged
     * stages and of the producers' inputs. */
    std::map<std::string, SymBox> tile_region, chunk_region;

    double total_flops = 0; ///< of the whole pipeline, from the op counts

    /** Extents of a region under the bindings of a tile size, chunk and rounded width
     * (extents() of the same box, memoised by the cost model: the search costs every vector
     * variant of a tiling). Key: the box's address in this PipelineInfo, tile, chunk, width;
     * a fixed-size key hashed without allocating (the search makes about a million look-ups
     * per layer). */
    struct ExtentsKey {
        const SymBox *box = nullptr;
        std::array<int, 8> tile{}; ///< the tile sizes, 0 past the output's dimensions
        int64_t chunk = 0, rounded = 0;
        bool operator==(const ExtentsKey &o) const {
            return box == o.box && tile == o.tile && chunk == o.chunk && rounded == o.rounded;
        }
    };
    struct ExtentsKeyHash {
        size_t operator()(const ExtentsKey &k) const {
            size_t h = std::hash<const void *>()(k.box);
            for (int t : k.tile)
                hash_combine(h, uint64_t(uint32_t(t)));
            hash_combine(h, uint64_t(k.chunk));
            hash_combine(h, uint64_t(k.rounded));
            return h;
        }
    };
    std::shared_ptr<std::unordered_map<ExtentsKey, std::vector<int64_t>, ExtentsKeyHash>>
        extents_cache = std::make_shared<
            std::unordered_map<ExtentsKey, std::vector<int64_t>, ExtentsKeyHash>>();
    /** The cost model's means of a padded window's fill along one dimension (in-bounds
     * share, share of tiles without padding, share of tiles whose rows are spread), which
     * depend only on the tile size there, the chunk and the vector-rounded width: evaluating
     * the regions at every tile position is the costliest part of an estimate. Key: machine,
     * producer, dimension, tile size, chunk, rounded width. Shared by every plan of this pipeline;
     * not thread-safe, like the search. */
    using FillKey = std::tuple<const void *, const SymBox *, int, int64_t, int64_t,
                               int64_t>; ///< machine, producer's window, ...
    struct FillKeyHash {
        size_t operator()(const FillKey &k) const {
            size_t h = std::hash<const void *>()(std::get<0>(k));
            hash_combine(h, uint64_t(uintptr_t(std::get<1>(k))));
            hash_combine(h, uint64_t(std::get<2>(k)));
            hash_combine(h, uint64_t(std::get<3>(k)));
            hash_combine(h, uint64_t(std::get<4>(k)));
            hash_combine(h, uint64_t(std::get<5>(k)));
            return h;
        }
    };
    std::shared_ptr<std::unordered_map<FillKey, std::array<double, 3>, FillKeyHash>> fill_cache =
        std::make_shared<std::unordered_map<FillKey, std::array<double, 3>, FillKeyHash>>();
};

/** The bindings a plan fixes: of a tile near the middle of the output (no clamping shrinks
 * it), of the first chunk, and the main stage's width rounded up to whole iterations of its
 * vector loop (\p lanes times the register block's vectors). */
Bindings plan_bindings(const PipelineInfo &info, const Plan &plan, int lanes);

/** Whether \p plan keeps the LDM rows of staged window \p name padded to whole vectors
 * (Func::align_storage along x, rows of the window's width rounded up to Plan::lanes): a
 * zero-padded window that copies its input (a staged producer, not a computing one) read by
 * the unit-stride vectors of Vector::Pure (no stride along x), where the rounding adds at most
 * an eighth to its rows. Its rows then start on a vector, and every tap at a multiple of the
 * lanes loads aligned vectors (one P1 instruction, not two: unit_stride_load_p1 in the cost
 * model). A 3x3 on 28x28 in tiles of 28 (rows of 30, now 32): 0.441 -> 0.401 ms on the
 * emulator; every load of the window had been unaligned (rows of 30 start on a vector one in
 * two), which made the register block's P1 issue its bound. Not for narrow rows (a 7x7 map's
 * window of 9 would pass 12-wide rows between the CPEs). */
bool aligned_window(const PipelineInfo &info, const Plan &plan, const std::string &name,
                    int64_t row);

/** Whether input \p name is staged by a staged producer's guarded copy under \p plan (its
 * in-bounds box by DMA straight into the producer's zero-padded LDM window) rather than by
 * a staging of its own: read by a producer that is staged (not inlined) and copies (does
 * not compute). */
bool staged_by_producer(const PipelineInfo &info, const Plan &plan, const std::string &name);

/** How many vectors (of Plan::lanes) along x at once \p plan computes producer \p name on
 * (0: none, scalar): a vector_producers one, staged, in a plan vectorised along x, whose window
 * along x is a whole number of vectors on every tile (rounding its loop up to vectors computes
 * nothing past it); its rows are then whole vectors (aligned accesses). The vectors are unrolled by
 * the largest divisor of the vectors per row up to 8, so that their dependency chains overlap. */
int producer_vectors(const PipelineInfo &info, const Plan &plan, const std::string &name);

/** The inputs that \p plan shares (Plan::share): inputs staged per chunk of a chunked
 * reduction (not moved by a producer's copy), and producers staged per chunk (not inlined),
 * whose region moves along no dimension with more than one tile spread over the CPEs (a
 * dimension whose tiles each CPE runs in turn, Plan::serial_pixels, may have many), when every
 * tile divides the output (the CPEs then all run the same number of rounds of identical loops,
 * as a broadcast's barriers need; shifted edge tiles would also make Halide split the loop
 * nest, which double buffering refuses). Under Plan::Share::Mesh: those that mesh_axis shares
 * along the mesh's rows or columns. Empty when the plan shares nothing. */
std::vector<std::string> shared_inputs(const PipelineInfo &info, const Plan &plan);

/** The output dimension a Plan::Share::Mesh plan with tiles \p tile lays over the \p columns
 * of the mesh (Machine::cpe_mesh_cols), or -1: the third (a convolution's output channels; the
 * first two are its pixels) or, in a two-dimensional output, the first (a matrix product's
 * columns), when it has exactly \p columns tiles, or a multiple of \p columns (several rounds
 * of mesh columns: a transformer's 3072-wide feed-forward layer) when the tiles of the other
 * dimensions are a multiple of \p columns too (a mesh's rows, square). With \p dim >= 0, that
 * dimension instead (a matrix product's rows: its columns then go down the mesh rows). */
int mesh_column_dim(const PipelineInfo &info, const std::vector<int> &tile, int columns,
                    int dim = -1);

/** Under a Plan::Share::Mesh plan, how stage \p name's staged region is shared: the same
 * along each mesh row (Row: it does not move along plan.mesh_dim), down each column
 * (Column: it moves along mesh_dim alone), or not at all (it moves along both, or the plan
 * shares no staging of its kind: Plan::mesh_rows, mesh_columns). Dimensions of one tile do
 * not count. (shared_inputs lists which stagings are shared at all.) */
enum class MeshAxis { None, Row, Column };
MeshAxis mesh_axis(const PipelineInfo &info, const Plan &plan, const std::string &name);

/** Whether \p plan runs update definition \p d (1: the first update) of the main stage,
 * other than the reduction, on vectors (of Plan::lanes) along x, where the definition allows it
 * (PipelineInfo::main_vectorisable): in Vector::Pure plans, and in Vector::Reduction plans
 * whose tiles are whole vectors along x (the epilogue after the lanes are summed: bias,
 * activation, residual). */
bool vectorised_definition(const PipelineInfo &info, const Plan &plan, int d);

/** The vectors of a register block that an epilogue definition \p d of the main stage (after
 * its reduction: a ReLU, a clamp, a residual add) runs unrolled in one loop iteration: in
 * Vector::Pure plans Plan::block (its x split as the reduction's, so nothing is computed past
 * the rounded width), else 1. One vector at a time, each vector's chain of dependent
 * operations (a clamp's min, select, max, select: 4 x Machine::fp_latency_cycles) bounds the
 * iteration; unrolled, the block's independent chains overlap (WorkCount.h). */
int epilogue_unroll(const PipelineInfo &info, const Plan &plan, int d);

/** The output tiles of \p plan: those each CPE runs in turn (along the dimensions of
 * serial_dim) and those spread over the CPEs (the rest). */
struct TileCounts {
    int64_t serial = 1, spread = 1;
};
TileCounts tile_counts(const PipelineInfo &info, const Plan &plan);

/** Plan::serial_pixels (vectors along x), a reduction without taps (a pointwise conv): an
 * input whose region moves with neither pixel dimension, not shared, staged per chunk (its
 * weights) or per tile (its bias): staged once per block, its whole reduction, and kept in the
 * LDM while the CPE runs its pixel tiles in turn (weight-stationary), instead of fetched again
 * for every pixel tile (the bias's small get waited behind the previous tile's puts at every
 * tile's start: ResNet-50's 128 -> 512 on 28x28 0.258 -> 0.253 ms on the emulator). (Not with
 * taps: on VGG-16's 3x3 convs on 56x56 and 28x28 the search ranked plans with stationary
 * weights 2-4% ahead of its other plans and the emulator 2-4% behind them, 68.15 -> 69.15 ms;
 * with a stationary bias alone, 68.15 -> 68.19 ms, GoogLeNet 8.52 -> 8.54.) */
bool stationary_input(const PipelineInfo &info, const Plan &plan, const std::string &name);

/** Whether \p plan runs the tiles along output dimension \p d in turn on each CPE
 * (Plan::serial_pixels: the first two dimensions) rather than spreading them over the CPEs. */
bool serial_dim(const Plan &plan, int d);

/** Analyses \p p (one output, constant extents from its buffer constraints or estimates);
 * throws sw::UserError for a pipeline outside the family above. */
PipelineInfo analyze(const Halide::Pipeline &p);

} // namespace sw_auto

#endif
