#include "graph/OnnxReader.h"

#include <onnx/onnx_pb.h>

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <set>

namespace sw_graph {

namespace {

std::string type_name(int32_t t) {
    if (onnx::TensorProto_DataType_IsValid(t)) {
        return onnx::TensorProto_DataType_Name((onnx::TensorProto_DataType)t);
    }
    return "type " + std::to_string(t);
}

/** Element count of dims, checked for negative dims and overflow before any allocation. */
int64_t checked_count(const google::protobuf::RepeatedField<int64_t> &dims) {
    std::vector<int64_t> shape(dims.begin(), dims.end());
    for (int64_t d : shape) {
        if (d < 0)
            throw NodeError("has a negative dim (" + std::to_string(d) + ")");
    }
    return element_count(shape);
}

/** The tensor's data as a Tensor; NodeError (without the file) on anything malformed. */
Tensor convert_tensor(const onnx::TensorProto &p) {
    Tensor t;
    t.name = p.name();
    t.has_shape = true;
    t.is_constant = true;
    t.shape.assign(p.dims().begin(), p.dims().end());
    const int64_t n = checked_count(p.dims());
    if (p.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
        throw NodeError("external data is not supported (store the weights inside the model)");
    }
    if (p.has_segment()) {
        throw NodeError("segmented tensors are not supported");
    }
    const std::string &raw = p.raw_data();
    auto check_size = [&](int64_t available, const char *where) {
        if (available != n) {
            throw NodeError("dims " + shape_string(t.shape) + " need " + std::to_string(n) +
                            " elements but " + where + " holds " + std::to_string(available));
        }
    };
    switch (p.data_type()) {
    case onnx::TensorProto_DataType_FLOAT:
        t.dtype = DType::Float32;
        if (p.has_raw_data()) {
            if ((int64_t)(raw.size() % 4) != 0)
                throw NodeError("raw_data size is not a multiple of 4");
            check_size((int64_t)raw.size() / 4, "raw_data");
            t.f32.resize(n);
            if (n)
                std::memcpy(t.f32.data(), raw.data(), n * sizeof(float)); // little endian
        } else {
            check_size(p.float_data_size(), "float_data");
            t.f32.assign(p.float_data().begin(), p.float_data().end());
        }
        break;
    case onnx::TensorProto_DataType_INT64:
        t.dtype = DType::Int64;
        if (p.has_raw_data()) {
            if ((int64_t)(raw.size() % 8) != 0)
                throw NodeError("raw_data size is not a multiple of 8");
            check_size((int64_t)raw.size() / 8, "raw_data");
            t.i64.resize(n);
            if (n)
                std::memcpy(t.i64.data(), raw.data(), n * sizeof(int64_t));
        } else {
            check_size(p.int64_data_size(), "int64_data");
            t.i64.assign(p.int64_data().begin(), p.int64_data().end());
        }
        break;
    case onnx::TensorProto_DataType_INT32:
    case onnx::TensorProto_DataType_BOOL: {
        // Integers of shape arithmetic and flags: kept as int64 values.
        t.dtype = p.data_type() == onnx::TensorProto_DataType_BOOL ? DType::Bool : DType::Int64;
        const size_t width = p.data_type() == onnx::TensorProto_DataType_BOOL ? 1 : 4;
        if (p.has_raw_data()) {
            if (raw.size() % width)
                throw NodeError("raw_data size does not fit its type");
            check_size((int64_t)(raw.size() / width), "raw_data");
            t.i64.resize(n);
            for (int64_t i = 0; i < n; i++) {
                if (width == 1) {
                    t.i64[i] = raw[i] != 0;
                } else {
                    int32_t v;
                    std::memcpy(&v, raw.data() + i * 4, 4);
                    t.i64[i] = v;
                }
            }
        } else {
            check_size(p.int32_data_size(), "int32_data");
            t.i64.assign(p.int32_data().begin(), p.int32_data().end());
        }
        break;
    }
    default:
        throw NodeError("element type " + type_name(p.data_type()) +
                        " is not supported (float32, int64, int32 and bool are)");
    }
    return t;
}

Attribute convert_attribute(const onnx::AttributeProto &a) {
    Attribute r;
    auto type = a.type();
    if (type == onnx::AttributeProto_AttributeType_UNDEFINED) {
        // Old files leave the type out: take it from the field that is set.
        if (a.has_i())
            type = onnx::AttributeProto_AttributeType_INT;
        else if (a.has_f())
            type = onnx::AttributeProto_AttributeType_FLOAT;
        else if (a.has_s())
            type = onnx::AttributeProto_AttributeType_STRING;
        else if (a.has_t())
            type = onnx::AttributeProto_AttributeType_TENSOR;
        else if (a.ints_size())
            type = onnx::AttributeProto_AttributeType_INTS;
        else if (a.floats_size())
            type = onnx::AttributeProto_AttributeType_FLOATS;
        else if (a.strings_size())
            type = onnx::AttributeProto_AttributeType_STRINGS;
    }
    switch (type) {
    case onnx::AttributeProto_AttributeType_INT:
        return Attribute::make_int(a.i());
    case onnx::AttributeProto_AttributeType_FLOAT:
        return Attribute::make_float(a.f());
    case onnx::AttributeProto_AttributeType_STRING:
        return Attribute::make_string(a.s());
    case onnx::AttributeProto_AttributeType_INTS:
        return Attribute::make_ints({a.ints().begin(), a.ints().end()});
    case onnx::AttributeProto_AttributeType_FLOATS:
        return Attribute::make_floats({a.floats().begin(), a.floats().end()});
    case onnx::AttributeProto_AttributeType_STRINGS:
        r.kind = Attribute::Kind::Strings;
        r.strings.assign(a.strings().begin(), a.strings().end());
        return r;
    case onnx::AttributeProto_AttributeType_TENSOR:
        r.kind = Attribute::Kind::Tensor;
        try {
            r.tensor = std::make_shared<Tensor>(convert_tensor(a.t()));
        } catch (const NodeError &e) {
            throw NodeError("attribute '" + a.name() + "': tensor " + e.what());
        }
        return r;
    default:
        r.kind = Attribute::Kind::Other;
        r.other_type = onnx::AttributeProto_AttributeType_Name(type);
        return r;
    }
}

/** Declared element type and shape of a graph input or output. */
Tensor convert_value_info(const Graph &g, const onnx::ValueInfoProto &v, const char *what) {
    Tensor t;
    t.name = v.name();
    if (!v.type().has_tensor_type()) {
        throw g.error(std::string(what) + " '" + v.name() + "' is not a tensor");
    }
    const auto &tt = v.type().tensor_type();
    switch (tt.elem_type()) {
    case onnx::TensorProto_DataType_FLOAT:
        t.dtype = DType::Float32;
        break;
    case onnx::TensorProto_DataType_INT64:
        t.dtype = DType::Int64;
        break;
    case onnx::TensorProto_DataType_UNDEFINED:
        // Outputs may leave the type to inference.
        t.dtype = DType::Float32;
        break;
    default:
        throw g.error(std::string(what) + " '" + v.name() + "' has element type " +
                      type_name(tt.elem_type()) + "; only float32 and int64 are supported");
    }
    if (tt.has_shape()) {
        t.has_shape = true;
        for (const auto &d : tt.shape().dim()) {
            if (d.has_dim_value()) {
                if (d.dim_value() < 0) {
                    throw g.error(std::string(what) + " '" + v.name() + "' has a negative dim");
                }
                t.shape.push_back(d.dim_value());
            } else {
                t.shape.push_back(-1); // dim_param or nothing: dynamic
            }
        }
    }
    return t;
}

/** Every name of the graph (nodes, their operators, domains, inputs, outputs and attributes,
 * initializers, graph inputs, outputs and value infos) made printable by escape_name: the
 * same map for every occurrence, so references still match. */
void escape_names(onnx::GraphProto &gp) {
    auto fix = [](std::string *s) { *s = escape_name(*s); };
    fix(gp.mutable_name());
    for (auto &n : *gp.mutable_node()) {
        fix(n.mutable_name());
        fix(n.mutable_op_type());
        fix(n.mutable_domain());
        for (auto &i : *n.mutable_input())
            fix(&i);
        for (auto &o : *n.mutable_output())
            fix(&o);
        for (auto &a : *n.mutable_attribute())
            fix(a.mutable_name());
    }
    for (auto &t : *gp.mutable_initializer())
        fix(t.mutable_name());
    for (auto *list : {gp.mutable_input(), gp.mutable_output(), gp.mutable_value_info()}) {
        for (auto &v : *list)
            fix(v.mutable_name());
    }
}

} // namespace

Graph read_onnx_bytes(const std::string &bytes, const std::string &source) {
    Graph g;
    g.source = source;
    onnx::ModelProto model;
    if (bytes.size() > (size_t)INT_MAX) {
        throw g.error("larger than 2 GB, protobuf's limit (external data is not supported)");
    }
    if (!model.ParseFromString(bytes)) {
        throw g.error("not an ONNX model (the protobuf does not parse: a truncated or non-ONNX "
                      "file)");
    }
    if (!model.has_graph() || !model.has_ir_version()) {
        throw g.error("not an ONNX model (no graph or no IR version)");
    }
    g.ir_version = model.ir_version();
    if (g.ir_version < kMinIrVersion || g.ir_version > kMaxIrVersion) {
        throw g.error("IR version " + std::to_string(g.ir_version) + " is not supported (" +
                      std::to_string(kMinIrVersion) + " to " + std::to_string(kMaxIrVersion) +
                      " are)");
    }
    bool found = false;
    for (const auto &o : model.opset_import()) {
        if (o.domain().empty() || o.domain() == "ai.onnx") {
            g.opset = o.version();
            found = true;
        }
    }
    if (!found)
        throw g.error("the model imports no opset of the default ONNX domain");
    if (g.opset < kMinOpset || g.opset > kMaxOpset) {
        throw g.error("opset " + std::to_string(g.opset) + " is not supported (" +
                      std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + " are)");
    }
    escape_names(*model.mutable_graph());
    const onnx::GraphProto &gp = model.graph();
    g.name = gp.name();
    if (gp.sparse_initializer_size())
        throw g.error("sparse initializers are not supported");

    for (const auto &init : gp.initializer()) {
        if (init.name().empty())
            throw g.error("an initializer has no name");
        if (g.tensors.count(init.name())) {
            throw g.error("initializer '" + init.name() + "' is defined twice");
        }
        try {
            g.tensors[init.name()] = convert_tensor(init);
        } catch (const NodeError &e) {
            throw g.error("initializer '" + init.name() + "': " + e.what());
        }
    }
    for (const auto &in : gp.input()) {
        if (g.tensors.count(in.name()))
            continue; // an initializer listed as input (IR < 4)
        if (in.name().empty())
            throw g.error("a graph input has no name");
        if (g.is_graph_input(in.name()))
            throw g.error("graph input '" + in.name() + "' is listed twice");
        g.tensors[in.name()] = convert_value_info(g, in, "input");
        g.inputs.push_back(in.name());
    }
    for (const auto &out : gp.output()) {
        if (out.name().empty())
            throw g.error("a graph output has no name");
        Tensor t = convert_value_info(g, out, "output");
        if (t.has_shape)
            g.declared_output_shapes[out.name()] = t.shape;
        g.outputs.push_back(out.name());
    }
    for (int i = 0; i < gp.node_size(); i++) {
        const auto &np = gp.node(i);
        Node node;
        node.name = np.name();
        node.op_type = np.op_type();
        node.domain = np.domain() == "ai.onnx" ? "" : np.domain();
        node.index = i;
        node.inputs.assign(np.input().begin(), np.input().end());
        node.outputs.assign(np.output().begin(), np.output().end());
        for (const auto &a : np.attribute()) {
            if (node.attributes.count(a.name())) {
                throw g.node_error(node, "attribute '" + a.name() + "' is given twice");
            }
            try {
                node.attributes[a.name()] = convert_attribute(a);
            } catch (const NodeError &e) {
                throw g.node_error(node, e.what());
            }
        }
        for (const std::string &o : node.outputs) {
            if (o.empty() || g.tensors.count(o))
                continue;
            Tensor t;
            t.name = o;
            g.tensors[o] = t;
        }
        g.nodes.push_back(std::move(node));
    }
    g.sort();
    return g;
}

namespace {

/** The whole file; Error "error: <path>: ..." if it cannot be read. */
std::string read_file(const std::string &path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
        throw Error("error: " + path + ": cannot open: " + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        throw Error("error: " + path + ": not a regular file");
    std::ifstream f(path, std::ios::binary);
    if (!f)
        throw Error("error: " + path + ": cannot open: " + std::strerror(errno));
    if (st.st_size > (off_t)INT_MAX) {
        throw Error("error: " + path +
                    ": larger than 2 GB, protobuf's limit (external data "
                    "is not supported)");
    }
    std::string bytes((size_t)st.st_size, '\0');
    f.read(&bytes[0], st.st_size);
    if (f.gcount() != st.st_size)
        throw Error("error: " + path + ": read failed");
    return bytes;
}

} // namespace

Graph read_onnx_file(const std::string &path) {
    return read_onnx_bytes(read_file(path), path);
}

Tensor read_onnx_tensor_file(const std::string &path) {
    onnx::TensorProto p;
    if (!p.ParseFromString(read_file(path))) {
        throw Error("error: " + path + ": not an ONNX tensor (the protobuf does not parse)");
    }
    try {
        return convert_tensor(p);
    } catch (const NodeError &e) {
        throw Error("error: " + path + ": " + e.what());
    }
}

} // namespace sw_graph
