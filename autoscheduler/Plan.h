/** \file
 * One candidate schedule of the Sunway autoscheduler's family (see Analysis.h): the choices
 * the search makes, and how they read.
 */
#ifndef SW_AUTO_PLAN_H
#define SW_AUTO_PLAN_H

#include <string>
#include <vector>

namespace sw_auto {

struct Plan {
    std::vector<int> tile;         ///< output tile size per dimension (innermost first)
    int chunk = 0;                 ///< reduction points staged at once (0: the whole reduction)
    bool inline_producers = false; ///< producers inlined, their inputs staged instead
    enum class Vector { None, Pure, Reduction } vector = Vector::None;
    /** Lanes of a CPE float vector (Machine::simd_float_lanes: floatv4 on SW26010, floatv8 on
     * SW26010-Pro), set by enumerate_plans: every vector of the plan has this many lanes. */
    int lanes = 4;
    /** Vector::Pure: vectors (of `lanes`) per register block along x. Vector::Reduction: points
     * of the register block along the first pure dimension. */
    int block = 1;
    /** Vector::Pure: points of the register block along PipelineInfo::block_dim.
     * Vector::Reduction: along the second pure dimension. */
    int block_lines = 1;
    bool unroll_taps = false;   ///< the reduction points other than the chunked ones unrolled
    bool double_buffer = false; ///< per-chunk staging prefetched into a second LDM slot
    /** Vector::Pure with gathered loads (a stride > 1 along x): the windows they read are
     * also kept split into the stride's phases (sw::split_phases), where those vectors are
     * unit-stride loads; the taps of the innermost reduction variable are unrolled. */
    bool phases = false;
    /** How the inputs whose staged box is the same on every CPE (shared_inputs in
     * Analysis.h) reach the CPEs: each CPE reads them itself, or CPE 0 reads them once and
     * they are shared by broadcast DMA or by register communication (sw::broadcast). An
     * input shared by register communication over the whole mesh is not double buffered.
     * Mesh: the CPEs as their 8 x 8 mesh, the tiles along output dimension mesh_dim (exactly
     * 8 of them) over its columns, the other tiles over its rows; a per-chunk staging whose
     * region does not move along mesh_dim is the same along each mesh row: the row's CPE in
     * column 0 fetches it and passes it along the row by register communication
     * (Sharing::RegCommRow); one whose region moves along mesh_dim alone is the same down
     * each column, fetched by the CPE in row 0 (Sharing::RegCommColumn). Both double
     * buffered with the plan (a convolution's window along the rows, its weights down the
     * columns: the register-communication GEMM's layout, schedules/matmul_schedule.h). */
    enum class Share { None, Dma, RegComm, Mesh } share = Share::None;
    int mesh_dim = -1; ///< Share::Mesh: the output dimension over the mesh columns
    /** Share::Mesh: the mesh's columns (Machine::cpe_mesh_cols); mesh_dim's tiles are that
     * many, or rounds of that many (mesh_column_dim). */
    int mesh_width = 8;
    /** Share::Mesh: which of the two kinds of stagings are shared (the others each CPE
     * fetches itself): along the rows, down the columns. */
    bool mesh_rows = true, mesh_columns = true;
    /** Share::Mesh: the stagings shared along the mesh rows broadcast to each row by DMA
     * (Sharing::DmaRow: the row's CPEs issue its pieces, BCAST_MODE with the row's mask,
     * between barriers) instead of passed along it by register communication: no CPE spends
     * compute on them (a dense layer's weights with its output columns down the mesh rows). */
    bool mesh_row_dma = false;
    /** Share::Mesh: the zero-padded windows passed along the mesh rows whose box rows are
     * whole source rows (a tile as wide as the map) come one DMA request per row straight to
     * their padded place, set up by the row's fetching CPE (sw::place_rows), instead of
     * compactly and then spread in the LDM by every CPE after the sharing. */
    bool place_rows = false;
    /** Only the tiles of the third dimension and beyond (a convolution's output channels and
     * images) are spread over the CPEs; each CPE runs the tiles of the first two (its pixels)
     * in turn. The CPEs then work on the same pixels at once, so an input that moves only
     * with the pixels (a convolution's input) is the same box on every CPE and may be shared. */
    bool serial_pixels = false;
    /** Tiles each CPE runs in turn, the next tile's stagings prefetched while the current one
     * is computed and put back (sw::double_buffer at the tile loop): the tiles of every
     * dimension fused into one loop, split into blocks of serial_tiles over the CPEs. 1: one
     * tile per block. Only for plans without reduction chunks or sharing (a pooling, a
     * depthwise conv, an element-wise layer: bound by DMA, their compute hidden). */
    int serial_tiles = 1;

    std::string describe() const {
        std::string s = "tile";
        for (size_t i = 0; i < tile.size(); i++)
            s += (i ? "x" : " ") + std::to_string(tile[i]);
        if (chunk)
            s += ", chunk " + std::to_string(chunk);
        if (inline_producers)
            s += ", producers inlined";
        if (vector == Vector::Pure) {
            s += ", floatv" + std::to_string(lanes) + " x" + std::to_string(block) +
                 (block_lines > 1 ? " x " + std::to_string(block_lines) : "") + " register block";
        }
        if (vector == Vector::Reduction) {
            s += ", floatv" + std::to_string(lanes) + " on the reduction (rfactor)";
            if (block * block_lines > 1)
                s += ", " + std::to_string(block) + " x " + std::to_string(block_lines) +
                     " register block";
        }
        if (unroll_taps)
            s += ", taps unrolled";
        if (double_buffer)
            s += ", double-buffered";
        if (phases)
            s += ", window split into phases";
        if (share == Share::Dma)
            s += ", shared input by broadcast DMA";
        if (share == Share::RegComm)
            s += ", shared input by register communication";
        if (share == Share::Mesh) {
            s += ", dimension " + std::to_string(mesh_dim) +
                 " over the mesh columns, inputs shared " +
                 (mesh_rows && mesh_columns ? "along mesh rows / columns"
                  : mesh_rows               ? "along mesh rows"
                                            : "down mesh columns");
            if (mesh_rows && mesh_row_dma)
                s += " (to each row by broadcast DMA)";
        }
        if (place_rows)
            s += ", window rows placed by DMA";
        if (serial_pixels)
            s += ", pixel tiles in turn on each CPE";
        if (serial_tiles > 1)
            s += ", " + std::to_string(serial_tiles) + " tiles in turn on each CPE, prefetched";
        return s;
    }
};

} // namespace sw_auto

#endif
