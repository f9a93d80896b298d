/** \file
 * Constant upper bounds by enumeration of the block variables plus interval arithmetic.
 */
#include "target_sw/ConstantBounds.h"

#include <algorithm>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

std::optional<int64_t> interval_bound(const Expr &e, const Scope<Interval> &scope) {
    Interval i = bounds_of_expr_in_scope(e, scope);
    if (!i.has_upper_bound())
        return std::nullopt;
    Expr hi = simplify(i.max);
    if (const int64_t *c = as_const_int(hi))
        return *c;
    Expr k = find_constant_bound(hi, Direction::Upper, scope);
    if (k.defined()) {
        // as_const_int points into the node: keep the simplified Expr alive while reading it.
        const Expr ks = simplify(k);
        if (const int64_t *c = as_const_int(ks))
            return *c;
    }
    return std::nullopt;
}

Scope<Interval> loop_scope(const std::vector<LoopRange> &loops) {
    Scope<Interval> scope;
    for (const LoopRange &l : loops) {
        scope.push(l.var, Interval(l.min, simplify(l.min + l.extent - 1)));
    }
    return scope;
}

} // namespace

std::optional<int64_t> constant_upper_bound(const Expr &e, const std::vector<LoopRange> &blocks,
                                            const std::vector<LoopRange> &loops,
                                            int64_t max_points) {
    Expr s = simplify(e);
    if (const int64_t *c = as_const_int(s))
        return *c;

    std::vector<LoopRange> all = loops;
    all.insert(all.end(), blocks.begin(), blocks.end());
    std::optional<int64_t> best = interval_bound(s, loop_scope(all));

    // Enumerate the block variables that the expression uses.
    std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> used;
    int64_t points = 1;
    for (const LoopRange &b : blocks) {
        if (!expr_uses_var(s, b.var))
            continue;
        const Expr min_e = simplify(b.min), extent_e = simplify(b.extent); // owners of *mn, *ex
        const int64_t *mn = as_const_int(min_e);
        const int64_t *ex = as_const_int(extent_e);
        if (!mn || !ex)
            return best;
        used.push_back({b.var, {*mn, *ex}});
        points *= std::max<int64_t>(*ex, 1);
        if (points > max_points)
            return best;
    }
    if (used.empty())
        return best;

    const Scope<Interval> scope = loop_scope(loops);
    std::optional<int64_t> enumerated;
    for (int64_t p = 0; p < points; p++) {
        int64_t rest = p;
        std::map<std::string, Expr> values;
        for (size_t i = 0; i < used.size(); i++) {
            const int64_t ext = used[i].second.second;
            values[used[i].first] = Expr(int32_t(used[i].second.first + rest % ext));
            rest /= ext;
        }
        std::optional<int64_t> b = interval_bound(simplify(substitute(values, s)), scope);
        if (!b)
            return best;
        enumerated = enumerated ? std::max(*enumerated, *b) : *b;
    }
    if (!best || (enumerated && *enumerated < *best))
        best = enumerated;
    return best;
}

} // namespace sw
