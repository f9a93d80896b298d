/** \file
 * Builds small ONNX models in C++ with the protobuf API (Debian's libonnx-dev), for the
 * sw_graph tests.
 */
#ifndef SW_GRAPH_TESTS_MODEL_BUILDER_H
#define SW_GRAPH_TESTS_MODEL_BUILDER_H

#include "graph/OnnxReader.h"
#include "graph/ShapeInference.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace sw_graph_test {

class ModelBuilder {
public:
    explicit ModelBuilder(int64_t opset = 13) {
        model.set_ir_version(7);
        model.set_producer_name("sw_graph_test");
        auto *o = model.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        g = model.mutable_graph();
        g->set_name("test");
    }

    /** A graph input; a dim of -1 is dynamic (dim_param "N"). */
    void input(const std::string &name, const std::vector<int64_t> &dims,
               int elem = onnx::TensorProto_DataType_FLOAT) {
        auto *v = g->add_input();
        v->set_name(name);
        auto *t = v->mutable_type()->mutable_tensor_type();
        t->set_elem_type(elem);
        auto *s = t->mutable_shape();
        for (int64_t d : dims) {
            if (d < 0)
                s->add_dim()->set_dim_param("N");
            else
                s->add_dim()->set_dim_value(d);
        }
    }

    void output(const std::string &name) {
        auto *v = g->add_output();
        v->set_name(name);
        v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    }

    /** A float32 initializer stored as raw_data (or float_data if `typed`). */
    void init(const std::string &name, const std::vector<int64_t> &dims,
              const std::vector<float> &values, bool typed = false) {
        auto *t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto_DataType_FLOAT);
        for (int64_t d : dims)
            t->add_dims(d);
        if (typed) {
            for (float v : values)
                t->add_float_data(v);
        } else {
            std::string raw(values.size() * 4, '\0');
            if (!values.empty())
                std::memcpy(&raw[0], values.data(), raw.size());
            t->set_raw_data(raw);
        }
    }

    /** A random float32 initializer, values in [lo, hi). */
    std::vector<float> init_random(const std::string &name, const std::vector<int64_t> &dims,
                                   float lo = -1.0f, float hi = 1.0f) {
        int64_t n = 1;
        for (int64_t d : dims)
            n *= d;
        std::uniform_real_distribution<float> dist(lo, hi);
        std::vector<float> v(n);
        for (float &x : v)
            x = dist(rng);
        init(name, dims, v);
        return v;
    }

    /** A 1-D int64 initializer (int64_data). */
    void init_ints(const std::string &name, const std::vector<int64_t> &values) {
        auto *t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto_DataType_INT64);
        t->add_dims((int64_t)values.size());
        for (int64_t v : values)
            t->add_int64_data(v);
    }

    onnx::NodeProto &node(const std::string &op, const std::vector<std::string> &inputs,
                          const std::vector<std::string> &outputs, const std::string &name = "") {
        auto *n = g->add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (const auto &i : inputs)
            n->add_input(i);
        for (const auto &o : outputs)
            n->add_output(o);
        return *n;
    }

    static void attr_i(onnx::NodeProto &n, const std::string &name, int64_t v) {
        auto *a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto_AttributeType_INT);
        a->set_i(v);
    }
    static void attr_f(onnx::NodeProto &n, const std::string &name, float v) {
        auto *a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
        a->set_f(v);
    }
    static void attr_s(onnx::NodeProto &n, const std::string &name, const std::string &v) {
        auto *a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto_AttributeType_STRING);
        a->set_s(v);
    }
    static void attr_ints(onnx::NodeProto &n, const std::string &name,
                          const std::vector<int64_t> &v) {
        auto *a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto_AttributeType_INTS);
        for (int64_t x : v)
            a->add_ints(x);
    }

    std::string bytes() const { return model.SerializeAsString(); }
    sw_graph::Graph read() const { return sw_graph::read_onnx_bytes(bytes(), "test.onnx"); }
    /** read() and infer_shapes(). */
    sw_graph::Graph infer(const sw_graph::InferenceOptions &o = {}) const {
        sw_graph::Graph gr = read();
        sw_graph::infer_shapes(gr, o);
        return gr;
    }

    onnx::ModelProto model;
    onnx::GraphProto *g;
    std::mt19937 rng{1234};
};

/** n values uniform in [-1, 1) from a seeded generator (test inputs). */
inline std::vector<float> random_values(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> v(n);
    for (float &x : v)
        x = d(rng);
    return v;
}

/** ShuffleNetV2's unit as torch.onnx exports it: Slice / Split of the channels, Concat,
 * then the channel shuffle as Reshape (N, g, C/g, H, W) - Transpose - Reshape:
 * x (2, 8, 3, 5) -> lo = x[:, :4], hi = x[:, 4:] -> y = shuffle(concat(lo, relu(hi)), 2). */
inline ModelBuilder shuffle_unit(bool use_split, int batch = 2) {
    ModelBuilder b;
    b.input("x", {batch, 8, 3, 5});
    if (use_split) {
        auto &s = b.node("Split", {"x"}, {"lo", "hi"}, "split");
        ModelBuilder::attr_i(s, "axis", 1);
    } else {
        b.init_ints("starts", {4});
        b.init_ints("ends", {8});
        b.init_ints("axes", {1});
        b.init_ints("starts0", {0});
        b.init_ints("ends0", {4});
        b.node("Slice", {"x", "starts0", "ends0", "axes"}, {"lo"}, "slice_lo");
        b.node("Slice", {"x", "starts", "ends", "axes"}, {"hi"}, "slice_hi");
    }
    b.node("Relu", {"hi"}, {"r"}, "relu");
    auto &c = b.node("Concat", {"lo", "r"}, {"cat"}, "concat");
    ModelBuilder::attr_i(c, "axis", 1);
    b.init_ints("shape5", {batch, 2, 4, 3, 5});
    b.init_ints("shape4", {batch, 8, 3, 5});
    b.node("Reshape", {"cat", "shape5"}, {"v"}, "view1");
    auto &t = b.node("Transpose", {"v"}, {"t"}, "transpose");
    ModelBuilder::attr_ints(t, "perm", {0, 2, 1, 3, 4});
    b.node("Reshape", {"t", "shape4"}, {"y"}, "view2");
    b.output("y");
    return b;
}

} // namespace sw_graph_test

#endif
