/** \file
 * Splitting an LDM staging into the phases of its consumers' stride (see SplitPhases.h).
 */
#include "target_sw/SplitPhases.h"

#include "target_sw/ConstantBounds.h"
#include "target_sw/PassSupport.h"

#include <map>
#include <optional>
#include <sstream>
#include <vector>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** The smallest constant stride > 1 of the vector loads of \p buffer in \p s (0: none). */
class StrideScan : public IRVisitor {
public:
    explicit StrideScan(const std::string &buffer) : buffer(buffer) {}
    int stride = 0;

private:
    using IRVisitor::visit;
    const std::string &buffer;
    void visit(const Load *op) override {
        IRVisitor::visit(op);
        if (op->name != buffer || op->type.is_scalar() || !is_const_one(op->predicate))
            return;
        const Ramp *r = op->index.as<Ramp>();
        const int64_t *s = r ? as_const_int(r->stride) : nullptr;
        if (s && *s > 1 && (stride == 0 || *s < stride))
            stride = int(*s);
    }
};

/** An integer expression as a sum of constant multiples of atoms (variables, or
 * subexpressions that are not sums or constant multiples, keyed by their text so that equal
 * ones cancel) plus a constant. */
struct Affine {
    std::map<std::string, std::pair<Expr, int64_t>> terms;
    int64_t constant = 0;
};

void affine(const Expr &e, int64_t scale, Affine &a) {
    if (const int64_t *c = as_const_int(e)) {
        a.constant += scale * *c;
    } else if (const Add *op = e.as<Add>()) {
        affine(op->a, scale, a), affine(op->b, scale, a);
    } else if (const Sub *op = e.as<Sub>()) {
        affine(op->a, scale, a), affine(op->b, -scale, a);
    } else if (const Mul *op = e.as<Mul>(); op && (as_const_int(op->a) || as_const_int(op->b))) {
        const bool b_const = as_const_int(op->b) != nullptr;
        affine(b_const ? op->a : op->b, scale * *as_const_int(b_const ? op->b : op->a), a);
    } else {
        std::ostringstream key;
        key << e;
        auto &t = a.terms[key.str()];
        t.first = e, t.second += scale;
    }
}

/** Splits \p e (affine) into q x d + r with every term of r's coefficient below d in size:
 * the terms whose coefficients d divides go to q, the constant by floor division. Returns
 * false unless r is provably in [0, d) under \p bounds (then q = e / d and r = e mod d). */
bool split_by(const Expr &e, int64_t d, const Scope<Interval> &bounds, Expr &q, Expr &r) {
    Affine a;
    affine(e, 1, a);
    const Type t = e.type();
    const int64_t kq = a.constant >= 0 ? a.constant / d : -((-a.constant + d - 1) / d);
    q = make_const(t, kq), r = make_const(t, a.constant - kq * d);
    for (const auto &[key, term] : a.terms) {
        const auto &[v, c] = term;
        if (c == 0)
            continue;
        if (c % d == 0) {
            q = q + v * make_const(t, c / d);
        } else {
            r = r + v * make_const(t, c);
        }
    }
    q = simplify(q), r = simplify(r);
    const Interval in = bounds_of_expr_in_scope(r, bounds);
    return in.is_bounded() && can_prove(in.min >= 0) && can_prove(in.max < make_const(t, d));
}

/** Where element i = row x P + x of the buffer (P: its row pitch) lies in the phase planes:
 * plane x mod S, row x R + x / S within it (R: the planes' row pitch). */
struct PlaneLayout {
    int S = 1;
    int64_t P = 1, R = 1, Q = 1; ///< buffer row pitch, plane row pitch, plane size
    int64_t rows = 1;
    /** The plane index of buffer index \p i: split into row, phase and position by its
     * affine terms where the enclosing loops' bounds prove it, else by div and mod. */
    Expr map(const Expr &i, const Scope<Interval> &bounds) const {
        const Type t = i.type();
        Expr row, x, j, p;
        if (!split_by(i, P, bounds, row, x)) {
            row = simplify(i / make_const(t, P)), x = simplify(i % make_const(t, P));
        }
        if (!split_by(x, S, bounds, j, p)) {
            j = simplify(x / make_const(t, S)), p = simplify(x % make_const(t, S));
        }
        return simplify(p * make_const(t, Q) + row * make_const(t, R) + j);
    }
};

/** Whether the copy into the planes runs on floatv4 (stride 2, float32): per 8 elements two
 * loads, the even and odd lanes, two stores. */
bool vector_copy(const PlaneLayout &layout, const Type &t) {
    return layout.S == 2 && t == Float(32);
}

/** The consumer's vector loads of the buffer with a stride that is a multiple of S read the
 * phase planes. */
class ReadPlanes : public IRMutator {
public:
    /** \p lets: those around the consumer; \p blocks: the kernel's block loops. */
    ReadPlanes(const std::string &buffer, const std::string &planes, const PlaneLayout &layout,
               const LetScope &lets, const std::vector<LoopRange> &blocks)
        : buffer(buffer), planes(planes), layout(layout), lets(lets) {
        for (const LoopRange &b : blocks) {
            const int64_t *mn = as_const_int(b.min), *ex = as_const_int(b.extent);
            if (mn && ex)
                bounds.push(b.var, Interval(b.min, Expr(int32_t(*mn + *ex - 1))));
        }
    }
    int rewritten = 0;

private:
    using IRMutator::visit;
    const std::string &buffer, &planes;
    const PlaneLayout &layout;
    LetScope lets;          ///< enclosing lets: an index is mapped with them substituted
    Scope<Interval> bounds; ///< of the enclosing loops with constant bounds

    Stmt visit(const LetStmt *op) override {
        lets.push(op->name, op->value);
        Stmt body = mutate(op->body);
        lets.pop();
        return LetStmt::make(op->name, mutate(op->value), body);
    }
    Stmt visit(const For *op) override {
        const Expr min = simplify(lets.expand(op->min)), extent = simplify(lets.expand(op->extent));
        const int64_t *mn = as_const_int(min), *ex = as_const_int(extent);
        if (!mn || !ex)
            return IRMutator::visit(op);
        ScopedBinding<Interval> bind(bounds, op->name, Interval(min, Expr(int32_t(*mn + *ex - 1))));
        return IRMutator::visit(op);
    }
    Expr visit(const Load *op) override {
        if (op->name != buffer || op->type.is_scalar() || !is_const_one(op->predicate))
            return IRMutator::visit(op);
        const Ramp *r = op->index.as<Ramp>();
        const int64_t *s = r ? as_const_int(r->stride) : nullptr;
        if (!s || *s % layout.S != 0)
            return IRMutator::visit(op);
        rewritten++;
        // With the lets substituted the index names only loop variables, whose bounds let the
        // simplifier split it into row and position (a let may hide an offset's bound).
        const Expr base = lets.expand(mutate(r->base));
        const Expr index =
            Ramp::make(layout.map(base, bounds), make_const(base.type(), *s / layout.S), r->lanes);
        return Load::make(op->type, planes, index, Buffer<>(), Parameter(), op->predicate,
                          ModulusRemainder());
    }
};

class Split : public LetTrackingMutator {
public:
    Split(CpeKernel &k, const std::set<std::string> &marked) : k(k), marked(marked) {
        for (const BlockLoop &b : k.blocks)
            blocks.push_back({b.var, b.min, b.extent});
    }
    std::set<std::string> applied;

private:
    using LetTrackingMutator::visit;
    CpeKernel &k;
    const std::set<std::string> &marked;
    std::vector<LoopRange> blocks, loops;

    void note(const std::string &buffer, const std::string &why) {
        k.notes.push_back("split_phases(" + buffer + ") not applied: " + why +
                          "; its strided vectors stay gathered");
    }

    Stmt visit(const For *op) override {
        loops.push_back({op->name, lets.expand(op->min), lets.expand(op->extent)});
        Stmt body = mutate(op->body);
        loops.pop_back();
        return body.same_as(op->body)
                   ? Stmt(op)
                   : For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
    }

    Stmt visit(const Allocate *op) override {
        Stmt body = mutate(op->body);
        // The allocation as it was, around the mutated body.
        auto unchanged = [&](const Stmt &b) {
            return b.same_as(op->body)
                       ? Stmt(op)
                       : Allocate::make(op->name, op->type, op->memory_type, op->extents,
                                        op->condition, b, op->new_expr, op->free_function);
        };
        if (!marked.count(op->name))
            return unchanged(body);
        const std::string &buffer = op->name;
        StrideScan scan(buffer);
        body.accept(&scan);
        if (scan.stride == 0) {
            note(buffer, "its consumers read no vector of a constant stride > 1");
            return unchanged(body);
        }
        Expr size = make_const(Int(64), 1);
        for (const Expr &e : op->extents)
            size = size * cast<int64_t>(e);
        const std::optional<int64_t> elems = constant_upper_bound(lets.expand(size), blocks, loops);
        const Expr row = simplify(lets.expand(op->extents[0])); // kept: pitch points into it
        const int64_t *pitch = as_const_int(row);
        if (!elems || !pitch || *pitch <= 0) {
            note(buffer, "its size or row pitch is not a constant");
            return unchanged(body);
        }
        PlaneLayout layout;
        layout.S = scan.stride;
        layout.P = *pitch;
        layout.rows = (*elems + layout.P - 1) / layout.P;
        const PhasePlanes shape = phase_planes(layout.P, layout.rows, layout.S);
        layout.R = shape.row_pitch;
        layout.Q = shape.plane_elements;
        const int S = layout.S;
        const std::string planes = phase_planes_name(buffer);

        // The consumer: its strided vectors read the planes, after a copy into them.
        class Consumer : public LetTrackingMutator {
        public:
            Consumer(const std::string &buffer, const std::string &planes,
                     const PlaneLayout &layout, Type t, const LetScope &outer,
                     const std::vector<LoopRange> &blocks)
                : buffer(buffer), planes(planes), layout(layout), t(t), blocks(blocks) {
                lets = outer;
            }
            int consumers = 0, rewritten = 0;

        private:
            using LetTrackingMutator::visit;
            const std::string &buffer, &planes;
            const PlaneLayout &layout;
            Type t;
            const std::vector<LoopRange> &blocks;
            Stmt visit(const ProducerConsumer *op) override {
                if (op->is_producer || op->name != buffer)
                    return IRMutator::visit(op);
                consumers++;
                ReadPlanes read(buffer, planes, layout, lets, blocks);
                Stmt body = read.mutate(op->body);
                rewritten += read.rewritten;
                // Per buffer row, per group of S elements: S loads and S stores; for S = 2 on
                // float32, per group of 8 elements two floatv4 loads, their even and odd
                // lanes (two shuffles) and two aligned stores (the planes' rows are whole
                // vectors).
                const std::string row = planes + ".row", j = planes + ".j";
                const Expr rv = Variable::make(Int(32), row), jv = Variable::make(Int(32), j);
                std::vector<Stmt> copies;
                const bool vectors = vector_copy(layout, t);
                const int group = vectors ? 8 : layout.S;
                if (vectors) {
                    const Type v4 = t.with_lanes(4);
                    const Expr from = rv * int32_t(layout.P) + jv * 8;
                    auto load = [&](const Expr &at) {
                        return Load::make(v4, buffer, Ramp::make(at, 1, 4), Buffer<>(), Parameter(),
                                          const_true(4), ModulusRemainder());
                    };
                    const Expr a = load(from), b = load(from + 4);
                    for (int p = 0; p < 2; p++) {
                        const Expr to = rv * int32_t(layout.R) + jv * 4 + int32_t(p * layout.Q);
                        const Expr lanes =
                            Shuffle::make({a, b}, p == 0 ? std::vector<int>{0, 2, 4, 6}
                                                         : std::vector<int>{1, 3, 5, 7});
                        copies.push_back(Store::make(planes, lanes, Ramp::make(to, 1, 4),
                                                     Parameter(), const_true(4),
                                                     ModulusRemainder()));
                    }
                } else {
                    for (int p = 0; p < layout.S; p++) {
                        const Expr from = rv * int32_t(layout.P) + jv * layout.S + p;
                        const Expr to = rv * int32_t(layout.R) + jv + int32_t(p * layout.Q);
                        const Expr value = Load::make(t, buffer, from, Buffer<>(), Parameter(),
                                                      const_true(), ModulusRemainder());
                        copies.push_back(Store::make(planes, value, to, Parameter(), const_true(),
                                                     ModulusRemainder()));
                    }
                }
                const int32_t groups = int32_t((layout.P + group - 1) / group);
                Stmt copy =
                    For::make(j, 0, groups, ForType::Serial, DeviceAPI::None, Block::make(copies));
                copy =
                    For::make(row, 0, int32_t(layout.rows), ForType::Serial, DeviceAPI::None, copy);
                return ProducerConsumer::make(op->name, false, Block::make(copy, body));
            }
        } consumer(buffer, planes, layout, op->type, lets, blocks);
        body = consumer.mutate(body);
        if (consumer.consumers == 0 || consumer.rewritten == 0) {
            note(buffer, "no consumer of it was found");
            return unchanged(op->body);
        }
        applied.insert(buffer);
        // The copy reads whole groups (of S, or of 8 in vectors): the last row's may pass the
        // buffer's end.
        const Expr planes_size = Expr(int32_t(layout.Q * S)),
                   buffer_size = Expr(
                       int32_t(layout.rows * layout.P + (vector_copy(layout, op->type) ? 8 : S)));
        body = Allocate::make(planes, op->type, op->memory_type, {planes_size}, const_true(), body);
        return Allocate::make(op->name, op->type, op->memory_type, {buffer_size}, op->condition,
                              body, op->new_expr, op->free_function);
    }
};

} // namespace

PhasePlanes phase_planes(int64_t pitch, int64_t rows, int stride) {
    // Plane rows of whole vectors (a vector of the block at a tap whose offset within its
    // plane row is a multiple of 4 is aligned), and a vector of slack past the last row (a
    // vector rounded up past its row reads into the next one, as in the buffer).
    constexpr int64_t lanes = 4;
    const int64_t row_pitch = ((pitch + stride - 1) / stride + lanes - 1) / lanes * lanes;
    return {row_pitch, rows * row_pitch + lanes};
}

std::string phase_planes_name(const std::string &buffer) {
    return buffer + "$phases";
}

void apply_split_phases(CpeKernel &k, const std::set<std::string> &marked) {
    if (marked.empty())
        return;
    Split split(k, marked);
    k.body = split.mutate(k.body);
}

} // namespace sw
