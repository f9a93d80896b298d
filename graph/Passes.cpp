#include "graph/Passes.h"
#include "graph/ShapeInference.h"

#include "graph/ShapeInference.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace sw_graph {

namespace {

/** A tensor name not yet in g, starting from `base`. */
std::string fresh_name(const Graph &g, const std::string &base) {
    std::string n = base;
    for (int i = 1; g.find(n); i++)
        n = base + "_" + std::to_string(i);
    return n;
}

/** A new tensor of \p shape in g, named from \p base; returns its name. */
std::string add_tensor(Graph &g, const std::string &base, const std::vector<int64_t> &shape,
                       DType dtype = DType::Float32) {
    Tensor t;
    t.name = fresh_name(g, base);
    t.dtype = dtype;
    t.shape = shape;
    t.has_shape = true;
    const std::string name = t.name;
    g.tensors[name] = std::move(t);
    return name;
}

/** A new 1-D constant in g: float32 values (f32) or int64 ones (i64); returns its name. */
std::string add_constant(Graph &g, const std::string &base, std::vector<float> f32,
                         std::vector<int64_t> i64 = {}) {
    const bool ints = f32.empty() && !i64.empty();
    const std::string name = add_tensor(g, base, {int64_t(ints ? i64.size() : f32.size())},
                                        ints ? DType::Int64 : DType::Float32);
    Tensor &t = g.tensor(name);
    t.is_constant = true;
    t.f32 = std::move(f32);
    t.i64 = std::move(i64);
    return name;
}

/** A node of the default domain made in place of \p from (its name + \p suffix, its index
 * for messages). */
Node node_like(const Node &from, const std::string &suffix, const std::string &op,
               std::vector<std::string> inputs, const std::string &output) {
    Node n;
    n.name = from.name + suffix;
    n.op_type = op;
    n.index = from.index;
    n.inputs = std::move(inputs);
    n.outputs = {output};
    return n;
}

/** A Pad node in mode constant whose value is 0 (the attribute below opset 11, else the constant
 * input constant_value, 0 when absent). */
bool pads_with_zero(const Graph &g, const Node &n) {
    if (n.attr_string("mode", "constant") != "constant")
        return false;
    if (g.opset < 11)
        return n.attr_float("value", 0.f) == 0.f;
    if (n.inputs.size() < 3 || n.input(2).empty())
        return true;
    const Tensor *v = g.find(n.input(2));
    return v && v->is_constant && v->dtype == DType::Float32 && v->f32.size() == 1 &&
           v->f32[0] == 0.f;
}

bool is_identity(const Graph &g, const Node &n) {
    if (!n.domain.empty())
        return false;
    if (n.op_type == "Identity" || n.op_type == "Dropout")
        return true;
    if (n.op_type == "Pad") {
        // All pads 0 (what torch.onnx emits before an AveragePool with count_include_pad).
        std::vector<int64_t> pads;
        return pad_amounts(g, n, pads) &&
               std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; });
    }
    if (n.op_type == "Cast") {
        const Tensor *in = g.find(n.input(0)), *out = g.find(n.output(0));
        return in && out && in->dtype == out->dtype;
    }
    return false;
}

/** A float32 constant of exactly `count` elements, or nullptr. */
const Tensor *constant(const Graph &g, const std::string &name, size_t count) {
    const Tensor *t = name.empty() ? nullptr : g.find(name);
    if (!t || !t->is_constant || t->dtype != DType::Float32 || t->f32.size() != count)
        return nullptr;
    return t;
}

} // namespace

int remove_identities(Graph &g) {
    int removed = 0;
    for (size_t i = 0; i < g.nodes.size();) {
        const Node node = g.nodes[i];
        if (!is_identity(g, node)) {
            i++;
            continue;
        }
        const std::string in = node.input(0), out = node.output(0);
        const Tensor *src = g.find(in);
        const bool in_fixed =
            g.is_graph_input(in) || g.is_graph_output(in) || (src && src->is_constant);
        if (g.is_graph_output(out) && in_fixed) {
            i++;
            continue;
        }
        g.nodes.erase(g.nodes.begin() + i);
        for (size_t k = 1; k < node.outputs.size(); k++) {
            if (!node.outputs[k].empty())
                g.tensors.erase(node.outputs[k]);
        }
        if (g.is_graph_output(out)) {
            // The producer of `in` writes `out` directly; readers of `in` read `out`.
            const int p = g.producer(in);
            for (std::string &o : g.nodes[p].outputs) {
                if (o == in)
                    o = out;
            }
            g.replace_uses(in, out);
            g.tensors.erase(in);
        } else {
            g.replace_uses(out, in);
            g.tensors.erase(out);
        }
        removed++;
        i = 0; // renames may have changed what is fixed; rescan (graphs are small)
    }
    return removed;
}

int fold_pad_into_window(Graph &g) {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        const Node &pad = g.nodes[i];
        if (!pad.domain.empty() || pad.op_type != "Pad" || !pads_with_zero(g, pad))
            continue;
        std::vector<int64_t> pads;
        if (!pad_amounts(g, pad, pads))
            continue;
        const size_t rank = pads.size() / 2;
        if (rank < 3 || pads[0] || pads[1] || pads[rank] || pads[rank + 1] ||
            std::any_of(pads.begin(), pads.end(), [](int64_t v) { return v < 0; }))
            continue;
        const std::string y = pad.output(0);
        if (g.is_graph_output(y))
            continue;
        const std::vector<int> readers = g.consumers(y);
        if (readers.size() != 1)
            continue;
        Node &w = g.nodes[size_t(readers[0])];
        const bool avg = w.domain.empty() && w.op_type == "AveragePool";
        if (!(avg || (w.domain.empty() && w.op_type == "Conv")) || w.input(0) != y)
            continue;
        if (std::count(w.inputs.begin(), w.inputs.end(), y) != 1)
            continue;
        // ShapeInference wrote the window's pads explicitly (auto_pad resolved).
        const size_t sp = rank - 2;
        std::vector<int64_t> own = w.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
        if (own.size() != 2 * sp || w.has_attr("auto_pad"))
            continue;
        if (avg) {
            const bool own_zero =
                std::all_of(own.begin(), own.end(), [](int64_t v) { return v == 0; });
            if (w.attr_int("ceil_mode", 0) != 0 ||
                (!own_zero && w.attr_int("count_include_pad", 0) == 0))
                continue;
            w.attributes["count_include_pad"] = Attribute::make_int(1);
        }
        for (size_t d = 0; d < sp; d++) {
            own[d] += pads[2 + d];
            own[sp + d] += pads[rank + 2 + d];
        }
        w.attributes["pads"] = Attribute::make_ints(own);
        w.inputs[0] = pad.input(0); // the Pad is now dead
        changed++;
    }
    if (changed)
        eliminate_dead_nodes(g);
    return changed;
}

int fold_batch_norm(Graph &g) {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        if (g.nodes[i].op_type != "BatchNormalization" || !g.nodes[i].domain.empty())
            continue;
        const Node bn = g.nodes[i];
        const Tensor &x = g.tensor(bn.input(0));
        const int64_t channels = x.shape.at(1);
        const Tensor *gamma = constant(g, bn.input(1), channels);
        const Tensor *beta = constant(g, bn.input(2), channels);
        const Tensor *mean = constant(g, bn.input(3), channels);
        const Tensor *var = constant(g, bn.input(4), channels);
        if (!gamma || !beta || !mean || !var)
            continue;
        const double eps = bn.attr_float("epsilon", 1e-5f);
        std::vector<double> scale(channels), shift(channels);
        for (int64_t c = 0; c < channels; c++) {
            scale[c] = gamma->f32[c] / std::sqrt((double)var->f32[c] + eps);
            shift[c] = beta->f32[c] - mean->f32[c] * scale[c];
        }

        const int p = g.producer(x.name);
        bool fold = p >= 0 && g.nodes[p].op_type == "Conv" && g.nodes[p].domain.empty() &&
                    g.consumers(x.name).size() == 1 && !g.is_graph_output(x.name);
        const Tensor *w = nullptr, *b = nullptr;
        if (fold) {
            const Node &conv = g.nodes[p];
            const Tensor *wt = g.find(conv.input(1));
            w = wt ? constant(g, wt->name, wt->f32.size()) : nullptr;
            b = constant(g, conv.input(2), channels);
            fold = w && (int64_t)w->shape.at(0) == channels && (conv.input(2).empty() || b);
        }
        if (!fold) {
            // A per-channel scale and shift.
            Tensor s, t;
            s.name = fresh_name(g, bn.output(0) + "_scale");
            t.name = fresh_name(g, bn.output(0) + "_shift");
            for (Tensor *c : {&s, &t}) {
                c->has_shape = c->is_constant = true;
                c->shape = {channels};
            }
            s.f32.assign(scale.begin(), scale.end());
            t.f32.assign(shift.begin(), shift.end());
            Node n;
            n.name = bn.name;
            n.op_type = "ChannelScaleShift";
            n.domain = kInternalDomain;
            n.index = bn.index;
            n.inputs = {bn.input(0), s.name, t.name};
            n.outputs = {bn.output(0)};
            g.tensors[s.name] = s;
            g.tensors[t.name] = t;
            g.nodes[i] = n;
            changed++;
            continue;
        }

        Node &conv = g.nodes[p];
        const int64_t per_channel = (int64_t)w->f32.size() / channels;
        // Shared weights are copied: only this conv changes.
        const bool w_shared = g.consumers(w->name).size() > 1 || g.is_graph_output(w->name);
        Tensor nw = *w;
        if (w_shared)
            nw.name = fresh_name(g, w->name + "_bn");
        for (int64_t c = 0; c < channels; c++) {
            for (int64_t k = 0; k < per_channel; k++) {
                float &v = nw.f32[c * per_channel + k];
                v = (float)(v * scale[c]);
            }
        }
        Tensor nb;
        if (b) {
            nb = *b;
            if (g.consumers(b->name).size() > 1 || g.is_graph_output(b->name))
                nb.name = fresh_name(g, b->name + "_bn");
        } else {
            nb.name = fresh_name(g, bn.output(0) + "_bias");
            nb.has_shape = nb.is_constant = true;
            nb.shape = {channels};
            nb.f32.assign(channels, 0.0f);
        }
        for (int64_t c = 0; c < channels; c++) {
            nb.f32[c] = (float)(nb.f32[c] * scale[c] + shift[c]);
        }
        conv.inputs.resize(3);
        conv.inputs[1] = nw.name;
        conv.inputs[2] = nb.name;
        g.tensors[nw.name] = nw;
        g.tensors[nb.name] = nb;
        conv.outputs[0] = bn.output(0);
        g.tensors.erase(std::string(bn.input(0)));
        g.nodes.erase(g.nodes.begin() + i);
        i--;
        changed++;
    }
    if (changed)
        eliminate_dead_nodes(g); // the replaced weights and BN parameters
    return changed;
}

namespace {

/** The node's only consumer (and the tensor no graph output), or -1. */
int only_consumer(const Graph &g, const std::string &tensor) {
    if (g.is_graph_output(tensor))
        return -1;
    const std::vector<int> c = g.consumers(tensor);
    return c.size() == 1 ? c[0] : -1;
}

bool is_op(const Node &n, const char *op) {
    return n.domain.empty() && n.op_type == op;
}

} // namespace

int fuse_channel_shuffle(Graph &g) {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        if (!is_op(g.nodes[i], "Reshape"))
            continue;
        const Node &r1 = g.nodes[i];
        const Tensor *x = g.find(r1.input(0)), *v = g.find(r1.output(0));
        if (!x || !v || x->shape.size() != 4 || v->shape.size() != 5)
            continue;
        const int t = only_consumer(g, v->name);
        if (t < 0 || !is_op(g.nodes[t], "Transpose") ||
            g.nodes[t].attr_ints("perm", {}) != std::vector<int64_t>{0, 2, 1, 3, 4}) {
            continue;
        }
        const int r2 = only_consumer(g, g.nodes[t].output(0));
        if (r2 < 0 || !is_op(g.nodes[r2], "Reshape"))
            continue;
        const Tensor &y = g.tensor(g.nodes[r2].output(0));
        const std::vector<int64_t> &xs = x->shape, &vs = v->shape;
        if (y.shape != xs || vs[0] != xs[0] || vs[1] * vs[2] != xs[1] || vs[3] != xs[2] ||
            vs[4] != xs[3])
            continue;
        Node n;
        n.name = g.nodes[r2].name;
        n.op_type = "ChannelShuffle";
        n.domain = kInternalDomain;
        n.index = g.nodes[r2].index;
        n.inputs = {x->name};
        n.outputs = {y.name};
        n.attributes["groups"] = Attribute::make_int(vs[1]);
        g.nodes[r2] = n; // the Reshape and the Transpose are now dead
        changed++;
    }
    if (changed)
        eliminate_dead_nodes(g);
    return changed;
}

int fuse_concat_into_shuffle(Graph &g) {
    int changed = 0;
    for (Node &shuffle : g.nodes) {
        if (shuffle.domain != kInternalDomain || shuffle.op_type != "ChannelShuffle" ||
            shuffle.inputs.size() != 1)
            continue;
        const std::string x = shuffle.input(0);
        const int p = g.producer(x);
        if (p < 0 || only_consumer(g, x) < 0 || !is_op(g.nodes[size_t(p)], "Concat"))
            continue;
        const Node &concat = g.nodes[size_t(p)];
        const Tensor &y = g.tensor(x);
        const int64_t groups = shuffle.attr_int("groups", 0);
        if (y.shape.size() != 4 || groups < 2 || int64_t(concat.inputs.size()) != groups)
            continue;
        const int64_t axis = concat.attr_int("axis", 0);
        if (axis != 1 && axis != -3)
            continue;
        // Each input one group: N x C/g x H x W.
        bool equal = true;
        for (const std::string &in : concat.inputs) {
            const Tensor *t = g.find(in);
            equal = equal && t &&
                    t->shape == std::vector<int64_t>{y.shape[0], y.shape[1] / groups, y.shape[2],
                                                     y.shape[3]};
        }
        if (!equal || y.shape[1] % groups)
            continue;
        shuffle.inputs = concat.inputs; // the Concat is now dead
        changed++;
    }
    if (changed)
        eliminate_dead_nodes(g);
    return changed;
}

int fuse_hard_swish(Graph &g) {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        if (!is_op(g.nodes[i], "HardSigmoid"))
            continue;
        const Node &h = g.nodes[i];
        const int m = only_consumer(g, h.output(0));
        if (m < 0 || !is_op(g.nodes[size_t(m)], "Mul"))
            continue;
        const Node &mul = g.nodes[size_t(m)];
        const std::string x = h.input(0);
        if (mul.inputs.size() != 2 || !((mul.input(0) == x && mul.input(1) == h.output(0)) ||
                                        (mul.input(1) == x && mul.input(0) == h.output(0))))
            continue;
        const Tensor *xt = g.find(x), *y = g.find(mul.output(0));
        if (!xt || !y || !xt->has_shape || !y->has_shape || xt->shape != y->shape ||
            xt->dtype != DType::Float32)
            continue;
        Node n;
        n.name = mul.name;
        n.op_type = "HardSwish";
        n.domain = kInternalDomain;
        n.index = mul.index;
        n.inputs = {x};
        n.outputs = {y->name};
        n.attributes["alpha"] = Attribute::make_float(h.attr_float("alpha", 0.2f));
        n.attributes["beta"] = Attribute::make_float(h.attr_float("beta", 0.5f));
        g.nodes[size_t(m)] = n; // the HardSigmoid is now dead
        changed++;
    }
    if (changed)
        eliminate_dead_nodes(g);
    return changed;
}

namespace {

/** A float32 scalar constant (one element) within 1e-6 relative of `value`. */
bool is_scalar(const Graph &g, const std::string &name, double value) {
    const Tensor *t = constant(g, name, 1);
    return t && std::fabs(double(t->f32[0]) - value) <= 1e-6 * std::fabs(value);
}

/** The input of a binary node other than `one` (either order), "" if `one` is not an input. */
std::string other_input(const Node &n, const std::string &one) {
    if (n.inputs.size() != 2)
        return "";
    return n.input(0) == one ? n.input(1) : n.input(1) == one ? n.input(0) : "";
}

/** The node reading `t` as its only reader, if its operator is `op` and `t` is no graph
 * output; else -1. */
int only_consumer_op(const Graph &g, const std::string &t, const char *op) {
    const int m = only_consumer(g, t);
    return m >= 0 && is_op(g.nodes[size_t(m)], op) ? m : -1;
}

} // namespace

namespace {

/** Of Erf's input: x where it is Div(x, sqrt 2) or Mul(x, 1 / sqrt 2) read only by the Erf
 * (node e); else "". */
std::string erf_argument(const Graph &g, int e) {
    const std::string in = g.nodes[size_t(e)].input(0);
    const int d = g.producer(in);
    if (d < 0 || only_consumer(g, in) != e)
        return "";
    const Node &scale = g.nodes[size_t(d)];
    if (is_op(scale, "Div") && is_scalar(g, scale.input(1), std::sqrt(2.0)))
        return scale.input(0);
    if (is_op(scale, "Mul") && is_scalar(g, scale.input(1), std::sqrt(0.5)))
        return scale.input(0);
    if (is_op(scale, "Mul") && is_scalar(g, scale.input(0), std::sqrt(0.5)))
        return scale.input(1);
    return "";
}

/** The input of Mul node \p m other than a scalar constant `value` (either side); "" if it
 * has no such constant. */
std::string scaled_by(const Graph &g, const Node &m, double value) {
    if (!is_op(m, "Mul") || m.inputs.size() != 2)
        return "";
    if (is_scalar(g, m.input(0), value))
        return m.input(1);
    if (is_scalar(g, m.input(1), value))
        return m.input(0);
    return "";
}

/** Of Tanh's input: x where it is sqrt(2 / pi) * (x + 0.044715 * x^3) as torch.onnx writes the
 * tanh approximation (x^3 as x * (x * x) or Pow(x, 3)), each intermediate read only by the next;
 * else "". */
std::string tanh_argument(const Graph &g, int t) {
    const std::string in = g.nodes[size_t(t)].input(0);
    const int k = g.producer(in);
    if (k < 0 || only_consumer(g, in) != t)
        return "";
    const std::string sum =
        scaled_by(g, g.nodes[size_t(k)], std::sqrt(2.0 / 3.14159265358979323846));
    const int a = sum.empty() ? -1 : g.producer(sum);
    if (a < 0 || only_consumer(g, sum) != k || !is_op(g.nodes[size_t(a)], "Add"))
        return "";
    for (int side = 0; side < 2; side++) {
        const std::string x = g.nodes[size_t(a)].input(size_t(side));
        const std::string cubic = g.nodes[size_t(a)].input(size_t(1 - side));
        const int m2 = g.producer(cubic);
        if (m2 < 0 || only_consumer(g, cubic) != a)
            continue;
        const std::string cube = scaled_by(g, g.nodes[size_t(m2)], 0.044715);
        const int m1 = cube.empty() ? -1 : g.producer(cube);
        if (m1 < 0 || only_consumer(g, cube) != m2)
            continue;
        const Node &c = g.nodes[size_t(m1)];
        if (is_op(c, "Pow") && c.input(0) == x) {
            const Tensor *e = g.find(c.input(1));
            if (e && e->is_constant && e->f32.size() == 1 && e->f32[0] == 3.f)
                return x;
            continue;
        }
        const std::string sq = other_input(c, x);
        const int m0 = sq.empty() ? -1 : g.producer(sq);
        if (is_op(c, "Mul") && m0 >= 0 && only_consumer(g, sq) == m1 &&
            is_op(g.nodes[size_t(m0)], "Mul") && g.nodes[size_t(m0)].input(0) == x &&
            g.nodes[size_t(m0)].input(1) == x)
            return x;
    }
    return "";
}

/** After f = Erf or Tanh of node \p i: Add 1, then (x * (1 + f)) * 0.5 or (x * 0.5) * (1 + f),
 * each read only by the next: the last node's index, else -1. */
int gelu_tail(const Graph &g, size_t i, const std::string &x) {
    const std::string f = g.nodes[i].output(0);
    const int a = only_consumer_op(g, f, "Add");
    if (a < 0 || !is_scalar(g, other_input(g.nodes[size_t(a)], f), 1.0))
        return -1;
    const std::string one_plus = g.nodes[size_t(a)].output(0);
    const int m1 = only_consumer_op(g, one_plus, "Mul");
    if (m1 < 0)
        return -1;
    const std::string other = other_input(g.nodes[size_t(m1)], one_plus);
    if (other == x) {
        const std::string prod = g.nodes[size_t(m1)].output(0);
        const int m2 = only_consumer_op(g, prod, "Mul");
        return m2 >= 0 && is_scalar(g, other_input(g.nodes[size_t(m2)], prod), 0.5) ? m2 : -1;
    }
    const int h = g.producer(other);
    if (h >= 0 && only_consumer(g, other) == m1 && is_op(g.nodes[size_t(h)], "Mul") &&
        is_scalar(g, other_input(g.nodes[size_t(h)], x), 0.5))
        return m1;
    return -1;
}

} // namespace

int fuse_gelu(Graph &g) {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        const bool erf = is_op(g.nodes[i], "Erf"), tanh = is_op(g.nodes[i], "Tanh");
        if (!erf && !tanh)
            continue;
        const std::string x = erf ? erf_argument(g, int(i)) : tanh_argument(g, int(i));
        const Tensor *xt = x.empty() ? nullptr : g.find(x);
        if (!xt || xt->dtype != DType::Float32 || !xt->has_shape)
            continue;
        const int last = gelu_tail(g, i, x);
        if (last < 0)
            continue;
        const Tensor *y = g.find(g.nodes[size_t(last)].output(0));
        if (!y || !y->has_shape || y->shape != xt->shape)
            continue;
        Node n;
        n.name = g.nodes[size_t(last)].name;
        n.op_type = "Gelu";
        n.domain = kInternalDomain;
        n.index = g.nodes[size_t(last)].index;
        n.inputs = {x};
        n.outputs = {y->name};
        n.attributes["approximate"] = Attribute::make_string(erf ? "none" : "tanh");
        g.nodes[size_t(last)] = n; // the others are now dead
        changed++;
    }
    if (changed)
        eliminate_dead_nodes(g);
    return changed;
}

int eliminate_dead_nodes(Graph &g) {
    std::set<std::string> live(g.outputs.begin(), g.outputs.end());
    std::vector<bool> keep(g.nodes.size(), false);
    for (size_t i = g.nodes.size(); i-- > 0;) {
        for (const std::string &o : g.nodes[i].outputs) {
            if (!o.empty() && live.count(o))
                keep[i] = true;
        }
        if (!keep[i])
            continue;
        for (const std::string &in : g.nodes[i].inputs) {
            if (!in.empty())
                live.insert(in);
        }
    }
    std::vector<Node> kept;
    int removed = 0;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        if (keep[i])
            kept.push_back(std::move(g.nodes[i]));
        else
            removed++;
    }
    g.nodes = std::move(kept);
    std::set<std::string> used(g.inputs.begin(), g.inputs.end());
    used.insert(g.outputs.begin(), g.outputs.end());
    for (const Node &n : g.nodes) {
        used.insert(n.inputs.begin(), n.inputs.end());
        used.insert(n.outputs.begin(), n.outputs.end());
    }
    for (auto it = g.tensors.begin(); it != g.tensors.end();) {
        it = used.count(it->first) ? std::next(it) : g.tensors.erase(it);
    }
    return removed;
}

namespace {

/** ReduceMean over the last axis only, keepdims 1 (axes as an attribute or, from opset 18, a
 * constant input). */
bool is_last_axis_mean(const Graph &g, const Node &n) {
    const Tensor *x = g.find(n.input(0));
    if (!is_op(n, "ReduceMean") || !x || !x->has_shape || x->shape.empty() ||
        n.attr_int("keepdims", 1) != 1)
        return false;
    std::vector<int64_t> axes = n.attr_ints("axes", {});
    if (!n.input(1).empty()) {
        const Tensor *a = g.find(n.input(1));
        if (!a || !a->is_constant || a->dtype != DType::Int64)
            return false;
        axes = a->i64;
    }
    const int64_t rank = int64_t(x->shape.size());
    return axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

/** The LayerNormalization fuse_layer_norm makes of the pattern rooted at the ReduceMean
 * nodes[i], or false. */
bool layer_norm_at(Graph &g, size_t i) {
    const Node mean = g.nodes[i];
    if (!is_last_axis_mean(g, mean))
        return false;
    const std::string x = mean.input(0);
    const Tensor &xt = g.tensor(x);
    if (xt.dtype != DType::Float32 || g.is_graph_output(mean.output(0)))
        return false;
    auto single = [&](const std::string &t) {
        return g.is_graph_output(t) ? -1 : only_consumer(g, t);
    };
    const int sub = single(mean.output(0));
    if (sub < 0 || !is_op(g.nodes[size_t(sub)], "Sub") || g.nodes[size_t(sub)].input(0) != x ||
        g.nodes[size_t(sub)].input(1) != mean.output(0))
        return false;
    const std::string d = g.nodes[size_t(sub)].output(0);
    const std::vector<int> dc = g.consumers(d);
    if (dc.size() != 2 || g.is_graph_output(d))
        return false;
    // One reader squares d, the other divides it.
    int sq = -1, div = -1;
    for (int c : dc) {
        const Node &n = g.nodes[size_t(c)];
        if (is_op(n, "Div") && n.input(0) == d)
            div = c;
        else if ((is_op(n, "Pow") && n.input(0) == d && is_scalar(g, n.input(1), 2.0)) ||
                 (is_op(n, "Mul") && n.input(0) == d && n.input(1) == d))
            sq = c;
    }
    if (sq < 0 || div < 0)
        return false;
    const int var = single(g.nodes[size_t(sq)].output(0));
    if (var < 0 || !is_last_axis_mean(g, g.nodes[size_t(var)]))
        return false;
    const int add = single(g.nodes[size_t(var)].output(0));
    if (add < 0 || !is_op(g.nodes[size_t(add)], "Add"))
        return false;
    const std::string eps = other_input(g.nodes[size_t(add)], g.nodes[size_t(var)].output(0));
    const Tensor *et = eps.empty() ? nullptr : constant(g, eps, 1);
    const int sqrt = single(g.nodes[size_t(add)].output(0));
    if (!et || sqrt < 0 || !is_op(g.nodes[size_t(sqrt)], "Sqrt") ||
        single(g.nodes[size_t(sqrt)].output(0)) != div ||
        g.nodes[size_t(div)].input(1) != g.nodes[size_t(sqrt)].output(0))
        return false;
    // Optional Mul by gamma and Add of beta, constants of the last axis's size.
    const int64_t c = xt.shape.back();
    int last = div;
    std::vector<float> gamma(size_t(c), 1.f), beta(size_t(c), 0.f);
    const int mul = single(g.nodes[size_t(last)].output(0));
    if (mul >= 0 && is_op(g.nodes[size_t(mul)], "Mul")) {
        const Tensor *gt = constant(
            g, other_input(g.nodes[size_t(mul)], g.nodes[size_t(last)].output(0)), size_t(c));
        if (gt && gt->shape.size() == 1) {
            gamma = gt->f32;
            last = mul;
        }
    }
    const int badd = last == mul ? single(g.nodes[size_t(last)].output(0)) : -1;
    if (badd >= 0 && is_op(g.nodes[size_t(badd)], "Add")) {
        const Tensor *bt = constant(
            g, other_input(g.nodes[size_t(badd)], g.nodes[size_t(last)].output(0)), size_t(c));
        if (bt && bt->shape.size() == 1) {
            beta = bt->f32;
            last = badd;
        }
    }
    const Node &tail = g.nodes[size_t(last)];
    const Tensor *y = g.find(tail.output(0));
    if (!y || !y->has_shape || y->shape != xt.shape)
        return false;
    Node n = node_like(tail, "", "LayerNormalization",
                       {x, add_constant(g, tail.output(0) + "_gamma", gamma),
                        add_constant(g, tail.output(0) + "_beta", beta)},
                       tail.output(0));
    n.attributes["axis"] = Attribute::make_int(-1);
    n.attributes["epsilon"] = Attribute::make_float(et->f32[0]);
    g.nodes[size_t(last)] = n; // the rest of the pattern is now dead
    return true;
}

} // namespace

int fuse_layer_norm(Graph &g) {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); i++)
        changed += layer_norm_at(g, i);
    if (changed)
        eliminate_dead_nodes(g);
    return changed;
}

namespace {

/** The axes a Reduce* node reduces, normalised and sorted (every axis when none are given);
 * false if they are not constants. */
bool reduced_axes(const Graph &g, const Node &n, int64_t rank, std::vector<int64_t> &axes) {
    axes = n.attr_ints("axes", {});
    if (!n.input(1).empty()) {
        const Tensor *a = g.find(n.input(1));
        if (!a || !a->is_constant || a->dtype != DType::Int64)
            return false;
        axes = a->i64;
    }
    if (axes.empty()) {
        if (n.attr_int("noop_with_empty_axes", 0))
            return false;
        for (int64_t d = 0; d < rank; d++)
            axes.push_back(d);
    }
    for (int64_t &a : axes)
        a = a < 0 ? a + rank : a;
    std::sort(axes.begin(), axes.end());
    return true;
}

/** Rewrites nodes[i] as move_reduced_axes_last says; false if it needs nothing. */
bool move_axes_last(Graph &g, size_t i) {
    const Node n = g.nodes[i];
    const bool softmax = is_op(n, "Softmax");
    if (!softmax && !is_op(n, "ReduceMean") && !is_op(n, "ReduceMax") && !is_op(n, "ReduceSum"))
        return false;
    const Tensor *x = g.find(n.input(0)), *y = g.find(n.output(0));
    if (!x || !y || !x->has_shape || !y->has_shape || x->dtype != DType::Float32 ||
        x->shape.empty())
        return false;
    const int64_t rank = int64_t(x->shape.size());
    std::vector<int64_t> axes;
    if (softmax) {
        if (g.opset < 13)
            return false; // a 2-D coercion from the axis on: already trailing
        int64_t a = n.attr_int("axis", -1);
        axes = {a < 0 ? a + rank : a};
    } else if (!reduced_axes(g, n, rank, axes)) {
        return false;
    }
    if (axes.back() == rank - 1 && axes.front() == rank - int64_t(axes.size()))
        return false; // trailing already
    std::vector<int64_t> perm, inverse(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; d++) {
        if (!std::binary_search(axes.begin(), axes.end(), d))
            perm.push_back(d);
    }
    const int64_t kept = int64_t(perm.size());
    perm.insert(perm.end(), axes.begin(), axes.end());
    std::vector<int64_t> moved;
    for (size_t k = 0; k < perm.size(); k++) {
        moved.push_back(x->shape[size_t(perm[k])]);
        inverse[size_t(perm[k])] = int64_t(k);
    }
    const std::string t = add_tensor(g, n.output(0) + "_moved", moved);
    Node tr = node_like(n, "_move", "Transpose", {x->name}, t);
    tr.attributes["perm"] = Attribute::make_ints(perm);
    std::vector<Node> made = {tr};
    if (softmax) {
        const std::string s = add_tensor(g, n.output(0) + "_softmax", moved);
        Node sm = node_like(n, "", "Softmax", {t}, s);
        sm.attributes["axis"] = Attribute::make_int(-1);
        Node back = node_like(n, "_back", "Transpose", {s}, n.output(0));
        back.attributes["perm"] = Attribute::make_ints(inverse);
        made.push_back(sm);
        made.push_back(back);
    } else {
        std::vector<int64_t> trailing;
        for (int64_t d = kept; d < rank; d++)
            trailing.push_back(d);
        const std::string r = add_tensor(g, n.output(0) + "_reduced",
                                         std::vector<int64_t>(moved.begin(), moved.begin() + kept));
        Node red = node_like(n, "", n.op_type, {t}, r);
        red.attributes["axes"] = Attribute::make_ints(trailing);
        red.attributes["keepdims"] = Attribute::make_int(0);
        made.push_back(red);
        made.push_back(node_like(n, "_shape", "Reshape",
                                 {r, add_constant(g, n.output(0) + "_shape", {}, y->shape)},
                                 n.output(0)));
    }
    g.nodes[i] = made[0];
    g.nodes.insert(g.nodes.begin() + int64_t(i) + 1, made.begin() + 1, made.end());
    return true;
}

} // namespace

int move_reduced_axes_last(Graph &g) {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); i++)
        changed += move_axes_last(g, i);
    return changed;
}

int split_transpose_before_gathers(Graph &g) {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        const Node t = g.nodes[i];
        if (!is_op(t, "Transpose") || g.is_graph_output(t.output(0)))
            continue;
        const Tensor *x = g.find(t.input(0));
        if (!x || !x->has_shape || x->is_constant || x->shape.size() < 2)
            continue;
        const int64_t rank = int64_t(x->shape.size());
        std::vector<int64_t> perm(static_cast<size_t>(rank));
        for (int64_t d = 0; d < rank; d++)
            perm[size_t(d)] = rank - 1 - d;
        perm = t.attr_ints("perm", perm);
        const std::vector<int> readers = g.consumers(t.output(0));
        bool all_gathers = !readers.empty();
        for (int r : readers) {
            const Node &n = g.nodes[size_t(r)];
            const Tensor *idx = g.find(n.input(1));
            all_gathers = all_gathers && is_op(n, "Gather") && n.input(0) == t.output(0) &&
                          n.attr_int("axis", 0) == 0 && idx && idx->is_constant &&
                          idx->dtype == DType::Int64 && idx->shape.empty();
        }
        if (!all_gathers)
            continue;
        const int64_t from = perm[0];
        std::vector<int64_t> rest;
        for (size_t d = 1; d < perm.size(); d++)
            rest.push_back(perm[d] - (perm[d] > from));
        std::vector<int64_t> sliced = x->shape;
        sliced.erase(sliced.begin() + from);
        const std::string xname = x->name;
        const DType dtype = x->dtype;
        for (int r : readers) {
            const std::string s =
                add_tensor(g, g.nodes[size_t(r)].output(0) + "_before_transpose", sliced, dtype);
            Node &gather = g.nodes[size_t(r)];
            Node tr = node_like(gather, "_transpose", "Transpose", {s}, gather.outputs[0]);
            tr.attributes["perm"] = Attribute::make_ints(rest);
            gather.inputs[0] = xname;
            gather.attributes["axis"] = Attribute::make_int(from);
            gather.outputs[0] = s;
            g.nodes.push_back(tr);
        }
        g.nodes.erase(g.nodes.begin() + int64_t(i));
        g.tensors.erase(t.output(0));
        i--;
        changed++;
    }
    if (changed)
        g.sort();
    return changed;
}

namespace {

/** The Reshape + Transpose + Reshape of fuse_space_to_depth for one Concat, or false. */
bool space_to_depth(Graph &g, size_t ci) {
    const Node cat = g.nodes[ci];
    const Tensor *y = g.find(cat.output(0));
    if (!is_op(cat, "Concat") || cat.inputs.size() < 2 || !y || !y->has_shape)
        return false;
    const int64_t rank = int64_t(y->shape.size());
    int64_t axis = cat.attr_int("axis", 0);
    if (axis < 0)
        axis += rank;
    if (axis != rank - 1)
        return false;
    std::string x;
    std::vector<int64_t> axes, steps;
    std::vector<std::vector<int64_t>> offsets; // per concat input
    for (const std::string &in : cat.inputs) {
        // The chain of Slices from x to this input, composed into one box.
        std::string root = in;
        SliceBox box;
        int links = 0;
        for (int p = g.producer(root); p >= 0 && is_op(g.nodes[size_t(p)], "Slice");
             p = g.producer(root), links++) {
            const Node &sl = g.nodes[size_t(p)];
            if (g.is_graph_output(sl.output(0)))
                return false;
            SliceBox b;
            try {
                b = slice_box(g, sl);
            } catch (const std::exception &) {
                return false;
            }
            if (links == 0) {
                box = b;
            } else {
                for (size_t d = 0; d < box.begin.size(); d++) {
                    box.begin[d] = b.begin[d] + b.step[d] * box.begin[d];
                    box.step[d] *= b.step[d];
                }
            }
            root = sl.input(0);
        }
        const Tensor *xt = g.find(root);
        if (links == 0 || !xt || !xt->has_shape || xt->is_constant ||
            xt->shape.size() != size_t(rank))
            return false;
        if (x.empty())
            x = root;
        if (root != x)
            return false;
        std::vector<int64_t> a, s, o;
        for (int64_t d = 0; d < rank; d++) {
            const int64_t dim = xt->shape[size_t(d)], st = box.step[size_t(d)];
            if (st == 1 && box.begin[size_t(d)] == 0 && box.shape[size_t(d)] == dim)
                continue;
            if (d == rank - 1 || st < 2 || dim % st || box.begin[size_t(d)] >= st ||
                box.shape[size_t(d)] != dim / st)
                return false;
            a.push_back(d);
            s.push_back(st);
            o.push_back(box.begin[size_t(d)]);
        }
        if (a.empty() || (!axes.empty() && (a != axes || s != steps)))
            return false;
        axes = a, steps = s;
        offsets.push_back(o);
    }
    int64_t combos = 1;
    for (int64_t st : steps)
        combos *= st;
    if (combos != int64_t(offsets.size()))
        return false;
    // An order of the stepped axes in which the inputs enumerate the offsets row major.
    std::vector<size_t> order(axes.size());
    for (size_t k = 0; k < order.size(); k++)
        order[k] = k;
    bool found = false;
    do {
        found = true;
        for (size_t k = 0; found && k < offsets.size(); k++) {
            int64_t flat = 0;
            for (size_t j : order)
                flat = flat * steps[j] + offsets[k][j];
            found = flat == int64_t(k);
        }
    } while (!found && std::next_permutation(order.begin(), order.end()));
    if (!found)
        return false;
    // x split: each stepped axis d -> (dim / s, s); split_pos[j] = position of s_j's axis.
    const Tensor &xt = g.tensor(x);
    std::vector<int64_t> split, split_pos(axes.size()), outer_pos(static_cast<size_t>(rank));
    for (int64_t d = 0, j = 0; d < rank; d++) {
        outer_pos[size_t(d)] = int64_t(split.size());
        if (j < int64_t(axes.size()) && axes[size_t(j)] == d) {
            split.push_back(xt.shape[size_t(d)] / steps[size_t(j)]);
            split_pos[size_t(j)] = int64_t(split.size());
            split.push_back(steps[size_t(j)]);
            j++;
        } else {
            split.push_back(xt.shape[size_t(d)]);
        }
    }
    std::vector<int64_t> perm, moved_shape;
    for (int64_t d = 0; d < rank - 1; d++)
        perm.push_back(outer_pos[size_t(d)]);
    for (size_t j : order)
        perm.push_back(split_pos[j]);
    perm.push_back(outer_pos[size_t(rank - 1)]);
    for (int64_t p : perm)
        moved_shape.push_back(split[size_t(p)]);
    const std::string a = add_tensor(g, cat.output(0) + "_split", split, xt.dtype),
                      b = add_tensor(g, cat.output(0) + "_moved", moved_shape, xt.dtype);
    Node r1 = node_like(cat, "_split", "Reshape",
                        {x, add_constant(g, cat.output(0) + "_shape", {}, split)}, a);
    Node tr = node_like(cat, "_move", "Transpose", {a}, b);
    tr.attributes["perm"] = Attribute::make_ints(perm);
    Node r2 =
        node_like(cat, "_merge", "Reshape",
                  {b, add_constant(g, cat.output(0) + "_shape", {}, y->shape)}, cat.output(0));
    g.nodes[ci] = r1; // the Slices are now dead
    g.nodes.push_back(tr);
    g.nodes.push_back(r2);
    return true;
}

} // namespace

int fuse_space_to_depth(Graph &g) {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); i++)
        changed += space_to_depth(g, i);
    if (changed) {
        g.sort();
        eliminate_dead_nodes(g);
    }
    return changed;
}

int fuse_consecutive_transposes(Graph &g) {
    int changed = 0;
    for (Node &outer : g.nodes) {
        if (!is_op(outer, "Transpose"))
            continue;
        const std::string mid = outer.input(0);
        const int p = g.producer(mid);
        if (p < 0 || !is_op(g.nodes[size_t(p)], "Transpose") || g.is_graph_output(mid) ||
            only_consumer(g, mid) < 0)
            continue;
        const Node &inner = g.nodes[size_t(p)];
        const Tensor *x = g.find(inner.input(0));
        if (!x || !x->has_shape)
            continue;
        const size_t rank = x->shape.size();
        std::vector<int64_t> reversed(rank);
        for (size_t d = 0; d < rank; d++)
            reversed[d] = int64_t(rank - 1 - d);
        const std::vector<int64_t> p1 = inner.attr_ints("perm", reversed),
                                   p2 = outer.attr_ints("perm", reversed);
        if (p1.size() != rank || p2.size() != rank)
            continue;
        // out dim i = the inner's output dim p2[i] = x's dim p1[p2[i]].
        std::vector<int64_t> perm(rank);
        for (size_t d = 0; d < rank; d++)
            perm[d] = p1[size_t(p2[d])];
        outer.inputs[0] = inner.input(0);
        outer.attributes["perm"] = Attribute::make_ints(perm);
        changed++;
    }
    if (changed)
        eliminate_dead_nodes(g);
    return changed;
}

std::vector<std::string> run_passes(Graph &g) {
    std::vector<std::string> log;
    log.push_back("remove_identities: " + std::to_string(remove_identities(g)) + " nodes");
    log.push_back("fold_pad_into_window: " + std::to_string(fold_pad_into_window(g)) + " nodes");
    log.push_back("fold_batch_norm: " + std::to_string(fold_batch_norm(g)) + " nodes");
    log.push_back("fuse_channel_shuffle: " + std::to_string(fuse_channel_shuffle(g)) + " nodes");
    log.push_back("fuse_concat_into_shuffle: " + std::to_string(fuse_concat_into_shuffle(g)) +
                  " nodes");
    log.push_back("fuse_hard_swish: " + std::to_string(fuse_hard_swish(g)) + " nodes");
    log.push_back("fuse_gelu: " + std::to_string(fuse_gelu(g)) + " nodes");
    log.push_back("fuse_layer_norm: " + std::to_string(fuse_layer_norm(g)) + " nodes");
    log.push_back("move_reduced_axes_last: " + std::to_string(move_reduced_axes_last(g)) +
                  " nodes");
    log.push_back("fuse_space_to_depth: " + std::to_string(fuse_space_to_depth(g)) + " nodes");
    log.push_back("split_transpose_before_gathers: " +
                  std::to_string(split_transpose_before_gathers(g)) + " nodes");
    log.push_back("fuse_consecutive_transposes: " + std::to_string(fuse_consecutive_transposes(g)) +
                  " nodes");
    log.push_back("eliminate_dead_nodes: " + std::to_string(eliminate_dead_nodes(g)) + " nodes");
    return log;
}

} // namespace sw_graph
