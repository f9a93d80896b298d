#include "graph/Graph.h"

#include "graph/Stats.h"

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>

namespace sw_graph {

const char *dtype_name(DType t) {
    switch (t) {
    case DType::Float32:
        return "float32";
    case DType::Int64:
        return "int64";
    case DType::Bool:
        return "bool";
    }
    return "?";
}

std::string escape_name(const std::string &name) {
    std::string out;
    const size_t n = name.size();
    auto byte = [&](size_t i) { return static_cast<unsigned char>(name[i]); };
    for (size_t i = 0; i < n;) {
        const unsigned char c = byte(i);
        // The length of a valid UTF-8 sequence starting at i (0: not one), the shortest form
        // only, no surrogates, at most U+10FFFF.
        size_t len = 0;
        if (c >= 0x20 && c < 0x7f)
            len = 1;
        else if (c >= 0xc2 && c <= 0xdf)
            len = 2;
        else if (c >= 0xe0 && c <= 0xef)
            len = 3;
        else if (c >= 0xf0 && c <= 0xf4)
            len = 4;
        bool ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            ok = (byte(i + k) & 0xc0) == 0x80;
        if (ok && len == 3) {
            const unsigned char d = byte(i + 1);
            ok = !(c == 0xe0 && d < 0xa0) && !(c == 0xed && d >= 0xa0);
        }
        if (ok && len == 4) {
            const unsigned char d = byte(i + 1);
            ok = !(c == 0xf0 && d < 0x90) && !(c == 0xf4 && d >= 0x90);
        }
        if (ok && len == 2 && c == 0xc2 && byte(i + 1) < 0xa0)
            ok = false; // U+0080..U+009F: C1 control characters
        if (!ok) {
            static const char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
            i++;
        } else if (c == '\\') {
            out += "\\\\";
            i++;
        } else {
            out.append(name, i, len);
            i += len;
        }
    }
    return out;
}

std::string shape_string(const std::vector<int64_t> &shape) {
    if (shape.empty())
        return "scalar";
    std::string s;
    for (size_t i = 0; i < shape.size(); i++) {
        if (i)
            s += "x";
        s += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
    }
    return s;
}

int64_t element_count(const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0)
            throw NodeError("shape " + shape_string(shape) + " has a dynamic or negative dim");
        if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
            throw NodeError("shape " + shape_string(shape) + " has more elements than int64 holds");
        }
        n *= d;
    }
    return n;
}

bool Tensor::is_static() const {
    return has_shape && std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; });
}

Attribute Attribute::make_int(int64_t v) {
    Attribute a;
    a.kind = Kind::Int;
    a.i = v;
    return a;
}
Attribute Attribute::make_float(float v) {
    Attribute a;
    a.kind = Kind::Float;
    a.f = v;
    return a;
}
Attribute Attribute::make_string(std::string v) {
    Attribute a;
    a.kind = Kind::String;
    a.s = std::move(v);
    return a;
}
Attribute Attribute::make_ints(std::vector<int64_t> v) {
    Attribute a;
    a.kind = Kind::Ints;
    a.ints = std::move(v);
    return a;
}
Attribute Attribute::make_floats(std::vector<float> v) {
    Attribute a;
    a.kind = Kind::Floats;
    a.floats = std::move(v);
    return a;
}

std::string Attribute::to_string() const {
    std::ostringstream o;
    auto list = [&o](const auto &v) {
        o << "[";
        for (size_t i = 0; i < v.size(); i++)
            o << (i ? "," : "") << v[i];
        o << "]";
    };
    switch (kind) {
    case Kind::Int:
        o << i;
        break;
    case Kind::Float:
        o << f;
        break;
    case Kind::String:
        o << '"' << s << '"';
        break;
    case Kind::Ints:
        list(ints);
        break;
    case Kind::Floats:
        list(floats);
        break;
    case Kind::Strings:
        list(strings);
        break;
    case Kind::Tensor:
        o << "tensor " << (tensor ? shape_string(tensor->shape) : "?");
        break;
    case Kind::Other:
        o << other_type;
        break;
    }
    return o.str();
}

std::string Node::label() const {
    if (!name.empty())
        return "node '" + name + "' (" + op_type + ")";
    std::string s = "node #" + std::to_string(index) + " (" + op_type;
    if (!outputs.empty())
        s += ", output '" + outputs[0] + "'";
    return s + ")";
}

namespace {

const Attribute *typed(const Node &n, const std::string &a, Attribute::Kind k, const char *what) {
    auto it = n.attributes.find(a);
    if (it == n.attributes.end())
        return nullptr;
    if (it->second.kind != k) {
        throw NodeError("attribute '" + a + "' must be " + what + ", not " +
                        it->second.to_string());
    }
    return &it->second;
}

} // namespace

int64_t Node::attr_int(const std::string &n, int64_t def) const {
    const Attribute *a = typed(*this, n, Attribute::Kind::Int, "an int");
    return a ? a->i : def;
}
float Node::attr_float(const std::string &n, float def) const {
    const Attribute *a = typed(*this, n, Attribute::Kind::Float, "a float");
    return a ? a->f : def;
}
std::string Node::attr_string(const std::string &n, const std::string &def) const {
    const Attribute *a = typed(*this, n, Attribute::Kind::String, "a string");
    return a ? a->s : def;
}
std::vector<int64_t> Node::attr_ints(const std::string &n, const std::vector<int64_t> &def) const {
    const Attribute *a = typed(*this, n, Attribute::Kind::Ints, "a list of ints");
    return a ? a->ints : def;
}
std::vector<float> Node::attr_floats(const std::string &n, const std::vector<float> &def) const {
    const Attribute *a = typed(*this, n, Attribute::Kind::Floats, "a list of floats");
    return a ? a->floats : def;
}

Tensor &Graph::tensor(const std::string &n) {
    Tensor *t = find(n);
    if (!t)
        throw NodeError("no tensor named '" + n + "'");
    return *t;
}
const Tensor &Graph::tensor(const std::string &n) const {
    const Tensor *t = find(n);
    if (!t)
        throw NodeError("no tensor named '" + n + "'");
    return *t;
}
Tensor *Graph::find(const std::string &n) {
    auto it = tensors.find(n);
    return it == tensors.end() ? nullptr : &it->second;
}
const Tensor *Graph::find(const std::string &n) const {
    auto it = tensors.find(n);
    return it == tensors.end() ? nullptr : &it->second;
}
bool Graph::is_graph_output(const std::string &n) const {
    return std::find(outputs.begin(), outputs.end(), n) != outputs.end();
}
bool Graph::is_graph_input(const std::string &n) const {
    return std::find(inputs.begin(), inputs.end(), n) != inputs.end();
}

int Graph::producer(const std::string &n) const {
    for (size_t i = 0; i < nodes.size(); i++) {
        for (const std::string &o : nodes[i].outputs) {
            if (!o.empty() && o == n)
                return (int)i;
        }
    }
    return -1;
}

std::vector<int> Graph::consumers(const std::string &n) const {
    std::vector<int> r;
    for (size_t i = 0; i < nodes.size(); i++) {
        const auto &in = nodes[i].inputs;
        if (std::find(in.begin(), in.end(), n) != in.end())
            r.push_back((int)i);
    }
    return r;
}

void Graph::replace_uses(const std::string &from, const std::string &to) {
    for (Node &node : nodes) {
        std::replace(node.inputs.begin(), node.inputs.end(), from, to);
    }
    std::replace(outputs.begin(), outputs.end(), from, to);
}

Error Graph::error(const std::string &what) const {
    return Error("error: " + source + ": " + what);
}

Error Graph::node_error(const Node &node, const std::string &what) const {
    return error(node.label() + ": " + what);
}

void Graph::sort() {
    std::map<std::string, int> producer_of;
    for (size_t i = 0; i < nodes.size(); i++) {
        for (const std::string &o : nodes[i].outputs) {
            if (o.empty())
                continue;
            if (producer_of.count(o)) {
                throw node_error(nodes[i], "output '" + o + "' is also produced by " +
                                               nodes[producer_of[o]].label());
            }
            const Tensor *t = find(o);
            if (t && t->is_constant) {
                throw node_error(nodes[i], "output '" + o + "' is also an initializer");
            }
            if (is_graph_input(o)) {
                throw node_error(nodes[i], "output '" + o + "' is also a graph input");
            }
            producer_of[o] = (int)i;
        }
    }
    // Kahn's algorithm, always taking the earliest ready node of the file.
    std::vector<int> missing(nodes.size(), 0);
    std::map<std::string, std::vector<int>> readers;
    for (size_t i = 0; i < nodes.size(); i++) {
        std::set<std::string> seen;
        for (const std::string &in : nodes[i].inputs) {
            if (in.empty() || !seen.insert(in).second)
                continue;
            if (producer_of.count(in)) {
                missing[i]++;
                readers[in].push_back((int)i);
            } else {
                const Tensor *t = find(in);
                if (!is_graph_input(in) && !(t && t->is_constant)) {
                    throw node_error(nodes[i], "input '" + in +
                                                   "' is not produced by any node, initializer "
                                                   "or graph input");
                }
            }
        }
    }
    std::set<int> ready;
    for (size_t i = 0; i < nodes.size(); i++) {
        if (missing[i] == 0)
            ready.insert((int)i);
    }
    std::vector<Node> sorted;
    std::vector<bool> done(nodes.size(), false);
    while (!ready.empty()) {
        int i = *ready.begin();
        ready.erase(ready.begin());
        done[i] = true;
        sorted.push_back(nodes[i]);
        for (const std::string &o : nodes[i].outputs) {
            auto it = readers.find(o);
            if (o.empty() || it == readers.end())
                continue;
            for (int r : it->second) {
                if (--missing[r] == 0)
                    ready.insert(r);
            }
        }
    }
    if (sorted.size() != nodes.size()) {
        for (size_t i = 0; i < nodes.size(); i++) {
            if (!done[i]) {
                throw node_error(nodes[i], "is part of a cycle (its inputs depend on its outputs)");
            }
        }
    }
    nodes = std::move(sorted);
    for (const std::string &o : outputs) {
        const Tensor *t = find(o);
        if (!producer_of.count(o) && !is_graph_input(o) && !(t && t->is_constant)) {
            throw error("graph output '" + o + "' is not produced by any node");
        }
    }
}

std::string Graph::dump() const {
    std::ostringstream o;
    auto describe = [this](const std::string &n) {
        const Tensor *t = find(n);
        if (!t)
            return n + " ?";
        std::string s = n + " " + (t->has_shape ? shape_string(t->shape) : std::string("?"));
        if (t->dtype != DType::Float32)
            s += std::string(" ") + dtype_name(t->dtype);
        return s;
    };
    o << "graph '" << name << "' from " << source << " (IR " << ir_version << ", opset " << opset
      << "): " << nodes.size() << " nodes\n";
    for (const std::string &in : inputs)
        o << "input   " << describe(in) << "\n";
    for (const Node &node : nodes) {
        o << "node    " << (node.name.empty() ? "#" + std::to_string(node.index) : node.name) << " "
          << node.op_type << " (";
        bool first = true;
        for (const std::string &in : node.inputs) {
            if (!first)
                o << ", ";
            first = false;
            if (in.empty()) {
                o << "-";
                continue;
            }
            const Tensor *t = find(in);
            o << in;
            if (t && t->is_constant)
                o << " const " << shape_string(t->shape);
        }
        o << ") -> ";
        first = true;
        for (const std::string &out : node.outputs) {
            if (out.empty())
                continue;
            if (!first)
                o << ", ";
            first = false;
            o << describe(out);
        }
        int64_t macs = node_macs(*this, node);
        if (macs)
            o << "  MACs " << macs;
        o << "\n";
    }
    for (const std::string &out : outputs)
        o << "output  " << describe(out) << "\n";
    GraphStats s = graph_stats(*this);
    o << "total   " << nodes.size() << " nodes, " << s.params << " parameters, " << s.macs
      << " MACs\n";
    return o.str();
}

} // namespace sw_graph
