/** \file
 * Constant upper bounds of expressions inside a CPE kernel (LDM buffer sizes, DMA sizes).
 *
 * Halide's interval arithmetic loses the correlation between terms such as
 * min(t, 23) - max(min(t, 24), 1), and would reserve far more LDM than an edge tile needs.
 * Block loops have constant extents, so the bound is taken per value of the block
 * variables (each substituted and simplified), with interval arithmetic only for the
 * remaining loop variables; the smaller of that and the plain interval bound is returned.
 */
#ifndef SW_CONSTANT_BOUNDS_H
#define SW_CONSTANT_BOUNDS_H

#include "Halide.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sw {

struct LoopRange {
    std::string var;
    Halide::Expr min, extent;
};

/** A constant upper bound of \p e, where \p blocks are the kernel's block loops (constant
 * extents, enumerated when their product is at most \p max_points) and \p loops are the
 * enclosing serial loops inside the kernel (bounded by intervals). \p e must have its lets
 * substituted. Returns nothing when no constant bound is found. */
std::optional<int64_t> constant_upper_bound(const Halide::Expr &e,
                                            const std::vector<LoopRange> &blocks,
                                            const std::vector<LoopRange> &loops,
                                            int64_t max_points = 1 << 16);

} // namespace sw

#endif
