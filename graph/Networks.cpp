/** \file
 * The built-in networks: see Networks.h.
 */
#include "graph/Networks.h"

#include "graph/ShapeInference.h"

#include <utility>

namespace sw_graph {

namespace {

/** Builds a graph node by node; each node's output is the next node's input. */
class Builder {
public:
    Builder(const NetworkConfig &c, const ParameterSource &params) : params_(params) {
        g.source = c.name;
        g.name = c.name;
        g.opset = 13;
        g.ir_version = 7;
        Tensor in;
        in.name = "data";
        in.shape = {c.batch, 3, c.input, c.input};
        in.has_shape = true;
        g.tensors[in.name] = in;
        g.inputs = {in.name};
        current_ = in.name;
        channels_ = 3;
        size_ = c.input;
    }

    void conv(const std::string &name, int out, int kernel, int stride, int pad, int groups,
              const std::string &relu) {
        if (out < 1 || channels_ % groups != 0 || out % groups != 0) {
            throw g.error(name + ": " + std::to_string(out) + " output channels for " +
                          std::to_string(channels_) + " inputs in " + std::to_string(groups) +
                          " group(s)");
        }
        const std::string w = constant(name, "weight", {out, channels_ / groups, kernel, kernel});
        const std::string b = constant(name, "bias", {out});
        Node &n = node(name, "Conv", {current_, w, b});
        n.attributes["kernel_shape"] = Attribute::make_ints({kernel, kernel});
        n.attributes["strides"] = Attribute::make_ints({stride, stride});
        n.attributes["pads"] = Attribute::make_ints({pad, pad, pad, pad});
        if (groups != 1)
            n.attributes["group"] = Attribute::make_int(groups);
        channels_ = out;
        size_ = window(name, size_, kernel, stride, pad);
        node(relu, "Relu", {current_});
    }

    void lrn(const std::string &name) {
        Node &n = node(name, "LRN", {current_});
        n.attributes["size"] = Attribute::make_int(5);
        n.attributes["alpha"] = Attribute::make_float(0.0001f);
        n.attributes["beta"] = Attribute::make_float(0.75f);
        n.attributes["bias"] = Attribute::make_float(1.f);
    }

    void max_pool(const std::string &name, int kernel, int stride) {
        Node &n = node(name, "MaxPool", {current_});
        n.attributes["kernel_shape"] = Attribute::make_ints({kernel, kernel});
        n.attributes["strides"] = Attribute::make_ints({stride, stride});
        size_ = window(name, size_, kernel, stride, 0);
    }

    /** flatten, fc6 (+ReLU), fc7 (+ReLU), fc8, prob. */
    void classifier(int fc, int classes) {
        if (fc < 1 || classes < 1)
            throw g.error("classifier of " + std::to_string(fc) + " and " +
                          std::to_string(classes) + " outputs");
        Node &f = node("flatten", "Flatten", {current_});
        f.attributes["axis"] = Attribute::make_int(1);
        features_ = int64_t(channels_) * size_ * size_;
        dense("fc6", fc, "relu_fc6");
        dense("fc7", fc, "relu_fc7");
        dense("fc8", classes, "");
        Node &s = node("prob", "Softmax", {current_});
        s.attributes["axis"] = Attribute::make_int(-1);
    }

    Graph finish() {
        g.outputs = {current_};
        g.sort();
        infer_shapes(g);
        return std::move(g);
    }

    Graph g;

private:
    const ParameterSource &params_;
    std::string current_;
    int channels_ = 0, size_ = 0;
    int64_t features_ = 0;
    int index_ = 0;

    int window(const std::string &name, int size, int kernel, int stride, int pad) {
        const int out = (size + 2 * pad - kernel) / stride + 1;
        if (size + 2 * pad < kernel || out < 1) {
            throw g.error(name + ": a " + std::to_string(kernel) + "x" + std::to_string(kernel) +
                          " window on a " + std::to_string(size) + "x" + std::to_string(size) +
                          " input (the input is too small)");
        }
        return out;
    }

    void dense(const std::string &name, int out, const std::string &relu) {
        const std::string w = constant(name, "weight", {out, features_});
        const std::string b = constant(name, "bias", {out});
        Node &n = node(name, "Gemm", {current_, w, b});
        n.attributes["transB"] = Attribute::make_int(1);
        features_ = out;
        if (!relu.empty())
            node(relu, "Relu", {current_});
    }

    std::string constant(const std::string &layer, const std::string &what,
                         const std::vector<int64_t> &shape) {
        Tensor t;
        t.name = layer + "." + what;
        t.shape = shape;
        t.has_shape = true;
        t.is_constant = true;
        if (!params_) { // shapes only
            const std::string name = t.name;
            g.tensors[name] = std::move(t);
            return name;
        }
        t.f32 = params_(layer, what, shape);
        if (int64_t(t.f32.size()) != t.elements()) {
            throw g.error(layer + ": " + what + " of " + std::to_string(t.f32.size()) +
                          " values, expected " + shape_string(shape));
        }
        const std::string name = t.name;
        g.tensors[name] = std::move(t);
        return name;
    }

    Node &node(const std::string &name, const std::string &op, std::vector<std::string> inputs) {
        Node n;
        n.name = name;
        n.op_type = op;
        n.index = index_++;
        n.inputs = std::move(inputs);
        n.outputs = {name}; // each node's output tensor is named after it
        Tensor t;
        t.name = name;
        g.tensors[name] = t;
        current_ = name;
        g.nodes.push_back(std::move(n));
        return g.nodes.back();
    }
};

int divided(int channels, int div) {
    return channels / div;
}

} // namespace

const std::vector<std::string> &network_names() {
    static const std::vector<std::string> names = {"alexnet", "vgg16", "vgg19"};
    return names;
}

int default_input_size(const std::string &name) {
    if (name == "alexnet")
        return 227;
    if (name == "vgg16" || name == "vgg19")
        return 224;
    throw Error("error: unknown network '" + name + "' (alexnet, vgg16 or vgg19)");
}

Graph network_graph(const NetworkConfig &config, const ParameterSource &parameters) {
    NetworkConfig c = config;
    if (c.input == 0)
        c.input = default_input_size(c.name);
    else
        default_input_size(c.name); // the name checked
    if (c.channel_div < 1 || c.batch < 1 || c.input < 1) {
        throw Error("error: " + c.name + ": channel divisor, batch and input size must be >= 1");
    }
    Builder b(c, parameters);
    const int d = c.channel_div;
    if (c.name == "alexnet") {
        b.conv("conv1", divided(96, d), 11, 4, 0, 1, "relu1");
        b.lrn("norm1");
        b.max_pool("pool1", 3, 2);
        b.conv("conv2", divided(256, d), 5, 1, 2, 2, "relu2");
        b.lrn("norm2");
        b.max_pool("pool2", 3, 2);
        b.conv("conv3", divided(384, d), 3, 1, 1, 1, "relu3");
        b.conv("conv4", divided(384, d), 3, 1, 1, 2, "relu4");
        b.conv("conv5", divided(256, d), 3, 1, 1, 2, "relu5");
        b.max_pool("pool5", 3, 2);
    } else {
        const std::vector<int> blocks =
            c.name == "vgg16" ? std::vector<int>{2, 2, 3, 3, 3} : std::vector<int>{2, 2, 4, 4, 4};
        const int widths[] = {64, 128, 256, 512, 512};
        for (int stage = 0; stage < 5; stage++) {
            const std::string s = std::to_string(stage + 1);
            for (int i = 1; i <= blocks[size_t(stage)]; i++) {
                const std::string id = s + "_" + std::to_string(i);
                b.conv("conv" + id, divided(widths[stage], d), 3, 1, 1, 1, "relu" + id);
            }
            b.max_pool("pool" + s, 2, 2);
        }
    }
    b.classifier(divided(4096, d), c.classes);
    return b.finish();
}

} // namespace sw_graph
