#include "graph/ShapeInference.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

namespace sw_graph {

namespace {

/** Largest constant evaluated by folding: shape tensors and masks (Swin-T's shift mask at
 * 224x224 is 64 windows x 49 x 49 = 153664 elements), not weights. */
constexpr int64_t kMaxFoldElements = 1 << 22;
/** The largest ConstantOfShape made (a constant it fills: 64 MB of float32). */
constexpr int64_t kMaxConstantOfShape = int64_t(1) << 24;

using Shape = std::vector<int64_t>;

int64_t norm_axis(int64_t axis, int64_t rank, const std::string &what) {
    if (axis < -rank || axis >= rank) {
        throw NodeError(what + " " + std::to_string(axis) + " is out of range for rank " +
                        std::to_string(rank));
    }
    return axis < 0 ? axis + rank : axis;
}

int64_t product(const Shape &s, size_t from, size_t to) {
    return element_count(Shape(s.begin() + from, s.begin() + to));
}

struct Ctx {
    Graph &g;
    Node &node;

    bool has_in(size_t i) const { return !node.input(i).empty(); }
    size_t num_inputs() const { return node.inputs.size(); }

    const Tensor &in(size_t i) const {
        if (!has_in(i))
            throw NodeError("input " + std::to_string(i) + " is missing");
        const Tensor &t = g.tensor(node.inputs[i]);
        if (!t.is_static()) {
            throw NodeError("input '" + t.name + "' has no static shape");
        }
        return t;
    }
    const Tensor &float_in(size_t i) const {
        const Tensor &t = in(i);
        if (t.dtype != DType::Float32) {
            throw NodeError("input '" + t.name + "' is " + dtype_name(t.dtype) +
                            "; this operator takes float32");
        }
        return t;
    }
    const Tensor &const_in(size_t i, const std::string &what) const {
        const Tensor &t = in(i);
        if (!t.is_constant) {
            throw NodeError(what + " (input '" + t.name + "') is not a constant; only constant " +
                            what + " is supported");
        }
        return t;
    }
    /** An int64 constant vector input (axes, shape, split). */
    std::vector<int64_t> const_ints(size_t i, const std::string &what) const {
        const Tensor &t = const_in(i, what);
        if (t.dtype != DType::Int64 || t.shape.size() > 1) {
            throw NodeError(what + " (input '" + t.name + "') must be a 1-D int64 tensor");
        }
        return t.i64;
    }
    bool all_inputs_constant() const {
        for (const std::string &n : node.inputs) {
            if (!n.empty() && !g.tensor(n).is_constant)
                return false;
        }
        return true;
    }
    void set_out(size_t i, const Shape &shape, DType dtype) {
        if (node.output(i).empty())
            return;
        element_count(shape); // overflow check
        Tensor &t = g.tensor(node.outputs[i]);
        t.shape = shape;
        t.has_shape = true;
        t.dtype = dtype;
    }
    /** Makes output i a constant with these values (already in t's dtype). */
    void set_const(size_t i, std::vector<float> f32, std::vector<int64_t> i64) {
        if (node.output(i).empty())
            return;
        Tensor &t = g.tensor(node.outputs[i]);
        t.is_constant = true;
        t.f32 = std::move(f32);
        t.i64 = std::move(i64);
    }
    bool output_small(size_t i) const {
        if (node.output(i).empty())
            return false;
        return g.tensor(node.outputs[i]).elements() <= kMaxFoldElements;
    }
};

/** For each element of \p shape (row major), base + the sum over d of its index along d times
 * strides[d]: the element of another tensor that a strided view of it reads (a broadcast, a
 * transpose, a slice). */
std::vector<int64_t> strided_sources(const Shape &shape, const std::vector<int64_t> &strides,
                                     int64_t base = 0) {
    const size_t r = shape.size();
    const int64_t n = element_count(shape);
    std::vector<int64_t> src(n);
    std::vector<int64_t> idx(r, 0);
    for (int64_t e = 0; e < n; e++) {
        int64_t k = base;
        for (size_t d = 0; d < r; d++)
            k += idx[d] * strides[d];
        src[e] = k;
        for (size_t d = r; d-- > 0;) {
            if (++idx[d] < shape[d])
                break;
            idx[d] = 0;
        }
    }
    return src;
}

/** The row-major strides of \p shape. */
std::vector<int64_t> row_major_strides(const Shape &shape) {
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;)
        strides[d - 1] = strides[d] * shape[d];
    return strides;
}

/** For each element of out_shape (row major), the element of `in_shape` that numpy
 * broadcasting reads. */
std::vector<int64_t> broadcast_sources(const Shape &in_shape, const Shape &out_shape) {
    const size_t r = out_shape.size(), off = r - in_shape.size();
    std::vector<int64_t> strides(r, 0);
    int64_t s = 1;
    for (size_t d = r; d-- > off;) {
        strides[d] = in_shape[d - off] == 1 ? 0 : s;
        s *= in_shape[d - off];
    }
    return strided_sources(out_shape, strides);
}

/** Copies the input's values to the output in the same order (a reshaping view) when
 * the input is a small constant. */
void fold_view(Ctx &c) {
    const Tensor &x = c.g.tensor(c.node.inputs[0]);
    if (x.is_constant && c.output_small(0))
        c.set_const(0, x.f32, x.i64);
}

/** Output i gathers the input's elements at `sources`. */
void fold_gather(Ctx &c, size_t out, const Tensor &x, const std::vector<int64_t> &sources) {
    std::vector<float> f;
    std::vector<int64_t> i;
    for (int64_t s : sources) {
        if (x.dtype == DType::Float32)
            f.push_back(x.f32[s]);
        else
            i.push_back(x.i64[s]);
    }
    c.set_const(out, std::move(f), std::move(i));
}

// ------------------------------------------------------------------ elementwise

void infer_unary_float(Ctx &c) {
    c.set_out(0, c.float_in(0).shape, DType::Float32);
}

void infer_identity(Ctx &c) {
    const Tensor &x = c.in(0);
    c.set_out(0, x.shape, x.dtype);
    fold_view(c);
}

/** Gelu (fuse_gelu): approximate = "none" (the erf form) or "tanh". */
void infer_gelu(Ctx &c) {
    const std::string a = c.node.attr_string("approximate", "none");
    if (a != "none" && a != "tanh")
        throw NodeError("approximate='" + a + "' (none or tanh)");
    infer_unary_float(c);
}

void infer_leaky_relu(Ctx &c) {
    c.node.attr_float("alpha", 0.01f);
    infer_unary_float(c);
}

/** HardSigmoid (and the fused sw_graph.HardSwish): alpha and beta finite floats. */
void infer_hard_sigmoid(Ctx &c) {
    for (const char *a : {"alpha", "beta"}) {
        const float v = c.node.attr_float(a, 0.5f);
        if (!std::isfinite(v)) {
            throw NodeError(std::string("attribute '") + a + "' of " + c.node.op_type + " is " +
                            std::to_string(v) + " (a finite value is supported)");
        }
    }
    infer_unary_float(c);
}

void infer_clip(Ctx &c) {
    float lo = c.node.attr_float("min", -std::numeric_limits<float>::infinity());
    float hi = c.node.attr_float("max", std::numeric_limits<float>::infinity());
    for (size_t i = 1; i < 3; i++) {
        if (!c.has_in(i))
            continue;
        const Tensor &b = c.const_in(i, i == 1 ? "min" : "max");
        if (b.dtype != DType::Float32 || b.f32.size() != 1) {
            throw NodeError(std::string(i == 1 ? "min" : "max") + " must be a float32 scalar");
        }
        (i == 1 ? lo : hi) = b.f32[0];
    }
    if (lo > hi)
        throw NodeError("min > max");
    infer_unary_float(c);
}

void infer_dropout(Ctx &c) {
    if (c.has_in(2)) {
        // training_mode=true with a ratio of 0 is the identity all the same (torchvision's
        // Swin calls F.dropout(attn, p=0.0) in training mode).
        const Tensor &t = c.const_in(2, "training_mode");
        const bool zero_ratio =
            c.has_in(1) && c.in(1).is_constant && c.in(1).f32.size() == 1 && c.in(1).f32[0] == 0.0f;
        if (!t.i64.empty() && t.i64[0] && !zero_ratio)
            throw NodeError("training_mode=true is not supported (unless the ratio is 0)");
    }
    if (c.node.attr_int("is_test", 1) == 0)
        throw NodeError("is_test=0 (training) is not supported");
    const std::string mask = c.node.output(1);
    if (!mask.empty() && (!c.g.consumers(mask).empty() || c.g.is_graph_output(mask))) {
        throw NodeError("the mask output '" + mask + "' is used; it is not supported");
    }
    const Tensor &x = c.in(0);
    c.set_out(0, x.shape, x.dtype);
    c.set_out(1, x.shape, DType::Bool);
    fold_view(c);
}

void infer_softmax(Ctx &c) {
    const Tensor &x = c.float_in(0);
    norm_axis(c.node.attr_int("axis", c.g.opset < 13 ? 1 : -1), (int64_t)x.shape.size(), "axis");
    c.set_out(0, x.shape, DType::Float32);
}

void infer_lrn(Ctx &c) {
    if (!c.node.has_attr("size"))
        throw NodeError("attribute 'size' is required");
    if (c.node.attr_int("size", 1) < 1)
        throw NodeError("size must be >= 1");
    const Tensor &x = c.float_in(0);
    if (x.shape.size() < 3)
        throw NodeError("input must be N x C x spatial");
    c.set_out(0, x.shape, DType::Float32);
}

Shape broadcast_shapes(const Shape &a, const Shape &b) {
    Shape r(std::max(a.size(), b.size()));
    for (size_t i = 0; i < r.size(); i++) {
        int64_t da = i < r.size() - a.size() ? 1 : a[i - (r.size() - a.size())];
        int64_t db = i < r.size() - b.size() ? 1 : b[i - (r.size() - b.size())];
        if (da != db && da != 1 && db != 1) {
            throw NodeError("shapes " + shape_string(a) + " and " + shape_string(b) +
                            " do not broadcast");
        }
        r[i] = da == 1 ? db : da;
    }
    return r;
}

void infer_binary(Ctx &c) {
    const Tensor &a = c.in(0), &b = c.in(1);
    const std::string &op = c.node.op_type;
    if (op == "Pow") {
        // Pow's exponent may have another type than its base; folded in double.
        const Shape shape = broadcast_shapes(a.shape, b.shape);
        c.set_out(0, shape, a.dtype);
        if (!c.all_inputs_constant() || !c.output_small(0)) {
            if (a.dtype != DType::Float32 || b.dtype != DType::Float32)
                throw NodeError("Pow of computed tensors is supported on float32 only");
            return;
        }
        const auto sa = broadcast_sources(a.shape, shape), sb = broadcast_sources(b.shape, shape);
        auto value = [](const Tensor &t, int64_t e) {
            return t.dtype == DType::Float32 ? double(t.f32[size_t(e)]) : double(t.i64[size_t(e)]);
        };
        std::vector<float> f;
        std::vector<int64_t> i;
        for (size_t e = 0; e < sa.size(); e++) {
            const double v = std::pow(value(a, sa[e]), value(b, sb[e]));
            if (a.dtype == DType::Float32)
                f.push_back(float(v));
            else if (!(std::fabs(v) < 9.2e18))
                throw NodeError("value out of int64 range");
            else
                i.push_back(int64_t(v));
        }
        c.set_const(0, std::move(f), std::move(i));
        return;
    }
    if (a.dtype != b.dtype) {
        throw NodeError(std::string("inputs have different types (") + dtype_name(a.dtype) + ", " +
                        dtype_name(b.dtype) + ")");
    }
    const Shape shape = broadcast_shapes(a.shape, b.shape);
    c.set_out(0, shape, a.dtype);
    const bool foldable = c.all_inputs_constant() && c.output_small(0);
    if (op == "Mod" && !foldable)
        throw NodeError("Mod is supported only on constants (shape arithmetic)");
    if (op == "Mod" && a.dtype == DType::Float32 && !c.node.attr_int("fmod", 0))
        throw NodeError("Mod of float tensors needs fmod=1");
    if (!foldable) {
        if (a.dtype != DType::Float32) {
            throw NodeError(op + " on " + dtype_name(a.dtype) +
                            " tensors is supported only on constants");
        }
        return;
    }
    const auto sa = broadcast_sources(a.shape, shape), sb = broadcast_sources(b.shape, shape);
    std::vector<float> f;
    std::vector<int64_t> i;
    for (size_t e = 0; e < sa.size(); e++) {
        if (a.dtype == DType::Float32) {
            float x = a.f32[sa[e]], y = b.f32[sb[e]];
            f.push_back(op == "Add"   ? x + y
                        : op == "Sub" ? x - y
                        : op == "Mul" ? x * y
                        : op == "Mod" ? std::fmod(x, y)
                                      : x / y);
        } else {
            int64_t x = a.i64[sa[e]], y = b.i64[sb[e]];
            if ((op == "Div" || op == "Mod") && y == 0)
                throw NodeError("integer division by zero");
            if (op == "Mod") {
                // fmod 0: the sign of the divisor (Python's %); fmod 1: of the dividend (C's).
                const int64_t r = y == -1 ? 0 : x % y;
                const bool fix = !c.node.attr_int("fmod", 0) && r != 0 && ((r < 0) != (y < 0));
                i.push_back(fix ? r + y : r);
                continue;
            }
            // Shape arithmetic stays far from int64's range; wrap rather than trap.
            uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
            i.push_back(op == "Add"   ? (int64_t)(ux + uy)
                        : op == "Sub" ? (int64_t)(ux - uy)
                        : op == "Mul" ? (int64_t)(ux * uy)
                                      : (y == -1 ? (int64_t)(0 - ux) : x / y));
        }
    }
    c.set_const(0, std::move(f), std::move(i));
}

/** Sum of two float32 inputs (numpy broadcasting), as Add; more inputs are not supported. */
void infer_sum(Ctx &c) {
    if (c.node.inputs.size() != 2) {
        throw NodeError("Sum of " + std::to_string(c.node.inputs.size()) + " inputs (two only)");
    }
    const Tensor &a = c.float_in(0), &b = c.float_in(1);
    c.set_out(0, broadcast_shapes(a.shape, b.shape), DType::Float32);
}

// ------------------------------------------------------------------ windows

/** Resolves the sliding window of Conv / MaxPool / AveragePool: validates kernel, strides,
 * dilations and pads, turns auto_pad into explicit pads (written back to the node) and
 * returns the output's spatial dims. */
Shape infer_window(Ctx &c, const Shape &in, const Shape &kernel, bool ceil_mode) {
    Node &n = c.node;
    const size_t r = kernel.size();
    const Shape strides = n.attr_ints("strides", Shape(r, 1));
    const Shape dilations = n.attr_ints("dilations", Shape(r, 1));
    Shape pads = n.attr_ints("pads", Shape(2 * r, 0));
    if (strides.size() != r || dilations.size() != r || pads.size() != 2 * r) {
        throw NodeError("strides, dilations and pads must have " + std::to_string(r) + ", " +
                        std::to_string(r) + " and " + std::to_string(2 * r) + " values");
    }
    for (size_t i = 0; i < r; i++) {
        if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1) {
            throw NodeError("kernel, strides and dilations must be >= 1");
        }
        if (pads[i] < 0 || pads[i + r] < 0)
            throw NodeError("negative pads are not supported");
    }
    const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
    Shape out(r);
    for (size_t i = 0; i < r; i++) {
        const int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
            out[i] = (in[i] + strides[i] - 1) / strides[i];
            const int64_t total = std::max<int64_t>(0, (out[i] - 1) * strides[i] + extent - in[i]);
            const int64_t small = total / 2;
            pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
            pads[i + r] = total - pads[i];
            continue;
        }
        if (auto_pad == "VALID") {
            pads[i] = pads[i + r] = 0;
        } else if (auto_pad != "NOTSET") {
            throw NodeError("auto_pad '" + auto_pad + "' is not supported");
        }
        const int64_t span = in[i] + pads[i] + pads[i + r] - extent;
        if (span < 0) {
            throw NodeError("the window (" + std::to_string(extent) +
                            ") is larger than the padded input (" +
                            std::to_string(in[i] + pads[i] + pads[i + r]) + ") in spatial dim " +
                            std::to_string(i));
        }
        out[i] = (ceil_mode ? (span + strides[i] - 1) / strides[i] : span / strides[i]) + 1;
        // With ceil_mode the last window must start inside the input or its left padding.
        if (ceil_mode && (out[i] - 1) * strides[i] >= in[i] + pads[i])
            out[i]--;
    }
    n.attributes["pads"] = Attribute::make_ints(pads);
    n.attributes.erase("auto_pad");
    n.attributes["kernel_shape"] = Attribute::make_ints(kernel);
    return out;
}

/** The rank of a convolution's input X (N, C, spatial...), which its weights W share; throws
 * NodeError otherwise. */
size_t conv_rank(const Tensor &x, const Tensor &w) {
    const size_t rank = x.shape.size();
    if (rank < 3)
        throw NodeError("input '" + x.name + "' must be N x C x spatial, not " +
                        shape_string(x.shape));
    if (w.shape.size() != rank) {
        throw NodeError("weights " + shape_string(w.shape) + " do not match input " +
                        shape_string(x.shape));
    }
    return rank;
}

void infer_conv(Ctx &c) {
    const Tensor &x = c.float_in(0), &w = c.float_in(1);
    const size_t rank = conv_rank(x, w);
    const int64_t group = c.node.attr_int("group", 1);
    const int64_t ch = x.shape[1], m = w.shape[0];
    if (group < 1 || ch % group || m % group || w.shape[1] * group != ch) {
        throw NodeError("input channels " + std::to_string(ch) + ", weights " +
                        shape_string(w.shape) + " and group " + std::to_string(group) +
                        " do not agree");
    }
    const Shape kernel(w.shape.begin() + 2, w.shape.end());
    if (c.node.has_attr("kernel_shape") && c.node.attr_ints("kernel_shape", {}) != kernel) {
        throw NodeError("kernel_shape does not match the weights " + shape_string(w.shape));
    }
    if (c.has_in(2)) {
        const Tensor &b = c.float_in(2);
        if (b.shape != Shape{m})
            throw NodeError("bias " + shape_string(b.shape) + " is not " + std::to_string(m));
    }
    const Shape spatial(x.shape.begin() + 2, x.shape.end());
    Shape out{x.shape[0], m};
    for (int64_t d : infer_window(c, spatial, kernel, false))
        out.push_back(d);
    c.set_out(0, out, DType::Float32);
}

ConvTransposeGeometry conv_transpose_geometry_of(const Ctx &c) {
    const Tensor &x = c.float_in(0), &w = c.float_in(1);
    const size_t rank = conv_rank(x, w);
    ConvTransposeGeometry t;
    t.group = c.node.attr_int("group", 1);
    if (t.group < 1 || x.shape[1] % t.group || w.shape[0] != x.shape[1]) {
        throw NodeError("input channels " + std::to_string(x.shape[1]) + ", weights " +
                        shape_string(w.shape) + " and group " + std::to_string(t.group) +
                        " do not agree");
    }
    t.out_channels = w.shape[1] * t.group;
    const size_t r = rank - 2;
    t.kernel.assign(w.shape.begin() + 2, w.shape.end());
    if (c.node.has_attr("kernel_shape") && c.node.attr_ints("kernel_shape", {}) != t.kernel)
        throw NodeError("attribute kernel_shape does not match the weights " +
                        shape_string(w.shape));
    t.strides = c.node.attr_ints("strides", Shape(r, 1));
    t.dilations = c.node.attr_ints("dilations", Shape(r, 1));
    t.output_padding = c.node.attr_ints("output_padding", Shape(r, 0));
    Shape pads = c.node.attr_ints("pads", Shape(2 * r, 0));
    Shape output_shape = c.node.attr_ints("output_shape", {});
    if (output_shape.size() == rank) // given with N and C
        output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    const std::string auto_pad = c.node.attr_string("auto_pad", "NOTSET");
    if (t.strides.size() != r || t.dilations.size() != r || t.output_padding.size() != r ||
        pads.size() != 2 * r || (!output_shape.empty() && output_shape.size() != r)) {
        throw NodeError("attributes strides, dilations, output_padding, pads or output_shape do "
                        "not match " +
                        std::to_string(r) + " spatial dims");
    }
    if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
        auto_pad != "VALID") {
        throw NodeError("attribute auto_pad='" + auto_pad + "' is not supported");
    }
    for (size_t i = 0; i < r; i++) {
        const int64_t in = x.shape[2 + i], k = t.kernel[i], s = t.strides[i], d = t.dilations[i],
                      op = t.output_padding[i];
        if (s < 1 || d < 1 || op < 0 || k < 1)
            throw NodeError("strides, dilations and the kernel must be >= 1, output_padding >= 0");
        const int64_t full = s * (in - 1) + op + (k - 1) * d + 1;
        int64_t begin = pads[i], end = pads[r + i];
        if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
            const int64_t want = output_shape.empty() ? in * s : output_shape[i];
            const int64_t total = full - want;
            if (total < 0) {
                // An output larger than the full one: the extra pixels at the end, as
                // output_padding gives them (ONNX's test_convtranspose_output_shape).
                t.output_padding[i] += -total;
                begin = end = 0;
            } else {
                const bool upper = auto_pad == "SAME_UPPER";
                begin = upper ? total / 2 : total - total / 2;
                end = total - begin;
            }
        } else if (auto_pad == "VALID") {
            begin = end = 0;
        }
        if (begin < 0 || end < 0)
            throw NodeError("attribute pads must be >= 0");
        t.pads_begin.push_back(begin);
        t.pads_end.push_back(end);
        t.out.push_back(full + t.output_padding[i] - op - begin - end);
        if (t.out.back() < 1)
            throw NodeError("the pads leave no output along spatial axis " + std::to_string(i));
    }
    if (c.has_in(2)) {
        const Tensor &b = c.float_in(2);
        if (b.shape != Shape{t.out_channels}) {
            throw NodeError("bias " + shape_string(b.shape) + " is not " +
                            std::to_string(t.out_channels));
        }
    }
    return t;
}

void infer_conv_transpose(Ctx &c) {
    const ConvTransposeGeometry t = conv_transpose_geometry_of(c);
    Shape out{c.in(0).shape[0], t.out_channels};
    out.insert(out.end(), t.out.begin(), t.out.end());
    c.set_out(0, out, DType::Float32);
}

void infer_pool(Ctx &c) {
    const Tensor &x = c.float_in(0);
    if (x.shape.size() < 3)
        throw NodeError("input must be N x C x spatial");
    if (!c.node.has_attr("kernel_shape"))
        throw NodeError("attribute 'kernel_shape' is required");
    const Shape kernel = c.node.attr_ints("kernel_shape", {});
    if (kernel.size() != x.shape.size() - 2)
        throw NodeError("kernel_shape does not match the input rank");
    if (c.node.attr_int("storage_order", 0) != 0)
        throw NodeError("storage_order=1 is not supported");
    const int64_t ceil_mode = c.node.attr_int("ceil_mode", 0);
    if (ceil_mode != 0 && ceil_mode != 1)
        throw NodeError("ceil_mode must be 0 or 1");
    const Shape spatial(x.shape.begin() + 2, x.shape.end());
    Shape out{x.shape[0], x.shape[1]};
    for (int64_t d : infer_window(c, spatial, kernel, ceil_mode))
        out.push_back(d);
    c.set_out(0, out, DType::Float32);
}

void infer_global_pool(Ctx &c) {
    const Tensor &x = c.float_in(0);
    if (x.shape.size() < 3)
        throw NodeError("input must be N x C x spatial");
    Shape out = x.shape;
    std::fill(out.begin() + 2, out.end(), 1);
    c.set_out(0, out, DType::Float32);
}

void infer_batch_norm(Ctx &c) {
    const Tensor &x = c.float_in(0);
    if (x.shape.size() < 2)
        throw NodeError("input must be N x C x ...");
    if (c.node.attr_int("training_mode", 0))
        throw NodeError("training_mode=1 is not supported");
    if (c.node.attr_int("spatial", 1) != 1)
        throw NodeError("spatial=0 is not supported");
    if (c.node.attr_float("epsilon", 1e-5f) < 0)
        throw NodeError("epsilon must be >= 0");
    for (size_t i = 1; i < 5; i++) {
        const Tensor &p = c.float_in(i);
        if (p.shape != Shape{x.shape[1]}) {
            throw NodeError("parameter '" + p.name + "' is " + shape_string(p.shape) +
                            ", not the " + std::to_string(x.shape[1]) + " channels");
        }
    }
    c.set_out(0, x.shape, DType::Float32);
}

/** y[n, c, ...] = x[n, c, ...] * scale[c] + shift[c] (an unfolded BatchNormalization). */
void infer_channel_scale_shift(Ctx &c) {
    const Tensor &x = c.float_in(0);
    if (x.shape.size() < 2)
        throw NodeError("input must be N x C x ...");
    for (size_t i = 1; i < 3; i++) {
        if (c.float_in(i).shape != Shape{x.shape[1]})
            throw NodeError("scale and shift must have one value per channel");
    }
    c.set_out(0, x.shape, DType::Float32);
}

void infer_channel_shuffle(Ctx &c) {
    const Tensor &x = c.float_in(0);
    const int64_t g = c.node.attr_int("groups", 0);
    if (c.num_inputs() > 1) {
        // One input per group (fuse_concat_into_shuffle), each N x C/g x H x W.
        if (x.shape.size() != 4 || int64_t(c.num_inputs()) != g)
            throw NodeError("needs one N x C x H x W input per group");
        for (size_t i = 1; i < c.num_inputs(); i++) {
            if (c.float_in(i).shape != x.shape)
                throw NodeError("its inputs must have one shape");
        }
        c.set_out(0, {x.shape[0], x.shape[1] * g, x.shape[2], x.shape[3]}, DType::Float32);
        return;
    }
    if (x.shape.size() != 4 || g < 1 || x.shape[1] % g)
        throw NodeError("input must be N x C x H x W with groups dividing C");
    c.set_out(0, x.shape, DType::Float32);
}

// ------------------------------------------------------------------ layout

void infer_concat(Ctx &c) {
    if (!c.node.has_attr("axis"))
        throw NodeError("attribute 'axis' is required");
    const Tensor &first = c.in(0);
    const int64_t rank = (int64_t)first.shape.size();
    const int64_t axis = norm_axis(c.node.attr_int("axis", 0), rank, "axis");
    Shape out = first.shape;
    out[axis] = 0;
    for (size_t i = 0; i < c.num_inputs(); i++) {
        const Tensor &t = c.in(i);
        bool ok = t.dtype == first.dtype && (int64_t)t.shape.size() == rank;
        for (int64_t d = 0; ok && d < rank; d++)
            ok = d == axis || t.shape[d] == first.shape[d];
        if (!ok) {
            throw NodeError("input '" + t.name + "' (" + shape_string(t.shape) + " " +
                            dtype_name(t.dtype) + ") does not match '" + first.name + "' (" +
                            shape_string(first.shape) + ") outside axis " + std::to_string(axis));
        }
        out[axis] += t.shape[axis];
    }
    c.set_out(0, out, first.dtype);
    if (!c.all_inputs_constant() || !c.output_small(0))
        return;
    const int64_t outer = product(out, 0, axis);
    std::vector<float> f;
    std::vector<int64_t> v;
    for (int64_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < c.num_inputs(); i++) {
            const Tensor &t = c.in(i);
            const int64_t chunk = product(t.shape, axis, rank);
            for (int64_t e = o * chunk; e < (o + 1) * chunk; e++) {
                if (t.dtype == DType::Float32)
                    f.push_back(t.f32[e]);
                else
                    v.push_back(t.i64[e]);
            }
        }
    }
    c.set_const(0, std::move(f), std::move(v));
}

void infer_flatten(Ctx &c) {
    const Tensor &x = c.in(0);
    const int64_t rank = (int64_t)x.shape.size();
    int64_t axis = c.node.attr_int("axis", 1);
    if (axis < -rank || axis > rank)
        throw NodeError("axis " + std::to_string(axis) + " is out of range");
    if (axis < 0)
        axis += rank;
    c.set_out(0, {product(x.shape, 0, axis), product(x.shape, axis, rank)}, x.dtype);
    fold_view(c);
}

void infer_reshape(Ctx &c) {
    const Tensor &x = c.in(0);
    const Shape target = c.const_ints(1, "shape");
    const bool allowzero = c.node.attr_int("allowzero", 0) != 0;
    Shape out(target.size());
    int64_t unknown = -1, known = 1;
    for (size_t i = 0; i < target.size(); i++) {
        int64_t d = target[i];
        if (d == 0 && !allowzero) {
            if (i >= x.shape.size())
                throw NodeError("shape has 0 at dim " + std::to_string(i) +
                                " beyond the input's rank");
            d = x.shape[i];
        }
        if (d == -1) {
            if (unknown >= 0)
                throw NodeError("shape " + shape_string(target) + " has more than one -1");
            unknown = (int64_t)i;
            continue;
        }
        if (d < 0)
            throw NodeError("shape has a negative dim " + std::to_string(d));
        out[i] = d;
        known = element_count({known, d});
    }
    const int64_t total = x.elements();
    if (unknown >= 0) {
        if (known == 0 || total % known) {
            throw NodeError("cannot reshape " + shape_string(x.shape) + " to " +
                            shape_string(target));
        }
        out[unknown] = total / known;
    }
    if (element_count(out) != total) {
        throw NodeError("cannot reshape " + shape_string(x.shape) + " (" + std::to_string(total) +
                        " elements) to " + shape_string(out));
    }
    c.set_out(0, out, x.dtype);
    fold_view(c);
}

void infer_transpose(Ctx &c) {
    const Tensor &x = c.in(0);
    const int64_t rank = (int64_t)x.shape.size();
    Shape perm(rank);
    for (int64_t i = 0; i < rank; i++)
        perm[i] = rank - 1 - i;
    perm = c.node.attr_ints("perm", perm);
    Shape sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < rank; i++) {
        if ((int64_t)sorted.size() != rank || sorted[i] != i) {
            throw NodeError("perm is not a permutation of the " + std::to_string(rank) + " dims");
        }
    }
    Shape out(rank);
    for (int64_t i = 0; i < rank; i++)
        out[i] = x.shape[perm[i]];
    c.set_out(0, out, x.dtype);
    if (!x.is_constant)
        return;
    // A constant (a weight transposed in the file): folded whatever its size.
    const std::vector<int64_t> in_strides = row_major_strides(x.shape);
    std::vector<int64_t> strides(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; d++)
        strides[size_t(d)] = in_strides[size_t(perm[d])];
    fold_gather(c, 0, x, strided_sources(out, strides));
}

/** LayerNormalization (opset 17) over the dims from `axis` on; Scale and B (optional) of the
 * shape of those dims; the Mean and InvStdDev outputs (training) are refused. */
void infer_layer_norm(Ctx &c) {
    const Tensor &x = c.float_in(0);
    const int64_t rank = (int64_t)x.shape.size();
    if (rank < 1)
        throw NodeError("X must have rank >= 1");
    const int64_t axis = norm_axis(c.node.attr_int("axis", -1), rank, "axis");
    const float eps = c.node.attr_float("epsilon", 1e-5f);
    if (!(eps >= 0) || !std::isfinite(eps))
        throw NodeError("epsilon must be finite and >= 0");
    if (c.node.attr_int("stash_type", 1) != 1)
        throw NodeError("stash_type other than 1 (float32) is not supported");
    const Shape normalised(x.shape.begin() + axis, x.shape.end());
    for (size_t i = 1; i < 3; i++) {
        if (!c.has_in(i)) {
            if (i == 1)
                throw NodeError("input Scale is missing");
            continue;
        }
        const Tensor &t = c.float_in(i);
        if (element_count(t.shape) != element_count(normalised) ||
            broadcast_shapes(t.shape, normalised) != normalised) {
            throw NodeError(std::string(i == 1 ? "Scale " : "B ") + shape_string(t.shape) +
                            " is not the normalised shape " + shape_string(normalised));
        }
    }
    c.set_out(0, x.shape, DType::Float32);
}

void infer_split(Ctx &c) {
    const Tensor &x = c.in(0);
    const int64_t rank = (int64_t)x.shape.size();
    const int64_t axis = norm_axis(c.node.attr_int("axis", 0), rank, "axis");
    const int64_t dim = x.shape[axis];
    const int64_t outputs = (int64_t)c.node.outputs.size();
    Shape sizes;
    if (c.has_in(1)) {
        sizes = c.const_ints(1, "split");
    } else if (c.node.has_attr("split")) {
        sizes = c.node.attr_ints("split", {});
    } else {
        const int64_t parts = c.node.attr_int("num_outputs", outputs);
        if (parts != outputs || parts < 1)
            throw NodeError("num_outputs does not match the outputs");
        if (!c.node.has_attr("num_outputs") && dim % parts) {
            throw NodeError("dim " + std::to_string(dim) + " does not split into " +
                            std::to_string(parts) + " equal parts");
        }
        const int64_t chunk = (dim + parts - 1) / parts;
        for (int64_t i = 0; i < parts; i++)
            sizes.push_back(std::min(chunk, dim - i * chunk));
    }
    if ((int64_t)sizes.size() != outputs) {
        throw NodeError(std::to_string(sizes.size()) + " split sizes for " +
                        std::to_string(outputs) + " outputs");
    }
    int64_t sum = 0;
    for (int64_t s : sizes) {
        if (s < 0)
            throw NodeError("negative split size");
        sum += s;
    }
    if (sum != dim)
        throw NodeError("split sizes add up to " + std::to_string(sum) + ", not " +
                        std::to_string(dim));
    for (int64_t i = 0; i < outputs; i++) {
        Shape out = x.shape;
        out[axis] = sizes[i];
        c.set_out(i, out, x.dtype);
    }
}

/** Axes from an attribute (older opsets) or the constant input 1 (newer ones). */
bool axes_of(Ctx &c, Shape &axes) {
    if (c.has_in(1)) {
        axes = c.const_ints(1, "axes");
        return true;
    }
    if (c.node.has_attr("axes")) {
        axes = c.node.attr_ints("axes", {});
        return true;
    }
    return false;
}

std::set<int64_t> normalised(const Shape &axes, int64_t rank) {
    std::set<int64_t> r;
    for (int64_t a : axes) {
        if (!r.insert(norm_axis(a, rank, "axis")).second)
            throw NodeError("axis repeated");
    }
    return r;
}

/** The box a Slice reads (see slice_box in the header). */
SliceBox slice_box_of(const Ctx &c) {
    const Tensor &x = c.in(0);
    const int64_t rank = (int64_t)x.shape.size();
    Shape starts, ends, axes, steps;
    if (c.g.opset < 10) {
        starts = c.node.attr_ints("starts", {});
        ends = c.node.attr_ints("ends", {});
        axes = c.node.attr_ints("axes", {});
    } else {
        starts = c.const_ints(1, "starts");
        ends = c.const_ints(2, "ends");
        if (c.has_in(3))
            axes = c.const_ints(3, "axes");
        if (c.has_in(4))
            steps = c.const_ints(4, "steps");
    }
    if (axes.empty()) {
        for (int64_t i = 0; i < (int64_t)starts.size(); i++)
            axes.push_back(i);
    }
    if (steps.empty())
        steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size()) {
        throw NodeError("starts, ends, axes and steps have different lengths");
    }
    normalised(axes, rank); // range and repetition check
    SliceBox box{Shape(rank, 0), Shape(rank, 1), x.shape};
    for (size_t k = 0; k < starts.size(); k++) {
        const int64_t a = norm_axis(axes[k], rank, "axis"), dim = x.shape[a], st = steps[k];
        if (st == 0)
            throw NodeError("step 0");
        // ONNX's clamping: negatives count from the end; starts in [0, dim] ([0, dim-1] for
        // negative steps), ends in [0, dim] ([-1, dim-1] for negative steps).
        int64_t b = starts[k] < 0 ? starts[k] + dim : starts[k];
        int64_t e = ends[k] < 0 ? ends[k] + dim : ends[k];
        if (st > 0) {
            b = std::clamp<int64_t>(b, 0, dim);
            e = std::clamp<int64_t>(e, 0, dim);
            box.shape[a] = e > b ? (e - b + st - 1) / st : 0;
        } else {
            b = std::clamp<int64_t>(b, 0, dim - 1);
            e = std::clamp<int64_t>(e, -1, dim - 1);
            box.shape[a] = b > e ? (b - e - st - 1) / -st : 0;
        }
        box.begin[a] = b;
        box.step[a] = st;
    }
    return box;
}

/** Slice; folded when the input is a small constant. */
void infer_slice(Ctx &c) {
    const Tensor &x = c.in(0);
    const SliceBox box = slice_box_of(c);
    c.set_out(0, box.shape, x.dtype);
    if (!x.is_constant || !c.output_small(0))
        return;
    const std::vector<int64_t> in_strides = row_major_strides(x.shape);
    std::vector<int64_t> strides(in_strides.size());
    int64_t base = 0;
    for (size_t d = 0; d < in_strides.size(); d++) {
        base += box.begin[d] * in_strides[d];
        strides[d] = box.step[d] * in_strides[d];
    }
    fold_gather(c, 0, x, strided_sources(box.shape, strides, base));
}

/** Pad (opset 1-10: pads / value attributes; 11+: constant pads and constant_value inputs,
 * 18+: axes). Only the shape: whether a layer can express the padding is the lowering's or
 * the passes' business. */
void infer_pad(Ctx &c) {
    const Tensor &x = c.in(0);
    const int64_t rank = (int64_t)x.shape.size();
    Shape pads = c.g.opset < 11 ? c.node.attr_ints("pads", c.node.attr_ints("paddings", {}))
                                : c.const_ints(1, "pads");
    Shape axes;
    if (c.has_in(3))
        axes = c.const_ints(3, "axes");
    else
        for (int64_t i = 0; i < rank; i++)
            axes.push_back(i);
    if (pads.size() != 2 * axes.size()) {
        throw NodeError("pads has " + std::to_string(pads.size()) + " values for " +
                        std::to_string(axes.size()) + " axes");
    }
    normalised(axes, rank);
    Shape out = x.shape;
    const size_t na = axes.size();
    for (size_t k = 0; k < na; k++) {
        const int64_t a = norm_axis(axes[k], rank, "axis");
        out[a] += pads[k] + pads[na + k];
        if (out[a] < 0)
            throw NodeError("pads remove more than the whole of axis " + std::to_string(a));
    }
    c.set_out(0, out, x.dtype);
}

ResizeTarget resize_target_of(const Ctx &c) {
    const Tensor &x = c.float_in(0);
    const int64_t rank = (int64_t)x.shape.size();
    const bool upsample = c.node.op_type == "Upsample";
    // Upsample and Resize-10 take (X, scales); Resize-11+ (X, roi, scales, sizes).
    const bool four = !upsample && c.g.opset >= 11;
    const size_t scales_at = four ? 2 : 1;
    auto given = [&](size_t i) { return c.has_in(i) && c.in(i).elements() > 0; };
    const std::string policy = c.node.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch") {
        throw NodeError("attribute keep_aspect_ratio_policy='" + policy +
                        "' is not supported (stretch is)");
    }
    Shape axes;
    for (int64_t a : c.node.attr_ints("axes", {}))
        axes.push_back(norm_axis(a, rank, "axes value"));
    if (axes.empty()) {
        for (int64_t a = 0; a < rank; a++)
            axes.push_back(a);
    }
    if (std::set<int64_t>(axes.begin(), axes.end()).size() != axes.size())
        throw NodeError("attribute axes repeats an axis");
    ResizeTarget t{x.shape, std::vector<double>(size_t(rank), 1.0)};
    const bool sizes = four && given(3);
    if (sizes && given(scales_at))
        throw NodeError("both scales and sizes are given (one only)");
    if (sizes) {
        const Shape v = c.const_ints(3, "sizes");
        if (v.size() != axes.size()) {
            throw NodeError("sizes has " + std::to_string(v.size()) + " values for " +
                            std::to_string(axes.size()) + " axes");
        }
        for (size_t k = 0; k < axes.size(); k++) {
            if (v[k] < 1)
                throw NodeError("sizes value " + std::to_string(v[k]) + " is not >= 1");
            t.shape[size_t(axes[k])] = v[k];
            t.scales[size_t(axes[k])] = 0;
        }
        return t;
    }
    std::vector<float> scales;
    if (upsample && c.g.opset < 9) {
        scales = c.node.attr_floats("scales", {});
    } else {
        if (!given(scales_at)) {
            throw NodeError(four ? "neither scales nor sizes is given"
                                 : "input scales is missing or empty");
        }
        const Tensor &s = c.const_in(scales_at, "scales");
        if (s.dtype != DType::Float32 || s.shape.size() != 1)
            throw NodeError("scales (input '" + s.name + "') must be a 1-D float32 tensor");
        scales = s.f32;
    }
    if (scales.size() != axes.size()) {
        throw NodeError("scales has " + std::to_string(scales.size()) + " values for " +
                        std::to_string(axes.size()) + " axes");
    }
    for (size_t k = 0; k < axes.size(); k++) {
        const double sc = scales[k];
        if (!(sc > 0) || !std::isfinite(sc))
            throw NodeError("scales value " + std::to_string(sc) + " is not a number > 0");
        const size_t a = size_t(axes[k]);
        const double out = std::floor(double(x.shape[a]) * sc);
        if (!(out >= 1) || out > 9.2e18) {
            throw NodeError("scale " + std::to_string(sc) + " of axis " + std::to_string(a) +
                            " gives an output dim of " + std::to_string(out));
        }
        t.shape[a] = int64_t(out);
        t.scales[a] = sc;
    }
    return t;
}

void infer_resize(Ctx &c) {
    c.set_out(0, resize_target_of(c).shape, DType::Float32);
}

void infer_reduce_mean(Ctx &c) {
    const Tensor &x = c.float_in(0);
    const int64_t rank = (int64_t)x.shape.size();
    Shape axes;
    const bool given = axes_of(c, axes) && !axes.empty();
    if (!given && c.node.attr_int("noop_with_empty_axes", 0)) {
        c.set_out(0, x.shape, DType::Float32);
        return;
    }
    std::set<int64_t> reduce;
    if (given)
        reduce = normalised(axes, rank);
    else
        for (int64_t i = 0; i < rank; i++)
            reduce.insert(i);
    const bool keep = c.node.attr_int("keepdims", 1) != 0;
    Shape out;
    for (int64_t i = 0; i < rank; i++) {
        if (!reduce.count(i))
            out.push_back(x.shape[i]);
        else if (keep)
            out.push_back(1);
    }
    c.set_out(0, out, DType::Float32);
}

void infer_unsqueeze(Ctx &c) {
    const Tensor &x = c.in(0);
    Shape axes;
    if (!axes_of(c, axes))
        throw NodeError("axes are required");
    const int64_t rank = (int64_t)(x.shape.size() + axes.size());
    const std::set<int64_t> at = normalised(axes, rank);
    Shape out;
    size_t next = 0;
    for (int64_t i = 0; i < rank; i++)
        out.push_back(at.count(i) ? 1 : x.shape[next++]);
    c.set_out(0, out, x.dtype);
    fold_view(c);
}

void infer_squeeze(Ctx &c) {
    const Tensor &x = c.in(0);
    const int64_t rank = (int64_t)x.shape.size();
    Shape axes;
    std::set<int64_t> drop;
    if (axes_of(c, axes)) {
        drop = normalised(axes, rank);
        for (int64_t a : drop) {
            if (x.shape[a] != 1)
                throw NodeError("dim " + std::to_string(a) + " of " + shape_string(x.shape) +
                                " is not 1");
        }
    } else {
        for (int64_t i = 0; i < rank; i++) {
            if (x.shape[i] == 1)
                drop.insert(i);
        }
    }
    Shape out;
    for (int64_t i = 0; i < rank; i++) {
        if (!drop.count(i))
            out.push_back(x.shape[i]);
    }
    c.set_out(0, out, x.dtype);
    fold_view(c);
}

// ------------------------------------------------------------------ matrix products

void infer_gemm(Ctx &c) {
    const Tensor &a = c.float_in(0), &b = c.float_in(1);
    if (a.shape.size() != 2 || b.shape.size() != 2) {
        throw NodeError("A and B must be matrices, not " + shape_string(a.shape) + " and " +
                        shape_string(b.shape));
    }
    const bool ta = c.node.attr_int("transA", 0), tb = c.node.attr_int("transB", 0);
    const int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
    const int64_t kb = tb ? b.shape[1] : b.shape[0], n = tb ? b.shape[0] : b.shape[1];
    if (k != kb) {
        throw NodeError("A " + shape_string(a.shape) + " and B " + shape_string(b.shape) +
                        " do not multiply (transA=" + std::to_string(ta) +
                        ", transB=" + std::to_string(tb) + ")");
    }
    if (c.has_in(2)) {
        const Tensor &bias = c.float_in(2);
        // Opsets < 7: C broadcasts only with broadcast=1 (the later default).
        const bool legacy_exact =
            c.node.has_attr("broadcast") && c.node.attr_int("broadcast", 0) == 0;
        if (legacy_exact && bias.shape != Shape{m, n}) {
            throw NodeError("C " + shape_string(bias.shape) + " is not " + shape_string({m, n}) +
                            " and broadcast=0");
        }
        if (broadcast_shapes(bias.shape, {m, n}) != Shape{m, n}) {
            throw NodeError("C " + shape_string(bias.shape) + " does not broadcast to " +
                            shape_string({m, n}));
        }
    }
    c.set_out(0, {m, n}, DType::Float32);
}

void infer_matmul(Ctx &c) {
    Shape a = c.float_in(0).shape, b = c.float_in(1).shape;
    if (a.empty() || b.empty())
        throw NodeError("inputs must have rank >= 1");
    const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
    if (a_vec)
        a.insert(a.begin(), 1);
    if (b_vec)
        b.push_back(1);
    if (a.back() != b[b.size() - 2]) {
        throw NodeError("shapes " + shape_string(c.in(0).shape) + " and " +
                        shape_string(c.in(1).shape) + " do not multiply");
    }
    Shape out = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
    if (!a_vec)
        out.push_back(a[a.size() - 2]);
    if (!b_vec)
        out.push_back(b.back());
    c.set_out(0, out, DType::Float32);
}

// ------------------------------------------------------------------ shape arithmetic

void infer_shape(Ctx &c) {
    const Tensor &x = c.in(0);
    const int64_t rank = (int64_t)x.shape.size();
    auto clamp = [rank](int64_t v) {
        return std::min(rank, std::max<int64_t>(0, v < 0 ? v + rank : v));
    };
    const int64_t start = clamp(c.node.attr_int("start", 0));
    const int64_t end = clamp(c.node.attr_int("end", rank));
    const Shape dims(x.shape.begin() + start, x.shape.begin() + std::max(start, end));
    c.set_out(0, {(int64_t)dims.size()}, DType::Int64);
    c.set_const(0, {}, dims);
}

void infer_gather(Ctx &c) {
    const Tensor &x = c.in(0), &idx = c.in(1);
    if (idx.dtype != DType::Int64)
        throw NodeError("indices must be int64 or int32");
    const int64_t rank = (int64_t)x.shape.size();
    if (rank < 1)
        throw NodeError("data must have rank >= 1");
    const int64_t axis = norm_axis(c.node.attr_int("axis", 0), rank, "axis");
    Shape out(x.shape.begin(), x.shape.begin() + axis);
    out.insert(out.end(), idx.shape.begin(), idx.shape.end());
    out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
    c.set_out(0, out, x.dtype);
    if (!idx.is_constant)
        return;
    const int64_t dim = x.shape[axis];
    for (int64_t i : idx.i64) {
        if (i < -dim || i >= dim)
            throw NodeError("index " + std::to_string(i) + " is out of range for dim " +
                            std::to_string(dim));
    }
    if (!x.is_constant || !c.output_small(0))
        return;
    const int64_t outer = product(x.shape, 0, axis), inner = product(x.shape, axis + 1, rank);
    std::vector<int64_t> sources;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i : idx.i64) {
            const int64_t k = i < 0 ? i + dim : i;
            for (int64_t e = 0; e < inner; e++)
                sources.push_back((o * dim + k) * inner + e);
        }
    }
    fold_gather(c, 0, x, sources);
}

void infer_constant(Ctx &c) {
    const Node &n = c.node;
    if (n.attributes.size() != 1)
        throw NodeError("needs exactly one value attribute");
    const auto &[name, a] = *n.attributes.begin();
    if (name == "value") {
        if (a.kind != Attribute::Kind::Tensor)
            throw NodeError("attribute 'value' must be a tensor");
        c.set_out(0, a.tensor->shape, a.tensor->dtype);
        c.set_const(0, a.tensor->f32, a.tensor->i64);
    } else if (name == "value_float") {
        c.set_out(0, {}, DType::Float32);
        c.set_const(0, {n.attr_float(name, 0)}, {});
    } else if (name == "value_floats") {
        const auto v = n.attr_floats(name, {});
        c.set_out(0, {(int64_t)v.size()}, DType::Float32);
        c.set_const(0, v, {});
    } else if (name == "value_int") {
        c.set_out(0, {}, DType::Int64);
        c.set_const(0, {}, {n.attr_int(name, 0)});
    } else if (name == "value_ints") {
        const auto v = n.attr_ints(name, {});
        c.set_out(0, {(int64_t)v.size()}, DType::Int64);
        c.set_const(0, {}, v);
    } else {
        throw NodeError("attribute '" + name + "' is not supported");
    }
}

/** ConstantOfShape: a constant of the given shape filled with `value` (float32 or int64, one
 * element; default float 0), folded. */
void infer_constant_of_shape(Ctx &c) {
    const Shape shape = c.const_ints(0, "shape");
    for (int64_t d : shape) {
        if (d < 0)
            throw NodeError("negative dim in shape " + shape_string(shape));
    }
    DType dt = DType::Float32;
    float f = 0.f;
    int64_t i = 0;
    if (c.node.has_attr("value")) {
        const Attribute &a = c.node.attributes.at("value");
        if (a.kind != Attribute::Kind::Tensor || !a.tensor ||
            (a.tensor->f32.size() + a.tensor->i64.size()) != 1)
            throw NodeError("attribute 'value' must be a one-element tensor");
        dt = a.tensor->dtype;
        if (dt == DType::Float32)
            f = a.tensor->f32[0];
        else
            i = a.tensor->i64[0];
    }
    c.set_out(0, shape, dt);
    const int64_t n = element_count(shape);
    if (n > kMaxConstantOfShape) {
        throw NodeError("a constant of " + std::to_string(n) + " elements (at most " +
                        std::to_string(kMaxConstantOfShape) + " are made)");
    }
    if (dt == DType::Float32)
        c.set_const(0, std::vector<float>(size_t(n), f), {});
    else
        c.set_const(0, {}, std::vector<int64_t>(size_t(n), i));
}

/** Equal of two tensors of one type (numpy broadcasting) -> bool: folded on constants, else
 * refused (masks computed at run time have no layer). */
void infer_equal(Ctx &c) {
    const Tensor &a = c.in(0), &b = c.in(1);
    if (a.dtype != b.dtype)
        throw NodeError("inputs have different types");
    const Shape shape = broadcast_shapes(a.shape, b.shape);
    c.set_out(0, shape, DType::Bool);
    if (!c.all_inputs_constant() || !c.output_small(0))
        throw NodeError("Equal is supported only on constants (shape arithmetic)");
    const auto sa = broadcast_sources(a.shape, shape), sb = broadcast_sources(b.shape, shape);
    std::vector<int64_t> r(sa.size());
    for (size_t e = 0; e < sa.size(); e++) {
        r[e] =
            a.dtype == DType::Float32 ? a.f32[sa[e]] == b.f32[sb[e]] : a.i64[sa[e]] == b.i64[sb[e]];
    }
    c.set_const(0, {}, std::move(r));
}

/** Not of a bool constant: folded (masks built from shapes), else refused. */
void infer_not(Ctx &c) {
    const Tensor &x = c.in(0);
    if (x.dtype != DType::Bool)
        throw NodeError("input must be bool");
    c.set_out(0, x.shape, DType::Bool);
    if (!x.is_constant || !c.output_small(0))
        throw NodeError("Not is supported only on constants (shape arithmetic)");
    std::vector<int64_t> r(x.i64.size());
    for (size_t e = 0; e < r.size(); e++)
        r[e] = x.i64[e] == 0;
    c.set_const(0, {}, std::move(r));
}

/** ScatterND(data, indices, updates) without reduction: folded on constants (Swin's shift mask
 * is built by slice assignments into a zero tensor), else refused. */
void infer_scatter_nd(Ctx &c) {
    const Tensor &data = c.in(0), &idx = c.in(1), &upd = c.in(2);
    if (idx.dtype != DType::Int64 || upd.dtype != data.dtype)
        throw NodeError("indices must be int64 and updates of the data's type");
    c.set_out(0, data.shape, data.dtype);
    if (!c.all_inputs_constant() || !c.output_small(0))
        throw NodeError("ScatterND is supported only on constants");
    if (c.node.attr_string("reduction", "none") != "none")
        throw NodeError("attribute 'reduction' of ScatterND: only none is supported");
    const size_t q = idx.shape.size(), r = data.shape.size();
    const int64_t k = q ? idx.shape[q - 1] : 0;
    if (q < 1 || k < 1 || size_t(k) > r)
        throw NodeError("indices must have a last dim in [1, rank of data]");
    // updates: indices.shape[:-1] + data.shape[k:]
    Shape want(idx.shape.begin(), idx.shape.end() - 1);
    want.insert(want.end(), data.shape.begin() + k, data.shape.end());
    if (upd.shape != want)
        throw NodeError("updates have shape " + shape_string(upd.shape) + ", expected " +
                        shape_string(want));
    const int64_t slice = product(data.shape, size_t(k), r), n = product(idx.shape, 0, q - 1);
    std::vector<float> f = data.f32;
    std::vector<int64_t> i = data.i64;
    for (int64_t u = 0; u < n; u++) {
        int64_t off = 0;
        for (int64_t d = 0; d < k; d++) {
            int64_t v = idx.i64[size_t(u * k + d)];
            const int64_t dim = data.shape[size_t(d)];
            if (v < 0)
                v += dim;
            if (v < 0 || v >= dim)
                throw NodeError("index " + std::to_string(v) + " out of range");
            off = off * dim + v;
        }
        for (int64_t e = 0; e < slice; e++) {
            const size_t to = size_t(off * slice + e), from = size_t(u * slice + e);
            if (data.dtype == DType::Float32)
                f[to] = upd.f32[from];
            else
                i[to] = upd.i64[from];
        }
    }
    c.set_const(0, std::move(f), std::move(i));
}

/** Where(cond, x, y) (numpy broadcasting of the three): folded on constants, else refused. */
void infer_where(Ctx &c) {
    const Tensor &cond = c.in(0), &x = c.in(1), &y = c.in(2);
    if (cond.dtype != DType::Bool)
        throw NodeError("condition must be bool");
    if (x.dtype != y.dtype)
        throw NodeError("X and Y have different types");
    const Shape shape = broadcast_shapes(broadcast_shapes(cond.shape, x.shape), y.shape);
    c.set_out(0, shape, x.dtype);
    if (!c.all_inputs_constant() || !c.output_small(0)) {
        // masked_fill: a constant condition, a constant scalar on one side, a computed float32
        // tensor of the output's shape on the other (lowered to eltwise select).
        const bool x_fill = x.is_constant && x.elements() == 1 && !y.is_constant,
                   y_fill = y.is_constant && y.elements() == 1 && !x.is_constant;
        const Tensor &computed = x_fill ? y : x;
        if (!cond.is_constant || !(x_fill || y_fill) || x.dtype != DType::Float32 ||
            computed.shape != shape) {
            throw NodeError("Where of computed tensors is supported with a constant condition, a "
                            "constant scalar on one side and a float32 tensor of the output's "
                            "shape on the other (masked_fill)");
        }
        return;
    }
    const auto sc = broadcast_sources(cond.shape, shape), sx = broadcast_sources(x.shape, shape),
               sy = broadcast_sources(y.shape, shape);
    std::vector<float> f;
    std::vector<int64_t> i;
    for (size_t e = 0; e < sc.size(); e++) {
        const bool take_x = cond.i64[sc[e]] != 0;
        if (x.dtype == DType::Float32)
            f.push_back(take_x ? x.f32[sx[e]] : y.f32[sy[e]]);
        else
            i.push_back(take_x ? x.i64[sx[e]] : y.i64[sy[e]]);
    }
    c.set_const(0, std::move(f), std::move(i));
}

/** Expand(x, shape): numpy broadcasting of x to shape; folded when x is a small constant. */
void infer_expand(Ctx &c) {
    const Tensor &x = c.in(0);
    const Shape out = broadcast_shapes(x.shape, c.const_ints(1, "shape"));
    c.set_out(0, out, x.dtype);
    if (x.is_constant && c.output_small(0))
        fold_gather(c, 0, x, broadcast_sources(x.shape, out));
    else if (x.dtype != DType::Float32)
        throw NodeError("Expand of a computed non-float tensor is not supported");
}

/** Range(start, limit, delta) of constant scalars: folded. */
void infer_range(Ctx &c) {
    const Tensor &st = c.const_in(0, "start"), &li = c.const_in(1, "limit"),
                 &de = c.const_in(2, "delta");
    if (st.dtype != li.dtype || st.dtype != de.dtype || st.elements() != 1 || li.elements() != 1 ||
        de.elements() != 1)
        throw NodeError("start, limit and delta must be scalars of one type");
    const bool f = st.dtype == DType::Float32;
    const double s0 = f ? st.f32[0] : double(st.i64[0]), l0 = f ? li.f32[0] : double(li.i64[0]),
                 d0 = f ? de.f32[0] : double(de.i64[0]);
    if (d0 == 0 || !std::isfinite(s0) || !std::isfinite(l0) || !std::isfinite(d0))
        throw NodeError("delta must be non-zero and the bounds finite");
    const double count = std::max(0.0, std::ceil((l0 - s0) / d0));
    if (count > double(kMaxFoldElements))
        throw NodeError("a range of more than " + std::to_string(kMaxFoldElements) + " elements");
    const int64_t n = int64_t(count);
    c.set_out(0, {n}, st.dtype);
    std::vector<float> fv;
    std::vector<int64_t> iv;
    for (int64_t k = 0; k < n; k++) {
        if (f)
            fv.push_back(float(s0 + double(k) * d0));
        else
            iv.push_back(st.i64[0] + k * de.i64[0]);
    }
    c.set_const(0, std::move(fv), std::move(iv));
}

void infer_cast(Ctx &c) {
    const Tensor &x = c.in(0);
    const int64_t to = c.node.attr_int("to", 0);
    DType dt;
    if (to == 1)
        dt = DType::Float32; // FLOAT
    else if (to == 7 || to == 6)
        dt = DType::Int64; // INT64, INT32 (kept as int64)
    else if (to == 9)
        dt = DType::Bool; // BOOL
    else
        throw NodeError("cast to ONNX type " + std::to_string(to) + " is not supported");
    c.set_out(0, x.shape, dt);
    if (x.is_constant && c.output_small(0)) {
        std::vector<float> f;
        std::vector<int64_t> i;
        const size_t n = x.dtype == DType::Float32 ? x.f32.size() : x.i64.size();
        for (size_t e = 0; e < n; e++) {
            const double v = x.dtype == DType::Float32 ? (double)x.f32[e] : (double)x.i64[e];
            if (dt == DType::Float32) {
                f.push_back((float)v);
            } else {
                if (!(std::fabs(v) < 9.2e18))
                    throw NodeError("value out of int64 range");
                i.push_back(dt == DType::Bool ? v != 0 : (int64_t)v);
            }
        }
        c.set_const(0, std::move(f), std::move(i));
    } else if (dt != x.dtype && !(x.dtype == DType::Int64 && dt == DType::Float32)) {
        throw NodeError(std::string("casting a non-constant ") + dtype_name(x.dtype) +
                        " tensor to " + dtype_name(dt) + " is not supported (int64 to float32 is)");
    }
}

// ------------------------------------------------------------------ the table

using InferFn = void (*)(Ctx &);
struct OpRule {
    InferFn infer;
    std::set<std::string> attributes; ///< every attribute the rule understands
    int max_outputs = 1;
};

const std::map<std::string, OpRule> &rules() {
    static const std::map<std::string, OpRule> table = {
        {"Add", {infer_binary, {}}},
        {"AveragePool",
         {infer_pool,
          {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads",
           "strides"}}},
        {"BatchNormalization",
         {infer_batch_norm,
          {"epsilon", "momentum", "spatial", "training_mode", "is_test", "consumed_inputs"}}},
        {"Cast", {infer_cast, {"to", "saturate"}}},
        {"Clip", {infer_clip, {"min", "max"}}},
        {"Concat", {infer_concat, {"axis"}}},
        {"Constant",
         {infer_constant,
          {"value", "value_float", "value_floats", "value_int", "value_ints", "value_string",
           "value_strings", "sparse_value"}}},
        {"ConstantOfShape", {infer_constant_of_shape, {"value"}}},
        {"Conv",
         {infer_conv, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}}},
        {"ConvTranspose",
         {infer_conv_transpose,
          {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape",
           "pads", "strides"}}},
        {"Div", {infer_binary, {}}},
        {"Equal", {infer_equal, {}}},
        {"Erf", {infer_unary_float, {}}},
        {"Expand", {infer_expand, {}}},
        {"Dropout", {infer_dropout, {"ratio", "seed", "is_test"}, 2}},
        {"Flatten", {infer_flatten, {"axis"}}},
        {"Gather", {infer_gather, {"axis"}}},
        {"Gemm", {infer_gemm, {"alpha", "beta", "broadcast", "transA", "transB"}}},
        {"GlobalAveragePool", {infer_global_pool, {}}},
        {"GlobalMaxPool", {infer_global_pool, {}}},
        {"HardSigmoid", {infer_hard_sigmoid, {"alpha", "beta"}}},
        {"HardSwish", {infer_unary_float, {}}},
        {"Identity", {infer_identity, {}}},
        {"LayerNormalization", {infer_layer_norm, {"axis", "epsilon", "stash_type"}}},
        {"LeakyRelu", {infer_leaky_relu, {"alpha"}}},
        {"LRN", {infer_lrn, {"alpha", "beta", "bias", "size"}}},
        {"MatMul", {infer_matmul, {}}},
        {"MaxPool",
         {infer_pool,
          {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order",
           "strides"}}},
        {"Mod", {infer_binary, {"fmod"}}},
        {"Mul", {infer_binary, {}}},
        {"Not", {infer_not, {}}},
        {"Pow", {infer_binary, {}}},
        {"Pad", {infer_pad, {"mode", "pads", "paddings", "value"}}},
        {"Range", {infer_range, {}}},
        {"ReduceMax", {infer_reduce_mean, {"axes", "keepdims", "noop_with_empty_axes"}}},
        {"ReduceMean", {infer_reduce_mean, {"axes", "keepdims", "noop_with_empty_axes"}}},
        {"ReduceSum", {infer_reduce_mean, {"axes", "keepdims", "noop_with_empty_axes"}}},
        {"Relu", {infer_unary_float, {}}},
        {"Reshape", {infer_reshape, {"allowzero"}}},
        {"Resize",
         {infer_resize,
          {"antialias", "axes", "coordinate_transformation_mode", "cubic_coeff_a",
           "exclude_outside", "extrapolation_value", "keep_aspect_ratio_policy", "mode",
           "nearest_mode"}}},
        {"ScatterND", {infer_scatter_nd, {"reduction"}}},
        {"Shape", {infer_shape, {"start", "end"}}},
        {"Sigmoid", {infer_unary_float, {}}},
        {"Slice", {infer_slice, {"axes", "ends", "starts"}}},
        {"Softmax", {infer_softmax, {"axis"}}},
        {"Sqrt", {infer_unary_float, {}}},
        {"Split", {infer_split, {"axis", "split", "num_outputs"}, std::numeric_limits<int>::max()}},
        {"Squeeze", {infer_squeeze, {"axes"}}},
        {"Sub", {infer_binary, {}}},
        {"Sum", {infer_sum, {}}},
        {"Tanh", {infer_unary_float, {}}},
        {"Transpose", {infer_transpose, {"perm"}}},
        {"Unsqueeze", {infer_unsqueeze, {"axes"}}},
        {"Upsample", {infer_resize, {"mode", "scales"}}},
        {"Where", {infer_where, {}}},
        // Operators the passes create (domain sw_graph):
        {"sw_graph.ChannelScaleShift", {infer_channel_scale_shift, {}}},
        {"sw_graph.ChannelShuffle", {infer_channel_shuffle, {"groups"}}},
        {"sw_graph.Gelu", {infer_gelu, {"approximate"}}},
        {"sw_graph.HardSwish", {infer_hard_sigmoid, {"alpha", "beta"}}},
    };
    return table;
}

void infer_node(Graph &g, Node &node) {
    if (!node.domain.empty() && node.domain != kInternalDomain) {
        throw NodeError("operator domain '" + node.domain +
                        "' is not supported (only the default ONNX domain is)");
    }
    auto it = rules().find(node.domain.empty() ? node.op_type : node.domain + "." + node.op_type);
    if (it == rules().end()) {
        std::string known;
        for (const auto &r : rules()) {
            if (r.first.find('.') == std::string::npos)
                known += (known.empty() ? "" : ", ") + r.first;
        }
        throw NodeError("operator '" + node.op_type + "' is not supported (supported: " + known +
                        ")");
    }
    const OpRule &rule = it->second;
    for (const auto &a : node.attributes) {
        if (!rule.attributes.count(a.first)) {
            throw NodeError("attribute '" + a.first + "' of " + node.op_type + " is not supported");
        }
    }
    int outputs = 0;
    for (const std::string &o : node.outputs)
        outputs += !o.empty();
    if ((int)node.outputs.size() > rule.max_outputs) {
        for (size_t i = rule.max_outputs; i < node.outputs.size(); i++) {
            if (!node.outputs[i].empty()) {
                throw NodeError("output " + std::to_string(i) + " ('" + node.outputs[i] + "') of " +
                                node.op_type + " is not supported (training outputs, indices)");
            }
        }
    }
    if (outputs == 0)
        throw NodeError("has no output");
    Ctx c{g, node};
    rule.infer(c);
}

void apply_input_shapes(Graph &g, const InferenceOptions &options) {
    for (const auto &[name, dims] : options.input_shapes) {
        if (!g.is_graph_input(name)) {
            std::string list;
            for (const std::string &i : g.inputs)
                list += (list.empty() ? "'" : ", '") + i + "'";
            throw g.error("--input-shape: the model has no input '" + name +
                          "' (its inputs: " + list + ")");
        }
        Tensor &t = g.tensor(name);
        if (t.has_shape) {
            bool ok = t.shape.size() == dims.size();
            for (size_t i = 0; ok && i < dims.size(); i++)
                ok = t.shape[i] < 0 || t.shape[i] == dims[i];
            if (!ok) {
                throw g.error("--input-shape " + name + "=" + shape_string(dims) +
                              " does not match the model's declared shape " +
                              shape_string(t.shape));
            }
        }
        t.shape = dims;
        t.has_shape = true;
    }
    for (const std::string &name : g.inputs) {
        Tensor &t = g.tensor(name);
        Shape example = t.shape;
        for (int64_t &d : example)
            d = d < 0 ? 1 : d;
        const std::string hint =
            "; give --input-shape " + name + "=" +
            (t.has_shape && !example.empty() ? shape_string(example) : "1x3x224x224");
        if (!t.has_shape)
            throw g.error("input '" + name + "' has no declared shape" + hint);
        for (size_t i = 0; i < t.shape.size(); i++) {
            if (t.shape[i] < 0) {
                throw g.error("input '" + name + "' has a dynamic dimension (dim " +
                              std::to_string(i) + " of " + shape_string(t.shape) + ")" + hint);
            }
        }
        try {
            element_count(t.shape);
        } catch (const NodeError &e) {
            throw g.error("input '" + name + "': " + e.what());
        }
    }
}

} // namespace

std::vector<int64_t> parse_dims(const std::string &text, const std::string &what) {
    Shape dims;
    size_t pos = 0;
    if (text.empty())
        throw Error("error: " + what + ": empty shape");
    while (pos <= text.size()) {
        size_t x = text.find('x', pos);
        if (x == std::string::npos)
            x = text.size();
        const std::string part = text.substr(pos, x - pos);
        if (part.empty() || part.size() > 12 || !std::all_of(part.begin(), part.end(), [](char ch) {
                return ch >= '0' && ch <= '9';
            })) {
            throw Error("error: " + what + ": '" + text + "' is not a shape like 1x3x224x224");
        }
        dims.push_back(std::stoll(part));
        if (dims.back() < 1)
            throw Error("error: " + what + ": dims must be >= 1 in '" + text + "'");
        pos = x + 1;
    }
    return dims;
}

void add_input_shape(const std::string &arg, InferenceOptions &options) {
    const size_t eq = arg.rfind('=');
    if (eq == std::string::npos || eq == 0) {
        throw Error("error: --input-shape: '" + arg + "' is not name=1x3x224x224");
    }
    const std::string name = arg.substr(0, eq);
    if (options.input_shapes.count(name))
        throw Error("error: --input-shape: input '" + name + "' given twice");
    options.input_shapes[name] = parse_dims(arg.substr(eq + 1), "--input-shape " + name);
}

void infer_shapes(Graph &g, const InferenceOptions &options) {
    apply_input_shapes(g, options);
    for (Node &node : g.nodes) {
        try {
            infer_node(g, node);
        } catch (const NodeError &e) {
            throw g.node_error(node, e.what());
        }
    }
    // Folded nodes go: their outputs are constants now.
    std::vector<Node> kept;
    for (Node &node : g.nodes) {
        bool folded = true;
        for (const std::string &o : node.outputs) {
            if (!o.empty() && !g.tensor(o).is_constant)
                folded = false;
        }
        if (!folded)
            kept.push_back(std::move(node));
    }
    g.nodes = std::move(kept);
    for (const std::string &o : g.outputs) {
        const Tensor &t = g.tensor(o);
        if (!t.is_static())
            throw g.error("output '" + o + "' has no static shape");
        auto it = g.declared_output_shapes.find(o);
        if (it == g.declared_output_shapes.end())
            continue;
        bool ok = it->second.size() == t.shape.size();
        for (size_t i = 0; ok && i < t.shape.size(); i++)
            ok = it->second[i] < 0 || it->second[i] == t.shape[i];
        if (!ok) {
            throw g.error("output '" + o + "': the inferred shape " + shape_string(t.shape) +
                          " differs from the declared " + shape_string(it->second));
        }
    }
}

SliceBox slice_box(const Graph &g, const Node &node) {
    // Ctx only reads here.
    const Ctx c{const_cast<Graph &>(g), const_cast<Node &>(node)};
    return slice_box_of(c);
}

ConvTransposeGeometry conv_transpose_geometry(const Graph &g, const Node &node) {
    // Ctx only reads here.
    const Ctx c{const_cast<Graph &>(g), const_cast<Node &>(node)};
    return conv_transpose_geometry_of(c);
}

ResizeTarget resize_target(const Graph &g, const Node &node) {
    // Ctx only reads here.
    const Ctx c{const_cast<Graph &>(g), const_cast<Node &>(node)};
    return resize_target_of(c);
}

bool pad_amounts(const Graph &g, const Node &n, std::vector<int64_t> &pads) {
    const Tensor *x = g.find(n.input(0));
    if (!x || !x->has_shape)
        return false;
    const size_t rank = x->shape.size();
    std::vector<int64_t> given, axes;
    if (g.opset < 11) {
        given = n.attr_ints("pads", n.attr_ints("paddings", {}));
    } else {
        const Tensor *p = g.find(n.input(1));
        if (!p || !p->is_constant || p->dtype != DType::Int64)
            return false;
        given = p->i64;
        if (n.inputs.size() > 3 && !n.input(3).empty()) {
            const Tensor *a = g.find(n.input(3));
            if (!a || !a->is_constant || a->dtype != DType::Int64)
                return false;
            axes = a->i64;
        }
    }
    if (axes.empty()) {
        for (size_t i = 0; i < rank; i++)
            axes.push_back(int64_t(i));
    }
    if (given.size() != 2 * axes.size())
        return false;
    pads.assign(2 * rank, 0);
    for (size_t k = 0; k < axes.size(); k++) {
        const int64_t a = axes[k] < 0 ? axes[k] + int64_t(rank) : axes[k];
        if (a < 0 || a >= int64_t(rank))
            return false;
        pads[size_t(a)] += given[k];
        pads[rank + size_t(a)] += given[axes.size() + k];
    }
    return true;
}

std::vector<std::string> supported_operators() {
    std::vector<std::string> r;
    for (const auto &e : rules()) {
        if (e.first.find('.') == std::string::npos)
            r.push_back(e.first);
    }
    return r;
}

} // namespace sw_graph
