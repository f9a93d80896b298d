/** \file
 * The graph IR of the ONNX importer: named tensors with static shapes (int64 dims, NCHW for
 * images), float32 and int64 constants (weights, folded shape tensors), and nodes with an
 * operator type, typed attributes and named inputs and outputs, kept in topological order.
 *
 * Plain C++17: no protobuf, no Halide. OnnxReader fills it, ShapeInference gives every
 * tensor its shape (and folds shape arithmetic), Passes rewrite it.
 */
#ifndef SW_GRAPH_GRAPH_H
#define SW_GRAPH_GRAPH_H

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sw_graph {

/** A user-facing error. what() is a complete message: "error: <file>: ...", naming the node
 * (name and operator) where there is one. */
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/** An error found while handling one node, without the file and node: the code that walks
 * the graph catches it and rethrows it as an Error naming both (Graph::node_error). */
class NodeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/** Domain of the operators the passes create (ChannelScaleShift). */
constexpr const char *kInternalDomain = "sw_graph";

enum class DType { Float32, Int64, Bool };
const char *dtype_name(DType t);

/** A name from a file as printable text: valid UTF-8 without control characters is kept, a
 * backslash is doubled and every other byte becomes \xHH, so that a corrupt file's names
 * cannot reach a terminal raw and distinct names stay distinct. */
std::string escape_name(const std::string &name);

/** "1x3x224x224"; "scalar" for rank 0; "?" for an unknown dim. */
std::string shape_string(const std::vector<int64_t> &shape);

/** Product of the dims; throws NodeError on a negative dim or int64 overflow. */
int64_t element_count(const std::vector<int64_t> &shape);

struct Tensor {
    std::string name;
    DType dtype = DType::Float32;
    /** Known once has_shape; a dim of -1 is dynamic (only on graph inputs before
     * ShapeInference, which requires every dim to be static). */
    std::vector<int64_t> shape;
    bool has_shape = false;
    /** Constant data (an initializer, a Constant node or folded shape arithmetic), row
     * major: f32 for Float32, i64 for Int64. */
    bool is_constant = false;
    std::vector<float> f32;
    std::vector<int64_t> i64;

    int64_t elements() const { return element_count(shape); }
    bool is_static() const;
};

struct Attribute {
    enum class Kind { Int, Float, String, Ints, Floats, Strings, Tensor, Other };
    Kind kind = Kind::Other;
    int64_t i = 0;
    float f = 0.0f;
    std::string s;
    std::vector<int64_t> ints;
    std::vector<float> floats;
    std::vector<std::string> strings;
    std::shared_ptr<Tensor> tensor;
    /** For Kind::Other: the ONNX attribute type's name (GRAPH, SPARSE_TENSOR, ...). */
    std::string other_type;

    static Attribute make_int(int64_t v);
    static Attribute make_float(float v);
    static Attribute make_string(std::string v);
    static Attribute make_ints(std::vector<int64_t> v);
    static Attribute make_floats(std::vector<float> v);
    std::string to_string() const;
};

struct Node {
    std::string name; ///< may be empty (ONNX names are optional)
    std::string op_type;
    std::string domain;               ///< "" for the default ONNX domain
    int64_t index = 0;                ///< position in the ONNX file, for messages
    std::vector<std::string> inputs;  ///< "" is an absent optional input
    std::vector<std::string> outputs; ///< "" is an absent optional output
    std::map<std::string, Attribute> attributes;

    /** "node 'conv1' (Conv)", or "node #3 (Conv, output 'y')" for an unnamed node. */
    std::string label() const;

    bool has_attr(const std::string &n) const { return attributes.count(n) != 0; }
    /** Typed accessors; a missing attribute gives the default, one of another type a
     * NodeError. */
    int64_t attr_int(const std::string &n, int64_t def) const;
    float attr_float(const std::string &n, float def) const;
    std::string attr_string(const std::string &n, const std::string &def) const;
    std::vector<int64_t> attr_ints(const std::string &n, const std::vector<int64_t> &def) const;
    std::vector<float> attr_floats(const std::string &n, const std::vector<float> &def) const;

    /** The i-th input's name, "" if absent. */
    std::string input(size_t i) const { return i < inputs.size() ? inputs[i] : std::string(); }
    std::string output(size_t i) const { return i < outputs.size() ? outputs[i] : std::string(); }
};

class Graph {
public:
    std::string source;     ///< file name, for messages
    std::string name;       ///< the ONNX graph's name
    int64_t opset = 0;      ///< the default domain's opset version
    int64_t ir_version = 0; ///< the model's IR version
    std::map<std::string, Tensor> tensors;
    std::vector<Node> nodes;          ///< topological order once sort() has run
    std::vector<std::string> inputs;  ///< graph inputs (not initializers)
    std::vector<std::string> outputs; ///< graph outputs
    /** Output shapes the model declares (-1: dynamic); ShapeInference checks its own against
     * their static dims. */
    std::map<std::string, std::vector<int64_t>> declared_output_shapes;

    /** The tensor of that name; throws NodeError if there is none. */
    Tensor &tensor(const std::string &n);
    const Tensor &tensor(const std::string &n) const;
    Tensor *find(const std::string &n);
    const Tensor *find(const std::string &n) const;
    bool is_graph_output(const std::string &n) const;
    bool is_graph_input(const std::string &n) const;

    /** Index in nodes of the node producing that tensor, -1 if none. */
    int producer(const std::string &n) const;
    /** Indices of the nodes reading that tensor (a node reading it twice counts once). */
    std::vector<int> consumers(const std::string &n) const;
    /** Makes every reader of `from` (nodes and graph outputs) read `to` instead. */
    void replace_uses(const std::string &from, const std::string &to);

    /** Orders nodes so that each comes after the producers of its inputs (stable: keeps
     * the file's order where it can). Throws Error on a cycle, on a tensor produced twice,
     * or on an input that no node, initializer or graph input provides. */
    void sort();

    /** "error: <source>: <what>" and, with a node, "error: <source>: <node label>: <what>". */
    Error error(const std::string &what) const;
    Error node_error(const Node &node, const std::string &what) const;

    /** One line per graph input, node (op, inputs with constant shapes, outputs with
     * shapes, MACs) and graph output, then the totals. */
    std::string dump() const;
};

} // namespace sw_graph

#endif
