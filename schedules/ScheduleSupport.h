/** \file
 * Small helpers shared by the layer schedules.
 */
#ifndef SCHEDULES_SCHEDULE_SUPPORT_H
#define SCHEDULES_SCHEDULE_SUPPORT_H

#include "Halide.h"
#include "target_sw/Divisors.h"
#include "target_sw/Machine.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace schedules {

inline int ceil_div(int a, int b) {
    return int((int64_t(a) + b - 1) / b);
}

/** Lanes of the CPE float vectors the code generator emits for \p m (SW26010's floatv4: 4,
 * SW26010-Pro's floatv8: 8). */
inline int vector_lanes(const sw::Machine &m) {
    return m.simd_float_lanes;
}

/** Share of the CPEs busy over the waves needed for \p tiles tiles. */
inline double cpe_occupancy(int64_t tiles, const sw::Machine &m) {
    const int64_t p = m.cpes_per_core_group;
    const int64_t waves = (tiles + p - 1) / p;
    return double(tiles) / double(waves * p);
}

/** The largest power of two, at most \p cap (a power of two), that divides \p n: the points
 * of a register block along a dimension whose tile has \p n points. */
inline int power_of_two_block(int n, int cap) {
    int b = cap;
    while (n % b)
        b /= 2;
    return b;
}

/** The floatv4 GEMM kernel of an update acc(j, i) += a(k, i) * b(j, k) (matmul's, batch_matmul's):
 * \p j in register blocks of up to 4 vectors (of a tile of \p tn points along it), \p i in
 * blocks of up to 4 rows (of \p tm), each block's vectors and rows unrolled around the
 * innermost reduction loop \p k; \p outer, already split off by the caller (a chunk of the
 * reduction, a chunk of columns), outermost. */
inline void schedule_register_block_kernel(Halide::Stage update, const Halide::VarOrRVar &j,
                                           const Halide::VarOrRVar &i, const Halide::VarOrRVar &k,
                                           const Halide::VarOrRVar &outer, int tn, int tm,
                                           const sw::Machine &m) {
    using namespace Halide;
    const int bj = power_of_two_block(tn / vector_lanes(m), 4), bi = power_of_two_block(tm, 4);
    Var jv("jv"), jb("jb"), lane("lane"), ib("ib"), ir("ir");
    update.split(j, jb, jv, bj * vector_lanes(m))
        .split(jv, jv, lane, vector_lanes(m))
        .split(i, ib, ir, bi)
        .reorder(lane, jv, ir, k, jb, ib, outer)
        .vectorize(lane)
        .unroll(jv)
        .unroll(ir);
}

/** The reduction of \p f's first update over \p r as floatv4 partials (rfactor): \p chains
 * vectors a step, independent accumulators (unrolled, kept in registers) so that the
 * operations do not wait on each other's latency; the partials in LDM at \p at's \p at_var,
 * lanes innermost, then \p pure (f's pure dimensions), and reduced by f's own update. r's
 * extent is a multiple of chains * vector_lanes(m) (layer_norm's mean and variance, the
 * attention's row max and sum). */
inline void schedule_vector_partials(Halide::Func f, const Halide::RVar &r, int chains,
                                     Halide::Func at, const Halide::Var &at_var,
                                     const std::vector<Halide::Var> &pure, const sw::Machine &m) {
    using namespace Halide;
    RVar ro("ro"), ri("ri"), rv("rv"), rl("rl");
    Var lane("lane"), v("v");
    f.update(0).split(r, ro, ri, chains * vector_lanes(m)).split(ri, rv, rl, vector_lanes(m));
    Func partial = f.update(0).rfactor({{rl, lane}, {rv, v}});
    std::vector<Var> storage = {lane, v};
    std::vector<VarOrRVar> order = {lane, v, ro};
    storage.insert(storage.end(), pure.begin(), pure.end());
    order.insert(order.end(), pure.begin(), pure.end());
    partial.compute_at(at, at_var).store_in(sw::LDM).reorder_storage(storage).vectorize(lane);
    partial.update(0).reorder(order).vectorize(lane).unroll(v);
}

/** Divisors of \p n, largest first (sw::divisors_desc, O(sqrt(n))). */
inline std::vector<int> divisors_desc(int n) {
    const std::vector<int64_t> d = sw::divisors_desc(n);
    return std::vector<int>(d.begin(), d.end());
}

/** The LDM a schedule may plan for: the machine's data budget less the alignment slack of
 * \p buffers buffers. */
inline int64_t ldm_plan_budget(const sw::Machine &m, int buffers) {
    return m.ldm_data_budget() - buffers * m.ldm_alignment;
}

/** A tile of tx x ty pixels x tc channels of one image. */
struct PixelTiles {
    int tx, ty, tc;
};

/** Bytes of float32 that tile \p t of a width x height map moves as one contiguous block: a
 * row, the whole plane when the rows are whole, every channel when the planes are. */
inline double contiguous_bytes(const PixelTiles &t, int width, int height) {
    double bytes = 4.0 * t.tx;
    if (t.tx == width)
        bytes *= t.ty;
    if (t.tx == width && t.ty == height)
        bytes *= t.tc;
    return bytes;
}

/** The tile (sizes clipped to the tensor) with the highest \p score(tile, CPE occupancy);
 * a negative score rejects a tile (e.g. one that does not fit the LDM). */
template <typename Score>
PixelTiles search_pixel_tiles(int width, int height, int channels, int batch, const sw::Machine &m,
                              Score score, const std::vector<int> &txs = {64, 32, 16, 8, 4, 2, 1},
                              const std::vector<int> &tys = {32, 16, 8, 4, 2, 1},
                              const std::vector<int> &tcs = {128, 64, 32, 16, 8, 4, 2, 1}) {
    PixelTiles best{1, 1, 1};
    double best_score = -1;
    for (int tx : txs) {
        for (int ty : tys) {
            for (int tc : tcs) {
                const PixelTiles t{std::min(tx, width), std::min(ty, height),
                                   std::min(tc, channels)};
                const int64_t tiles = int64_t(ceil_div(width, t.tx)) * ceil_div(height, t.ty) *
                                      ceil_div(channels, t.tc) * batch;
                const double sc = score(t, cpe_occupancy(tiles, m));
                if (sc > best_score) {
                    best_score = sc;
                    best = t;
                }
            }
        }
    }
    return best;
}

/** Spreads tiles of \p output (tx x ty pixels x tc channels of one image, NCHW dims x, y,
 * c, n) over the CPEs: the tiles of one image form the inner block loop, the images the
 * outer one (kept apart so that LDM bounds are found per tile position). Returns the block
 * variable to compute the tile's stages at. */
inline Halide::Var spread_tiles_over_cpes(Halide::Func output, const Halide::Var &x,
                                          const Halide::Var &y, const Halide::Var &c,
                                          const Halide::Var &n, int tx, int ty, int tc) {
    using namespace Halide;
    Var xo("xo"), yo("yo"), co("co"), xi("xi"), yi("yi"), ci("ci"), tile("tile");
    output.tile(x, y, xo, yo, xi, yi, tx, ty)
        .split(c, co, ci, tc)
        .reorder(xi, yi, ci, xo, yo, co, n)
        .fuse(xo, yo, tile)
        .fuse(tile, co, tile)
        .gpu_blocks(tile, n, DeviceAPI::Host);
    return tile;
}

/** Measured DMA bandwidth of the core group (copy curve of the machine description) for
 * requests of \p bytes contiguous bytes, interpolated linearly in log2(bytes) and clamped
 * at the ends. Schedules use it to compare block sizes. */
inline double dma_gbps(const sw::Machine &m, double bytes) {
    const auto &c = m.dma_curve;
    if (bytes <= c.front().bytes_per_request)
        return c.front().copy_gbps * bytes / c.front().bytes_per_request;
    for (size_t i = 1; i < c.size(); i++) {
        if (bytes <= c[i].bytes_per_request) {
            const double a = std::log2(double(c[i - 1].bytes_per_request)),
                         b = std::log2(double(c[i].bytes_per_request));
            const double t = (std::log2(bytes) - a) / (b - a);
            return c[i - 1].copy_gbps + t * (c[i].copy_gbps - c[i - 1].copy_gbps);
        }
    }
    return c.back().copy_gbps;
}

} // namespace schedules

#endif
