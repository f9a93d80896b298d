/** \file
 * The ONNX conformance node tests (Debian's libonnx-testdata, data/node/) of the operators
 * our layers implement — Conv (dilations too), MaxPool, AveragePool, Gemm, Relu, Softmax,
 * LRN, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Add, Mul, Sub, Div, Sum (of two
 * inputs), GlobalAveragePool, GlobalMaxPool, ReduceMean (trailing axes), Concat,
 * BatchNormalization, MatMul (by a constant B, as dense; batches of matrices as batch_matmul),
 * Erf, Tanh, LayerNormalization, Transpose, Pow, Sqrt, Resize and Upsample (resize),
 * ConvTranspose (conv_transpose), Pad — run on the emulated SW26010 core group. Pad's
 * single-node models of data/pytorch-converted and data/pytorch-operator too; Pad's int32 test
 * data (test_edge_pad, test_reflect_pad) run as float32 (kMoveOnlyOps, as_float).
 *
 * Every test folder holds model.onnx (one node) and test_data_set_N/{input,output}_K.pb
 * (TensorProto). For each folder whose single node has one of those op types (the
 * *_expanded variants are several nodes and are left out), one gtest per schedule
 * (sunway, baseline) maps the node to one of our generators with the importer's own code,
 * as sw_net --model does (graph/Lowering.h): sw_graph::read_onnx_file, the node's weights
 * (Gemm's B and C, Clip's bounds, BatchNormalization's parameters, Conv's W and B: given as
 * graph inputs by the test data, held as initializers by an exported model) made constants
 * from the data set, infer_shapes (auto_pad resolved to pads), run_passes (a
 * BatchNormalization becomes ChannelScaleShift: channel_affine with the folded scale and
 * shift) and lower_graph (Gemm with transB=0 and constant B: B as dense's in_out weights; a scalar
 * or row C: our bias vector; a missing bias: zeros; 1-D windows as 2-D with height 1; Relu, Clip,
 * LeakyRelu, Sigmoid, HardSigmoid, HardSwish: activation on the flattened tensor; Add, Mul, Sum of
 * two: eltwise with NCHW broadcasting; ReduceMean over trailing axes and the global pools:
 * global_pool; Concat along any axis: concat with the dims before the axis as the batch).
 * It builds that layer for this shape at run time (JitLayer: generator, cc, dlopen), runs it
 * on every data set and compares with the expected outputs:
 * |actual - expected| <= 1e-4 + 1e-4 * |expected|. Whatever the importer or the lowering
 * refuses (their error message is the reason) is GTEST_SKIP()ped, as is a case whose
 * generator (or generator parameter, or schedule) does not exist yet.
 *
 * At the end the list of passed / skipped / failed cases, with reasons, goes to stdout.
 *
 * ONNX files are read with Debian's libonnx-dev (the generated onnx-ml.pb.h classes and
 * libonnx_proto, on the system's protobuf 3.21).
 */
#include "graph/Lowering.h"
#include "graph/OnnxReader.h"
#include "graph/Passes.h"
#include "graph/ShapeInference.h"
#include "jit/jit_layer.h"

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
#include <functional>
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
const std::set<std::string> kOps = {"Conv",
                                    "MaxPool",
                                    "AveragePool",
                                    "Gemm",
                                    "Relu",
                                    "Softmax",
                                    "LRN",
                                    "Clip",
                                    "LeakyRelu",
                                    "Sigmoid",
                                    "Add",
                                    "Mul",
                                    "Sum",
                                    "GlobalAveragePool",
                                    "GlobalMaxPool",
                                    "ReduceMean",
                                    "Concat",
                                    "BatchNormalization",
                                    "MatMul",
                                    "HardSigmoid",
                                    "HardSwish",
                                    "Sub",
                                    "Div",
                                    "Erf",
                                    "Tanh",
                                    "LayerNormalization",
                                    "Transpose",
                                    "Resize",
                                    "Upsample",
                                    "ConvTranspose",
                                    "Pow",
                                    "Sqrt",
                                    "Pad"};
/** The operators whose single-node models are also taken from the data's pytorch-converted and
 * pytorch-operator folders (named pytorch_converted_<folder> and pytorch_operator_<folder>). */
const std::set<std::string> kPytorchOps = {"Pad"};

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
            if (e->d_name[0] != '.')
                names.push_back(e->d_name);
        }
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

template <typename Msg> bool parse_file(const std::string &path, Msg *m) {
    std::ifstream f(path, std::ios::binary);
    return f && m->ParseFromIstream(&f);
}

// ------------------------------------------------------------------ the list of cases

struct NodeCase {
    std::string name, op;
    std::string dir; ///< the test folder
};

/** Every single-node test folder of \p root whose node is one of \p ops, named \p prefix and
 * the folder's name. */
void add_node_cases(const std::string &root, const std::set<std::string> &ops,
                    const std::string &prefix, std::vector<NodeCase> &v) {
    for (const std::string &name : list_dir(root)) {
        if (name.size() > 9 && name.compare(name.size() - 9, 9, "_expanded") == 0)
            continue;
        onnx::ModelProto m;
        if (!parse_file(root + "/" + name + "/model.onnx", &m))
            continue;
        if (m.graph().node_size() != 1)
            continue;
        const std::string &op = m.graph().node(0).op_type();
        if (ops.count(op) &&
            (m.graph().node(0).domain().empty() || m.graph().node(0).domain() == "ai.onnx")) {
            v.push_back({prefix + name, op, root + "/" + name});
        }
    }
}

/** Every single-node test folder of data/node whose node is one of kOps, by folder name; then
 * those of pytorch-converted and pytorch-operator (beside data/node) of kPytorchOps. */
const std::vector<NodeCase> &node_cases() {
    static const std::vector<NodeCase> cases = [] {
        std::vector<NodeCase> v;
        const std::string root = data_dir();
        add_node_cases(root, kOps, "", v);
        add_node_cases(root + "/../pytorch-converted", kPytorchOps, "pytorch_converted_", v);
        add_node_cases(root + "/../pytorch-operator", kPytorchOps, "pytorch_operator_", v);
        return v;
    }();
    return cases;
}

// ------------------------------------------------------------------ tensors

struct Tensor {
    std::vector<int64_t> dims;
    int32_t type = 0;
    std::vector<float> data;  // float32 tensors; int32 ones converted (see as_float)
    std::vector<int64_t> i64; // int64 tensors only (Pad's pads)
    int64_t numel() const {
        int64_t n = 1;
        for (int64_t d : dims)
            n *= d;
        return n;
    }
};

std::string type_name(int32_t t) {
    return onnx::TensorProto_DataType_IsValid(t) ? onnx::TensorProto_DataType_Name(t)
                                                 : std::to_string(t);
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
    const int64_t n = t->numel();
    if (t->type == onnx::TensorProto::INT64) {
        if (p.has_raw_data() && (int64_t)p.raw_data().size() == n * 8) {
            t->i64.resize(size_t(n));
            std::memcpy(t->i64.data(), p.raw_data().data(), size_t(n) * 8);
        } else {
            t->i64.assign(p.int64_data().begin(), p.int64_data().end());
        }
        return true;
    }
    if (t->type == onnx::TensorProto::INT32) {
        // Converted to float32 (as_float); kept as int32 only for its type otherwise.
        std::vector<int32_t> v(p.int32_data().begin(), p.int32_data().end());
        if (p.has_raw_data() && (int64_t)p.raw_data().size() == n * 4) {
            v.resize(size_t(n));
            std::memcpy(v.data(), p.raw_data().data(), size_t(n) * 4);
        }
        t->data.assign(v.begin(), v.end());
        return true;
    }
    if (t->type != onnx::TensorProto::FLOAT)
        return true; // kept for its type only
    if (p.has_raw_data()) {
        if ((int64_t)p.raw_data().size() != n * 4) {
            *err = path + ": raw_data has " + std::to_string(p.raw_data().size()) + " bytes for " +
                   std::to_string(n) + " floats";
            return false;
        }
        t->data.resize(n);
        std::memcpy(t->data.data(), p.raw_data().data(), n * 4); // little-endian host
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
        if (s.rfind("test_data_set_", 0) != 0 || !is_dir(dir + "/" + s))
            continue;
        DataSet ds;
        ds.name = s;
        for (const char *kind : {"input", "output"}) {
            for (int i = 0;; i++) {
                const std::string p = dir + "/" + s + "/" + kind + "_" + std::to_string(i) + ".pb";
                struct stat st;
                if (stat(p.c_str(), &st) != 0)
                    break;
                Tensor t;
                if (!load_tensor(p, &t, err))
                    return false;
                (std::strcmp(kind, "input") == 0 ? ds.inputs : ds.outputs).push_back(std::move(t));
            }
        }
        sets->push_back(std::move(ds));
    }
    if (sets->empty())
        *err = "no test_data_set_* in " + dir;
    return !sets->empty();
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

/** Why not, when a tensor of \p ts other than those \p weight says is not float32. */
/** Operators that only move values (no arithmetic), whose int32 test data (test_edge_pad,
 * test_reflect_pad) run as float32: integers of magnitude at most 2^24 are exact in float32
 * and come out of the layer unchanged. */
const std::set<std::string> kMoveOnlyOps = {"Pad"};

/** int32 data a move-only operator can take as float32: every value exact in float32. */
bool as_float(const std::string &op, const Tensor &t) {
    return kMoveOnlyOps.count(op) && t.type == onnx::TensorProto::INT32 &&
           std::all_of(t.data.begin(), t.data.end(),
                       [](float v) { return std::fabs(v) <= 16777216.f; });
}

std::string need_float(const std::vector<Tensor> &ts,
                       const std::function<bool(size_t)> &weight = nullptr) {
    for (size_t i = 0; i < ts.size(); i++) {
        const Tensor &t = ts[i];
        if (t.type != onnx::TensorProto::FLOAT && !(weight && weight(i))) {
            return "element type " + type_name(t.type) + " not supported (float32 only)";
        }
    }
    return "";
}

/** Node inputs (by position, from 1) that a model exported from a framework holds as
 *  initializers: the test data gives them as graph inputs, the harness makes them constants
 *  (Gemm's B and C, Clip's bounds, the BatchNormalization parameters, Conv's W and B,
 *  MatMul's B, Resize's roi, scales and int64 sizes, Upsample's scales, ConvTranspose's W
 *  and B, Pad's pads, constant_value and axes). */
bool is_weight(const std::string &op, size_t position) {
    if (position == 0)
        return false;
    return op == "Gemm" || op == "Clip" || op == "BatchNormalization" || op == "Conv" ||
           op == "MatMul" || op == "Resize" || op == "Upsample" || op == "ConvTranspose" ||
           op == "Pad";
}

/** The importer's own mapping (graph/Lowering.h, as sw_net --model uses it): the model is read
 *  with sw_graph::read_onnx_file, the data set's weights become constants (is_weight),
 *  shapes are inferred, the passes run (a BatchNormalization becomes ChannelScaleShift, run
 *  as channel_affine) and the graph is lowered. It must lower to exactly one layer; anything
 *  the importer or the lowering refuses is skipped with its message. */
Plan plan(const std::string &dir, const onnx::ModelProto &model, const DataSet &ds) {
    const onnx::NodeProto &node = model.graph().node(0);
    if (ds.inputs.empty())
        return skip("no input");
    // The node's weights may be int64 (Pad's pads); the other inputs must be float32.
    std::string why = need_float(ds.inputs, [&](size_t i) {
        if (as_float(node.op_type(), ds.inputs[i]))
            return true;
        if (int(i) >= model.graph().input_size())
            return false;
        for (int k = 0; k < node.input_size(); k++) {
            if (node.input(k) == model.graph().input(int(i)).name())
                return is_weight(node.op_type(), size_t(k));
        }
        return false;
    });
    if (why.empty())
        why = need_float(ds.outputs,
                         [&](size_t i) { return as_float(node.op_type(), ds.outputs[i]); });
    if (!why.empty())
        return skip(why);
    if (ds.outputs.size() != 1)
        return skip(std::to_string(ds.outputs.size()) + " outputs (one only)");

    sw_graph::Graph g;
    sw_graph::LoweredGraph l;
    std::map<std::string, const Tensor *> data; // graph input name -> data
    try {
        if (kMoveOnlyOps.count(node.op_type())) {
            // int32 graph inputs and outputs declared float32 (as_float has checked the data).
            onnx::ModelProto m = model;
            for (auto *vs :
                 {m.mutable_graph()->mutable_input(), m.mutable_graph()->mutable_output()})
                for (onnx::ValueInfoProto &v : *vs) {
                    auto *tt = v.mutable_type()->mutable_tensor_type();
                    if (tt->elem_type() == onnx::TensorProto::INT32)
                        tt->set_elem_type(onnx::TensorProto::FLOAT);
                }
            g = sw_graph::read_onnx_bytes(m.SerializeAsString(), dir + "/model.onnx");
        } else {
            g = sw_graph::read_onnx_file(dir + "/model.onnx");
        }
        for (int i = 0; i < model.graph().input_size() && i < (int)ds.inputs.size(); i++) {
            data[model.graph().input(i).name()] = &ds.inputs[i];
        }
        for (int k = 0; k < node.input_size(); k++) {
            const std::string &name = node.input(k);
            if (name.empty() || !is_weight(node.op_type(), k) || !data.count(name))
                continue;
            sw_graph::Tensor &t = g.tensor(name);
            t.is_constant = t.has_shape = true;
            t.shape = data[name]->dims;
            t.f32 = data[name]->data;
            if (data[name]->type == onnx::TensorProto::INT64) {
                t.dtype = sw_graph::DType::Int64;
                t.i64 = data[name]->i64;
            }
            g.inputs.erase(std::remove(g.inputs.begin(), g.inputs.end(), name), g.inputs.end());
        }
        sw_graph::infer_shapes(g);
        sw_graph::run_passes(g);
        l = sw_graph::lower_graph(g);
    } catch (const sw_graph::Error &e) {
        return skip(e.what());
    }
    if (l.steps.size() != 1 || l.steps[0].layer < 0) {
        return skip("lowers to " + std::to_string(l.steps.size()) + " steps, not one layer");
    }
    const sw_graph::Step &s = l.steps[0];
    Plan p;
    p.generator = l.layers[s.layer].generator;
    p.params = l.layers[s.layer].params;
    for (const sw_graph::LayerArg &a : s.inputs) {
        const std::vector<float> *v = nullptr;
        if (data.count(a.tensor) && std::count(g.inputs.begin(), g.inputs.end(), a.tensor)) {
            v = &data[a.tensor]->data;
        } else if (l.extra_constants.count(a.tensor)) {
            v = &l.extra_constants.at(a.tensor);
        } else if (const sw_graph::Tensor *t = g.find(a.tensor)) {
            if (t->is_constant)
                v = &t->f32;
        }
        if (!v)
            return skip("no data for layer input '" + a.tensor + "'");
        size_t n = 1;
        for (int e : a.extents)
            n *= size_t(e);
        if (n != v->size())
            return skip("layer input '" + a.tensor + "' has the wrong size");
        p.inputs.push_back(make_buf(a.extents, *v));
    }
    p.out_extents = s.output.extents;
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
        if (c == '\n' || c == '\r')
            c = ' ';
    }
    while (!s.empty() && s.back() == ' ')
        s.pop_back();
    if (s.size() > 300)
        s = s.substr(0, 300) + "...";
    return s;
}

class Summary : public testing::Environment {
public:
    void TearDown() override {
        std::lock_guard<std::mutex> lock(results_mutex);
        if (results.empty())
            return;
        std::map<std::string, int> count;
        std::string text = "\n==== ONNX node tests on the emulated SW26010 ====\n";
        for (const char *status : {"PASSED", "SKIPPED", "FAILED"}) {
            for (const auto &r : results) {
                if (r.second.status != status)
                    continue;
                count[status]++;
                text += std::string(status) + "  " + r.first +
                        (r.second.detail.empty() ? "" : "  -- " + r.second.detail) + "\n";
            }
        }
        text += "==== " + std::to_string(count["PASSED"]) + " passed, " +
                std::to_string(count["SKIPPED"]) + " skipped, " + std::to_string(count["FAILED"]) +
                " failed ====\n";
        std::fputs(text.c_str(), stdout);
        std::fflush(stdout);
    }
};

// ------------------------------------------------------------------ the test

struct Param {
    NodeCase node;
    std::string schedule;
};

void PrintTo(const Param &p, std::ostream *os) {
    *os << p.node.name << " [" << p.schedule << "]";
}

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
    if (at == std::string::npos)
        return "";
    size_t end = at + key.size();
    while (end < log.size() && !std::isspace((unsigned char)log[end]))
        end++;
    return log.substr(at + key.size(), end - at - key.size());
}

TEST_P(OnnxNode, MatchesExpectedOutputsOnEmulatedSunway) {
    const Param &param = GetParam();
    const std::string &dir = param.node.dir;
    onnx::ModelProto model;
    ASSERT_TRUE(parse_file(dir + "/model.onnx", &model)) << "cannot read " << dir << "/model.onnx";
    std::vector<DataSet> sets;
    std::string err;
    ASSERT_TRUE(load_data_sets(dir, &sets, &err)) << err;

    // Every data set gives its own plan (a Gemm C is read from the data); all must agree
    // on the generator and its parameters, which depend on shapes and attributes only.
    std::vector<Plan> plans;
    for (const DataSet &ds : sets) {
        // The graph inputs are input_0.pb, input_1.pb, ... in the graph's input order.
        plans.push_back(plan(dir, model, ds));
        if (!plans.back().skip.empty())
            GTEST_SKIP() << plans.back().skip;
        ASSERT_EQ(plans.back().params, plans[0].params) << "data sets map to different parameters";
    }

    std::map<std::string, std::string> params = plans[0].params;
    params["schedule"] = param.schedule;
    const sw_jit::JitBuild build =
        sw_jit::jit_build_layer(LAYERS_GENERATOR, plans[0].generator, params);
    if (!build.ok()) {
        const std::string &log = build.log;
        if (build.status == sw_jit::JitBuild::GeneratorFailed) {
            if (log.find("unknown generator '" + plans[0].generator + "'") != std::string::npos) {
                GTEST_SKIP() << "generator not available: " << plans[0].generator;
            }
            const std::string lacks = generator_lacks(log);
            if (!lacks.empty()) {
                GTEST_SKIP() << "generator " << plans[0].generator << " has no parameter " << lacks
                             << " yet";
            }
            if (log.find("unknown schedule '" + param.schedule + "'") != std::string::npos) {
                GTEST_SKIP() << "generator " << plans[0].generator << " has no schedule "
                             << param.schedule << " yet";
            }
        }
        FAIL() << log;
    }

    for (size_t s = 0; s < sets.size(); s++) {
        Plan &p = plans[s];
        const Tensor &expected = sets[s].outputs[0];
        Buf out(p.out_extents);
        ASSERT_EQ(out.number_of_elements(), (size_t)expected.numel())
            << "output extents do not match the ONNX output";
        out.fill(NAN);
        std::vector<halide_buffer_t *> args;
        for (Buf &b : p.inputs)
            args.push_back(b.raw_buffer());
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
                    m << "first mismatch at flat index " << i << ": expected " << e << ", got "
                      << a[i];
                    first = m.str();
                }
                worst = std::max(worst, std::isnan(diff) ? INFINITY : diff);
            }
        }
        if (bad) {
            std::string q;
            for (const auto &kv : params)
                q += " " + kv.first + "=" + kv.second;
            ADD_FAILURE() << sets[s].name << ": " << bad << " of " << expected.numel()
                          << " elements differ; " << first << "; largest difference " << worst
                          << " (" << plans[0].generator << q << ")";
        }
    }
}

std::vector<Param> all_params() {
    std::vector<Param> v;
    for (const NodeCase &c : node_cases()) {
        for (const char *s : kSchedules)
            v.push_back({c, s});
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
    EXPECT_GE(node_cases().size(), 50u)
        << "expected the Conv/Pool/Gemm/Relu/Softmax/LRN node tests in " << data_dir();
}

TEST(JitLayer, GeneratorErrorsComeBackWithTheToolOutput) {
    const sw_jit::JitBuild b =
        sw_jit::jit_build_layer(LAYERS_GENERATOR, "conv2d", {{"kernel", "0"}});
    EXPECT_FALSE(b.ok());
    EXPECT_EQ(b.status, sw_jit::JitBuild::GeneratorFailed);
    EXPECT_NE(b.log.find("kernel and stride must be >= 1"), std::string::npos) << b.log;
    const sw_jit::JitBuild n = sw_jit::jit_build_layer(LAYERS_GENERATOR, "nosuch", {});
    EXPECT_NE(n.log.find("unknown generator 'nosuch'"), std::string::npos) << n.log;
}

TEST(JitLayer, BuildsOncePerParamsAndChecksTheArgumentCount) {
    const std::map<std::string, std::string> p = {{"size", "10"}};
    const sw_jit::JitBuild a = sw_jit::jit_build_layer(LAYERS_GENERATOR, "relu", p);
    if (!a.ok() && a.log.find("unknown generator") != std::string::npos)
        GTEST_SKIP() << "generator not available: relu";
    ASSERT_TRUE(a.ok()) << a.log;
    EXPECT_EQ(sw_jit::jit_build_layer(LAYERS_GENERATOR, "relu", p).layer, a.layer);
    EXPECT_NE(sw_jit::jit_build_layer(LAYERS_GENERATOR, "relu", {{"size", "11"}}).layer, a.layer);
    EXPECT_EQ(a.layer->num_args(), 2);
    Buf in(10), out(10);
    for (int i = 0; i < 10; i++)
        in(i) = i - 4.5f;
    testing::internal::CaptureStderr();
    EXPECT_EQ(a.layer->call({in.raw_buffer()}), -2);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("takes 2"), std::string::npos);
    ASSERT_EQ(a.layer->call({in.raw_buffer(), out.raw_buffer()}), 0);
    for (int i = 0; i < 10; i++)
        EXPECT_EQ(out(i), std::max(0.f, i - 4.5f));
}

const testing::Environment *const summary = testing::AddGlobalTestEnvironment(new Summary);

} // namespace
