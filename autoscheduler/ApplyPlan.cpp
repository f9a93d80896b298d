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
    for (char c : n)
        s += (isalnum(static_cast<unsigned char>(c)) ? c : '_');
    return s;
}

std::string list(const std::vector<std::string> &v) {
    std::string s;
    for (size_t i = 0; i < v.size(); i++)
        s += (i ? ", " : "") + v[i];
    return s;
}

/** Applies directives and records them as source. */
class Writer {
public:
    Writer(const PipelineInfo &info, const std::map<std::string, Function> &env)
        : info_(info), env_(env) {}

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
    for (const auto &n : names)
        v.push_back(n.second ? VarOrRVar(RVar(n.first)) : VarOrRVar(Var(n.first)));
    return v;
}

} // namespace

std::string apply_copy_plan(const PipelineInfo &info, const std::vector<std::string> &inputs,
                            const std::vector<std::array<int, 3>> &tiles,
                            const std::map<std::string, Function> &env) {
    Writer w(info, env);
    const Stage &os = info.stages[info.by_name.at(info.output)];
    Func out = w.func(info.output);
    const std::string on = ident(info.output);
    const std::string x = os.args[0], y = os.args[1], n = os.args[3];
    for (size_t k = 0; k < inputs.size(); k++) {
        const std::string r = out.function().update(int(k)).schedule().rvars().at(0).var,
                          sfx = "_" + std::to_string(k);
        const std::string xo = x + "_o" + sfx, xi = x + "_i" + sfx, yo = y + "_o" + sfx,
                          yi = y + "_i" + sfx, ro = "r_o" + sfx, ri = "r_i" + sfx,
                          xy = "sw_xy" + sfx, tile = "sw_tile" + sfx;
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
        for (const std::string &v : {x, xo, xi, y, yo, yi, xy, n})
            w.var(v);
        for (const std::string &v : {r, ro, ri, tile})
            w.rvar(v);
        const std::string g = ", TailStrategy::GuardWithIf)";
        w.line(on + ".update(" + std::to_string(k) + ")");
        w.line("    .split(" + ident(x) + ", " + ident(xo) + ", " + ident(xi) + ", " +
               std::to_string(tx) + g);
        w.line("    .split(" + ident(y) + ", " + ident(yo) + ", " + ident(yi) + ", " +
               std::to_string(ty) + g);
        w.line("    .split(" + ident(r) + ", " + ident(ro) + ", " + ident(ri) + ", " +
               std::to_string(tc) + g);
        w.line("    .reorder(" +
               list({ident(xi), ident(yi), ident(ri), ident(xo), ident(yo), ident(ro), ident(n)}) +
               ")");
        w.line("    .fuse(" + ident(xo) + ", " + ident(yo) + ", " + ident(xy) + ")");
        w.line("    .fuse(" + ident(xy) + ", " + ident(ro) + ", " + ident(tile) + ")");
        w.line("    .gpu_blocks(" + ident(tile) + ", " + ident(n) +
               ", ::Halide::DeviceAPI::Host);");
        w.line(ident(inputs[k]) + ".in().compute_at(" + on + ", " + ident(tile) +
               ").store_in(::sw::LDM);");
    }
    return w.source();
}

namespace {

/** Applies a plan step by step, each step's directives to the Funcs and as source. */
class PlanApplier {
public:
    PlanApplier(const PipelineInfo &info, const Plan &plan,
                const std::map<std::string, Function> &env)
        : info_(info), plan_(plan), env_(env), writer_(info, env), out_(writer_.func(info.output)),
          out_ident_(ident(info.output)), chunked_(info.main_update >= 0 && info.chunk_rvar >= 0 &&
                                                   plan.chunk > 0 && plan.chunk < info.reduction) {}

    /** Output tiles over the CPEs: the tiles of the inner dimensions fused into one block
     * loop, the outermost dimension's tiles (images) a second one. */
    void tile_output_over_cpes() {
        const std::vector<std::string> tile_loops = split_output_into_tiles();
        fuse_tiles_into_block_loops(tile_loops);
    }

    /** The main stage per tile in LDM; its update: chunks of the reduction, vectors, loop
     * order; its other updates unscheduled. */
    void schedule_main_stage() {
        if (info_.main.empty())
            return;
        const Stage &main_stage = stage(info_.main);
        Func main_func = writer_.func(info_.main);
        const std::string main_ident = ident(info_.main);
        main_func.compute_at(out_, Var(block_)).store_in(sw::LDM);
        writer_.line(main_ident + ".compute_at(" + out_ident_ + ", " + tile_ +
                     ").store_in(::sw::LDM);");
        const std::string x = main_stage.args.empty() ? "" : main_stage.args[0];
        if (plan_.vector == Plan::Vector::Pure) {
            main_func.vectorize(Var(x), plan_.lanes, TailStrategy::RoundUp);
            writer_.line(main_ident + ".vectorize(" + writer_.var(x) + ", " + lanes_ +
                         ", TailStrategy::RoundUp);");
        }
        if (info_.main_update >= 0) {
            if (plan_.vector == Plan::Vector::Reduction) {
                schedule_update_by_rfactor(main_stage, main_func);
            } else {
                schedule_update(main_stage, main_func);
            }
        }
        for (int update_index = 0; update_index < int(main_stage.func.updates().size());
             update_index++) {
            if (update_index == info_.main_update)
                continue;
            const std::string update = main_ident + ".update(" + std::to_string(update_index) + ")";
            const int unroll = epilogue_unroll(info_, plan_, update_index + 1);
            if (unroll > 1) {
                // An epilogue on whole vectors, the register block's vectors in one iteration
                // (their chains overlap): x split as the reduction's.
                const std::string xo = x + "_eo", xi = x + "_ei", xu = x + "_eu", xv = x + "_ev";
                main_func.update(update_index)
                    .split(Var(x), Var(xo), Var(xi), plan_.lanes * unroll, TailStrategy::RoundUp)
                    .split(Var(xi), Var(xu), Var(xv), plan_.lanes)
                    .vectorize(Var(xv))
                    .unroll(Var(xu));
                writer_.line(update + ".split(" + writer_.var(x) + ", " + writer_.var(xo) + ", " +
                             writer_.var(xi) + ", " + std::to_string(plan_.lanes * unroll) +
                             ", TailStrategy::RoundUp).split(" + ident(xi) + ", " +
                             writer_.var(xu) + ", " + writer_.var(xv) + ", " + lanes_ +
                             ").vectorize(" + ident(xv) + ").unroll(" + ident(xu) + ");");
                continue;
            }
            if (vectorised_definition(info_, plan_, update_index + 1)) {
                // An epilogue (a fused residual add, a ReLU) on whole vectors too.
                main_func.update(update_index)
                    .vectorize(Var(x), plan_.lanes, TailStrategy::RoundUp);
                writer_.line(update + ".vectorize(" + writer_.var(x) + ", " + lanes_ +
                             ", TailStrategy::RoundUp);");
                continue;
            }
            main_func.update(update_index).unscheduled();
            writer_.line(update + ".unscheduled();");
        }
    }

    /** Every other stage: per chunk (read only by the main update) or per tile, in LDM. */
    void stage_other_stages() {
        for (const Stage &s : info_.stages) {
            if (s.is_output || s.name == info_.main)
                continue;
            const bool producer = contains(info_.producers, s.name);
            if ((producer && plan_.inline_producers) || contains(info_.wrappers, s.name))
                continue;
            // The inputs of an inlined or computing producer are staged on their own.
            const bool per_chunk =
                !stage_level_.empty() && (contains(info_.chunk_staged, s.name) ||
                                          (contains(info_.producer_inputs, s.name) &&
                                           !staged_by_producer(info_, plan_, s.name)));
            if (plan_.vector == Plan::Vector::Reduction && contains(info_.chunk_staged, s.name)) {
                if (plan_.double_buffer && chunked_)
                    double_buffered_.push_back(s.name);
                continue; // staged at the partial sums (schedule_update_by_rfactor)
            }
            if (s.is_input) {
                if (s.callers.empty() || contains(info_.indirect_inputs, s.name))
                    continue;
                // Moved by the producer's copy.
                if (staged_by_producer(info_, plan_, s.name))
                    continue;
            }
            if (stationary_input(info_, plan_, s.name)) {
                stage_stationary(s);
                continue;
            }
            stage_in_ldm(s, per_chunk);
        }
    }

    /** Inputs whose staged box is the same on every CPE: read once, shared (by broadcast DMA
     * double buffered like the others: the broadcast one chunk ahead, BroadcastDma.h). */
    void share_inputs() {
        const std::vector<std::string> shared = shared_inputs(info_, plan_);
        for (const std::string &n : shared) {
            const bool by_regcomm = plan_.share == Plan::Share::RegComm;
            if (by_regcomm) {
                double_buffered_.erase(
                    std::remove(double_buffered_.begin(), double_buffered_.end(), n),
                    double_buffered_.end());
            }
            // An input is staged by its wrapper, a producer (a zero-padded window) by itself.
            const bool input = stage(n).is_input;
            const Func staged = input ? Func(env_.at(n)).in() : Func(env_.at(n));
            sw::Sharing how = by_regcomm ? sw::Sharing::RegComm : sw::Sharing::Dma;
            std::string how_source = by_regcomm ? ", ::sw::Sharing::RegComm" : "";
            if (plan_.share == Plan::Share::Mesh) {
                const bool row = mesh_axis(info_, plan_, n) == MeshAxis::Row;
                how = !row                 ? sw::Sharing::RegCommColumn
                      : plan_.mesh_row_dma ? sw::Sharing::DmaRow
                                           : sw::Sharing::RegCommRow;
                how_source = std::string(", ::sw::") + sw::sharing_name(how);
            }
            sw::broadcast(staged, how);
            marked_.shared[staged.name()] = how;
            writer_.line("::sw::broadcast(" + ident(n) + (input ? ".in()" : "") + how_source +
                         ");");
        }
    }

    void double_buffer_stagings() {
        for (const std::string &n : double_buffered_) {
            const bool input = stage(n).is_input;
            Func f = Func(env_.at(n));
            const Func staged = input ? f.in() : f;
            sw::double_buffer(staged);
            marked_.double_buffered.insert(staged.name());
            writer_.line("::sw::double_buffer(" + ident(n) + (input ? ".in()" : "") + ");");
        }
    }

    /** The windows read by gathered vectors, also split into their phases. */
    void split_gathered_windows() {
        if (!plan_.phases)
            return;
        for (const std::string &n : info_.gathered) {
            const bool input = stage(n).is_input;
            Func f = Func(env_.at(n));
            const Func staged = input ? f.in() : f;
            sw::split_phases(staged);
            marked_.phase_split.insert(staged.name());
            writer_.line("::sw::split_phases(" + ident(n) + (input ? ".in()" : "") + ");");
        }
    }

    /** An output that computes its values itself writes each tile into the LDM and puts it
     * back by DMA, instead of storing element by element into main memory. */
    void stage_computing_output() {
        if (!info_.output_computes)
            return;
        sw::stage_output(out_);
        marked_.staged_outputs.insert(out_.name());
        writer_.line("::sw::stage_output(" + out_ident_ + ");");
    }

    AppliedPlan result() const { return {writer_.source(), marked_}; }

private:
    const PipelineInfo &info_;
    const Plan &plan_;
    const std::map<std::string, Function> &env_;
    Writer writer_;
    Func out_; ///< (a Func made by its default constructor would take a name from Halide's counter)
    std::string out_ident_;
    bool chunked_ = false; ///< the main update's reduction split into chunks
    /** The plan's vector lanes as printed (the number the directives apply). */
    const std::string lanes_ = std::to_string(plan_.lanes);
    sw::Directives marked_;
    std::string block_; ///< the output's block loop over the CPEs (the tiles)
    std::string tile_;  ///< its identifier in the source
    /** Plan::serial_pixels: the block loop of the output channels, outside the pixel tiles,
     * where the stationary inputs are staged. */
    std::string stationary_level_;
    std::string stage_level_; ///< the loop of the main stage where per-chunk staging is computed
    std::vector<std::string> double_buffered_;

    /** Every output dimension split into tiles, the points of a tile innermost; returns the
     * loops over the tiles, innermost first. */
    std::vector<std::string> split_output_into_tiles() {
        const Stage &output_stage = stage(info_.output);
        std::vector<std::string> outer, inner;
        for (size_t d = 0; d < output_stage.args.size(); d++) {
            const std::string v = output_stage.args[d], o = v + "_o", i = v + "_i";
            const int tile_size = std::min<int64_t>(plan_.tile[d], info_.out_extents[d]);
            out_.split(Var(v), Var(o), Var(i), tile_size);
            writer_.line(out_ident_ + ".split(" + writer_.var(v) + ", " + writer_.var(o) + ", " +
                         writer_.var(i) + ", " + std::to_string(tile_size) + ");");
            outer.push_back(o), inner.push_back(i);
        }
        std::vector<std::pair<std::string, bool>> order;
        std::vector<std::string> names;
        for (const std::string &i : inner)
            order.push_back({i, false}), names.push_back(ident(i));
        for (const std::string &o : outer)
            order.push_back({o, false}), names.push_back(ident(o));
        out_.reorder(vrs(order));
        writer_.line(out_ident_ + ".reorder(" + list(names) + ");");
        return outer;
    }

    /** The loops over the tiles of the inner dimensions fused into the block loop block_, the
     * outermost dimension's (when there are two or more) the second block loop. */
    void fuse_tiles_into_block_loops(const std::vector<std::string> &outer) {
        const size_t dims = outer.size();
        if (plan_.serial_pixels && dims >= 3) {
            serial_pixel_tiles(outer);
            return;
        }
        if (plan_.serial_tiles > 1) {
            serial_tiles_prefetched(outer);
            return;
        }
        if (plan_.share == Plan::Share::Mesh) {
            mesh_tiles(outer);
            return;
        }
        const size_t fused_dims = dims >= 2 ? dims - 1 : 1;
        block_ = fuse_loops({outer.begin(), outer.begin() + long(fused_dims)}, "sw_tile");
        block_loops(block_, dims >= 2 ? outer[dims - 1] : "");
        tile_ = ident(block_);
    }

    /** The loops \p loops (innermost first) of the output fused into one, named \p fused
     * (the first loop's name if there is only one); returns its name. */
    std::string fuse_loops(const std::vector<std::string> &loops, const std::string &fused) {
        std::string into = loops[0];
        for (size_t k = 1; k < loops.size(); k++) {
            out_.fuse(Var(into), Var(loops[k]), Var(fused));
            writer_.line(out_ident_ + ".fuse(" + writer_.var(into) + ", " + writer_.var(loops[k]) +
                         ", " + writer_.var(fused) + ");");
            into = fused;
        }
        return into;
    }

    /** The output's loop \p inner (and \p outer, unless empty) as the block loops over the
     * CPEs. */
    void block_loops(const std::string &inner, const std::string &outer) {
        if (outer.empty()) {
            out_.gpu_blocks(Var(inner), DeviceAPI::Host);
            writer_.line(out_ident_ + ".gpu_blocks(" + writer_.var(inner) +
                         ", ::Halide::DeviceAPI::Host);");
            return;
        }
        out_.gpu_blocks(Var(inner), Var(outer), DeviceAPI::Host);
        writer_.line(out_ident_ + ".gpu_blocks(" + writer_.var(inner) + ", " + writer_.var(outer) +
                     ", ::Halide::DeviceAPI::Host);");
    }

    /** Plan::serial_pixels: the tiles of the first two dimensions fused into one loop that
     * each CPE runs in turn (block_, where the tile's stages are computed), the third
     * dimension's tiles the block loop over the CPEs, the fourth's (images) a second one. */
    void serial_pixel_tiles(const std::vector<std::string> &outer) {
        const size_t dims = outer.size();
        block_ = fuse_loops({outer[0], outer[1]}, "sw_pixels");
        block_loops(outer[2], dims >= 4 ? outer[3] : "");
        tile_ = ident(block_);
        stationary_level_ = outer[2];
    }

    /** An input kept in the LDM over the pixel tiles in turn (stationary_input): staged at
     * the block loop of the output channels, outside the pixel tiles, its whole reduction at
     * once (not double buffered). */
    void stage_stationary(const Stage &s) {
        Func staged = writer_.func(s.name).in();
        staged.compute_at(out_, Var(stationary_level_)).store_in(sw::LDM);
        writer_.line(ident(s.name) + ".in().compute_at(" + out_ident_ + ", " +
                     writer_.var(stationary_level_) + ").store_in(::sw::LDM);");
    }

    /** Plan::Share::Mesh: the tiles along mesh_dim the innermost block loop (8 of them: a
     * block's mesh column is its CPE's, BroadcastDma.h), the tiles of every other dimension
     * fused, innermost first, into the second (the mesh rows, round after round). */
    void mesh_tiles(const std::vector<std::string> &outer) {
        std::string columns = outer[size_t(plan_.mesh_dim)];
        std::vector<std::string> others;
        for (size_t d = 0; d < outer.size(); d++) {
            if (int(d) != plan_.mesh_dim)
                others.push_back(outer[d]);
        }
        // More tiles than mesh columns (mesh_column_dim: a multiple of them, the other tiles
        // a multiple of the mesh's rows): the rounds of columns a third block loop, outside
        // the rows, so that one round of the mesh works on one round of columns (the staging
        // shared down a column is the same for the whole round: BroadcastDma's
        // BlockDependence).
        const int64_t extent = info_.out_extents[size_t(plan_.mesh_dim)];
        const int64_t size = std::min<int64_t>(plan_.tile[size_t(plan_.mesh_dim)], extent);
        const int mesh_columns = plan_.mesh_width;
        std::string round;
        if ((extent + size - 1) / size > mesh_columns) {
            round = "sw_mesh_round";
            const std::string column = "sw_mesh_column";
            out_.split(Var(columns), Var(round), Var(column), mesh_columns);
            writer_.line(out_ident_ + ".split(" + writer_.var(columns) + ", " + writer_.var(round) +
                         ", " + writer_.var(column) + ", " + std::to_string(mesh_columns) + ");");
            columns = column;
        }
        std::vector<std::pair<std::string, bool>> order{{columns, false}};
        std::vector<std::string> names{ident(columns)};
        for (const std::string &o : others)
            order.push_back({o, false}), names.push_back(ident(o));
        if (!round.empty())
            order.push_back({round, false}), names.push_back(ident(round));
        out_.reorder(vrs(order));
        writer_.line(out_ident_ + ".reorder(" + list(names) + ");");
        const std::string rows = fuse_loops(others, "sw_rows");
        if (round.empty()) {
            block_loops(columns, rows);
        } else {
            out_.gpu_blocks(Var(columns), Var(rows), Var(round), DeviceAPI::Host);
            writer_.line(out_ident_ + ".gpu_blocks(" + writer_.var(columns) + ", " +
                         writer_.var(rows) + ", " + writer_.var(round) +
                         ", ::Halide::DeviceAPI::Host);");
        }
        block_ = columns;
        tile_ = ident(block_);
    }

    /** Plan::serial_tiles: the tiles of every dimension fused into one loop, split into
     * blocks of serial_tiles tiles (the block loop over the CPEs) and the tiles of a block
     * (block_, a serial loop where the stagings are computed and double buffered). */
    void serial_tiles_prefetched(const std::vector<std::string> &outer) {
        const std::string fused = fuse_loops(outer, "sw_tile");
        const std::string blocks = "sw_block", serial = "sw_serial";
        out_.split(Var(fused), Var(blocks), Var(serial), plan_.serial_tiles);
        writer_.line(out_ident_ + ".split(" + writer_.var(fused) + ", " + writer_.var(blocks) +
                     ", " + writer_.var(serial) + ", " + std::to_string(plan_.serial_tiles) + ");");
        block_loops(blocks, "");
        block_ = serial;
        tile_ = ident(block_);
    }

    const Stage &stage(const std::string &name) const {
        return info_.stages[info_.by_name.at(name)];
    }
    std::string chunk_rvar_name() const {
        return info_.chunk_rvar >= 0 ? info_.rvars[info_.chunk_rvar].var : "";
    }
    std::string update_ident() const {
        return ident(info_.main) + ".update(" + std::to_string(info_.main_update) + ")";
    }

    /** The names of the loops of an rfactor plan's reduction: the chunked variable, its chunks
     * and the points in a chunk, split into the chunk's vectors and their lanes (the lanes of
     * the partial sums' Var `lane`). */
    struct RfactorVars {
        std::string chunk_var, chunk_outer, chunk_inner, chunk_vectors, vector_lanes, lane;
    };
    RfactorVars rfactor_vars() const {
        const std::string chunk_var = chunk_rvar_name();
        return {chunk_var,         chunk_var + "_o",  chunk_var + "_i",
                chunk_var + "_io", chunk_var + "_ii", "sw_lane"};
    }

    /** Lanes of partial sums (rfactor) along the unit-stride reduction, in register blocks;
     * the chunk-staged stages computed per chunk of the partial sums. */
    void schedule_update_by_rfactor(const Stage &main_stage, Func main_func) {
        Func partial = rfactor_into_lanes(main_stage, main_func);
        block_partial_sums(main_stage, partial);
        stage_chunks_at_partial_sums(partial);
    }

    /** The chunk's points split into vectors of plan.lanes lanes, the lanes factored out into the
     * partial sums (per tile, in LDM, the lanes innermost in storage and vectorised). */
    Func rfactor_into_lanes(const Stage &main_stage, Func main_func) {
        const std::string main_ident = ident(info_.main), update_src = update_ident();
        Halide::Stage update = main_func.update(info_.main_update);
        const RfactorVars v = rfactor_vars();
        const int chunk = chunked_ ? plan_.chunk : int(info_.reduction);
        update.split(RVar(v.chunk_var), RVar(v.chunk_outer), RVar(v.chunk_inner), chunk)
            .split(RVar(v.chunk_inner), RVar(v.chunk_vectors), RVar(v.vector_lanes), plan_.lanes);
        writer_.line(update_src + ".split(" + writer_.rvar(v.chunk_var) + ", " +
                     writer_.rvar(v.chunk_outer) + ", " + writer_.rvar(v.chunk_inner) + ", " +
                     std::to_string(chunk) + ").split(" + ident(v.chunk_inner) + ", " +
                     writer_.rvar(v.chunk_vectors) + ", " + writer_.rvar(v.vector_lanes) + ", " +
                     lanes_ + ");");
        Func partial = update.rfactor(RVar(v.vector_lanes), Var(v.lane));
        writer_.line("Func " + main_ident + "_partial = " + update_src + ".rfactor(" +
                     ident(v.vector_lanes) + ", " + writer_.var(v.lane) + ");");
        std::vector<Var> storage{Var(v.lane)};
        std::vector<std::string> storage_names{ident(v.lane)};
        for (const std::string &a : main_stage.args)
            storage.push_back(Var(a)), storage_names.push_back(writer_.var(a));
        partial.compute_at(out_, Var(block_))
            .store_in(sw::LDM)
            .reorder_storage(storage)
            .vectorize(Var(v.lane));
        writer_.line(main_ident + "_partial.compute_at(" + out_ident_ + ", " + tile_ +
                     ").store_in(::sw::LDM).reorder_storage(" + list(storage_names) +
                     ").vectorize(" + ident(v.lane) + ");");
        return partial;
    }

    /** A register block of plan.block x plan.block_lines points over the first two pure
     * dimensions, unrolled inside the lanes: each loaded vector serves a row or column of the
     * block (ShareOperands). */
    void block_partial_sums(const Stage &main_stage, Func partial) {
        const std::string main_ident = ident(info_.main);
        const RfactorVars v = rfactor_vars();
        const int block_points[2] = {plan_.block, plan_.block_lines};
        std::vector<std::string> inner, outer_args;
        for (size_t a = 0; a < main_stage.args.size(); a++) {
            const std::string &arg = main_stage.args[a];
            if (a < 2 && block_points[a] > 1) {
                partial.update(0).split(Var(arg), Var(arg + "_bo"), Var(arg + "_bi"),
                                        block_points[a]);
                writer_.line(main_ident + "_partial.update(0).split(" + writer_.var(arg) + ", " +
                             writer_.var(arg + "_bo") + ", " + writer_.var(arg + "_bi") + ", " +
                             std::to_string(block_points[a]) + ");");
                inner.push_back(arg + "_bi"), outer_args.push_back(arg + "_bo");
            } else {
                outer_args.push_back(arg);
            }
        }
        std::vector<std::pair<std::string, bool>> order{{v.lane, false}};
        std::vector<std::string> order_names{ident(v.lane)};
        for (const std::string &i : inner)
            order.push_back({i, false}), order_names.push_back(ident(i));
        order.push_back({v.chunk_vectors, true}), order_names.push_back(ident(v.chunk_vectors));
        for (const std::string &a : outer_args)
            order.push_back({a, false}), order_names.push_back(writer_.var(a));
        order.push_back({v.chunk_outer, true}), order_names.push_back(ident(v.chunk_outer));
        partial.update(0).reorder(vrs(order)).vectorize(Var(v.lane));
        writer_.line(main_ident + "_partial.update(0).reorder(" + list(order_names) +
                     ").vectorize(" + ident(v.lane) + ");");
        for (const std::string &i : inner) {
            partial.update(0).unroll(Var(i));
            writer_.line(main_ident + "_partial.update(0).unroll(" + ident(i) + ");");
        }
    }

    /** The chunk-staged stages computed per chunk of the partial sums (staging there needs the
     * partial Func itself). */
    void stage_chunks_at_partial_sums(Func partial) {
        const RfactorVars v = rfactor_vars();
        stage_level_ = ident(v.chunk_outer);
        const std::string partial_ident = ident(info_.main) + "_partial";
        for (const std::string &n : info_.chunk_staged) {
            Func in = writer_.func(n);
            Func staged = stage(n).is_input ? in.in() : in;
            staged.compute_at(partial, RVar(v.chunk_outer)).store_in(sw::LDM);
            writer_.line(ident(n) + (stage(n).is_input ? ".in()" : "") + ".compute_at(" +
                         partial_ident + ", " + stage_level_ + ").store_in(::sw::LDM);");
        }
    }

    /** The loops of the main update, innermost first, as Halide and as source. */
    struct LoopOrder {
        Writer &writer;
        std::vector<std::pair<std::string, bool>> loops; ///< name, is a reduction variable
        std::vector<std::string> names;
        void push(const std::string &n, bool is_rvar) {
            loops.push_back({n, is_rvar});
            names.push_back(is_rvar ? writer.rvar(n) : writer.var(n));
        }
    };

    /** The main update without rfactor: chunks of the reduction, vectors along x in
     * register blocks, the loop order, and what is unrolled. */
    void schedule_update(const Stage &main_stage, Func main_func) {
        const std::string update_src = update_ident();
        Halide::Stage update = main_func.update(info_.main_update);
        const std::string chunk_var = chunk_rvar_name(), chunk_outer = chunk_var + "_o",
                          chunk_inner = chunk_var + "_i";
        const std::string x = main_stage.args.empty() ? "" : main_stage.args[0];
        if (chunked_) {
            update.split(RVar(chunk_var), RVar(chunk_outer), RVar(chunk_inner), plan_.chunk);
            writer_.line(update_src + ".split(" + writer_.rvar(chunk_var) + ", " +
                         writer_.rvar(chunk_outer) + ", " + writer_.rvar(chunk_inner) + ", " +
                         std::to_string(plan_.chunk) + ");");
        }
        LoopOrder order{writer_, {}, {}};
        if (plan_.vector == Plan::Vector::Pure)
            split_into_register_blocks(main_stage, update, order);
        for (size_t i = 0; i < info_.rvars.size(); i++) {
            if (int(i) == info_.chunk_rvar)
                continue;
            order.push(info_.rvars[i].var, true);
        }
        if (info_.chunk_rvar >= 0)
            order.push(chunked_ ? chunk_inner : chunk_var, true);
        order.push(plan_.vector == Plan::Vector::Pure ? x + "_vo" : x, false);
        for (size_t a = 1; a < main_stage.args.size(); a++) {
            const bool split = plan_.vector == Plan::Vector::Pure && plan_.block_lines > 1 &&
                               int(a) == info_.block_dim;
            order.push(split ? main_stage.args[a] + "_bo" : main_stage.args[a], false);
        }
        if (chunked_)
            order.push(chunk_outer, true);
        update.reorder(vrs(order.loops));
        writer_.line(update_src + ".reorder(" + list(order.names) + ");");
        if (plan_.vector == Plan::Vector::Pure) {
            update.vectorize(Var(x + "_vii")).unroll(Var(x + "_vio"));
            writer_.line(update_src + ".vectorize(" + ident(x + "_vii") + ").unroll(" +
                         ident(x + "_vio") + ");");
            if (plan_.block_lines > 1) {
                const std::string block_lines_var = main_stage.args[info_.block_dim] + "_bi";
                update.unroll(Var(block_lines_var));
                writer_.line(update_src + ".unroll(" + ident(block_lines_var) + ");");
            }
        }
        unroll_taps(update);
        if (chunked_)
            stage_level_ = ident(chunk_outer);
    }

    /** x split into register blocks of plan.block vectors (and, with plan.block_lines, the
     * block's second dimension): the innermost loops of the update. */
    void split_into_register_blocks(const Stage &main_stage, Halide::Stage &update,
                                    LoopOrder &order) {
        const std::string update_src = update_ident();
        const std::string x = main_stage.args.empty() ? "" : main_stage.args[0];
        const std::string x_blocks = x + "_vo", x_in_block = x + "_vi", x_vectors = x + "_vio",
                          x_lanes = x + "_vii";
        update
            .split(Var(x), Var(x_blocks), Var(x_in_block), plan_.lanes * plan_.block,
                   TailStrategy::RoundUp)
            .split(Var(x_in_block), Var(x_vectors), Var(x_lanes), plan_.lanes);
        writer_.line(update_src + ".split(" + writer_.var(x) + ", " + writer_.var(x_blocks) + ", " +
                     writer_.var(x_in_block) + ", " + std::to_string(plan_.lanes * plan_.block) +
                     ", TailStrategy::RoundUp).split(" + ident(x_in_block) + ", " +
                     writer_.var(x_vectors) + ", " + writer_.var(x_lanes) + ", " + lanes_ + ");");
        order.push(x_lanes, false), order.push(x_vectors, false);
        if (plan_.block_lines > 1) {
            // The block's second dimension, unrolled inside the vectors' loop.
            const std::string block_dim_var = main_stage.args[info_.block_dim];
            update.split(Var(block_dim_var), Var(block_dim_var + "_bo"), Var(block_dim_var + "_bi"),
                         plan_.block_lines);
            writer_.line(update_src + ".split(" + writer_.var(block_dim_var) + ", " +
                         writer_.var(block_dim_var + "_bo") + ", " +
                         writer_.var(block_dim_var + "_bi") + ", " +
                         std::to_string(plan_.block_lines) + ");");
            order.push(block_dim_var + "_bi", false);
        }
    }

    /** The taps (the reduction variables other than the chunked one) unrolled, or with phase
     * planes those along x, which read their planes at constant offsets. */
    void unroll_taps(Halide::Stage &update) {
        const std::string update_src = update_ident();
        if (plan_.unroll_taps) {
            for (size_t i = 0; i < info_.rvars.size(); i++) {
                if (int(i) == info_.chunk_rvar)
                    continue;
                update.unroll(RVar(info_.rvars[i].var));
                writer_.line(update_src + ".unroll(" + ident(info_.rvars[i].var) + ");");
            }
        } else if (plan_.phases && info_.chunk_rvar != 0 && !info_.rvars.empty()) {
            update.unroll(RVar(info_.rvars[0].var));
            writer_.line(update_src + ".unroll(" + ident(info_.rvars[0].var) + ");");
        }
    }

    /** A stage other than the main one computed in LDM, per chunk or per tile. */
    void stage_in_ldm(const Stage &s, bool per_chunk) {
        Func f = writer_.func(s.name);
        Func staged = s.is_input ? f.in() : f;
        const std::string staged_ident = ident(s.name) + (s.is_input ? ".in()" : "");
        // A computing producer (a prologue) is computed from its own stagings when its chunk
        // starts: those are prefetched, not it.
        const bool computing = contains(info_.computing_producers, s.name);
        if (per_chunk) {
            staged
                .compute_at(Func(env_.at(info_.main)),
                            RVar(info_.rvars[info_.chunk_rvar].var + "_o"))
                .store_in(sw::LDM);
            writer_.line(staged_ident + ".compute_at(" + ident(info_.main) + ", " + stage_level_ +
                         ").store_in(::sw::LDM);");
            if (plan_.double_buffer && !computing)
                double_buffered_.push_back(s.name);
        } else {
            staged.compute_at(out_, Var(block_)).store_in(sw::LDM);
            writer_.line(staged_ident + ".compute_at(" + out_ident_ + ", " + tile_ +
                         ").store_in(::sw::LDM);");
            // Tiles in turn: the next tile's staging prefetched.
            if (plan_.serial_tiles > 1 && !computing)
                double_buffered_.push_back(s.name);
        }
        // A zero-padded window read by unit-stride vectors: its LDM rows whole vectors.
        const auto box = info_.chunk_region.find(s.name);
        if (box != info_.chunk_region.end() && !box->second.empty()) {
            const int64_t row = extents(box->second, plan_bindings(info_, plan_, plan_.lanes))[0];
            if (aligned_window(info_, plan_, s.name, row)) {
                staged.align_storage(Var(s.args[0]), plan_.lanes);
                writer_.line(staged_ident + ".align_storage(" + writer_.var(s.args[0]) + ", " +
                             std::to_string(plan_.lanes) + ");");
            }
        }
        // A zero-padded window: its rows placed by the fetching CPE's requests.
        if (plan_.place_rows && !s.is_input && !computing) {
            sw::place_rows(staged);
            marked_.rows_placed.insert(staged.name());
            writer_.line("::sw::place_rows(" + staged_ident + ");");
        }
        if (const int vectors = producer_vectors(info_, plan_, s.name)) {
            // A prologue on vectors along x, `vectors` at once (its window rows are whole
            // runs of them: nothing is computed past it).
            const std::string x = s.args[0];
            Var xv(x + "_pv"), xvo(x + "_pvo"), xvi(x + "_pvi");
            f.split(Var(x), xv, xvo, plan_.lanes * vectors, TailStrategy::RoundUp)
                .split(xvo, xvo, xvi, plan_.lanes)
                .vectorize(xvi)
                .unroll(xvo);
            writer_.line(ident(s.name) + ".split(" + writer_.var(x) + ", " +
                         writer_.var(xv.name()) + ", " + writer_.var(xvo.name()) + ", " +
                         std::to_string(plan_.lanes * vectors) + ", TailStrategy::RoundUp).split(" +
                         writer_.var(xvo.name()) + ", " + writer_.var(xvo.name()) + ", " +
                         writer_.var(xvi.name()) + ", " + lanes_ + ").vectorize(" +
                         writer_.var(xvi.name()) + ").unroll(" + writer_.var(xvo.name()) + ");");
        }
        if (!s.is_input) {
            for (int update_index = 0; update_index < int(s.func.updates().size());
                 update_index++) {
                f.update(update_index).unscheduled();
                writer_.line(ident(s.name) + ".update(" + std::to_string(update_index) +
                             ").unscheduled();");
            }
        }
    }
};

} // namespace

AppliedPlan apply_plan(const PipelineInfo &info, const Plan &plan,
                       const std::map<std::string, Function> &env) {
    PlanApplier apply(info, plan, env);
    apply.tile_output_over_cpes();
    apply.schedule_main_stage();
    apply.stage_other_stages();
    apply.share_inputs();
    apply.double_buffer_stagings();
    apply.split_gathered_windows();
    apply.stage_computing_output();
    return apply.result();
}

std::string schedule_function(const std::string &body, const std::string &name) {
    std::ostringstream src;
    src << "inline void apply_schedule_" << ident(name)
        << "(::Halide::Pipeline pipeline, ::Halide::Target target) {\n"
        << "    using ::Halide::Func;\n    using ::Halide::Var;\n    using ::Halide::RVar;\n"
        << "    using ::Halide::TailStrategy;\n    (void)target;\n"
        << body << "}\n";
    return src.str();
}

} // namespace sw_auto
