#include "graph/Passes.h"

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
    log.push_back("eliminate_dead_nodes: " + std::to_string(eliminate_dead_nodes(g)) + " nodes");
    return log;
}

} // namespace sw_graph
