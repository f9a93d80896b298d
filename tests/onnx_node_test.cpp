/** \file
 * The ONNX conformance node tests (Debian's libonnx-testdata, data/node/) of the operators
 * our layers implement — Conv (dilations too), MaxPool, AveragePool, Gemm, Relu, Softmax,
 * LRN, Clip, LeakyRelu, Sigmoid, Add, Mul, Sum (of two inputs), GlobalAveragePool,
 * GlobalMaxPool, ReduceMean (trailing axes), Concat, BatchNormalization — run on the
 * emulated SW26010 core group.
 *
 * Every test folder holds model.onnx (one node) and test_data_set_N/{input,output}_K.pb
 * (TensorProto). For each folder whose single node has one of those op types (the
 * *_expanded variants are several nodes and are left out), one gtest per schedule
 * (sunway, baseline) maps the node's attributes and input shapes to the parameters of one
 * of our generators, builds that layer for this shape at run time (JitLayer: generator,
 * cc, dlopen), runs it on every data set and compares with the expected outputs:
 * |actual - expected| <= 1e-4 + 1e-4 * |expected|.
 *
 * The harness only changes data layout where that is all it takes: Gemm's transA / transB
 * (our dense weights are [out, in]), 1-D pooling and convolution as 2-D with height 1,
 * auto_pad SAME_UPPER / SAME_LOWER / VALID as explicit pads, a Gemm C that is a scalar, a
 * per-output vector or a matrix with equal rows as our bias vector, a missing Conv bias as
 * zeros; Clip / LeakyRelu / Sigmoid on the flattened tensor; Add / Mul shapes of rank < 4
 * padded with leading 1s (numpy broadcasting); ReduceMean over trailing axes and the global
 * pools as one plane per leading index; Concat along any axis as a channel concat (dims
 * before the axis as the batch, after it as the width). BatchNormalization (inference form)
 * runs as channel_affine with scale = s / sqrt(var + eps) and shift = B - mean * scale
 * computed by this harness from the node's inputs, as the importer folds it: the test checks
 * the channel_affine kernel and that folding, not a BN kernel. Anything else we cannot
 * express is GTEST_SKIP()ped with one reason, as is a case whose generator (or generator
 * parameter, or schedule) does not exist yet.
 *
 * At the end the list of passed / skipped / failed cases, with reasons, goes to stdout.
 *
 * ONNX files are read with Debian's libonnx-dev (the generated onnx-ml.pb.h classes and
 * libonnx_proto, on the system's protobuf 3.21).
 */
#include "tests/support/jit_layer.h"

#include "HalideBuffer.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#ifndef ONNX_NODE_TEST_DIR
#define ONNX_NODE_TEST_DIR "/usr/share/libonnx-testdata/data/node"
#endif
#ifndef LAYERS_GENERATOR
#error "LAYERS_GENERATOR (path of layers.generator) must be defined"
#endif

namespace {

using Buf = Halide::Runtime::Buffer<float>;

const char *const kSchedules[] = {"sunway", "baseline"};
const std::set<std::string> kOps = {"Conv",    "MaxPool",   "AveragePool", "Gemm",   "Relu",
                                    "Softmax", "LRN",       "Clip",        "LeakyRelu", "Sigmoid",
                                    "Add",     "Mul",       "Sum",         "GlobalAveragePool",
                                    "GlobalMaxPool", "ReduceMean", "Concat", "BatchNormalization"};

std::string data_dir() {
    const char *e = std::getenv("ONNX_NODE_TEST_DIR");
    return e && *e ? e : ONNX_NODE_TEST_DIR;
}

bool is_dir(const std::string &p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> list_dir(const std::string &dir) {
    std::vector<std::string> names;
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d)) {
            if (e->d_name[0] != '.') names.push_back(e->d_name);
        }
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

template<typename Msg>
bool parse_file(const std::string &path, Msg *m) {
    std::ifstream f(path, std::ios::binary);
    return f && m->ParseFromIstream(&f);
}

// ------------------------------------------------------------------ the list of cases

struct NodeCase {
    std::string name, op;
};

/** Every single-node test folder whose node is one of kOps, by folder name. */
const std::vector<NodeCase> &node_cases() {
    static const std::vector<NodeCase> cases = [] {
        std::vector<NodeCase> v;
        const std::string root = data_dir();
        for (const std::string &name : list_dir(root)) {
            if (name.size() > 9 && name.compare(name.size() - 9, 9, "_expanded") == 0) continue;
            onnx::ModelProto m;
            if (!parse_file(root + "/" + name + "/model.onnx", &m)) continue;
            if (m.graph().node_size() != 1) continue;
            const std::string &op = m.graph().node(0).op_type();
            if (kOps.count(op) && (m.graph().node(0).domain().empty() || m.graph().node(0).domain() == "ai.onnx")) {
                v.push_back({name, op});
            }
        }
        return v;
    }();
    return cases;
}

// ------------------------------------------------------------------ tensors

struct Tensor {
    std::vector<int64_t> dims;
    int32_t type = 0;
    std::vector<float> data;  // float32 tensors only
    int64_t numel() const {
        int64_t n = 1;
        for (int64_t d : dims) n *= d;
        return n;
    }
};

std::string type_name(int32_t t) {
    return onnx::TensorProto_DataType_IsValid(t) ? onnx::TensorProto_DataType_Name(t) : std::to_string(t);
}

bool load_tensor(const std::string &path, Tensor *t, std::string *err) {
    onnx::TensorProto p;
    if (!parse_file(path, &p)) {
        *err = "cannot read TensorProto " + path;
        return false;
    }
    t->dims.assign(p.dims().begin(), p.dims().end());
    t->type = p.data_type();
    t->data.clear();
    if (t->type != onnx::TensorProto::FLOAT) return true;  // kept for its type only
    const int64_t n = t->numel();
    if (p.has_raw_data()) {
        if ((int64_t)p.raw_data().size() != n * 4) {
            *err = path + ": raw_data has " + std::to_string(p.raw_data().size()) + " bytes for " +
                   std::to_string(n) + " floats";
            return false;
        }
        t->data.resize(n);
        std::memcpy(t->data.data(), p.raw_data().data(), n * 4);  // little-endian host
    } else {
        t->data.assign(p.float_data().begin(), p.float_data().end());
        if ((int64_t)t->data.size() != n) {
            *err = path + ": float_data has " + std::to_string(t->data.size()) + " values for " +
                   std::to_string(n) + " elements";
            return false;
        }
    }
    return true;
}

struct DataSet {
    std::string name;
    std::vector<Tensor> inputs, outputs;
};

bool load_data_sets(const std::string &dir, std::vector<DataSet> *sets, std::string *err) {
    for (const std::string &s : list_dir(dir)) {
        if (s.rfind("test_data_set_", 0) != 0 || !is_dir(dir + "/" + s)) continue;
        DataSet ds;
        ds.name = s;
        for (const char *kind : {"input", "output"}) {
            for (int i = 0;; i++) {
                const std::string p = dir + "/" + s + "/" + kind + "_" + std::to_string(i) + ".pb";
                struct stat st;
                if (stat(p.c_str(), &st) != 0) break;
                Tensor t;
                if (!load_tensor(p, &t, err)) return false;
                (std::strcmp(kind, "input") == 0 ? ds.inputs : ds.outputs).push_back(std::move(t));
            }
        }
        sets->push_back(std::move(ds));
    }
    if (sets->empty()) *err = "no test_data_set_* in " + dir;
    return !sets->empty();
}

// ------------------------------------------------------------------ attributes

const onnx::AttributeProto *attr(const onnx::NodeProto &n, const std::string &name) {
    for (const auto &a : n.attribute()) {
        if (a.name() == name) return &a;
    }
    return nullptr;
}
int64_t attr_int(const onnx::NodeProto &n, const std::string &name, int64_t def) {
    const auto *a = attr(n, name);
    return a ? a->i() : def;
}
float attr_float(const onnx::NodeProto &n, const std::string &name, float def) {
    const auto *a = attr(n, name);
    return a ? a->f() : def;
}
std::string attr_string(const onnx::NodeProto &n, const std::string &name, const std::string &def) {
    const auto *a = attr(n, name);
    return a ? a->s() : def;
}
std::vector<int64_t> attr_ints(const onnx::NodeProto &n, const std::string &name) {
    const auto *a = attr(n, name);
    return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>();
}

/** The shortest decimal that reads back as the same float. */
std::string fmt(float v) {
    char b[64];
    for (int digits = 6; digits <= 9; digits++) {
        std::snprintf(b, sizeof b, "%.*g", digits, v);
        if (std::strtof(b, nullptr) == v) break;
    }
    return b;
}

std::string dims_str(const std::vector<int64_t> &d) {
    std::string s = "(";
    for (size_t i = 0; i < d.size(); i++) s += (i ? "," : "") + std::to_string(d[i]);
    return s + ")";
}

// ------------------------------------------------------------------ mapping to our layers

/** What to run: a generator with its parameters, the input buffers (Halide extents, x
 *  fastest, and data) and the output extents. Or, when skip is set, why not. */
struct Plan {
    std::string skip;
    std::string generator;
    std::map<std::string, std::string> params;
    std::vector<Buf> inputs;
    std::vector<int> out_extents;
};

Plan skip(const std::string &why) {
    Plan p;
    p.skip = why;
    return p;
}

/** A buffer with the given Halide extents holding `data` (row-major ONNX order). */
Buf make_buf(const std::vector<int> &extents, const std::vector<float> &data) {
    Buf b(extents);
    std::copy(data.begin(), data.end(), b.data());
    return b;
}

/** Halide extents of an ONNX tensor shape: the dimensions reversed. */
std::vector<int> reversed(const std::vector<int64_t> &dims) {
    return std::vector<int>(dims.rbegin(), dims.rend());
}

/** 2-D window geometry of Conv / pooling, from a 3-D (N, C, W) or 4-D (N, C, H, W) input. */
struct Window {
    int n, c, h, w, kh, kw, sh, sw, pt, pb, pl, pr;
    int dh = 1, dw = 1;  ///< dilations
};

/** Fills the window from the attributes; `kernel` is kernel_shape (or W's spatial dims).
 *  Dilations other than 1 only where \p dilations (Conv). Returns a skip reason, or "". */
std::string window(const onnx::NodeProto &node, const std::vector<int64_t> &x,
                   std::vector<int64_t> kernel, Window *g, bool dilations = false) {
    const size_t rank = x.size();
    if (rank != 3 && rank != 4) {
        return std::to_string(rank - 2) + "-D spatial input " + dims_str(x) + " not supported (1-D and 2-D only)";
    }
    const size_t sp = rank - 2;
    std::vector<int64_t> strides = attr_ints(node, "strides"), pads = attr_ints(node, "pads"),
                         dil = attr_ints(node, "dilations");
    if (strides.empty()) strides.assign(sp, 1);
    if (kernel.size() != sp || strides.size() != sp) return "kernel_shape/strides rank does not match the input";
    if (dil.empty()) dil.assign(sp, 1);
    if (dil.size() != sp) return "dilations rank does not match the input";
    for (int64_t d : dil) {
        if (d != 1 && !dilations) return "dilations != 1 not supported (" + node.op_type() + ")";
    }
    // The input extent one window spans.
    std::vector<int64_t> span(sp);
    for (size_t i = 0; i < sp; i++) span[i] = (kernel[i] - 1) * dil[i] + 1;
    const std::string auto_pad = attr_string(node, "auto_pad", "NOTSET");
    std::vector<int64_t> in(x.begin() + 2, x.end()), begin(sp, 0), end(sp, 0);
    if (auto_pad == "NOTSET") {
        if (!pads.empty()) {
            if (pads.size() != 2 * sp) return "pads has the wrong length";
            for (size_t i = 0; i < sp; i++) {
                begin[i] = pads[i];
                end[i] = pads[sp + i];
            }
        }
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        for (size_t i = 0; i < sp; i++) {
            const int64_t out = (in[i] + strides[i] - 1) / strides[i];
            const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + span[i] - in[i]);
            begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
            end[i] = total - begin[i];
        }
    } else if (auto_pad != "VALID") {
        return "auto_pad " + auto_pad + " not supported";
    }
    g->n = x[0];
    g->c = x[1];
    if (sp == 1) {
        g->h = 1, g->kh = 1, g->sh = 1, g->pt = 0, g->pb = 0;
    } else {
        g->h = in[0], g->kh = kernel[0], g->sh = strides[0], g->pt = begin[0], g->pb = end[0];
    }
    g->w = in[sp - 1], g->kw = kernel[sp - 1], g->sw = strides[sp - 1], g->pl = begin[sp - 1], g->pr = end[sp - 1];
    g->dw = dil[sp - 1];
    g->dh = sp == 1 ? 1 : dil[0];
    return "";
}

/** kernel/stride/pad parameters shared by conv2d and pool; the _y / per-side forms only
 *  when they differ, so the plain forms are exercised too. */
void window_params(const Window &g, std::map<std::string, std::string> &p, bool always_y) {
    p["batch"] = std::to_string(g.n);
    p["height"] = std::to_string(g.h);
    p["width"] = std::to_string(g.w);
    p["kernel"] = std::to_string(g.kw);
    if (always_y || g.kh != g.kw) p["kernel_y"] = std::to_string(g.kh);
    p["stride"] = std::to_string(g.sw);
    if (always_y || g.sh != g.sw) p["stride_y"] = std::to_string(g.sh);
    if (g.pl == g.pr && g.pl == g.pt && g.pl == g.pb) {
        p["pad"] = std::to_string(g.pl);
    } else {
        p["pad"] = "0";
        p["pad_left"] = std::to_string(g.pl);
        p["pad_right"] = std::to_string(g.pr);
        p["pad_top"] = std::to_string(g.pt);
        p["pad_bottom"] = std::to_string(g.pb);
    }
}

std::string need_float(const std::vector<const Tensor *> &ts) {
    for (const Tensor *t : ts) {
        if (t && t->type != onnx::TensorProto::FLOAT) {
            return "element type " + type_name(t->type) + " not supported (float32 only)";
        }
    }
    return "";
}

Plan plan_conv(const onnx::NodeProto &node, const std::vector<const Tensor *> &in) {
    if (in.size() < 2 || !in[0] || !in[1]) return skip("Conv without X or W");
    const Tensor &x = *in[0], &w = *in[1];
    const Tensor *b = in.size() > 2 ? in[2] : nullptr;
    if (x.dims.size() != w.dims.size()) return skip("W rank differs from X rank");
    std::vector<int64_t> kernel = attr_ints(node, "kernel_shape");
    if (kernel.empty()) kernel.assign(w.dims.begin() + 2, w.dims.end());
    Window g;
    const std::string why = window(node, x.dims, kernel, &g, true);
    if (!why.empty()) return skip(why);
    const int64_t groups = attr_int(node, "group", 1);
    const int out_c = w.dims[0];
    if (w.dims[1] * groups != g.c) return skip("W's input channels do not match X / group");
    Plan p;
    p.generator = "conv2d";
    window_params(g, p.params, false);
    p.params["in_channels"] = std::to_string(g.c);
    p.params["out_channels"] = std::to_string(out_c);
    if (groups != 1) p.params["groups"] = std::to_string(groups);
    if (g.dw != 1 || g.dh != 1) {
        p.params["dilation"] = std::to_string(g.dw);
        p.params["dilation_y"] = std::to_string(g.dh);
    }
    p.params["relu"] = "false";
    p.inputs.push_back(make_buf({g.w, g.h, g.c, g.n}, x.data));
    p.inputs.push_back(make_buf({g.kw, g.kh, (int)w.dims[1], out_c}, w.data));
    p.inputs.push_back(b ? make_buf({out_c}, b->data) : make_buf({out_c}, std::vector<float>(out_c, 0.f)));
    return p;
}

Plan plan_pool(const onnx::NodeProto &node, const std::vector<const Tensor *> &in, bool max) {
    const Tensor &x = *in[0];
    Window g;
    const std::string why = window(node, x.dims, attr_ints(node, "kernel_shape"), &g);
    if (!why.empty()) return skip(why);
    Plan p;
    p.generator = "pool";
    window_params(g, p.params, true);
    p.params["channels"] = std::to_string(g.c);
    p.params["ceil_mode"] = attr_int(node, "ceil_mode", 0) ? "true" : "false";
    p.params["type"] = max ? "max" : "avg";
    if (!max) p.params["count_include_pad"] = attr_int(node, "count_include_pad", 0) ? "true" : "false";
    p.inputs.push_back(make_buf({g.w, g.h, g.c, g.n}, x.data));
    return p;
}

Plan plan_gemm(const onnx::NodeProto &node, const std::vector<const Tensor *> &in) {
    if (in.size() < 2 || !in[0] || !in[1]) return skip("Gemm without A or B");
    const Tensor &a = *in[0], &b = *in[1];
    const Tensor *c = in.size() > 2 ? in[2] : nullptr;
    if (a.dims.size() != 2 || b.dims.size() != 2) return skip("Gemm with A or B not 2-D");
    const bool ta = attr_int(node, "transA", 0), tb = attr_int(node, "transB", 0);
    const int M = ta ? a.dims[1] : a.dims[0], K = ta ? a.dims[0] : a.dims[1];
    const int N = tb ? b.dims[0] : b.dims[1];
    if ((tb ? b.dims[1] : b.dims[0]) != K) return skip("Gemm: A and B shapes do not match");
    // input(i, n) = A'[n][i]: A' row-major is [M, K].
    std::vector<float> a2(M * K), w(N * K), bias(N, 0.f);
    for (int m = 0; m < M; m++)
        for (int k = 0; k < K; k++) a2[m * K + k] = ta ? a.data[k * M + m] : a.data[m * K + k];
    // weights(i, o) = B'[i][o]: [out, in] row-major = [N, K].
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++) w[n * K + k] = tb ? b.data[n * K + k] : b.data[k * N + n];
    if (c) {
        // C broadcasts to (M, N) (unidirectionally): our bias must be one row for every m.
        std::vector<int64_t> cd = c->dims;
        while (cd.size() < 2) cd.insert(cd.begin(), 1);
        if (cd.size() != 2 || (cd[0] != 1 && cd[0] != M) || (cd[1] != 1 && cd[1] != N)) {
            return skip("Gemm: C of shape " + dims_str(c->dims) + " does not broadcast to (M, N)");
        }
        auto at = [&](int m, int n) { return c->data[(cd[0] == 1 ? 0 : m) * cd[1] + (cd[1] == 1 ? 0 : n)]; };
        for (int n = 0; n < N; n++) bias[n] = at(0, n);
        for (int m = 1; m < M; m++) {
            for (int n = 0; n < N; n++) {
                if (at(m, n) != bias[n]) {
                    return skip("Gemm: C of shape " + dims_str(c->dims) +
                                " varies along M (a full matrix bias; dense takes a per-output vector)");
                }
            }
        }
    }
    Plan p;
    p.generator = "dense";
    p.params = {{"batch", std::to_string(M)}, {"in_features", std::to_string(K)},
                {"out_features", std::to_string(N)}, {"relu", "false"},
                {"alpha", fmt(attr_float(node, "alpha", 1.f))},
                {"beta", fmt(c ? attr_float(node, "beta", 1.f) : 1.f)}};
    p.inputs.push_back(make_buf({K, M}, a2));
    p.inputs.push_back(make_buf({K, N}, w));
    p.inputs.push_back(make_buf({N}, bias));
    return p;
}

Plan plan_softmax(const onnx::NodeProto &node, const std::vector<const Tensor *> &in, int64_t opset) {
    const Tensor &x = *in[0];
    const int64_t rank = x.dims.size();
    if (rank < 1) return skip("Softmax of a scalar");
    int64_t rows = 1, classes = 1;
    if (opset >= 13) {
        int64_t axis = attr_int(node, "axis", -1);
        if (axis < 0) axis += rank;
        if (axis != rank - 1) {
            return skip("Softmax over axis " + std::to_string(attr_int(node, "axis", -1)) + " of a rank-" +
                        std::to_string(rank) + " input: only the last axis is supported (opset >= 13)");
        }
        for (int64_t i = 0; i < rank - 1; i++) rows *= x.dims[i];
        classes = x.dims[rank - 1];
    } else {
        // Before opset 13 the input is coerced to 2-D at axis (default 1): always our layout.
        int64_t axis = attr_int(node, "axis", 1);
        if (axis < 0) axis += rank;
        for (int64_t i = 0; i < rank; i++) (i < axis ? rows : classes) *= x.dims[i];
    }
    Plan p;
    p.generator = "softmax";
    p.params = {{"batch", std::to_string(rows)}, {"classes", std::to_string(classes)}};
    p.inputs.push_back(make_buf({(int)classes, (int)rows}, x.data));
    p.out_extents = {(int)classes, (int)rows};
    return p;
}

Plan plan_lrn(const onnx::NodeProto &node, const std::vector<const Tensor *> &in) {
    const Tensor &x = *in[0];
    if (x.dims.size() != 4 && x.dims.size() != 3) {
        return skip("LRN of a rank-" + std::to_string(x.dims.size()) + " input (3-D and 4-D only)");
    }
    const int n = x.dims[0], c = x.dims[1], h = x.dims.size() == 4 ? x.dims[2] : 1, w = x.dims.back();
    Plan p;
    p.generator = "lrn";
    p.params = {{"batch", std::to_string(n)},
                {"channels", std::to_string(c)},
                {"height", std::to_string(h)},
                {"width", std::to_string(w)},
                {"size", std::to_string(attr_int(node, "size", 1))},
                {"alpha", fmt(attr_float(node, "alpha", 0.0001f))},
                {"beta", fmt(attr_float(node, "beta", 0.75f))},
                {"k", fmt(attr_float(node, "bias", 1.f))}};
    p.inputs.push_back(make_buf({w, h, c, n}, x.data));
    return p;
}

/** A flat activation (generator activation) over the whole tensor. */
Plan plan_activation(const Tensor &x, std::map<std::string, std::string> params) {
    Plan p;
    p.generator = "activation";
    p.params = std::move(params);
    p.params["size"] = std::to_string(x.numel());
    p.inputs.push_back(make_buf({(int)x.numel()}, x.data));
    p.out_extents = {(int)x.numel()};
    return p;
}

/** Clip: min and max are attributes before opset 11, optional scalar inputs after. */
Plan plan_clip(const onnx::NodeProto &node, const std::vector<const Tensor *> &in, int64_t opset) {
    std::map<std::string, std::string> params = {{"op", "clip"}};
    if (opset < 11) {
        if (attr(node, "min")) params["min"] = fmt(attr_float(node, "min", 0));
        if (attr(node, "max")) params["max"] = fmt(attr_float(node, "max", 0));
    } else {
        for (size_t i = 1; i < in.size() && i < 3; i++) {
            if (!in[i]) continue;  // an omitted bound
            if (in[i]->numel() != 1) return skip("Clip bound that is not a scalar");
            params[i == 1 ? "min" : "max"] = fmt(in[i]->data[0]);
        }
    }
    return plan_activation(*in[0], params);
}

/** A shape of rank <= 4 as NCHW: numpy broadcasting aligns shapes at their last axis, so
 *  leading 1s change nothing. */
bool as_nchw(std::vector<int64_t> d, std::vector<int> *nchw) {
    if (d.size() > 4) return false;
    while (d.size() < 4) d.insert(d.begin(), 1);
    nchw->assign(d.begin(), d.end());
    return true;
}

/** Add / Mul (and Sum of two inputs) with broadcasting: generator eltwise. */
Plan plan_binary(const std::string &op, const std::vector<const Tensor *> &in, const Tensor &expected) {
    if (in.size() != 2 || !in[0] || !in[1]) return skip(op + " of " + std::to_string(in.size()) + " inputs (two only)");
    std::vector<int> a, b, o;
    if (!as_nchw(in[0]->dims, &a) || !as_nchw(in[1]->dims, &b) || !as_nchw(expected.dims, &o)) {
        return skip(op + " of rank > 4");
    }
    static const char *const dim[] = {"batch", "channels", "height", "width"};
    Plan p;
    p.generator = "eltwise";
    p.params["op"] = op == "Mul" ? "mul" : "add";
    for (int i = 0; i < 4; i++) {
        p.params[dim[i]] = std::to_string(o[i]);
        p.params[std::string("a_") + dim[i]] = std::to_string(a[i]);
        p.params[std::string("b_") + dim[i]] = std::to_string(b[i]);
    }
    p.inputs.push_back(make_buf({a[3], a[2], a[1], a[0]}, in[0]->data));
    p.inputs.push_back(make_buf({b[3], b[2], b[1], b[0]}, in[1]->data));
    return p;
}

/** GlobalAveragePool / GlobalMaxPool over the spatial dims of (N, C, d1, d2, ...), and
 *  ReduceMean over trailing axes (keepdims or not: the same values): generator global_pool
 *  with the leading dims as batch x channels and the reduced ones as one plane. */
Plan plan_global_pool(const onnx::NodeProto &node, const std::vector<const Tensor *> &in, int64_t opset) {
    const Tensor &x = *in[0];
    const int64_t rank = x.dims.size();
    int64_t first = 2;  // the first reduced axis
    if (node.op_type() == "ReduceMean") {
        std::vector<int64_t> axes = attr_ints(node, "axes");
        if (opset >= 18 && in.size() > 1 && in[1]) return skip("ReduceMean with axes as an input (opset 18)");
        if (attr_int(node, "noop_with_empty_axes", 0)) return skip("ReduceMean noop_with_empty_axes");
        if (axes.empty()) {
            first = 0;  // every axis
        } else {
            for (int64_t &a : axes) a = a < 0 ? a + rank : a;
            std::sort(axes.begin(), axes.end());
            first = axes[0];
            for (size_t i = 0; i < axes.size(); i++) {
                if (axes[i] != first + int64_t(i) || axes.back() != rank - 1) {
                    return skip("ReduceMean over axes " + dims_str(attr_ints(node, "axes")) + " of a rank-" +
                                std::to_string(rank) + " input: only trailing axes (the spatial ones) are supported");
                }
            }
        }
    } else if (rank < 3) {
        return skip(node.op_type() + " of a rank-" + std::to_string(rank) + " input");
    }
    int64_t lead = 1, plane = 1;
    for (int64_t i = 0; i < rank; i++) (i < first ? lead : plane) *= x.dims[i];
    // Leading dims: N x C (as batch 1 x channels lead keeps the tiles over channels).
    const int n = first >= 1 ? x.dims[0] : 1, c = lead / n;
    Plan p;
    p.generator = "global_pool";
    p.params = {{"batch", std::to_string(n)}, {"channels", std::to_string(c)}, {"height", "1"},
                {"width", std::to_string(plane)}, {"type", node.op_type() == "GlobalMaxPool" ? "max" : "avg"}};
    p.inputs.push_back(make_buf({(int)plane, 1, c, n}, x.data));
    p.out_extents = {1, 1, c, n};
    return p;
}

/** Concat along any axis of equal-rank inputs: the dims before the axis as the batch, the
 *  axis as the channels, the dims after it as the width (generator concat). */
Plan plan_concat(const onnx::NodeProto &node, const std::vector<const Tensor *> &in) {
    if (in.size() < 2) return skip("Concat of one input");
    const int64_t rank = in[0]->dims.size();
    int64_t axis = attr_int(node, "axis", 1);
    if (axis < 0) axis += rank;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; i++) {
        if (i < axis) outer *= in[0]->dims[i];
        if (i > axis) inner *= in[0]->dims[i];
    }
    Plan p;
    p.generator = "concat";
    std::string list;
    for (const Tensor *t : in) {
        if (!t || (int64_t)t->dims.size() != rank) return skip("Concat inputs of different ranks");
        const int ch = t->dims[axis];
        list += (list.empty() ? "" : ",") + std::to_string(ch);
        p.inputs.push_back(make_buf({(int)inner, 1, ch, (int)outer}, t->data));
    }
    p.params = {{"batch", std::to_string(outer)}, {"height", "1"}, {"width", std::to_string(inner)},
                {"channels", list}, {"input.size", std::to_string(in.size())}};
    return p;
}

/** BatchNormalization at inference (one output) run as channel_affine: the harness folds
 *  the node's inputs (scale, B, mean, var, epsilon) into scale / sqrt(var + eps) and
 *  B - mean * that, as the importer does for a BN it cannot fold into a conv. */
Plan plan_batchnorm(const onnx::NodeProto &node, const std::vector<const Tensor *> &in) {
    if (attr_int(node, "training_mode", 0)) return skip("BatchNormalization in training mode");
    if (in.size() != 5) return skip("BatchNormalization without its 5 inputs");
    const Tensor &x = *in[0];
    std::vector<int> d;
    if (x.dims.size() < 2 || !as_nchw(x.dims, &d)) return skip("BatchNormalization of rank < 2 or > 4");
    // (N, C, ...) with the spatial dims as one row.
    const int n = x.dims[0], c = x.dims[1];
    const int plane = x.numel() / (int64_t(n) * c);
    const float eps = attr_float(node, "epsilon", 1e-5f);
    std::vector<float> scale(c), shift(c);
    for (int i = 0; i < c; i++) {
        scale[i] = float(double(in[1]->data[i]) / std::sqrt(double(in[4]->data[i]) + eps));
        shift[i] = float(double(in[2]->data[i]) - double(in[3]->data[i]) * scale[i]);
    }
    Plan p;
    p.generator = "channel_affine";
    p.params = {{"batch", std::to_string(n)}, {"channels", std::to_string(c)}, {"height", "1"},
                {"width", std::to_string(plane)}, {"relu", "false"}};
    p.inputs.push_back(make_buf({plane, 1, c, n}, x.data));
    p.inputs.push_back(make_buf({c}, scale));
    p.inputs.push_back(make_buf({c}, shift));
    p.out_extents = {plane, 1, c, n};
    return p;
}

Plan plan(const onnx::ModelProto &model, const std::vector<const Tensor *> &in,
          const std::vector<const Tensor *> &expected) {
    const onnx::NodeProto &node = model.graph().node(0);
    const std::string &op = node.op_type();
    int64_t opset = 0;
    for (const auto &o : model.opset_import()) {
        if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    }
    if (in.empty() || !in[0]) return skip("no input");
    if (op == "MaxPool" && node.output_size() > 1 && !node.output(1).empty()) {
        return skip("MaxPool's second output (Indices) not supported");
    }
    std::string why = need_float(in);
    if (why.empty()) why = need_float(expected);
    if (!why.empty()) return skip(why);
    Plan p;
    if (op == "Conv") {
        p = plan_conv(node, in);
    } else if (op == "MaxPool" || op == "AveragePool") {
        p = plan_pool(node, in, op == "MaxPool");
    } else if (op == "Gemm") {
        p = plan_gemm(node, in);
    } else if (op == "Softmax") {
        p = plan_softmax(node, in, opset);
    } else if (op == "LRN") {
        p = plan_lrn(node, in);
    } else if (op == "Relu") {
        p.generator = "relu";
        p.params = {{"size", std::to_string(in[0]->numel())}};
        p.inputs.push_back(make_buf({(int)in[0]->numel()}, in[0]->data));
        p.out_extents = {(int)in[0]->numel()};
    } else if (op == "Clip") {
        p = plan_clip(node, in, opset);
    } else if (op == "LeakyRelu") {
        p = plan_activation(*in[0], {{"op", "leaky_relu"}, {"alpha", fmt(attr_float(node, "alpha", 0.01f))}});
    } else if (op == "Sigmoid") {
        p = plan_activation(*in[0], {{"op", "sigmoid"}});
    } else if (op == "Add" || op == "Mul" || op == "Sum") {
        if (expected.empty()) return skip("no expected output");
        p = plan_binary(op, in, *expected[0]);
    } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "ReduceMean") {
        p = plan_global_pool(node, in, opset);
    } else if (op == "Concat") {
        p = plan_concat(node, in);
    } else if (op == "BatchNormalization") {
        if (node.output_size() > 1) return skip("BatchNormalization with training outputs");
        p = plan_batchnorm(node, in);
    } else {
        return skip("op " + op + " not mapped");
    }
    if (!p.skip.empty()) return p;
    if (expected.size() != 1) return skip(std::to_string(expected.size()) + " outputs (one only)");
    if (p.out_extents.empty() && (op == "Add" || op == "Mul" || op == "Sum" || op == "Concat")) {
        // Element order is the ONNX order: the output as one flat buffer of that many
        // elements in the generator's shape.
        std::vector<int> ext;
        for (int i = 0; i < 4; i++) ext.push_back(p.inputs[0].dim(i).extent());
        const auto &q = p.params;
        if (op == "Concat") {
            int total = 0;
            for (size_t i = 0; i < p.inputs.size(); i++) total += p.inputs[i].dim(2).extent();
            ext[2] = total;
        } else {
            ext = {std::stoi(q.at("width")), std::stoi(q.at("height")), std::stoi(q.at("channels")), std::stoi(q.at("batch"))};
        }
        p.out_extents = ext;
    }
    if (p.out_extents.empty()) {
        // Our outputs have the ONNX layout: (x, y, c, n) = NCHW, (o, n) = [M, N], ...
        p.out_extents = reversed(expected[0]->dims);
        if (expected[0]->dims.size() == 3 && op != "Gemm" && op != "Relu" && op != "Softmax") {
            // 1-D Conv / pooling / LRN ran as 2-D with height 1.
            const auto &d = expected[0]->dims;
            p.out_extents = {(int)d[2], 1, (int)d[1], (int)d[0]};
        }
    }
    return p;
}

// ------------------------------------------------------------------ results

struct Outcome {
    std::string status, detail;
};
std::mutex results_mutex;
std::map<std::string, Outcome> results;

std::string one_line(std::string s) {
    for (char &c : s) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    if (s.size() > 300) s = s.substr(0, 300) + "...";
    return s;
}

class Summary : public testing::Environment {
public:
    void TearDown() override {
        std::lock_guard<std::mutex> lock(results_mutex);
        if (results.empty()) return;
        std::map<std::string, int> count;
        std::string text = "\n==== ONNX node tests on the emulated SW26010 ====\n";
        for (const char *status : {"PASSED", "SKIPPED", "FAILED"}) {
            for (const auto &r : results) {
                if (r.second.status != status) continue;
                count[status]++;
                text += std::string(status) + "  " + r.first +
                        (r.second.detail.empty() ? "" : "  -- " + r.second.detail) + "\n";
            }
        }
        text += "==== " + std::to_string(count["PASSED"]) + " passed, " + std::to_string(count["SKIPPED"]) +
                " skipped, " + std::to_string(count["FAILED"]) + " failed ====\n";
        std::fputs(text.c_str(), stdout);
        std::fflush(stdout);
    }
};

// ------------------------------------------------------------------ the test

struct Param {
    NodeCase node;
    std::string schedule;
};

void PrintTo(const Param &p, std::ostream *os) { *os << p.node.name << " [" << p.schedule << "]"; }

class OnnxNode : public testing::TestWithParam<Param> {
protected:
    void TearDown() override {
        const testing::TestInfo *info = testing::UnitTest::GetInstance()->current_test_info();
        const testing::TestResult *r = info->result();
        Outcome o;
        if (r->Skipped()) {
            o.status = "SKIPPED";
        } else if (r->Failed()) {
            o.status = "FAILED";
        } else {
            o.status = "PASSED";
        }
        for (int i = 0; i < r->total_part_count(); i++) {
            const testing::TestPartResult &part = r->GetTestPartResult(i);
            if (part.skipped() || part.failed()) {
                o.detail = one_line(part.message());
                break;
            }
        }
        std::lock_guard<std::mutex> lock(results_mutex);
        results[GetParam().node.name + " [" + GetParam().schedule + "]"] = o;
    }
};

std::string generator_lacks(const std::string &log) {
    const std::string key = "has no GeneratorParam named: ";
    const size_t at = log.find(key);
    if (at == std::string::npos) return "";
    size_t end = at + key.size();
    while (end < log.size() && !std::isspace((unsigned char)log[end])) end++;
    return log.substr(at + key.size(), end - at - key.size());
}

TEST_P(OnnxNode, MatchesExpectedOutputsOnEmulatedSunway) {
    const Param &param = GetParam();
    const std::string dir = data_dir() + "/" + param.node.name;
    onnx::ModelProto model;
    ASSERT_TRUE(parse_file(dir + "/model.onnx", &model)) << "cannot read " << dir << "/model.onnx";
    const onnx::GraphProto &graph = model.graph();
    const onnx::NodeProto &node = graph.node(0);
    std::vector<DataSet> sets;
    std::string err;
    ASSERT_TRUE(load_data_sets(dir, &sets, &err)) << err;

    // Every data set gives its own plan (a Gemm C is read from the data); all must agree
    // on the generator and its parameters, which depend on shapes and attributes only.
    std::vector<Plan> plans;
    for (const DataSet &ds : sets) {
        // The graph inputs are input_0.pb, input_1.pb, ...; the node names them (an empty
        // name is an omitted optional input).
        std::vector<const Tensor *> in;
        for (const std::string &name : node.input()) {
            const Tensor *t = nullptr;
            for (int i = 0; i < graph.input_size() && i < (int)ds.inputs.size(); i++) {
                if (!name.empty() && graph.input(i).name() == name) t = &ds.inputs[i];
            }
            ASSERT_TRUE(name.empty() || t) << "node input " << name << " is not a graph input with data";
            in.push_back(t);
        }
        std::vector<const Tensor *> expected;
        for (const Tensor &t : ds.outputs) expected.push_back(&t);
        plans.push_back(plan(model, in, expected));
        if (!plans.back().skip.empty()) GTEST_SKIP() << plans.back().skip;
        ASSERT_EQ(plans.back().params, plans[0].params) << "data sets map to different parameters";
    }

    std::map<std::string, std::string> params = plans[0].params;
    params["schedule"] = param.schedule;
    const sw_test::JitBuild build = sw_test::jit_build_layer(LAYERS_GENERATOR, plans[0].generator, params);
    if (!build.ok()) {
        const std::string &log = build.log;
        if (build.status == sw_test::JitBuild::GeneratorFailed) {
            if (log.find("unknown generator '" + plans[0].generator + "'") != std::string::npos) {
                GTEST_SKIP() << "generator not available: " << plans[0].generator;
            }
            const std::string lacks = generator_lacks(log);
            if (!lacks.empty()) {
                GTEST_SKIP() << "generator " << plans[0].generator << " has no parameter " << lacks << " yet";
            }
            if (log.find("unknown schedule '" + param.schedule + "'") != std::string::npos) {
                GTEST_SKIP() << "generator " << plans[0].generator << " has no schedule " << param.schedule << " yet";
            }
        }
        FAIL() << log;
    }

    for (size_t s = 0; s < sets.size(); s++) {
        Plan &p = plans[s];
        const Tensor &expected = sets[s].outputs[0];
        Buf out(p.out_extents);
        ASSERT_EQ(out.number_of_elements(), (size_t)expected.numel()) << "output extents do not match the ONNX output";
        out.fill(NAN);
        std::vector<halide_buffer_t *> args;
        for (Buf &b : p.inputs) args.push_back(b.raw_buffer());
        args.push_back(out.raw_buffer());
        testing::internal::CaptureStderr();
        const int rc = build.layer->call(args);
        const std::string log = testing::internal::GetCapturedStderr();
        ASSERT_EQ(rc, 0) << sets[s].name << ": the layer returned " << rc << ": " << log;

        int bad = 0;
        double worst = 0;
        std::string first;
        const float *a = out.data();
        for (int64_t i = 0; i < expected.numel(); i++) {
            const float e = expected.data[i];
            const double diff = std::fabs((double)a[i] - e);
            if (!(diff <= 1e-4 + 1e-4 * std::fabs(e))) {
                if (bad++ == 0) {
                    std::ostringstream m;
                    m << "first mismatch at flat index " << i << ": expected " << e << ", got " << a[i];
                    first = m.str();
                }
                worst = std::max(worst, std::isnan(diff) ? INFINITY : diff);
            }
        }
        if (bad) {
            std::string q;
            for (const auto &kv : params) q += " " + kv.first + "=" + kv.second;
            ADD_FAILURE() << sets[s].name << ": " << bad << " of " << expected.numel()
                          << " elements differ; " << first << "; largest difference " << worst << " ("
                          << plans[0].generator << q << ")";
        }
    }
}

std::vector<Param> all_params() {
    std::vector<Param> v;
    for (const NodeCase &c : node_cases()) {
        for (const char *s : kSchedules) v.push_back({c, s});
    }
    return v;
}

INSTANTIATE_TEST_SUITE_P(Node, OnnxNode, testing::ValuesIn(all_params()),
                         [](const testing::TestParamInfo<Param> &i) {
                             return i.param.node.name + "_" + i.param.schedule;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OnnxNode);

TEST(OnnxNodeData, TestDataIsInstalled) {
    if (!is_dir(data_dir())) {
        GTEST_SKIP() << "no ONNX node test data at " << data_dir()
                     << " (Debian package libonnx-testdata; or set ONNX_NODE_TEST_DIR)";
    }
    EXPECT_GE(node_cases().size(), 50u) << "expected the Conv/Pool/Gemm/Relu/Softmax/LRN node tests in " << data_dir();
}

TEST(JitLayer, GeneratorErrorsComeBackWithTheToolOutput) {
    const sw_test::JitBuild b = sw_test::jit_build_layer(LAYERS_GENERATOR, "conv2d", {{"kernel", "0"}});
    EXPECT_FALSE(b.ok());
    EXPECT_EQ(b.status, sw_test::JitBuild::GeneratorFailed);
    EXPECT_NE(b.log.find("kernel and stride must be >= 1"), std::string::npos) << b.log;
    const sw_test::JitBuild n = sw_test::jit_build_layer(LAYERS_GENERATOR, "nosuch", {});
    EXPECT_NE(n.log.find("unknown generator 'nosuch'"), std::string::npos) << n.log;
}

TEST(JitLayer, BuildsOncePerParamsAndChecksTheArgumentCount) {
    const std::map<std::string, std::string> p = {{"size", "10"}};
    const sw_test::JitBuild a = sw_test::jit_build_layer(LAYERS_GENERATOR, "relu", p);
    if (!a.ok() && a.log.find("unknown generator") != std::string::npos) GTEST_SKIP() << "generator not available: relu";
    ASSERT_TRUE(a.ok()) << a.log;
    EXPECT_EQ(sw_test::jit_build_layer(LAYERS_GENERATOR, "relu", p).layer, a.layer);
    EXPECT_NE(sw_test::jit_build_layer(LAYERS_GENERATOR, "relu", {{"size", "11"}}).layer, a.layer);
    EXPECT_EQ(a.layer->num_args(), 2);
    Buf in(10), out(10);
    for (int i = 0; i < 10; i++) in(i) = i - 4.5f;
    testing::internal::CaptureStderr();
    EXPECT_EQ(a.layer->call({in.raw_buffer()}), -2);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("takes 2"), std::string::npos);
    ASSERT_EQ(a.layer->call({in.raw_buffer(), out.raw_buffer()}), 0);
    for (int i = 0; i < 10; i++) EXPECT_EQ(out(i), std::max(0.f, i - 4.5f));
}

const testing::Environment *const summary = testing::AddGlobalTestEnvironment(new Summary);

}  // namespace
