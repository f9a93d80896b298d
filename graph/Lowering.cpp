/** \file
 * Lowering: see Lowering.h.
 */
#include "graph/Lowering.h"
#include "graph/ShapeInference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace sw_graph {

namespace {

std::string str(int64_t v) {
    return std::to_string(v);
}

std::string dims_str(const std::vector<int64_t> &d) {
    return "(" + shape_string(d) + ")";
}

int to_int(int64_t v, const std::string &what) {
    if (v < 0 || v > (int64_t(1) << 31) - 1)
        throw NodeError(what + " " + str(v) + " out of range");
    return int(v);
}

/** Halide extents of an ONNX shape: the dims reversed. */
std::vector<int> reversed(const std::vector<int64_t> &d) {
    std::vector<int> r;
    for (auto it = d.rbegin(); it != d.rend(); ++it)
        r.push_back(to_int(*it, "dim"));
    return r;
}

/** A shape of rank <= 4 as NCHW (leading 1s: numpy broadcasting aligns the last axes). */
bool as_nchw(std::vector<int64_t> d, std::vector<int> *nchw) {
    if (d.size() > 4)
        return false;
    while (d.size() < 4)
        d.insert(d.begin(), 1);
    nchw->clear();
    for (int64_t v : d)
        nchw->push_back(to_int(v, "dim"));
    return true;
}

/** Shapes of rank > 4 brought to rank 4 where their layout allows: a, b and y (y the
 * broadcast of a and b, a and b padded with leading 1s to its rank) with adjacent dims merged
 * where both inputs treat both dims alike (each either has them whole or broadcasts both).
 * Ranks <= 4 are returned unchanged; false if the result still has rank > 4. */
bool coalesce_broadcast(std::vector<int64_t> &a, std::vector<int64_t> &b, std::vector<int64_t> &y) {
    if (y.size() <= 4 && a.size() <= 4 && b.size() <= 4)
        return true;
    if (a.size() > y.size() || b.size() > y.size())
        return false;
    a.insert(a.begin(), y.size() - a.size(), 1);
    b.insert(b.begin(), y.size() - b.size(), 1);
    // A dim's kind for one input: 0 if the output's dim is 1 (merges with anything), 1 if
    // the input has it whole, 2 if it broadcasts it.
    auto kind = [](int64_t in, int64_t out) { return out == 1 ? 0 : in == out ? 1 : 2; };
    std::vector<int64_t> na{a[0]}, nb{b[0]}, ny{y[0]};
    int ka = kind(a[0], y[0]), kb = kind(b[0], y[0]);
    for (size_t d = 1; d < y.size(); d++) {
        const int da = kind(a[d], y[d]), db = kind(b[d], y[d]);
        if ((!ka || !da || ka == da) && (!kb || !db || kb == db)) {
            ka = ka ? ka : da;
            kb = kb ? kb : db;
            ny.back() *= y[d];
            na.back() = ka == 2 ? 1 : ny.back();
            nb.back() = kb == 2 ? 1 : ny.back();
        } else {
            na.push_back(a[d]);
            nb.push_back(b[d]);
            ny.push_back(y[d]);
            ka = da;
            kb = db;
        }
    }
    a = na, b = nb, y = ny;
    return y.size() <= 4;
}

/** A transpose's shape and perm with dims of 1 dropped and input dims that stay adjacent in
 * the output merged (the same data movement at the lowest rank). */
void reduce_transpose(std::vector<int64_t> &shape, std::vector<int64_t> &perm) {
    std::vector<int64_t> kept; // old dim -> new dim, -1 when dropped
    std::vector<int64_t> index(shape.size(), -1), s1;
    for (size_t d = 0; d < shape.size(); d++) {
        if (shape[d] != 1) {
            index[d] = int64_t(s1.size());
            s1.push_back(shape[d]);
        }
    }
    std::vector<int64_t> p1;
    for (int64_t p : perm) {
        if (index[size_t(p)] >= 0)
            p1.push_back(index[size_t(p)]);
    }
    // Runs of consecutive input dims in output order become one dim each.
    std::vector<std::vector<int64_t>> runs;
    for (int64_t p : p1) {
        if (!runs.empty() && runs.back().back() + 1 == p)
            runs.back().push_back(p);
        else
            runs.push_back({p});
    }
    std::vector<std::vector<int64_t>> by_input = runs;
    std::sort(by_input.begin(), by_input.end());
    shape.clear();
    for (const auto &r : by_input) {
        int64_t e = 1;
        for (int64_t d : r)
            e *= s1[size_t(d)];
        shape.push_back(e);
    }
    perm.clear();
    for (const auto &r : runs)
        perm.push_back(
            int64_t(std::lower_bound(by_input.begin(), by_input.end(), r) - by_input.begin()));
}

struct Lowerer {
    const Graph &g;
    const LowerOptions options;
    LoweredGraph out;
    std::map<std::string, int> layer_index;
    std::set<int> fused; ///< nodes folded into another node's step

    Lowerer(const Graph &graph, const LowerOptions &o) : g(graph), options(o) {}

    const Tensor &in(const Node &n, size_t i) {
        if (n.input(i).empty())
            throw NodeError("input " + str(i) + " is missing");
        const Tensor &t = g.tensor(n.input(i));
        if (!t.has_shape)
            throw NodeError("input '" + t.name + "' has no inferred shape");
        return t;
    }
    const Tensor &float_in(const Node &n, size_t i) {
        const Tensor &t = in(n, i);
        if (t.dtype != DType::Float32) {
            throw NodeError("input '" + t.name + "' is " + dtype_name(t.dtype) + " (float32 only)");
        }
        return t;
    }
    const Tensor &out_tensor(const Node &n) {
        const Tensor &t = g.tensor(n.output(0));
        if (t.dtype != DType::Float32) {
            throw NodeError("output '" + t.name + "' is " + dtype_name(t.dtype) +
                            " (float32 only)");
        }
        return t;
    }
    int add_layer(const std::string &gen, const std::map<std::string, std::string> &params) {
        LayerSpec s{gen, params};
        const std::string k = s.key();
        auto it = layer_index.find(k);
        if (it != layer_index.end())
            return it->second;
        out.layers.push_back(s);
        return layer_index[k] = int(out.layers.size()) - 1;
    }
    Step &step(const Node &n, const std::string &gen,
               const std::map<std::string, std::string> &params) {
        Step s;
        s.node = n.label();
        s.name = n.name.empty() ? "#" + std::to_string(n.index) : n.name;
        s.op_type = n.op_type;
        s.layer = add_layer(gen, params);
        out.steps.push_back(s);
        return out.steps.back();
    }
    std::string extra(const Node &n, const std::string &what, std::vector<float> v) {
        std::string name = n.output(0) + "__" + what;
        while (g.find(name) || out.extra_constants.count(name))
            name += "_";
        out.extra_constants[name] = std::move(v);
        return name;
    }

    /** The only consumer of node \p i's output, if it is an \p op of \p domain (the default
     * domain unless given) and the output is no graph output (a node that may be fused into
     * node i's step); else -1. */
    int sole_consumer(int i, const char *op, const std::string &domain = "") {
        const Node &n = g.nodes[i];
        if (g.is_graph_output(n.output(0)))
            return -1;
        const std::vector<int> c = g.consumers(n.output(0));
        if (c.size() != 1 || g.nodes[c[0]].op_type != op || g.nodes[c[0]].domain != domain)
            return -1;
        return c[0];
    }

    /** Of a two-input node \p a that reads \p operand, its other input: "" unless the two
     * inputs are given and differ. */
    static std::string other_input(const Node &a, const std::string &operand) {
        if (a.inputs.size() != 2 || a.input(0).empty() || a.input(1).empty() ||
            a.input(0) == a.input(1))
            return "";
        return a.input(a.input(0) == operand ? 1 : 0);
    }

    /** The node's only consumer, if it is a Relu and the output is no graph output. */
    int fusable_relu(int i) {
        const int r = sole_consumer(i, "Relu");
        return r >= 0 && g.nodes[r].input(0) == g.nodes[i].output(0) ? r : -1;
    }

    /** The node's only consumer, if it is a Clip from 0 to a constant max > 0 (ReLU6) and the
     * output is no graph output; its max in *max. Else -1. */
    int fusable_clip(int i, float *max) {
        const int c = sole_consumer(i, "Clip");
        if (c < 0 || g.nodes[c].input(0) != g.nodes[i].output(0))
            return -1;
        const Node &n = g.nodes[c];
        float lo = -INFINITY, hi = INFINITY;
        if (g.opset < 11) {
            lo = n.attr_float("min", -INFINITY);
            hi = n.attr_float("max", INFINITY);
        } else {
            for (size_t k = 1; k < 3; k++) {
                if (n.input(k).empty())
                    continue;
                const Tensor *b = g.find(n.input(k));
                if (!b || !b->is_constant || b->dtype != DType::Float32 || b->f32.size() != 1)
                    return -1;
                (k == 1 ? lo : hi) = b->f32[0];
            }
        }
        if (lo != 0.f || !(hi > 0.f) || !std::isfinite(hi))
            return -1;
        *max = hi;
        return c;
    }

    /** alpha and beta of a HardSigmoid (ONNX's defaults 0.2, 0.5), of ONNX's HardSwish (1/6,
     * 0.5) or of the sw_graph.HardSwish that fuse_hard_swish makes (its HardSigmoid's). */
    struct HardParams {
        float alpha, beta;
    };
    static HardParams hard_params(const Node &n) {
        if (n.op_type == "HardSwish" && n.domain.empty())
            return {1.f / 6.f, 0.5f};
        const float a = n.attr_float("alpha", 0.2f), b = n.attr_float("beta", 0.5f);
        if (!std::isfinite(a) || !std::isfinite(b))
            throw NodeError(std::string("attribute '") + (std::isfinite(a) ? "beta" : "alpha") +
                            "' of " + n.op_type + " is not finite");
        return {a, b};
    }

    /** The node's only consumer, if it is a HardSigmoid or a HardSwish (ONNX's, or
     * fuse_hard_swish's) of its output and the output is no graph output; else -1. */
    int fusable_hard(int i) {
        const std::pair<const char *, std::string> kinds[] = {
            {"HardSigmoid", ""}, {"HardSwish", ""}, {"HardSwish", kInternalDomain}};
        for (const auto &[op, domain] : kinds) {
            const int h = sole_consumer(i, op, domain);
            if (h >= 0)
                return g.nodes[h].input(0) == g.nodes[i].output(0) ? h : -1;
        }
        return -1;
    }

    /** The Add that a conv's output feeds, if it can be fused into the conv as a residual
     * input: the conv's output is no graph output and only that Add reads it, the Add has
     * two float inputs of the output's shape (no broadcasting) and the other one is not the
     * conv's output again. */
    int fusable_residual(int i) {
        const int add = sole_consumer(i, "Add");
        if (add < 0)
            return -1;
        const Node &n = g.nodes[i], &a = g.nodes[add];
        const std::string other = other_input(a, n.output(0));
        if (other.empty())
            return -1;
        const Tensor *y = g.find(n.output(0)), *o = g.find(other), *sum = g.find(a.output(0));
        for (const Tensor *t : {y, o, sum}) {
            if (!t || !t->has_shape || t->dtype != DType::Float32 || t->shape != y->shape)
                return -1;
        }
        return add;
    }

    /** A ChannelScaleShift node and the Relu fused into it (-1: none), fused into a conv as
     * its prologue. */
    struct Prologue {
        int affine = -1, relu = -1;
        int64_t pixels = 0; ///< of the conv's input map, per image
    };
    /** The prologues fused into Conv nodes (node index of the conv -> its prologue). */
    std::map<int, Prologue> prologue_of;

    /** Whether ChannelScaleShift node \p a can be a prologue of conv2d: a float input of rank
     * 3 or 4 (a Conv's X) with its shape, and one float scale and shift per channel. */
    bool prologue_fits(const Node &a) {
        if (a.inputs.size() != 3 || a.input(0).empty() || a.input(1).empty() || a.input(2).empty())
            return false;
        const Tensor *x = g.find(a.input(0)), *sc = g.find(a.input(1)), *sh = g.find(a.input(2));
        for (const Tensor *t : {x, sc, sh}) {
            if (!t || !t->has_shape || t->dtype != DType::Float32)
                return false;
        }
        if (x->shape.size() != 3 && x->shape.size() != 4)
            return false;
        return sc->elements() == x->shape[1] && sh->elements() == x->shape[1];
    }

    /** PrologueFusion::Auto, decided by costs (lower_graph): the Conv nodes whose candidate
     * prologue is fused; null: options.fuse_prologue alone decides. */
    const std::set<int> *fuse_convs = nullptr;

    /** A fused prologue as conv() lowered it: the conv's and the affine's nodes, the fused
     * layer (index into out.layers) and the two unfused layers (Step::unfused). */
    struct FusedPrologue {
        int conv = -1, affine = -1;
        int64_t pixels = 0;
        int layer = -1;
        std::vector<Step::UnfusedPart> unfused;
    };
    std::vector<FusedPrologue> fused_prologues;

    /** Finds the ChannelScaleShift nodes (with the Relu fused into them) whose output only one
     * Conv reads, as its X, and is no graph output, and fuses each into that conv as its
     * prologue where options.fuse_prologue allows (Always; Auto: where fuse_convs has the conv,
     * or without fuse_convs on maps of kPrologueMinPixels or more): the affine's step
     * disappears. Why the fused conv can cost more than the two layers (a conv plan that
     * broadcasts its input window to every CPE computes the prologue on all of it in each):
     * docs/kernels.md. */
    void find_prologues() {
        if (options.fuse_prologue == PrologueFusion::Never)
            return;
        for (int i = 0; i < int(g.nodes.size()); i++) {
            const Node &a = g.nodes[size_t(i)];
            if (a.domain != kInternalDomain || a.op_type != "ChannelScaleShift" || fused.count(i))
                continue;
            const int r = fusable_relu(i);
            const std::string &t = g.nodes[size_t(r >= 0 ? r : i)].output(0);
            if (t.empty() || g.is_graph_output(t))
                continue;
            const std::vector<int> readers = g.consumers(t);
            if (readers.size() != 1)
                continue;
            const Node &c = g.nodes[size_t(readers[0])];
            if (c.op_type != "Conv" || !c.domain.empty() || c.inputs.empty() || c.input(0) != t)
                continue;
            bool other_use = false; // the tensor is also the conv's W or B
            for (size_t k = 1; k < c.inputs.size(); k++)
                other_use |= c.input(k) == t;
            if (other_use || !prologue_fits(a))
                continue;
            const std::vector<int64_t> &x = g.tensor(a.input(0)).shape;
            int64_t pixels = 1;
            for (size_t d = 2; d < x.size(); d++)
                pixels *= x[d];
            if (options.fuse_prologue == PrologueFusion::Auto &&
                (fuse_convs ? !fuse_convs->count(readers[0]) : pixels < kPrologueMinPixels))
                continue;
            prologue_of[readers[0]] = {i, r, pixels};
            fused.insert(i);
            if (r >= 0)
                fused.insert(r);
        }
    }

    /** Conv nodes whose step is emitted at their fused residual Add (node index of the Add ->
     * the conv's): the Add's other operand may be computed after the conv in node order (a
     * ResNet block's downsampling shortcut), and the Add comes after both. */
    std::map<int, int> residual_at;

    /** A Conv node; with \p add >= 0, fused with that residual Add (and a Relu after it). */
    void conv(int i, int add = -1) {
        const Node &n = g.nodes[i];
        const Tensor &x = float_in(n, 0), &w = float_in(n, 1);
        if (x.shape.size() != w.shape.size())
            throw NodeError("W's rank differs from X's");
        std::vector<int64_t> kernel = n.attr_ints("kernel_shape", {});
        if (kernel.empty())
            kernel.assign(w.shape.begin() + 2, w.shape.end());
        WindowGeometry geo = window_geometry(n, x.shape, kernel, true);
        const int64_t groups = n.attr_int("group", 1);
        const int co = to_int(w.shape[0], "output channels");
        if (groups < 1 || w.shape[1] * groups != geo.c) {
            throw NodeError("W's input channels (" + str(w.shape[1]) + ") x group (" + str(groups) +
                            ") do not match X's channels (" + str(geo.c) + ")");
        }
        // A pointwise conv (1x1 kernel, no padding) is a matrix product per image: it sees its
        // map as one row of pixels (H*W x 1: the same dense NCHW memory), so its tiles and
        // vectors run along all the pixels, not along rows of a few. With a stride, a
        // subsampling step (pool, 1x1 window) first writes the pixels it reads.
        // With a fused prologue the conv reads the affine's input (the affine's output, X,
        // has its shape).
        const auto prologue = prologue_of.find(i);
        const Node *affine =
            prologue != prologue_of.end() ? &g.nodes[size_t(prologue->second.affine)] : nullptr;
        std::string x_name = affine ? affine->input(0) : x.name;
        const bool pointwise =
            geo.kw == 1 && geo.kh == 1 && geo.pl == 0 && geo.pr == 0 && geo.pt == 0 && geo.pb == 0;
        if (pointwise && (geo.sw != 1 || geo.sh != 1))
            x_name = subsample(n, x_name, geo);
        if (pointwise) {
            geo.w = to_int(int64_t(conv_out(geo.w, geo.sw)) * conv_out(geo.h, geo.sh), "pixels");
            geo.h = 1;
            geo.sw = geo.sh = geo.dw = geo.dh = 1;
        }
        std::map<std::string, std::string> p;
        window_params(geo, p, false);
        p["in_channels"] = str(geo.c);
        p["out_channels"] = str(co);
        if (groups != 1)
            p["groups"] = str(groups);
        if (geo.dw != 1 || geo.dh != 1) {
            p["dilation"] = str(geo.dw);
            p["dilation_y"] = str(geo.dh);
        }
        // A Relu, or a Clip(0, max) (ReLU6), after the conv (or after its fused Add).
        const int tail = add >= 0 ? add : i;
        float clip_max = 0;
        const int relu = fusable_relu(tail);
        const int clip = relu < 0 ? fusable_clip(tail, &clip_max) : -1;
        const int hard = relu < 0 && clip < 0 ? fusable_hard(tail) : -1;
        const int r = relu >= 0 ? relu : clip >= 0 ? clip : hard;
        p["relu"] = relu >= 0 || clip >= 0 ? "true" : "false";
        if (clip >= 0)
            p["relu_max"] = format_float(clip_max);
        if (hard >= 0) {
            const Node &h = g.nodes[size_t(hard)];
            const HardParams hp = hard_params(h);
            p["activation"] = h.op_type == "HardSigmoid" ? "hard_sigmoid" : "hard_swish";
            p["alpha"] = format_float(hp.alpha);
            p["beta"] = format_float(hp.beta);
        }
        if (add >= 0)
            p["residual"] = "true";
        std::string bias = n.input(2);
        if (bias.empty())
            bias = extra(n, "zero_bias", std::vector<float>(co, 0.f));
        else if (float_in(n, 2).elements() != co)
            throw NodeError("B does not have one value per output channel");
        const Node &last = r >= 0 ? g.nodes[r] : add >= 0 ? g.nodes[add] : n;
        const Tensor &y = out_tensor(last);
        const std::map<std::string, std::string> unfused_params = p;
        const bool prologue_relu = affine && prologue->second.relu >= 0;
        if (affine)
            p["prologue"] = prologue_relu ? "scale_shift_relu" : "scale_shift";
        Step &s = step(n, "conv2d", p);
        s.op_type = std::string(affine ? "ChannelScaleShift+" : "") +
                    (prologue_relu ? "Relu+" : "") + "Conv" + (add >= 0 ? "+Add" : "") +
                    (relu >= 0   ? "+Relu"
                     : clip >= 0 ? "+Clip"
                     : hard >= 0 ? "+" + g.nodes[size_t(hard)].op_type
                                 : std::string());
        if (r >= 0)
            fused.insert(r);
        s.inputs = {{x_name, {geo.w, geo.h, geo.c, geo.n}},
                    {w.name, {geo.kw, geo.kh, to_int(w.shape[1], "W dim"), co}},
                    {bias, {co}}};
        const int oh = x.shape.size() == 4 && !pointwise ? to_int(y.shape[2], "dim") : 1;
        const int ow = pointwise ? geo.w : to_int(y.shape.back(), "dim");
        s.output = {y.name, {ow, oh, co, geo.n}};
        if (add >= 0) {
            const Node &a = g.nodes[add];
            s.inputs.push_back({a.input(a.input(0) == n.output(0) ? 1 : 0), s.output.extents});
        }
        if (affine) {
            add_prologue(*affine, prologue_relu, unfused_params, s);
            fused_prologues.push_back(
                {i, prologue->second.affine, prologue->second.pixels, s.layer, s.unfused});
        }
    }

    /** The prologue's inputs of a conv step \p s (its scale and shift, after the others) and
     * what the two layers would read and write unfused (Step::unfused): the affine
     * (channel_affine, as channel_affine() lowers it) writing the tensor the conv (with
     * \p conv_params, no prologue) reads. */
    void add_prologue(const Node &affine, bool relu,
                      const std::map<std::string, std::string> &conv_params, Step &s) {
        const Tensor &x = g.tensor(affine.input(0));
        const int nb = to_int(x.shape[0], "batch"), c = to_int(x.shape[1], "channels");
        const int plane = to_int(x.elements() / (int64_t(nb) * c), "plane");
        s.inputs.push_back({affine.input(1), {c}});
        s.inputs.push_back({affine.input(2), {c}});
        Step::UnfusedPart a;
        a.generator = "channel_affine";
        a.params = {{"batch", str(nb)},
                    {"channels", str(c)},
                    {"height", "1"},
                    {"width", str(plane)},
                    {"relu", relu ? "true" : "false"}};
        a.in_elements = x.elements();
        a.read_elements = x.elements() + 2 * int64_t(c);
        a.write_elements = x.elements();
        Step::UnfusedPart conv;
        conv.generator = "conv2d";
        conv.params = conv_params;
        conv.in_elements = elements_of(s.inputs[0].extents);
        // The conv's own inputs (X, W, B and a residual), each once, not the prologue's.
        std::set<std::string> read;
        for (size_t k = 0; k + 2 < s.inputs.size(); k++) {
            if (read.insert(s.inputs[k].tensor).second)
                conv.read_elements += elements_of(s.inputs[k].extents);
        }
        conv.write_elements = elements_of(s.output.extents);
        s.unfused = {a, conv};
    }

    static int64_t elements_of(const std::vector<int> &extents) {
        int64_t n = 1;
        for (int e : extents)
            n *= e;
        return n;
    }

    /** Output extent of a 1x1 window without padding along an input extent \p e. */
    static int conv_out(int e, int stride) { return (e - 1) / stride + 1; }

    /** The pixels a strided pointwise conv \p n reads of \p x: a pool step with a 1x1 window
     * and the conv's strides (a subsample) writing a new tensor, whose name it returns. */
    std::string subsample(const Node &n, const std::string &x, const WindowGeometry &geo) {
        WindowGeometry sub = geo;
        sub.kw = sub.kh = 1;
        std::map<std::string, std::string> p;
        window_params(sub, p, true);
        p["channels"] = str(geo.c);
        p["ceil_mode"] = "false";
        p["type"] = "max";
        std::string name = n.output(0) + "__subsampled";
        while (g.find(name) || subsampled.count(name))
            name += "_";
        subsampled.insert(name);
        // Rows skipped by the stride are not staged: the pool sees the input as rows of
        // stride * width and reads the first width elements of each (skip_rows).
        const bool skip_rows = geo.sh > 1 && geo.h % geo.sh == 0;
        if (skip_rows)
            p["skip_rows"] = "true";
        Step &s = step(n, "pool", p);
        s.name += " (subsample)";
        s.op_type = "Subsample";
        s.inputs = {{x,
                     {skip_rows ? geo.w * geo.sh : geo.w, skip_rows ? geo.h / geo.sh : geo.h, geo.c,
                      geo.n}}};
        s.output = {name, {conv_out(geo.w, geo.sw), conv_out(geo.h, geo.sh), geo.c, geo.n}};
        return name;
    }
    std::set<std::string> subsampled; ///< tensors the subsampling steps write

    void pool(const Node &n) {
        const Tensor &x = float_in(n, 0);
        if (n.outputs.size() > 1 && !n.output(1).empty())
            throw NodeError("MaxPool's Indices output is not supported");
        const WindowGeometry geo =
            window_geometry(n, x.shape, n.attr_ints("kernel_shape", {}), false);
        const bool max = n.op_type == "MaxPool";
        if (max && n.has_attr("storage_order") && n.attr_int("storage_order", 0) != 0) {
            throw NodeError("storage_order 1 is not supported");
        }
        std::map<std::string, std::string> p;
        window_params(geo, p, true);
        p["channels"] = str(geo.c);
        p["ceil_mode"] = n.attr_int("ceil_mode", 0) ? "true" : "false";
        p["type"] = max ? "max" : "avg";
        if (!max)
            p["count_include_pad"] = n.attr_int("count_include_pad", 0) ? "true" : "false";
        const Tensor &y = out_tensor(n);
        Step &s = step(n, "pool", p);
        s.inputs = {{x.name, {geo.w, geo.h, geo.c, geo.n}}};
        const int oh = x.shape.size() == 4 ? to_int(y.shape[2], "dim") : 1;
        s.output = {y.name, {to_int(y.shape.back(), "dim"), oh, geo.c, geo.n}};
    }

    /** Gemm node i; a Relu that is its only consumer is fused (relu=true, "Gemm+Relu"). */
    void gemm(int i) {
        const Node &n = g.nodes[i];
        const Tensor &a = float_in(n, 0), &b = float_in(n, 1);
        if (a.shape.size() != 2 || b.shape.size() != 2)
            throw NodeError("A and B must be 2-D");
        if (n.attr_int("transA", 0))
            throw NodeError("transA=1 is not supported (dense takes A as (M, K))");
        const bool tb = n.attr_int("transB", 0) != 0;
        const int M = to_int(a.shape[0], "M"), K = to_int(a.shape[1], "K");
        const int N = to_int(tb ? b.shape[0] : b.shape[1], "N");
        if ((tb ? b.shape[1] : b.shape[0]) != K)
            throw NodeError("A and B shapes do not match");
        // dense's weights as (K, N) (weights_layout=in_out: floatv4 along the outputs) where
        // B is that already, or is a constant (N, K) multiplied by 16 rows or more (a
        // transformer's projection: transposed once here); else (N, K) as they come (a
        // classifier's head at a small batch, read-bound either way). Outputs that are no
        // whole vectors (outputs_on_vectors) take (N, K) in every case.
        std::string wname = b.name;
        bool in_out = false;
        if (!tb) {
            if (!b.is_constant) {
                throw NodeError("transB=0 with a B that is not a constant is not supported (dense "
                                "takes weights as (N, K))");
            }
            in_out = outputs_on_vectors(N);
            if (!in_out)
                wname = transposed(n, b, K, N);
        } else if (b.is_constant && M >= 16 && outputs_on_vectors(N)) {
            wname = transposed(n, b, N, K);
            in_out = true;
        }
        std::string bias;
        float beta = 1.f;
        if (n.input(2).empty()) {
            bias = extra(n, "zero_bias", std::vector<float>(N, 0.f));
        } else {
            const Tensor &c = float_in(n, 2);
            beta = n.attr_float("beta", 1.f);
            std::vector<int64_t> cd = c.shape;
            while (cd.size() < 2)
                cd.insert(cd.begin(), 1);
            if (cd.size() != 2 || (cd[0] != 1 && cd[0] != M) || (cd[1] != 1 && cd[1] != N)) {
                throw NodeError("C of shape " + dims_str(c.shape) +
                                " does not broadcast to (M, N)");
            }
            if (cd[1] == N && cd[0] == 1) {
                bias = c.name;
            } else {
                if (!c.is_constant) {
                    throw NodeError("C of shape " + dims_str(c.shape) +
                                    " that is not a constant (dense takes a per-output vector)");
                }
                auto at = [&](int m, int j) {
                    return c.f32[size_t(cd[0] == 1 ? 0 : m) * cd[1] + (cd[1] == 1 ? 0 : j)];
                };
                std::vector<float> v(N);
                for (int j = 0; j < N; j++)
                    v[j] = at(0, j);
                for (int m = 1; m < M; m++)
                    for (int j = 0; j < N; j++)
                        if (at(m, j) != v[j]) {
                            throw NodeError("C of shape " + dims_str(c.shape) +
                                            " varies along M (dense takes a per-output vector)");
                        }
                bias = extra(n, "bias", std::move(v));
            }
        }
        std::map<std::string, std::string> p = {{"batch", str(M)},
                                                {"in_features", str(K)},
                                                {"out_features", str(N)},
                                                {"relu", "false"},
                                                {"alpha", format_float(n.attr_float("alpha", 1.f))},
                                                {"beta", format_float(beta)}};
        if (in_out)
            p["weights_layout"] = "in_out";
        const int r = fusable_relu(i);
        if (r >= 0)
            p["relu"] = "true";
        const Tensor &y = out_tensor(r >= 0 ? g.nodes[r] : n);
        Step &s = step(n, "dense", p);
        if (r >= 0) {
            s.op_type = "Gemm+Relu";
            fused.insert(r);
        }
        s.inputs = {{a.name, {K, M}},
                    {wname, in_out ? std::vector<int>{N, K} : std::vector<int>{K, N}},
                    {bias, {N}}};
        s.output = {y.name, {N, M}};
    }

    /** Whether a dense layer of \p N outputs takes its weights as (K, N), the outputs innermost:
     * where they are whole floatv4 vectors. The autoscheduler's plans along the outputs need
     * tiles of whole vectors that divide N (its x_tiles_fit); with any other N they are scalar,
     * and the weights as (N, K) run floatv4 along the reduction instead (GPT-2's 50257-token
     * head, 128 x 768: 227 -> 44 ms predicted). */
    static bool outputs_on_vectors(int N) { return N % 4 == 0; }

    /** A constant (K, N) matrix \p b as its transpose (N, K): a new constant. */
    std::string transposed(const Node &n, const Tensor &b, int K, int N) {
        std::vector<float> t(size_t(N) * K);
        for (int k = 0; k < K; k++)
            for (int j = 0; j < N; j++)
                t[size_t(j) * K + k] = b.f32[size_t(k) * N + j];
        return extra(n, "weights_t", std::move(t));
    }

    /** The Add that adds a constant vector of N values (any shape of N and leading 1s) to a
     * MatMul's output, when it is the MatMul's only consumer (a Linear layer on an input of
     * rank > 2 exports as MatMul + Add): its index and the vector's tensor, else -1. */
    std::pair<int, const Tensor *> fusable_bias(int i, int64_t N) {
        const int add = sole_consumer(i, "Add");
        if (add < 0)
            return {-1, nullptr};
        const Node &n = g.nodes[i], &a = g.nodes[add];
        const std::string other = other_input(a, n.output(0));
        const Tensor *v = other.empty() ? nullptr : g.find(other);
        const Tensor *y = g.find(n.output(0)), *sum = g.find(a.output(0));
        if (!v || !v->is_constant || v->dtype != DType::Float32 || v->elements() != N ||
            v->shape.empty() || v->shape.back() != N || !sum || !y || sum->shape != y->shape) {
            return {-1, nullptr};
        }
        return {add, v};
    }

    /** MatMul (numpy semantics) of any A by a constant matrix B (K, N): dense, with the rows
     * of A (all its dims but the last) as the batch and B as it is (weights_layout=in_out: the
     * outputs innermost, so that the autoscheduler can run floatv4 along them, as on a
     * transformer's projections) where the outputs are whole vectors, else transposed once
     * (outputs_on_vectors); an Add of a constant vector of N and a Relu after it are
     * fused (bias, relu=true). */
    void matmul(int i) {
        const Node &n = g.nodes[i];
        const Tensor &a = float_in(n, 0), &b = float_in(n, 1);
        std::vector<int64_t> bd = b.shape;
        while (bd.size() > 2 && bd.front() == 1)
            bd.erase(bd.begin());
        if (!b.is_constant || bd.size() != 2)
            return batch_matmul(i);
        if (a.shape.empty() || a.shape.back() != bd[0])
            throw NodeError("A and B shapes do not match");
        const int K = to_int(bd[0], "K"), N = to_int(bd[1], "N");
        const int M = to_int(a.elements() / K, "rows of A");
        const auto [add, vec] = fusable_bias(i, N);
        const int r = fusable_relu(add >= 0 ? add : i);
        // A GELU after the bias (fuse_gelu's; a Transformer's feed-forward layer): fused too.
        const int gelu = r < 0 && add >= 0 ? sole_consumer(add, "Gelu", kInternalDomain) : -1;
        // B as it is, (K, N), where the outputs are whole vectors; else transposed once here.
        const bool in_out = outputs_on_vectors(N);
        std::map<std::string, std::string> p = {
            {"batch", str(M)},        {"in_features", str(K)},
            {"out_features", str(N)}, {"relu", r >= 0 ? "true" : "false"},
            {"alpha", "1"},           {"beta", "1"}};
        if (in_out)
            p["weights_layout"] = "in_out";
        if (gelu >= 0)
            p["activation"] = gelu_op(g.nodes[size_t(gelu)]);
        const std::string bias =
            vec ? vec->name : extra(n, "zero_bias", std::vector<float>(N, 0.f));
        const Node &last = r >= 0      ? g.nodes[r]
                           : gelu >= 0 ? g.nodes[size_t(gelu)]
                           : add >= 0  ? g.nodes[add]
                                       : n;
        const Tensor &y = out_tensor(last);
        Step &s = step(n, "dense", p);
        s.op_type = std::string("MatMul") + (add >= 0 ? "+Add" : "") + (r >= 0 ? "+Relu" : "") +
                    (gelu >= 0 ? "+Gelu" : "");
        if (add >= 0)
            fused.insert(add);
        if (r >= 0)
            fused.insert(r);
        if (gelu >= 0)
            fused.insert(gelu);
        s.inputs = {{a.name, {K, M}},
                    in_out ? LayerArg{b.name, {N, K}} : LayerArg{transposed(n, b, K, N), {K, N}},
                    {bias, {N}}};
        s.output = {y.name, {N, M}};
    }

    /** The activation op of a Gelu node (fuse_gelu): gelu (the erf form) or gelu_tanh. */
    static std::string gelu_op(const Node &n) {
        return n.attr_string("approximate", "none") == "tanh" ? "gelu_tanh" : "gelu";
    }

    /** The product of the dims of \p shape in [from, to). */
    static int64_t dims_product(const std::vector<int64_t> &shape, size_t from, size_t to) {
        int64_t r = 1;
        for (size_t d = from; d < to && d < shape.size(); d++)
            r *= shape[d];
        return r;
    }

    /** MatMul of two tensors of rank >= 2 where B is not a constant matrix (attention's
     * Q.K^T and P.V): batch_matmul over the batch dims (numpy broadcasting: each operand's batch
     * is the output's or 1); a Div by (or Mul by) a constant scalar that is the MatMul's only
     * consumer is fused as alpha (attention's 1 / sqrt(d)). */
    void batch_matmul(int i) {
        const Node &n = g.nodes[i];
        const Tensor &a = float_in(n, 0), &b = float_in(n, 1);
        if (a.shape.size() < 2 || b.shape.size() < 2) {
            throw NodeError("a product of " + dims_str(a.shape) + " and " + dims_str(b.shape) +
                            ": with a computed B both must have rank >= 2");
        }
        const size_t ra = a.shape.size(), rb = b.shape.size();
        const int64_t M = a.shape[ra - 2], K = a.shape[ra - 1], N = b.shape[rb - 1];
        if (b.shape[rb - 2] != K)
            throw NodeError("A and B shapes do not match");
        float alpha = 1.f;
        int scale = -1;
        for (const char *op : {"Div", "Mul"}) {
            const int d = sole_consumer(i, op);
            if (d < 0 || g.nodes[size_t(d)].input(0) != n.output(0))
                continue;
            const Tensor *c = g.find(g.nodes[size_t(d)].input(1));
            if (!c || !c->is_constant || c->dtype != DType::Float32 || c->f32.size() != 1 ||
                !std::isfinite(c->f32[0]) || c->f32[0] == 0.f)
                continue;
            const Tensor *z = g.find(g.nodes[size_t(d)].output(0));
            if (!z || z->shape != g.tensor(n.output(0)).shape)
                continue;
            alpha = std::string(op) == "Div" ? 1.f / c->f32[0] : c->f32[0];
            scale = d;
        }
        const Tensor &y = out_tensor(scale >= 0 ? g.nodes[size_t(scale)] : n);
        const int64_t batch = dims_product(y.shape, 0, y.shape.size() - 2);
        const int64_t ab = dims_product(a.shape, 0, ra - 2), bb = dims_product(b.shape, 0, rb - 2);
        if ((ab != batch && ab != 1) || (bb != batch && bb != 1)) {
            throw NodeError("batch dims of " + dims_str(a.shape) + " and " + dims_str(b.shape) +
                            " broadcast partially (each operand's batch must be the output's "
                            "or 1)");
        }
        const int m = to_int(M, "M"), k = to_int(K, "K"), nn = to_int(N, "N");
        const int nb = to_int(batch, "batch"), na = to_int(ab, "batch"), nbb = to_int(bb, "batch");
        std::map<std::string, std::string> p = {{"batch", str(nb)},
                                                {"m", str(m)},
                                                {"n", str(nn)},
                                                {"k", str(k)},
                                                {"a_batch", str(na)},
                                                {"b_batch", str(nbb)},
                                                {"alpha", format_float(alpha)}};
        Step &s = step(n, "batch_matmul", p);
        if (scale >= 0) {
            fused.insert(scale);
            s.op_type += "+" + g.nodes[size_t(scale)].op_type;
        }
        s.inputs = {{a.name, {k, m, na}}, {b.name, {nn, k, nbb}}};
        s.output = {y.name, {nn, m, nb}};
    }

    /** LayerNormalization over the dims from `axis` on: layer_norm with the dims before it as
     * the rows (a missing B as zeros). */
    void layer_norm(const Node &n) {
        const Tensor &x = float_in(n, 0), &scale = float_in(n, 1);
        const int64_t rank = (int64_t)x.shape.size();
        int64_t axis = n.attr_int("axis", -1);
        if (axis < 0)
            axis += rank;
        const int rows = to_int(dims_product(x.shape, 0, size_t(axis)), "rows");
        const int size = to_int(dims_product(x.shape, size_t(axis), size_t(rank)), "size");
        const std::string bias = n.input(2).empty()
                                     ? extra(n, "zero_bias", std::vector<float>(size, 0.f))
                                     : float_in(n, 2).name;
        std::map<std::string, std::string> p = {
            {"rows", str(rows)},
            {"size", str(size)},
            {"epsilon", format_float(n.attr_float("epsilon", 1e-5f))}};
        Step &s = step(n, "layer_norm", p);
        out.layers[size_t(s.layer)].hand_reason =
            "its hand schedule runs both reductions on floatv4 and broadcasts the scale and bias; "
            "the autoscheduler's plans run the variance scalar and read them in every block "
            "(BERT-base's 128 x 768: 0.057 against 0.088 ms)";
        s.inputs = {{x.name, {size, rows}}, {scale.name, {size}}, {bias, {size}}};
        s.output = {out_tensor(n).name, {size, rows}};
    }

    /** Transpose of rank <= 4: a view when only dims of 1 move, else transpose (the shape
     * padded with leading 1s to rank 4). */
    void transpose(const Node &n) {
        const Tensor &x = float_in(n, 0), &y = out_tensor(n);
        const int64_t rank = (int64_t)x.shape.size();
        std::vector<int64_t> perm(static_cast<size_t>(rank));
        for (int64_t d = 0; d < rank; d++)
            perm[size_t(d)] = rank - 1 - d;
        perm = n.attr_ints("perm", perm);
        int64_t last = -1;
        bool order_kept = true;
        for (int64_t p : perm) {
            if (x.shape[size_t(p)] == 1)
                continue;
            order_kept = order_kept && p > last;
            last = p;
        }
        if (order_kept)
            return view_of(n, x, y); // the same row-major order
        std::vector<int64_t> shape = x.shape;
        if (rank > 4) {
            reduce_transpose(shape, perm);
            if (shape.size() > 4) {
                throw NodeError("a Transpose of rank " + str(rank) + " that is of rank " +
                                str(int64_t(shape.size())) +
                                " with its dims of 1 dropped and its adjacent dims merged (at "
                                "most 4 is supported)");
            }
        }
        const int64_t pad = 4 - int64_t(shape.size());
        std::vector<int> shape4(4, 1), perm4(4), out4(4);
        for (int64_t d = 0; d < 4; d++) {
            if (d >= pad)
                shape4[size_t(d)] = to_int(shape[size_t(d - pad)], "dim");
            perm4[size_t(d)] = d < pad ? int(d) : int(perm[size_t(d - pad)] + pad);
        }
        std::string sh, pe;
        for (int d = 0; d < 4; d++) {
            out4[size_t(d)] = shape4[size_t(perm4[size_t(d)])];
            sh += (d ? "," : "") + str(shape4[size_t(d)]);
            pe += (d ? "," : "") + str(perm4[size_t(d)]);
        }
        Step &s = step(n, "transpose", {{"shape", sh}, {"perm", pe}});
        s.inputs = {{x.name, {shape4[3], shape4[2], shape4[1], shape4[0]}}};
        s.output = {y.name, {out4[3], out4[2], out4[1], out4[0]}};
    }

    /** Pad of rank <= 4 (the shape padded with leading 1s to rank 4): pad, mode constant (any
     * constant value), reflect or edge; negative pads crop. */
    void pad(const Node &n) {
        const Tensor &x = float_in(n, 0), &y = out_tensor(n);
        const std::string mode = n.attr_string("mode", "constant");
        if (mode != "constant" && mode != "reflect" && mode != "edge")
            throw NodeError("mode '" + mode + "' is not supported (constant, reflect or edge)");
        std::vector<int64_t> pads;
        if (!pad_amounts(g, n, pads))
            throw NodeError("pads must be constants");
        float value = 0.f;
        if (g.opset < 11) {
            value = n.attr_float("value", 0.f);
        } else if (n.inputs.size() > 2 && !n.input(2).empty()) {
            const Tensor &v = in(n, 2);
            if (!v.is_constant || v.dtype != DType::Float32 || v.f32.size() != 1)
                throw NodeError("constant_value '" + v.name +
                                "' must be a float32 constant scalar");
            value = v.f32[0];
        }
        const int64_t rank = (int64_t)x.shape.size();
        if (rank > 4)
            throw NodeError("a Pad of rank " + str(rank) + " (at most 4 is supported)");
        const int64_t lead = 4 - rank;
        std::vector<int> shape4(4, 1), out4(4, 1);
        std::string sh, pa;
        for (int64_t d = 0; d < 4; d++) {
            int64_t b = 0, e = 0;
            if (d >= lead) {
                shape4[size_t(d)] = to_int(x.shape[size_t(d - lead)], "dim");
                b = pads[size_t(d - lead)];
                e = pads[size_t(rank + d - lead)];
            }
            out4[size_t(d)] = to_int(shape4[size_t(d)] + b + e, "dim");
            sh += (d ? "," : "") + str(shape4[size_t(d)]);
            pa += (d ? "," : "") + str(b);
        }
        for (int64_t d = 0; d < 4; d++)
            pa += "," + str(d >= lead ? pads[size_t(rank + d - lead)] : 0);
        Step &s =
            step(n, "pad",
                 {{"shape", sh}, {"pads", pa}, {"mode", mode}, {"value", format_float(value)}});
        s.inputs = {{x.name, {shape4[3], shape4[2], shape4[1], shape4[0]}}};
        s.output = {y.name, {out4[3], out4[2], out4[1], out4[0]}};
    }

    /** Gather along axis 0 with computed (or unfolded constant) int64 indices: an embedding
     * lookup, gather (the table's first dim as the vocabulary, the others as a row). */
    void gather(const Node &n) {
        const Tensor &table = float_in(n, 0), &idx = in(n, 1);
        if (idx.dtype != DType::Int64)
            throw NodeError("indices must be int64");
        const int64_t rank = (int64_t)table.shape.size();
        int64_t axis = n.attr_int("axis", 0);
        if (axis < 0)
            axis += rank;
        if (idx.is_constant && idx.i64.size() == 1) {
            // One constant index (ViT's class token, x[:, 0]): the slice of one along the
            // axis (the output drops the axis or keeps it as 1: the same elements).
            const int64_t k = idx.i64[0] < 0 ? idx.i64[0] + table.shape[size_t(axis)] : idx.i64[0];
            Tensor y = out_tensor(n);
            y.shape = table.shape;
            y.shape[size_t(axis)] = 1;
            return axis_slice(n, table, axis, k, y);
        }
        if (axis != 0) {
            throw NodeError("Gather along axis " + str(n.attr_int("axis", 0)) +
                            " of a computed tensor (axis 0, an embedding lookup, is supported)");
        }
        const int vocab = to_int(table.shape[0], "vocabulary");
        const int size = to_int(dims_product(table.shape, 1, size_t(rank)), "row size");
        const int rows = to_int(idx.elements(), "indices");
        Step &s =
            step(n, "gather", {{"rows", str(rows)}, {"vocab", str(vocab)}, {"size", str(size)}});
        s.inputs = {{table.name, {size, vocab}}, {idx.name, {rows}}};
        s.output = {out_tensor(n).name, {size, rows}};
    }

    /** An eltwise step of \p n with parameters \p p (op and its own): out = a op b, numpy
     * broadcasting, each shape (of rank <= 4, else NodeError \p too_deep) padded to NCHW. */
    void eltwise_step(const Node &n, std::map<std::string, std::string> p, const std::string &a,
                      const std::vector<int64_t> &a_shape, const std::string &b,
                      const std::vector<int64_t> &b_shape, const Tensor &y, const char *too_deep) {
        std::vector<int> ad, bd, od;
        std::vector<int64_t> as = a_shape, bs = b_shape, ys = y.shape;
        if (!coalesce_broadcast(as, bs, ys) || !as_nchw(as, &ad) || !as_nchw(bs, &bd) ||
            !as_nchw(ys, &od))
            throw NodeError(too_deep);
        static const char *const dim[] = {"batch", "channels", "height", "width"};
        for (size_t i = 0; i < 4; i++) {
            p[dim[i]] = str(od[i]);
            p[std::string("a_") + dim[i]] = str(ad[i]);
            p[std::string("b_") + dim[i]] = str(bd[i]);
        }
        Step &s = step(n, "eltwise", p);
        s.inputs = {{a, {ad[3], ad[2], ad[1], ad[0]}}, {b, {bd[3], bd[2], bd[1], bd[0]}}};
        s.output = {y.name, {od[3], od[2], od[1], od[0]}};
    }

    /** Expand of a computed float32 tensor (numpy broadcasting to a larger shape): eltwise, a
     * multiplication by a constant 1 broadcast the other way (exact, NaN kept). */
    void expand(const Node &n) {
        const Tensor &x = float_in(n, 0), &y = out_tensor(n);
        if (x.shape == y.shape || x.elements() == y.elements())
            return view_of(n, x, y);
        eltwise_step(n, {{"op", "mul"}}, x.name, x.shape, extra(n, "one", {1.f}), {1}, y,
                     "an Expand of rank > 4 (eltwise is NCHW)");
    }

    /** Where(cond, X, Y) with a constant condition and a constant scalar on one side
     * (masked_fill: a causal mask): eltwise select, the computed tensor as a, where to keep it
     * as b (a constant float mask, 1 where the computed side is taken, at the condition's
     * shape), the scalar as `fill`. */
    void where(const Node &n) {
        const Tensor &cond = in(n, 0), &x = in(n, 1), &yv = in(n, 2), &y = out_tensor(n);
        const bool x_fill = x.is_constant && x.elements() == 1 && !yv.is_constant;
        const Tensor &a = x_fill ? yv : x, &fill = x_fill ? x : yv;
        std::vector<float> keep(cond.i64.size());
        for (size_t i = 0; i < keep.size(); i++)
            keep[i] = (cond.i64[i] != 0) != x_fill ? 1.f : 0.f;
        eltwise_step(n, {{"op", "select"}, {"fill", format_float(fill.f32.at(0))}}, a.name, a.shape,
                     extra(n, "keep", std::move(keep)), cond.shape, y,
                     "a Where of rank > 4 (eltwise is NCHW)");
    }

    /** Resize (opsets 10-18) and Upsample of a float32 tensor of rank <= 4 along its last two
     * dims (H, W; the others padded to NCHW): resize, mode nearest or linear, the coordinate
     * modes PyTorch and the ONNX tests use; a view when nothing changes. */
    void resize(const Node &n) {
        const Tensor &x = float_in(n, 0), &y = out_tensor(n);
        const ResizeTarget t = resize_target(g, n);
        const size_t rank = x.shape.size();
        if (rank < 2 || rank > 4) {
            throw NodeError("a Resize of rank " + str(int64_t(rank)) +
                            " (ranks 2 to 4, the last two dims spatial, are supported)");
        }
        for (size_t d = 0; d + 2 < rank; d++) {
            if (t.shape[d] != x.shape[d] || (t.scales[d] != 1 && t.scales[d] != 0)) {
                throw NodeError("resizes dim " + str(int64_t(d)) +
                                " (only the last two, H and W, are supported)");
            }
        }
        const bool upsample = n.op_type == "Upsample";
        const bool v10 = upsample || g.opset < 11; // Upsample and Resize-10: asymmetric, floor
        std::string mode = n.attr_string("mode", "nearest");
        if (mode == "bilinear" && upsample)
            mode = "linear";
        if (mode != "nearest" && mode != "linear") {
            throw NodeError("attribute mode='" + mode +
                            "' is not supported (nearest and linear are)");
        }
        const std::string ct =
            v10 ? "asymmetric" : n.attr_string("coordinate_transformation_mode", "half_pixel");
        if (ct != "half_pixel" && ct != "pytorch_half_pixel" && ct != "align_corners" &&
            ct != "asymmetric" && ct != "tf_half_pixel_for_nn") {
            throw NodeError("attribute coordinate_transformation_mode='" + ct +
                            "' is not supported (half_pixel, pytorch_half_pixel, align_corners, "
                            "asymmetric and tf_half_pixel_for_nn are)");
        }
        const std::string nm = v10 ? "floor" : n.attr_string("nearest_mode", "round_prefer_floor");
        if (mode == "nearest" && nm != "round_prefer_floor" && nm != "round_prefer_ceil" &&
            nm != "floor" && nm != "ceil") {
            throw NodeError("attribute nearest_mode='" + nm +
                            "' is not supported (round_prefer_floor, round_prefer_ceil, floor "
                            "and ceil are)");
        }
        if (n.attr_int("antialias", 0) != 0)
            throw NodeError("attribute antialias=1 is not supported (0 is)");
        const size_t hd = rank - 2, wd = rank - 1;
        const bool same = t.shape == x.shape && (t.scales[hd] == 0 || t.scales[hd] == 1) &&
                          (t.scales[wd] == 0 || t.scales[wd] == 1);
        if (same)
            return view_of(n, x, y);
        std::vector<int> nchw, onchw;
        as_nchw(x.shape, &nchw);
        as_nchw(t.shape, &onchw);
        auto scale = [](double v) {
            char b[64];
            std::snprintf(b, sizeof b, "%.17g", v);
            return std::string(b);
        };
        std::map<std::string, std::string> p = {{"batch", str(nchw[0])},
                                                {"channels", str(nchw[1])},
                                                {"in_height", str(nchw[2])},
                                                {"in_width", str(nchw[3])},
                                                {"out_height", str(onchw[2])},
                                                {"out_width", str(onchw[3])},
                                                {"mode", mode},
                                                {"coordinate", ct}};
        if (mode == "nearest")
            p["nearest_mode"] = nm;
        if (t.scales[hd] != 0)
            p["scale_y"] = scale(t.scales[hd]);
        if (t.scales[wd] != 0)
            p["scale_x"] = scale(t.scales[wd]);
        Step &s = step(n, "resize", p);
        s.inputs = {{x.name, {nchw[3], nchw[2], nchw[1], nchw[0]}}};
        s.output = {y.name, {onchw[3], onchw[2], onchw[1], onchw[0]}};
    }

    /** ConvTranspose of rank 3 (as height 1) or 4: conv_transpose (groups, strides,
     * dilations, pads from pads, auto_pad or output_shape, output_padding); a missing bias as
     * zeros. */
    void conv_transpose(const Node &n) {
        const Tensor &x = float_in(n, 0), &w = float_in(n, 1), &y = out_tensor(n);
        const ConvTransposeGeometry t = conv_transpose_geometry(g, n);
        const size_t r = t.kernel.size();
        if (r != 1 && r != 2) {
            throw NodeError("a " + str(int64_t(r)) +
                            "-D ConvTranspose (1-D and 2-D are supported)");
        }
        // 1-D as 2-D with a height of 1; every per-axis value (y, x).
        auto axis = [&](const std::vector<int64_t> &v, size_t i, int64_t one) {
            return r == 1 ? (i == 0 ? one : v[0]) : v[i];
        };
        const int nb = to_int(x.shape[0], "batch"), ci = to_int(x.shape[1], "channels");
        const int h = to_int(r == 1 ? 1 : x.shape[2], "height"),
                  wd = to_int(x.shape.back(), "width");
        const int co = to_int(t.out_channels, "channels"), grp = to_int(t.group, "group");
        const int kh = to_int(axis(t.kernel, 0, 1), "kernel"),
                  kw = to_int(axis(t.kernel, 1, 1), "kernel");
        std::map<std::string, std::string> p = {
            {"batch", str(nb)},
            {"in_channels", str(ci)},
            {"out_channels", str(co)},
            {"height", str(h)},
            {"width", str(wd)},
            {"kernel", str(kw)},
            {"kernel_y", str(kh)},
            {"stride", str(axis(t.strides, 1, 1))},
            {"stride_y", str(axis(t.strides, 0, 1))},
            {"dilation", str(axis(t.dilations, 1, 1))},
            {"dilation_y", str(axis(t.dilations, 0, 1))},
            {"pad_left", str(axis(t.pads_begin, 1, 0))},
            {"pad_right", str(axis(t.pads_end, 1, 0))},
            {"pad_top", str(axis(t.pads_begin, 0, 0))},
            {"pad_bottom", str(axis(t.pads_end, 0, 0))},
            {"output_padding", str(axis(t.output_padding, 1, 0))},
            {"output_padding_y", str(axis(t.output_padding, 0, 0))},
            {"groups", str(grp)}};
        std::string bias = n.input(2);
        if (bias.empty())
            bias = extra(n, "zero_bias", std::vector<float>(size_t(co), 0.f));
        Step &s = step(n, "conv_transpose", p);
        const int oh = r == 1 ? 1 : to_int(y.shape[2], "height"),
                  ow = to_int(y.shape.back(), "width");
        s.inputs = {{x.name, {wd, h, ci, nb}}, {w.name, {kw, kh, co / grp, ci}}, {bias, {co}}};
        s.output = {y.name, {ow, oh, co, nb}};
    }

    /** Cast of a computed int64 tensor to float32: cast. */
    void cast(const Node &n) {
        const Tensor &x = in(n, 0), &y = out_tensor(n);
        if (x.dtype != DType::Int64)
            throw NodeError(std::string("Cast from ") + dtype_name(x.dtype) + " to float32");
        const int size = to_int(x.elements(), "size");
        Step &s = step(n, "cast", {{"size", str(size)}});
        s.inputs = {{x.name, {size}}};
        s.output = {y.name, {size}};
    }

    void activation(const Node &n) {
        const Tensor &x = float_in(n, 0);
        std::map<std::string, std::string> p;
        if (n.op_type == "Gelu") {
            p["op"] = gelu_op(n);
        } else if (n.op_type == "Erf" || n.op_type == "Tanh" || n.op_type == "Sqrt") {
            p["op"] = n.op_type == "Erf" ? "erf" : n.op_type == "Tanh" ? "tanh" : "sqrt";
        } else if (n.op_type == "Relu") {
            p["op"] = "relu";
        } else if (n.op_type == "Sigmoid") {
            p["op"] = "sigmoid";
        } else if (n.op_type == "LeakyRelu") {
            p["op"] = "leaky_relu";
            p["alpha"] = format_float(n.attr_float("alpha", 0.01f));
        } else if (n.op_type == "HardSigmoid" || n.op_type == "HardSwish") {
            const HardParams h = hard_params(n);
            p["op"] = n.op_type == "HardSigmoid" ? "hard_sigmoid" : "hard_swish";
            p["alpha"] = format_float(h.alpha);
            p["beta"] = format_float(h.beta);
        } else { // Clip
            p["op"] = "clip";
            if (g.opset < 11) {
                if (n.has_attr("min"))
                    p["min"] = format_float(n.attr_float("min", 0));
                if (n.has_attr("max"))
                    p["max"] = format_float(n.attr_float("max", 0));
            } else {
                for (size_t i = 1; i < 3; i++) {
                    if (n.input(i).empty())
                        continue;
                    const Tensor &b = float_in(n, i);
                    if (!b.is_constant || b.f32.size() != 1) {
                        throw NodeError(std::string(i == 1 ? "min" : "max") +
                                        " is not a constant scalar");
                    }
                    p[i == 1 ? "min" : "max"] = format_float(b.f32[0]);
                }
            }
        }
        const int size = to_int(x.elements(), "size");
        p["size"] = str(size);
        Step &s = step(n, "activation", p);
        s.inputs = {{x.name, {size}}};
        s.output = {out_tensor(n).name, {size}};
    }

    void binary(const Node &n) {
        if (n.inputs.size() != 2)
            throw NodeError("needs two inputs");
        const Tensor &a = float_in(n, 0), &b = float_in(n, 1), &y = out_tensor(n);
        const char *op = n.op_type == "Mul"   ? "mul"
                         : n.op_type == "Sub" ? "sub"
                         : n.op_type == "Div" ? "div"
                         : n.op_type == "Pow" ? "pow"
                                              : "add";
        eltwise_step(n, {{"op", op}}, a.name, a.shape, b.name, b.shape, y,
                     "tensors of rank > 4 are not supported (eltwise is NCHW)");
    }

    void global_pool(const Node &n) {
        const Tensor &x = float_in(n, 0);
        const int64_t rank = (int64_t)x.shape.size();
        int64_t first = 2;
        if (n.op_type == "ReduceMean" || n.op_type == "ReduceMax" || n.op_type == "ReduceSum") {
            std::vector<int64_t> axes = n.attr_ints("axes", {});
            if (!n.input(1).empty()) {
                const Tensor &t = in(n, 1);
                if (!t.is_constant || t.dtype != DType::Int64)
                    throw NodeError("axes is not a constant");
                axes = t.i64;
            }
            if (axes.empty()) {
                if (n.attr_int("noop_with_empty_axes", 0))
                    throw NodeError("noop_with_empty_axes is not supported");
                first = 0;
            } else {
                std::string given; // as the node gives them, for the message
                for (int64_t v : axes)
                    given += (given.empty() ? "" : ", ") + str(v);
                for (int64_t &v : axes)
                    v = v < 0 ? v + rank : v;
                std::sort(axes.begin(), axes.end());
                first = axes[0];
                for (size_t i = 0; i < axes.size(); i++) {
                    if (axes[i] != first + int64_t(i) || axes.back() != rank - 1) {
                        throw NodeError(
                            "only trailing axes (the spatial ones) can be reduced, not (" + given +
                            ") of an input of rank " + str(rank));
                    }
                }
            }
        } else if (rank < 3) {
            throw NodeError("input of rank " + str(rank) + " (needs N, C and spatial dims)");
        }
        int64_t lead = 1, plane = 1;
        for (int64_t i = 0; i < rank; i++)
            (i < first ? lead : plane) *= x.shape[i];
        const int nb = first >= 1 ? to_int(x.shape[0], "batch") : 1;
        const int c = to_int(lead / nb, "channels");
        // The reduced dims as rows of the last one (an NCHW input's own H x W): the layer
        // stages whole rows in LDM, so one row of the whole plane could not fit.
        const int64_t last = first < rank ? std::max<int64_t>(1, x.shape[size_t(rank - 1)]) : 1;
        const int w = to_int(last, "width"), h = to_int(plane / last, "plane height");
        std::map<std::string, std::string> p = {
            {"batch", str(nb)},
            {"channels", str(c)},
            {"height", str(h)},
            {"width", str(w)},
            {"type", n.op_type == "GlobalMaxPool" || n.op_type == "ReduceMax" ? "max"
                     : n.op_type == "ReduceSum"                               ? "sum"
                                                                              : "avg"}};
        Step &s = step(n, "global_pool", p);
        s.inputs = {{x.name, {w, h, c, nb}}};
        s.output = {out_tensor(n).name, {1, 1, c, nb}};
    }

    /** The most inputs one concat layer takes: a layer is called with its inputs and output
     * as at most 8 buffers (jit/jit_layer.h). */
    static constexpr size_t kMaxConcatInputs = 7;

    void concat(const Node &n) {
        if (n.inputs.size() == 1)
            return view_of(n, float_in(n, 0), out_tensor(n)); // DenseNet's first layers
        const Tensor &x0 = float_in(n, 0);
        const int64_t rank = (int64_t)x0.shape.size();
        int64_t axis = n.attr_int("axis", 1);
        if (axis < 0)
            axis += rank;
        int64_t outer = 1, inner = 1;
        for (int64_t i = 0; i < rank; i++) {
            if (i < axis)
                outer *= x0.shape[i];
            if (i > axis)
                inner *= x0.shape[i];
        }
        std::vector<LayerArg> args;
        for (size_t k = 0; k < n.inputs.size(); k++) {
            const Tensor &t = float_in(n, k);
            if ((int64_t)t.shape.size() != rank)
                throw NodeError("inputs of different ranks");
            args.push_back(
                {t.name,
                 {to_int(inner, "dim"), 1, to_int(t.shape[axis], "dim"), to_int(outer, "dim")}});
        }
        // More inputs than one layer takes (DenseNet-121 concatenates up to 25): groups of
        // kMaxConcatInputs are concatenated into temporaries first, level by level.
        for (int level = 1; args.size() > kMaxConcatInputs; level++) {
            std::vector<LayerArg> next;
            for (size_t k = 0; k < args.size(); k += kMaxConcatInputs) {
                std::vector<LayerArg> group(
                    args.begin() + k, args.begin() + std::min(args.size(), k + kMaxConcatInputs));
                if (group.size() == 1) {
                    next.push_back(group[0]);
                    continue;
                }
                std::string name =
                    n.output(0) + "__concat" + str(level) + "_" + str(k / kMaxConcatInputs);
                while (g.find(name))
                    name += "_";
                next.push_back(concat_step(n, group, name));
            }
            args = std::move(next);
        }
        concat_step(n, args, out_tensor(n).name);
    }

    /** One concat layer of `args` (extents {inner, 1, channels, outer}) into `out`. */
    LayerArg concat_step(const Node &n, const std::vector<LayerArg> &args, const std::string &out) {
        std::string list;
        int total = 0;
        for (const LayerArg &a : args) {
            total += a.extents[2];
            list += (list.empty() ? "" : ",") + str(a.extents[2]);
        }
        const int inner = args[0].extents[0], outer = args[0].extents[3];
        std::map<std::string, std::string> p = {{"batch", str(outer)},
                                                {"height", "1"},
                                                {"width", str(inner)},
                                                {"channels", list},
                                                {"input.size", str(args.size())}};
        Step &s = step(n, "concat", p);
        s.inputs = args;
        s.output = {out, {inner, 1, total, outer}};
        return s.output;
    }

    void channel_affine(int i) {
        const Node &n = g.nodes[size_t(i)];
        const Tensor &x = float_in(n, 0), &sc = float_in(n, 1), &sh = float_in(n, 2);
        if (x.shape.size() < 2)
            throw NodeError("input of rank < 2");
        const int nb = to_int(x.shape[0], "batch"), c = to_int(x.shape[1], "channels");
        const int plane = to_int(x.elements() / (int64_t(nb) * c), "plane");
        if (sc.elements() != c || sh.elements() != c)
            throw NodeError("scale / shift are not per channel");
        // A Relu that is its only consumer is fused (DenseNet's BatchNorm -> Relu).
        const int r = fusable_relu(i);
        std::map<std::string, std::string> p = {{"batch", str(nb)},
                                                {"channels", str(c)},
                                                {"height", "1"},
                                                {"width", str(plane)},
                                                {"relu", r >= 0 ? "true" : "false"}};
        Step &s = step(n, "channel_affine", p);
        if (r >= 0) {
            fused.insert(r);
            s.op_type += "+Relu";
        }
        s.inputs = {{x.name, {plane, 1, c, nb}}, {sc.name, {c}}, {sh.name, {c}}};
        s.output = {out_tensor(r >= 0 ? g.nodes[size_t(r)] : n).name, {plane, 1, c, nb}};
    }

    void channel_shuffle(const Node &n) {
        const Tensor &x = float_in(n, 0);
        if (x.shape.size() != 4)
            throw NodeError("input of rank other than 4");
        const int inputs = int(n.inputs.size());
        const int nb = to_int(x.shape[0], "batch"), c = to_int(x.shape[1] * inputs, "channels");
        const int h = to_int(x.shape[2], "height"), w = to_int(x.shape[3], "width");
        const int groups = to_int(n.attr_int("groups", 1), "groups");
        std::map<std::string, std::string> p = {{"batch", str(nb)},
                                                {"channels", str(c)},
                                                {"height", str(h)},
                                                {"width", str(w)},
                                                {"groups", str(groups)}};
        if (inputs > 1) {
            // A concat fused in (fuse_concat_into_shuffle): one input per group, each seen as
            // (H*W, C/g, 1, N); the output as (H*W, g, C/g, N).
            p["transposed_view"] = "true";
            p["inputs"] = str(inputs);
            Step &s = step(n, "channel_shuffle", p);
            s.inputs.clear();
            for (int k = 0; k < inputs; k++)
                s.inputs.push_back({float_in(n, k).name, {w * h, c / groups, 1, nb}});
            s.output = {out_tensor(n).name, {w * h, groups, c / groups, nb}};
            s.op_type = "Concat+ChannelShuffle";
            return;
        }
        // The transpose it is (channel_shuffle's transposed_view): the input as
        // (H*W, C/g, g, N), the output as (H*W, g, C/g, N), the same memory.
        const bool transposed = groups >= 1 && c % groups == 0;
        if (transposed)
            p["transposed_view"] = "true";
        Step &s = step(n, "channel_shuffle", p);
        if (transposed) {
            s.inputs = {{x.name, {w * h, c / groups, groups, nb}}};
            s.output = {out_tensor(n).name, {w * h, groups, c / groups, nb}};
            return;
        }
        s.inputs = {{x.name, {w, h, c, nb}}};
        s.output = {out_tensor(n).name, {w, h, c, nb}};
    }

    /** y = the range [begin, begin + y's dim) of x along `axis`: a channel_slice with the
     * dims before the axis as the batch and those after it as the width, or a view when y
     * is all of x. */
    void axis_slice(const Node &n, const Tensor &x, int64_t axis, int64_t begin, const Tensor &y) {
        if (y.shape == x.shape)
            return view_of(n, x, y);
        int64_t outer = 1, inner = 1;
        for (int64_t i = 0; i < (int64_t)x.shape.size(); i++) {
            if (i < axis)
                outer *= x.shape[i];
            if (i > axis)
                inner *= x.shape[i];
        }
        const int nb = to_int(outer, "dims before the axis"),
                  w = to_int(inner, "dims after the axis");
        const int c = to_int(y.shape[axis], "dim"), ci = to_int(x.shape[axis], "dim");
        if (outer == 1) {
            // One contiguous range of x (a channel range of a batch-1 NCHW tensor): a view at
            // an offset, no copy.
            view_of(n, x, y, begin * inner);
            return;
        }
        std::map<std::string, std::string> p = {{"batch", str(nb)},    {"in_channels", str(ci)},
                                                {"begin", str(begin)}, {"channels", str(c)},
                                                {"height", "1"},       {"width", str(w)}};
        Step &s = step(n, "channel_slice", p);
        s.inputs = {{x.name, {w, 1, ci, nb}}};
        s.output = {y.name, {w, 1, c, nb}};
    }

    void slice(const Node &n) {
        const Tensor &x = float_in(n, 0), &y = out_tensor(n);
        const SliceBox box = slice_box(g, n);
        int64_t axis = -1;
        for (size_t d = 0; d < box.shape.size(); d++) {
            if (box.shape[d] == x.shape[d] && box.begin[d] == 0 && box.step[d] == 1)
                continue;
            if (box.step[d] != 1)
                throw NodeError("steps other than 1 are not supported (axis " + str(d) + ")");
            if (axis >= 0)
                throw NodeError("a slice along more than one axis is not supported");
            axis = int64_t(d);
        }
        if (y.elements() == 0)
            throw NodeError("an empty slice");
        axis_slice(n, x, std::max<int64_t>(axis, 0), axis >= 0 ? box.begin[axis] : 0, y);
    }

    void split(const Node &n) {
        const Tensor &x = float_in(n, 0);
        const int64_t rank = (int64_t)x.shape.size();
        int64_t axis = n.attr_int("axis", 0);
        if (axis < 0)
            axis += rank;
        int64_t begin = 0;
        for (size_t k = 0; k < n.outputs.size(); k++) {
            const Tensor &y = g.tensor(n.outputs[k]);
            if (!n.outputs[k].empty() && y.elements() > 0)
                axis_slice(n, x, axis, begin, y);
            begin += y.shape[axis];
        }
    }

    void lrn(const Node &n) {
        const Tensor &x = float_in(n, 0);
        if (x.shape.size() != 4 && x.shape.size() != 3)
            throw NodeError("input of rank other than 3 or 4");
        const int nb = to_int(x.shape[0], "dim"), c = to_int(x.shape[1], "dim");
        const int h = x.shape.size() == 4 ? to_int(x.shape[2], "dim") : 1,
                  w = to_int(x.shape.back(), "dim");
        std::map<std::string, std::string> p = {
            {"batch", str(nb)},
            {"channels", str(c)},
            {"height", str(h)},
            {"width", str(w)},
            {"size", str(n.attr_int("size", 1))},
            {"alpha", format_float(n.attr_float("alpha", 0.0001f))},
            {"beta", format_float(n.attr_float("beta", 0.75f))},
            {"k", format_float(n.attr_float("bias", 1.f))}};
        Step &s = step(n, "lrn", p);
        s.inputs = {{x.name, {w, h, c, nb}}};
        s.output = {out_tensor(n).name, {w, h, c, nb}};
    }

    void softmax(const Node &n) {
        const Tensor &x = float_in(n, 0);
        const int64_t rank = (int64_t)x.shape.size();
        if (rank < 1)
            throw NodeError("Softmax of a scalar");
        int64_t rows = 1, classes = 1;
        if (g.opset >= 13) {
            int64_t axis = n.attr_int("axis", -1);
            if (axis < 0)
                axis += rank;
            if (axis != rank - 1) {
                throw NodeError("Softmax over axis " + str(n.attr_int("axis", -1)) + " of a rank-" +
                                str(rank) + " input: only the last axis is supported");
            }
            for (int64_t i = 0; i < rank - 1; i++)
                rows *= x.shape[i];
            classes = x.shape[rank - 1];
        } else {
            int64_t axis = n.attr_int("axis", 1);
            if (axis < 0)
                axis += rank;
            for (int64_t i = 0; i < rank; i++)
                (i < axis ? rows : classes) *= x.shape[i];
        }
        std::map<std::string, std::string> p = {{"batch", str(rows)}, {"classes", str(classes)}};
        Step &s = step(n, "softmax", p);
        const int cl = to_int(classes, "classes"), rw = to_int(rows, "rows");
        s.inputs = {{x.name, {cl, rw}}};
        s.output = {out_tensor(n).name, {cl, rw}};
    }

    /** Flatten, Reshape, Squeeze, Unsqueeze: views of float32 or int64 tensors (an attention
     * mask's Unsqueeze). */
    void view(const Node &n) {
        const Tensor &x = in(n, 0), &y = g.tensor(n.output(0));
        if (x.dtype != y.dtype || (x.dtype != DType::Float32 && x.dtype != DType::Int64))
            throw NodeError(std::string("a view of a ") + dtype_name(x.dtype) + " tensor");
        view_of(n, x, y);
    }

    /** y as a view of x: all of it, or (\p offset, a slice) the contiguous range of y's
     * elements from \p offset on. */
    void view_of(const Node &n, const Tensor &x, const Tensor &y, int64_t offset = -1) {
        if (offset < 0 && x.elements() != y.elements())
            throw NodeError("a view that changes the element count");
        if (offset >= 0 && offset + y.elements() > x.elements())
            throw NodeError("a slice view past the end of its input");
        Step s;
        s.node = n.label();
        s.name = n.name.empty() ? "#" + std::to_string(n.index) : n.name;
        s.op_type = n.op_type;
        s.layer = -1;
        s.inputs = {{x.name, {to_int(x.elements(), "size")}}};
        s.output = {y.name, {to_int(y.elements(), "size")}};
        s.view_offset = std::max<int64_t>(offset, 0);
        out.steps.push_back(s);
    }

    void lower_node(int i) {
        const Node &n = g.nodes[i];
        const std::string &op = n.op_type;
        if (n.domain == kInternalDomain && op == "ChannelScaleShift")
            return channel_affine(i);
        if (n.domain == kInternalDomain && op == "ChannelShuffle")
            return channel_shuffle(n);
        if (n.domain == kInternalDomain && (op == "HardSwish" || op == "Gelu"))
            return activation(n);
        if (!n.domain.empty() && n.domain != "ai.onnx") {
            throw NodeError("operator of domain '" + n.domain + "' has no layer");
        }
        for (size_t k = 1; k < n.outputs.size(); k++) {
            if (!n.outputs[k].empty() && op != "MaxPool" && op != "Split") {
                throw NodeError("a second output is not supported");
            }
        }
        if (op == "Conv")
            return conv(i);
        if (op == "MaxPool" || op == "AveragePool")
            return pool(n);
        if (op == "Gemm")
            return gemm(i);
        if (op == "Relu" || op == "Clip" || op == "LeakyRelu" || op == "Sigmoid" ||
            op == "HardSigmoid" || op == "HardSwish" || op == "Erf" || op == "Tanh" || op == "Sqrt")
            return activation(n);
        if (op == "Add" || op == "Mul" || op == "Sub" || op == "Div" || op == "Pow")
            return binary(n);
        if (op == "LayerNormalization")
            return layer_norm(n);
        if (op == "Transpose")
            return transpose(n);
        if (op == "Gather")
            return gather(n);
        if (op == "Cast")
            return cast(n);
        if (op == "Resize" || op == "Upsample")
            return resize(n);
        if (op == "ConvTranspose")
            return conv_transpose(n);
        if (op == "Expand")
            return expand(n);
        if (op == "Where")
            return where(n);
        if (op == "Sum") {
            if (n.inputs.size() != 2)
                throw NodeError("Sum of " + str(n.inputs.size()) + " inputs (two only)");
            return binary(n);
        }
        if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "ReduceMean" ||
            op == "ReduceMax" || op == "ReduceSum")
            return global_pool(n);
        if (op == "Concat")
            return concat(n);
        if (op == "MatMul")
            return matmul(i);
        if (op == "LRN")
            return lrn(n);
        if (op == "Softmax")
            return softmax(n);
        if (op == "Flatten" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze")
            return view(n);
        if (op == "Slice")
            return slice(n);
        if (op == "Split")
            return split(n);
        if (op == "Pad")
            return pad(n);
        if (op == "BatchNormalization") {
            throw NodeError("no layer: a BatchNormalization that fold_batch_norm could not rewrite "
                            "(parameters that are not constants?)");
        }
        throw NodeError("no layer implements this operator yet (" + op + ")");
    }

    /** A head-split attention as torch.onnx exports a hand-written or Hugging Face-style one:
     * Q = Transpose(0,2,1,3)(Rq), K^T = Transpose(0,2,3,1)(Rk), V = Transpose(0,2,1,3)(Rv),
     * with Rq (B, M, H, D) and Rk, Rv (B, N, H, D) (a projection reshaped into heads);
     * MatMul(Q, K^T), optionally a Div / Mul by a constant scalar, optionally an Add of a mask
     * broadcast to (B, H, M, N) or a Where of a constant condition and a scalar (masked_fill),
     * Softmax over the last axis, MatMul by V, and the context's Transpose(0,2,1,3) back to
     * (B, M, H, D). Every intermediate read only by the next and no graph output. */
    struct AttentionMatch {
        std::string rq, rk, rv, out, mask;
        std::vector<int> nodes; ///< every matched node (all fused into one step)
        std::string kind = "none", fill = "0";
        float alpha = 1.f;
        int64_t b = 0, h = 0, m = 0, n = 0, d = 0;
        std::vector<int> mask_dims; ///< (batch, heads, rows, N) of the mask, broadcast
    };
    std::map<int, AttentionMatch> attention_at; ///< by the node whose step is the attention

    /** The Transpose producing \p t with permutation \p perm, read only by \p reader and no
     * graph output: its index, else -1. */
    int transpose_into(const std::string &t, const std::vector<int64_t> &perm, int reader) {
        const int p = g.producer(t);
        if (p < 0 || g.nodes[size_t(p)].op_type != "Transpose" ||
            !g.nodes[size_t(p)].domain.empty())
            return -1;
        if (g.nodes[size_t(p)].attr_ints("perm", {}) != perm || g.is_graph_output(t))
            return -1;
        const std::vector<int> c = g.consumers(t);
        return c.size() == 1 && c[0] == reader ? p : -1;
    }

    /** The only consumer of node \p i's output if its operator is \p op (default domain); -1
     * otherwise or when the output is a graph output. */
    int next_op(int i, const char *op) { return sole_consumer(i, op); }

    /** Q scaled before the product (Swin's q * scale, ViT's q / sqrt(d)): if \p qt, read only by
     * \p reader, is a Div or Mul by a finite non-zero constant scalar, multiplies \p alpha by
     * the factor, appends that node to \p nodes and moves \p qt and \p reader to its input;
     * false if the scale is there but unusable. */
    bool q_scale(std::string &qt, int &reader, float *alpha, std::vector<int> &nodes) {
        const int sc = g.producer(qt);
        if (sc < 0 || !g.nodes[size_t(sc)].domain.empty() ||
            (g.nodes[size_t(sc)].op_type != "Div" && g.nodes[size_t(sc)].op_type != "Mul"))
            return true;
        const Node &scale = g.nodes[size_t(sc)];
        const Tensor *c = g.find(scale.input(1));
        const std::vector<int> readers = g.consumers(qt);
        if (!c || !c->is_constant || c->dtype != DType::Float32 || c->f32.size() != 1 ||
            !std::isfinite(c->f32[0]) || c->f32[0] == 0.f || g.is_graph_output(qt) ||
            readers.size() != 1 || readers[0] != reader)
            return false;
        *alpha *= scale.op_type == "Div" ? 1.f / c->f32[0] : c->f32[0];
        nodes.push_back(sc);
        qt = scale.input(0);
        reader = sc;
        return true;
    }

    /** The end both attention patterns share: V transposed by \p perm into the product \p pv,
     * the context transposed back by the same perm (its only consumer); fills the
     * projections and the output of \p a (float32, K and V of one shape). */
    bool attention_tail(int tq, int tk, int pv, const std::vector<int64_t> &perm, AttentionMatch *a,
                        int *tv, int *to) {
        *tv = transpose_into(g.nodes[size_t(pv)].input(1), perm, pv);
        *to = next_op(pv, "Transpose");
        if (*tv < 0 || *to < 0 || g.nodes[size_t(*to)].attr_ints("perm", {}) != perm)
            return false;
        a->rq = g.nodes[size_t(tq)].input(0);
        a->rk = g.nodes[size_t(tk)].input(0);
        a->rv = g.nodes[size_t(*tv)].input(0);
        a->out = g.nodes[size_t(*to)].output(0);
        const Tensor &q = g.tensor(a->rq), &k = g.tensor(a->rk), &v = g.tensor(a->rv);
        return q.dtype == DType::Float32 && k.dtype == DType::Float32 &&
               v.dtype == DType::Float32 && k.shape == v.shape;
    }

    /** Swin's shift mask (\p shift, broadcast to the rank-5 view \p view of the (B, H, M, N)
     * scores) added to the additive mask the matcher found (a constant, or none): one
     * constant of the full (B, H, M, N) the attention layer reads. False when the found mask
     * is not a constant float one. */
    bool fold_shift_mask(const Tensor &shift, const std::vector<int64_t> &view, const Node &soft,
                         AttentionMatch *a) {
        const std::vector<int64_t> full = {a->b, a->h, a->m, a->n};
        if (element_count(view) != a->b * a->h * a->m * a->n)
            return false;
        const Tensor *base = a->kind == "add" ? g.find(a->mask) : nullptr;
        if (a->kind == "select" || (a->kind == "add" && (!base || !base->is_constant)))
            return false;
        const std::vector<int64_t> bdims(a->mask_dims.begin(), a->mask_dims.end());
        auto at = [](const std::vector<int64_t> &dims, const std::vector<int64_t> &shape,
                     const std::vector<int64_t> &idx) {
            // Row-major offset of idx (in shape) in a tensor of dims broadcast to shape.
            int64_t off = 0;
            const size_t lead = shape.size() - dims.size();
            for (size_t d = lead; d < shape.size(); d++)
                off = off * dims[d - lead] + (dims[d - lead] == 1 ? 0 : idx[d]);
            return off;
        };
        const int64_t total = element_count(full);
        std::vector<float> mask(static_cast<size_t>(total));
        std::vector<int64_t> i4(4), i5(5);
        for (int64_t e = 0; e < total; e++) {
            for (int64_t r = e, d = 3; d >= 0; d--) {
                i4[size_t(d)] = r % full[size_t(d)];
                r /= full[size_t(d)];
            }
            for (int64_t r = e, d = 4; d >= 0; d--) {
                i5[size_t(d)] = r % view[size_t(d)];
                r /= view[size_t(d)];
            }
            float v = shift.f32[size_t(at(shift.shape, view, i5))];
            if (base)
                v += base->f32[size_t(at(bdims, full, i4))];
            mask[size_t(e)] = v;
        }
        a->kind = "add";
        a->mask = extra(soft, "shifted_mask", std::move(mask));
        a->mask_dims.assign(full.begin(), full.end());
        return true;
    }

    bool match_attention(int sm, AttentionMatch *a) {
        const Node &soft = g.nodes[size_t(sm)];
        const Tensor *st = g.find(soft.input(0));
        if (!st || st->shape.size() != 4 ||
            (soft.attr_int("axis", -1) != -1 && soft.attr_int("axis", -1) != 3))
            return false;
        // Backwards from the Softmax: the optional mask, the optional scale, Q.K^T.
        int at = g.producer(soft.input(0));
        std::vector<int> nodes = {sm};
        if (at < 0)
            return false;
        std::string scores = soft.input(0);
        auto only_into = [&](const std::string &t, int reader) {
            const std::vector<int> c = g.consumers(t);
            return !g.is_graph_output(t) && c.size() == 1 && c[0] == reader;
        };
        const Node *mk = &g.nodes[size_t(at)];
        // Swin's shifted windows: the scores viewed as (B, windows, H, M, N), a constant shift
        // mask added, viewed back (Reshape, Add, Reshape); the mask is folded into the one the
        // layer reads (below).
        int scores_reader = sm;
        const Tensor *shift = nullptr;
        std::vector<int64_t> shift_view; // the rank-5 view's shape
        if (mk->domain.empty() && mk->op_type == "Reshape" && only_into(scores, sm)) {
            const int add5 = g.producer(mk->input(0));
            const Tensor *v5 = g.find(mk->input(0));
            if (add5 >= 0 && v5 && v5->shape.size() == 5 && only_into(mk->input(0), at) &&
                g.nodes[size_t(add5)].domain.empty() && g.nodes[size_t(add5)].op_type == "Add") {
                const Node &ad = g.nodes[size_t(add5)];
                for (int side = 0; side < 2 && !shift; side++) {
                    const Tensor *c = g.find(ad.input(size_t(side)));
                    const std::string other = ad.input(size_t(1 - side));
                    const int r5 = g.producer(other);
                    const Tensor *ot = g.find(other);
                    if (!c || !c->is_constant || c->dtype != DType::Float32 ||
                        c->shape.size() != 5 || r5 < 0 || !ot || ot->shape != v5->shape ||
                        g.nodes[size_t(r5)].op_type != "Reshape" ||
                        !g.nodes[size_t(r5)].domain.empty() || !only_into(other, add5))
                        continue;
                    const std::string inner = g.nodes[size_t(r5)].input(0);
                    const Tensor *it = g.find(inner);
                    if (!it || it->shape != st->shape || !only_into(inner, r5))
                        continue;
                    shift = c;
                    shift_view = v5->shape;
                    nodes.insert(nodes.end(), {at, add5, r5});
                    scores = inner;
                    scores_reader = r5;
                    at = g.producer(inner);
                    if (at < 0)
                        return false;
                    mk = &g.nodes[size_t(at)];
                }
            }
        }
        if (mk->domain.empty() && (mk->op_type == "Add" || mk->op_type == "Where") &&
            only_into(scores, scores_reader)) {
            if (mk->op_type == "Add") {
                // The scores: the side with the output's shape that comes from the scale or the
                // product (the mask may be a Mul too, BERT's (1 - m) * -10000, but broadcast).
                auto scores_side = [&](const std::string &t) {
                    const Tensor *tt = g.find(t);
                    const int pr = g.producer(t);
                    if (!tt || tt->shape != st->shape || pr < 0)
                        return false;
                    const Node &pn = g.nodes[size_t(pr)];
                    return pn.op_type == "MatMul" ||
                           ((pn.op_type == "Div" || pn.op_type == "Mul") &&
                            g.producer(pn.input(0)) >= 0 &&
                            g.nodes[size_t(g.producer(pn.input(0)))].op_type == "MatMul");
                };
                const std::string s0 = scores_side(mk->input(0))   ? mk->input(0)
                                       : scores_side(mk->input(1)) ? mk->input(1)
                                                                   : "";
                if (s0.empty())
                    return false;
                const std::string other = other_input(*mk, s0);
                const Tensor *mt = other.empty() ? nullptr : g.find(other);
                if (!mt || mt->dtype != DType::Float32 || mt->shape.size() > 4)
                    return false;
                a->kind = "add";
                a->mask = other;
                std::vector<int64_t> md = mt->shape;
                while (md.size() < 4)
                    md.insert(md.begin(), 1);
                a->mask_dims.assign(md.begin(), md.end());
                scores = s0;
            } else {
                const Tensor *cond = g.find(mk->input(0)), *x = g.find(mk->input(1)),
                             *y = g.find(mk->input(2));
                if (!cond || !x || !y || !cond->is_constant || cond->shape.size() > 4)
                    return false;
                const bool x_fill = x->is_constant && x->elements() == 1 && !y->is_constant;
                const bool y_fill = y->is_constant && y->elements() == 1 && !x->is_constant;
                if (!x_fill && !y_fill)
                    return false;
                const Tensor &fill = x_fill ? *x : *y;
                std::vector<float> keep(cond->i64.size());
                for (size_t i = 0; i < keep.size(); i++)
                    keep[i] = (cond->i64[i] != 0) != x_fill ? 1.f : 0.f;
                a->kind = "select";
                a->fill = format_float(fill.f32.at(0));
                a->mask = extra(*mk, "keep", std::move(keep));
                std::vector<int64_t> md = cond->shape;
                while (md.size() < 4)
                    md.insert(md.begin(), 1);
                a->mask_dims.assign(md.begin(), md.end());
                scores = x_fill ? y->name : x->name;
            }
            nodes.push_back(at);
            at = g.producer(scores);
            if (at < 0 || !only_into(scores, nodes.back()))
                return false;
        }
        const Node *sc = &g.nodes[size_t(at)];
        if (sc->domain.empty() && (sc->op_type == "Div" || sc->op_type == "Mul")) {
            const Tensor *c = g.find(sc->input(1));
            if (!c || !c->is_constant || c->dtype != DType::Float32 || c->f32.size() != 1 ||
                !std::isfinite(c->f32[0]) || c->f32[0] == 0.f)
                return false;
            a->alpha = sc->op_type == "Div" ? 1.f / c->f32[0] : c->f32[0];
            nodes.push_back(at);
            scores = sc->input(0);
            at = g.producer(scores);
            if (at < 0 || !only_into(scores, nodes.back()))
                return false;
        }
        const Node &qk = g.nodes[size_t(at)];
        if (qk.op_type != "MatMul" || !qk.domain.empty())
            return false;
        nodes.push_back(at);
        std::string qt = qk.input(0);
        int reader = at;
        if (!q_scale(qt, reader, &a->alpha, nodes))
            return false;
        const int tq = transpose_into(qt, {0, 2, 1, 3}, reader);
        const int tk = transpose_into(qk.input(1), {0, 2, 3, 1}, at);
        // Forwards: the MatMul by V and the context's transpose back.
        const int pv = next_op(sm, "MatMul");
        if (tq < 0 || tk < 0 || pv < 0 || g.nodes[size_t(pv)].input(0) != soft.output(0))
            return false;
        int tv = -1, to = -1;
        if (!attention_tail(tq, tk, pv, {0, 2, 1, 3}, a, &tv, &to))
            return false;
        const Tensor &q = g.tensor(a->rq), &k = g.tensor(a->rk);
        if (q.shape.size() != 4 || k.shape.size() != 4 || q.shape[0] != k.shape[0] ||
            q.shape[2] != k.shape[2] || q.shape[3] != k.shape[3])
            return false;
        a->b = q.shape[0];
        a->m = q.shape[1];
        a->h = q.shape[2];
        a->d = q.shape[3];
        a->n = k.shape[1];
        if (shift && !fold_shift_mask(*shift, shift_view, soft, a))
            return false;
        if (a->kind == "none") {
            a->mask_dims = {1, 1, 1, 1};
        } else {
            const std::vector<int64_t> full = {a->b, a->h, a->m, a->n};
            for (size_t i = 0; i < 4; i++) {
                if (a->mask_dims[i] != 1 && a->mask_dims[i] != full[i])
                    return false;
            }
            if (a->mask_dims[3] != a->n)
                return false;
        }
        nodes.insert(nodes.end(), {tq, tk, pv, tv, to});
        a->nodes = nodes;
        return true;
    }

    /** nn.MultiheadAttention as torch.onnx writes it (ViT's self-attention): the projections
     * reshaped to (S, B*H, D), Q transposed to (B*H, S, D) and scaled (Div or Mul by a
     * constant), K transposed to (B*H, D, S), V to (B*H, S, D), Q.K^T, Softmax over the last
     * axis, .V, and the context transposed back to (S, B*H, D). Every intermediate read only by
     * the next and no graph output. The attention layer sees (S, B*H, D) as batch 1 of S rows
     * of B*H heads: each (image, head) pair attends over its own S rows, which is what the
     * heads of one image do. */
    bool match_attention_rank3(int sm, AttentionMatch *a) {
        const Node &soft = g.nodes[size_t(sm)];
        const Tensor *st = g.find(soft.input(0));
        if (!st || st->shape.size() != 3 ||
            (soft.attr_int("axis", -1) != -1 && soft.attr_int("axis", -1) != 2))
            return false;
        const int qk = g.producer(soft.input(0));
        if (qk < 0 || g.nodes[size_t(qk)].op_type != "MatMul" ||
            !g.nodes[size_t(qk)].domain.empty() || g.is_graph_output(soft.input(0)) ||
            g.consumers(soft.input(0)).size() != 1)
            return false;
        std::vector<int> nodes = {sm, qk};
        // Q's side: an optional scale of the transposed projection.
        std::string qt = g.nodes[size_t(qk)].input(0);
        int reader = qk;
        if (!q_scale(qt, reader, &a->alpha, nodes))
            return false;
        const int tq = transpose_into(qt, {1, 0, 2}, reader);
        const int tk = transpose_into(g.nodes[size_t(qk)].input(1), {1, 2, 0}, qk);
        const int pv = next_op(sm, "MatMul");
        if (tq < 0 || tk < 0 || pv < 0 || g.nodes[size_t(pv)].input(0) != soft.output(0))
            return false;
        int tv = -1, to = -1;
        if (!attention_tail(tq, tk, pv, {1, 0, 2}, a, &tv, &to))
            return false;
        const Tensor &q = g.tensor(a->rq), &k = g.tensor(a->rk);
        if (q.shape.size() != 3 || k.shape.size() != 3 || q.shape[1] != k.shape[1] ||
            q.shape[2] != k.shape[2])
            return false;
        a->b = 1;
        a->m = q.shape[0];
        a->h = q.shape[1];
        a->d = q.shape[2];
        a->n = k.shape[0];
        a->mask_dims = {1, 1, 1, 1};
        nodes.insert(nodes.end(), {tq, tk, pv, tv, to});
        a->nodes = nodes;
        return true;
    }

    /** Marks every matched attention's nodes fused, its step at the context's transpose. Only
     * when LowerOptions::fuse_attention. */
    void find_attentions() {
        if (!options.fuse_attention)
            return;
        for (int i = 0; i < (int)g.nodes.size(); i++) {
            const Node &n = g.nodes[size_t(i)];
            if (n.op_type != "Softmax" || !n.domain.empty() || fused.count(i))
                continue;
            AttentionMatch a;
            if (!match_attention(i, &a) && !match_attention_rank3(i, &(a = AttentionMatch())))
                continue;
            const int at = *std::max_element(a.nodes.begin(), a.nodes.end());
            for (int k : a.nodes) {
                if (k != at)
                    fused.insert(k);
            }
            attention_at[at] = a;
        }
    }

    void attention(int i, const AttentionMatch &a) {
        const Node &n = g.nodes[size_t(i)];
        std::string mask = a.mask;
        if (a.kind == "none")
            mask = extra(n, "no_mask", {0.f});
        std::map<std::string, std::string> p = {{"batch", str(a.b)},
                                                {"heads", str(a.h)},
                                                {"seq_q", str(a.m)},
                                                {"seq_k", str(a.n)},
                                                {"head_dim", str(a.d)},
                                                {"alpha", format_float(a.alpha)},
                                                {"mask", a.kind},
                                                {"mask_batch", str(a.mask_dims[0])},
                                                {"mask_heads", str(a.mask_dims[1])},
                                                {"mask_rows", str(a.mask_dims[2])}};
        if (a.kind == "select")
            p["fill"] = a.fill;
        Step &s = step(n, "attention", p);
        s.op_type = "Attention";
        out.layers[size_t(s.layer)].hand_reason =
            "its hand schedule streams K and V in chunks shared along mesh rows; the "
            "autoscheduler's plans stage K whole in every block (about 10x slower)";
        const int b = to_int(a.b, "batch"), h = to_int(a.h, "heads"), m = to_int(a.m, "rows"),
                  nk = to_int(a.n, "keys"), d = to_int(a.d, "head dim");
        s.inputs = {{a.rq, {d, h, m, b}},
                    {a.rk, {d, h, nk, b}},
                    {a.rv, {d, h, nk, b}},
                    {mask,
                     {to_int(a.mask_dims[3], "mask"), to_int(a.mask_dims[2], "mask"),
                      to_int(a.mask_dims[1], "mask"), to_int(a.mask_dims[0], "mask")}}};
        s.output = {a.out, {d, h, m, b}};
    }

    void run() {
        find_prologues();
        find_attentions();
        for (int i = 0; i < (int)g.nodes.size(); i++) {
            if (fused.count(i))
                continue;
            const Node &n = g.nodes[i];
            auto att = attention_at.find(i);
            if (att != attention_at.end()) {
                attention(i, att->second);
                continue;
            }
            if (n.op_type == "Conv" && n.domain.empty()) {
                const int add = fusable_residual(i);
                if (add >= 0 && !residual_at.count(add)) { // one conv per Add (the first)
                    residual_at[add] = i;                  // emitted at the Add
                    continue;
                }
            }
            auto deferred = residual_at.find(i);
            const int at = deferred != residual_at.end() ? deferred->second : i;
            try {
                if (at != i) {
                    conv(at, i);
                } else {
                    lower_node(i);
                }
            } catch (const NodeError &e) {
                throw g.node_error(g.nodes[at], e.what());
            }
        }
    }
};

} // namespace

std::string LayerSpec::key() const {
    std::string k = generator;
    for (const auto &p : params)
        k += " " + p.first + "=" + p.second;
    return k;
}

std::string format_float(float v) {
    char b[64];
    for (int digits = 6; digits <= 9; digits++) {
        std::snprintf(b, sizeof b, "%.*g", digits, v);
        if (std::strtof(b, nullptr) == v)
            break;
    }
    return b;
}

WindowGeometry window_geometry(const Node &node, const std::vector<int64_t> &x,
                               std::vector<int64_t> kernel, bool allow_dilation) {
    const size_t rank = x.size();
    if (rank != 3 && rank != 4) {
        throw NodeError("input " + dims_str(x) + ": only 1-D and 2-D spatial inputs are supported");
    }
    const size_t sp = rank - 2;
    std::vector<int64_t> strides = node.attr_ints("strides", {}), pads = node.attr_ints("pads", {}),
                         dil = node.attr_ints("dilations", {});
    if (strides.empty())
        strides.assign(sp, 1);
    if (dil.empty())
        dil.assign(sp, 1);
    if (kernel.size() != sp || strides.size() != sp || dil.size() != sp) {
        throw NodeError("kernel_shape / strides / dilations rank does not match the input");
    }
    for (int64_t d : dil) {
        if (d != 1 && !allow_dilation)
            throw NodeError("dilations other than 1 are not supported");
    }
    std::vector<int64_t> span(sp);
    for (size_t i = 0; i < sp; i++)
        span[i] = (kernel[i] - 1) * dil[i] + 1;
    const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
    std::vector<int64_t> in(x.begin() + 2, x.end()), begin(sp, 0), end(sp, 0);
    if (auto_pad == "NOTSET" || auto_pad.empty()) {
        if (!pads.empty()) {
            if (pads.size() != 2 * sp)
                throw NodeError("pads has the wrong length");
            for (size_t i = 0; i < sp; i++) {
                begin[i] = pads[i];
                end[i] = pads[sp + i];
            }
        }
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        for (size_t i = 0; i < sp; i++) {
            const int64_t o = (in[i] + strides[i] - 1) / strides[i];
            const int64_t total = std::max<int64_t>(0, (o - 1) * strides[i] + span[i] - in[i]);
            begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
            end[i] = total - begin[i];
        }
    } else if (auto_pad != "VALID") {
        throw NodeError("auto_pad " + auto_pad + " is not supported");
    }
    WindowGeometry g;
    g.n = to_int(x[0], "batch");
    g.c = to_int(x[1], "channels");
    if (sp == 2) {
        g.h = to_int(in[0], "height"), g.kh = to_int(kernel[0], "kernel"),
        g.sh = to_int(strides[0], "stride");
        g.pt = to_int(begin[0], "pad"), g.pb = to_int(end[0], "pad"),
        g.dh = to_int(dil[0], "dilation");
    }
    g.w = to_int(in[sp - 1], "width"), g.kw = to_int(kernel[sp - 1], "kernel");
    g.sw = to_int(strides[sp - 1], "stride");
    g.pl = to_int(begin[sp - 1], "pad"), g.pr = to_int(end[sp - 1], "pad"),
    g.dw = to_int(dil[sp - 1], "dilation");
    return g;
}

void window_params(const WindowGeometry &g, std::map<std::string, std::string> &p, bool always_y) {
    p["batch"] = str(g.n);
    p["height"] = str(g.h);
    p["width"] = str(g.w);
    p["kernel"] = str(g.kw);
    if (always_y || g.kh != g.kw)
        p["kernel_y"] = str(g.kh);
    p["stride"] = str(g.sw);
    if (always_y || g.sh != g.sw)
        p["stride_y"] = str(g.sh);
    if (g.pl == g.pr && g.pl == g.pt && g.pl == g.pb) {
        p["pad"] = str(g.pl);
    } else {
        p["pad"] = "0";
        p["pad_left"] = str(g.pl);
        p["pad_right"] = str(g.pr);
        p["pad_top"] = str(g.pt);
        p["pad_bottom"] = str(g.pb);
    }
}

PrologueFusion parse_prologue_fusion(const std::string &s) {
    if (s == "auto")
        return PrologueFusion::Auto;
    if (s == "always")
        return PrologueFusion::Always;
    if (s == "never")
        return PrologueFusion::Never;
    throw Error("prologue fusion must be auto, always or never, not '" + s + "'");
}

namespace {

bool known(double seconds) {
    return std::isfinite(seconds) && seconds > 0;
}

} // namespace

PrologueCounts count_prologue_choices(const std::vector<PrologueChoice> &choices) {
    PrologueCounts n;
    std::set<std::string> layers;
    for (const PrologueChoice &c : choices) {
        n.candidates++;
        n.fused += c.fuse;
        n.costed += c.costed;
        for (const LayerSpec *l : {&c.fused, &c.unfused_affine, &c.unfused_conv})
            layers.insert(l->key());
    }
    n.distinct_layers = layers.size();
    return n;
}

LoweredGraph lower_graph(const Graph &g, const LowerOptions &options) {
    if (options.fuse_prologue != PrologueFusion::Auto) {
        Lowerer l(g, options);
        l.run();
        return std::move(l.out);
    }
    // Auto: first every candidate fused, which gives each candidate's layers in both forms
    // (the fused conv, and Step::unfused: the channel_affine and the conv without prologue).
    LowerOptions all = options;
    all.fuse_prologue = PrologueFusion::Always;
    Lowerer first(g, all);
    first.run();
    if (first.fused_prologues.empty())
        return std::move(first.out);
    std::vector<PrologueChoice> choices;
    std::vector<LayerSpec> specs; // distinct, for the coster
    std::map<std::string, size_t> spec_index;
    auto add_spec = [&](const LayerSpec &l) {
        const std::string k = l.key();
        if (!spec_index.count(k)) {
            spec_index[k] = specs.size();
            specs.push_back(l);
        }
    };
    for (const auto &f : first.fused_prologues) {
        PrologueChoice c;
        c.conv = g.nodes[size_t(f.conv)].label();
        c.affine = g.nodes[size_t(f.affine)].label();
        c.pixels = f.pixels;
        c.fused = first.out.layers[size_t(f.layer)];
        c.unfused_affine = {f.unfused.at(0).generator, f.unfused.at(0).params};
        c.unfused_conv = {f.unfused.at(1).generator, f.unfused.at(1).params};
        for (const LayerSpec *l : {&c.fused, &c.unfused_affine, &c.unfused_conv})
            add_spec(*l);
        choices.push_back(c);
    }
    std::vector<double> seconds;
    if (options.coster) {
        seconds = options.coster(specs);
        if (seconds.size() != specs.size()) {
            throw Error("the layer coster returned " + std::to_string(seconds.size()) +
                        " costs for " + std::to_string(specs.size()) + " layers");
        }
    }
    auto cost = [&](const LayerSpec &l) {
        return seconds.empty() ? 0.0 : seconds[spec_index.at(l.key())];
    };
    std::set<int> fuse_convs;
    for (size_t k = 0; k < choices.size(); k++) {
        PrologueChoice &c = choices[k];
        c.fused_seconds = cost(c.fused);
        c.affine_seconds = cost(c.unfused_affine);
        c.conv_seconds = cost(c.unfused_conv);
        c.costed = known(c.fused_seconds) && known(c.affine_seconds) && known(c.conv_seconds);
        for (double *v : {&c.fused_seconds, &c.affine_seconds, &c.conv_seconds}) {
            if (!known(*v))
                *v = 0;
        }
        c.fuse = c.costed ? c.fused_seconds < c.affine_seconds + c.conv_seconds
                          : c.pixels >= kPrologueMinPixels;
        if (c.fuse)
            fuse_convs.insert(first.fused_prologues[k].conv);
    }
    Lowerer l(g, options);
    l.fuse_convs = &fuse_convs;
    l.run();
    l.out.prologue_choices = std::move(choices);
    return std::move(l.out);
}

} // namespace sw_graph
