/** \file
 * ConcatInPlace: see ConcatInPlace.h.
 */
#include "graph/ConcatInPlace.h"

#include <algorithm>
#include <set>

namespace sw_graph {

const char *const kConcatInPlaceOp = "Concat (in place)";
const char *const kConcatCopyInputOp = "Concat (copy input)";

namespace {

int64_t elements(const std::vector<int> &extents) {
    int64_t n = 1;
    for (int e : extents)
        n *= e;
    return n;
}

bool is_concat_step(const LoweredGraph &lw, const Step &s) {
    return s.layer >= 0 && lw.layers[size_t(s.layer)].generator == "concat";
}

/** The concat layer calls and the bytes they write. */
void count_concat_layers(const LoweredGraph &lw, int *calls, int64_t *bytes) {
    *calls = 0;
    *bytes = 0;
    for (const Step &s : lw.steps) {
        if (!is_concat_step(lw, s))
            continue;
        (*calls)++;
        *bytes += elements(s.output.extents) * 4;
    }
}

/** One Concat node: its last concat step (which writes the node's output), the steps of
 * all its levels, and its inputs with the levels' temporaries flattened away. */
struct NodeConcat {
    int final_step = -1;
    std::vector<int> steps;
    std::vector<LayerArg> inputs; ///< extents {inner, 1, channels, outer}
};

class Placer {
public:
    Placer(const Graph &g, LoweredGraph &lw) : g_(g), lw_(lw) {
        for (int k = 0; k < (int)lw_.steps.size(); k++) {
            const Step &s = lw_.steps[size_t(k)];
            producer_[s.output.tensor] = k;
            for (const LayerArg &a : s.inputs)
                readers_[a.tensor].push_back(k);
        }
    }

    ConcatPlacement run() {
        count_concat_layers(lw_, &plan_.stats.concat_calls_before,
                            &plan_.stats.copied_bytes_before);
        std::vector<NodeConcat> concats;
        for (int k = 0; k < (int)lw_.steps.size(); k++) {
            if (is_concat_step(lw_, lw_.steps[size_t(k)]) && !is_level_temporary(k))
                concats.push_back(flatten(k));
        }
        plan_.stats.concats = (int)concats.size();
        // From the last concat to the first: a tensor in several concats takes its place in
        // the last (DenseNet's full block concat), and a concat's output is placed in the
        // concat that reads it before its own inputs are placed inside it.
        for (auto it = concats.rbegin(); it != concats.rend(); ++it)
            decide(*it);
        rewrite();
        count_concat_layers(lw_, &plan_.stats.concat_calls_after, &plan_.stats.copied_bytes_after);
        for (const Step &s : lw_.steps) {
            if (s.op_type == kConcatCopyInputOp)
                plan_.stats.copied_bytes_after += elements(s.output.extents) * 4;
        }
        return std::move(plan_);
    }

private:
    /** A concat step whose output only a concat step of the same node reads: a level of a
     * Concat of more than 7 inputs (Lowering's temporaries). */
    bool is_level_temporary(int k) const {
        const Step &s = lw_.steps[size_t(k)];
        if (g_.is_graph_output(s.output.tensor))
            return false;
        auto r = readers_.find(s.output.tensor);
        if (r == readers_.end() || r->second.size() != 1)
            return false;
        const Step &reader = lw_.steps[size_t(r->second[0])];
        return is_concat_step(lw_, reader) && reader.node == s.node;
    }

    NodeConcat flatten(int final_step) const {
        NodeConcat c;
        c.final_step = final_step;
        add_levels(final_step, c);
        std::sort(c.steps.begin(), c.steps.end());
        return c;
    }

    void add_levels(int k, NodeConcat &c) const {
        c.steps.push_back(k);
        for (const LayerArg &a : lw_.steps[size_t(k)].inputs) {
            auto p = producer_.find(a.tensor);
            if (p != producer_.end() && is_concat_step(lw_, lw_.steps[size_t(p->second)]) &&
                is_level_temporary(p->second)) {
                add_levels(p->second, c);
            } else {
                c.inputs.push_back(a);
            }
        }
    }

    /** The tensor that owns `tensor`'s storage: itself, or what it is a view of (the whole
     * of; a slice view is a range of another tensor, placed with it or not at all). */
    std::string storage_of(std::string tensor) const {
        for (auto p = producer_.find(tensor);
             p != producer_.end() && lw_.steps[size_t(p->second)].layer < 0 &&
             !is_slice_view(lw_.steps[size_t(p->second)]);
             p = producer_.find(tensor)) {
            tensor = lw_.steps[size_t(p->second)].inputs.at(0).tensor;
        }
        return tensor;
    }

    static bool is_slice_view(const Step &s) {
        return s.view_offset != 0 || elements(s.output.extents) != elements(s.inputs.at(0).extents);
    }

    /** Whether a layer step writes `tensor` (not a graph input, a constant or a view). */
    bool written_by_layer(const std::string &tensor) const {
        auto p = producer_.find(tensor);
        return p != producer_.end() && lw_.steps[size_t(p->second)].layer >= 0;
    }

    static bool same(const TensorSlice &a, const TensorSlice &b) {
        return a.root == b.root && a.offset == b.offset;
    }

    void decide(const NodeConcat &c) {
        const Step &last = lw_.steps[size_t(c.final_step)];
        const std::string &out = last.output.tensor;
        const int outer = last.output.extents.at(3);
        if (outer != 1) {
            note(last, true,
                 "copies: the dims before the axis hold " + std::to_string(outer) +
                     " (batch > 1), so each input's slice is strided and the layers write dense "
                     "buffers");
            return;
        }
        if (!plan_.slices.count(out))
            place_as_range(c, out);
        const TensorSlice base = plan_.slice_of(out);
        std::vector<std::string> placed_now, copies;
        std::vector<int> copy_index;
        int in_place = 0;
        int64_t offset = base.offset;
        for (size_t j = 0; j < c.inputs.size(); j++) {
            const LayerArg &a = c.inputs[j];
            const TensorSlice want{base.root, offset};
            offset += elements(a.extents);
            const std::string x = storage_of(a.tensor);
            auto at = plan_.slices.find(x);
            if (at != plan_.slices.end() && same(at->second, want)) {
                in_place++; // already there: an earlier concat that is a range of a later one
            } else if (at == plan_.slices.end() && !plan_.roots.count(x) && written_by_layer(x)) {
                plan_.slices[x] = want;
                placed_now.push_back(x);
                in_place++;
            } else {
                copy_index.push_back(int(j));
                copies.push_back(a.tensor + (at != plan_.slices.end() ? " (placed in another slice)"
                                             : written_by_layer(x)  ? " (a concat's buffer itself)"
                                             : g_.is_graph_input(x) ? " (a graph input)"
                                             : producer_.count(x)   ? " (a slice of another tensor)"
                                                                    : " (a constant)"));
            }
        }
        if (in_place == 0) {
            note(last, true, "copies: no input can be written in place");
            return;
        }
        if (base.root == out)
            plan_.roots[out] = elements(last.output.extents);
        InPlace ip;
        ip.concat = c;
        ip.copy_inputs = copy_index;
        ip.slice_offsets.push_back(base.offset);
        for (const LayerArg &a : c.inputs)
            ip.slice_offsets.push_back(ip.slice_offsets.back() + elements(a.extents));
        ip.root = base.root;
        in_place_[c.final_step] = ip;
        for (int k : c.steps)
            removed_.insert(k);
        plan_.stats.in_place++;
        if (placed_now.empty() && copy_index.empty())
            plan_.stats.views++;
        plan_.stats.copied_inputs += (int)copy_index.size();
        if (!copies.empty()) {
            std::string list;
            for (const std::string &s : copies)
                list += (list.empty() ? "" : ", ") + s;
            note(last, false, "in place, copies " + list);
        }
    }

    /** If every input already sits in one buffer, in this order and contiguously (the
     * inputs of a later concat that holds this one's inputs first: DenseNet's growing
     * concats), the output is that range of the buffer. */
    void place_as_range(const NodeConcat &c, const std::string &out) {
        auto first = plan_.slices.find(storage_of(c.inputs.at(0).tensor));
        if (first == plan_.slices.end())
            return;
        TensorSlice next = first->second;
        for (const LayerArg &a : c.inputs) {
            auto at = plan_.slices.find(storage_of(a.tensor));
            if (at == plan_.slices.end() || !same(at->second, next))
                return;
            next.offset += elements(a.extents);
        }
        plan_.slices[out] = first->second;
    }

    void note(const Step &s, bool copying, const std::string &what) {
        if (copying)
            plan_.stats.copying++;
        plan_.stats.notes.push_back(s.node + ": " + what);
    }

    int layer_index(const LayerSpec &spec) {
        const std::string key = spec.key();
        for (int i = 0; i < (int)lw_.layers.size(); i++) {
            if (lw_.layers[size_t(i)].key() == key)
                return i;
        }
        lw_.layers.push_back(spec);
        return int(lw_.layers.size()) - 1;
    }

    std::string fresh_name(const std::string &base) const {
        std::string name = base;
        while (g_.find(name) || producer_.count(name) || plan_.slices.count(name))
            name += "_";
        return name;
    }

    /** Replaces each in-place concat's steps by its copies (if any) and one step without a
     * layer, and drops the layers no step uses any more. */
    void rewrite() {
        std::vector<Step> steps;
        for (int k = 0; k < (int)lw_.steps.size(); k++) {
            const Step &s = lw_.steps[size_t(k)];
            if (!removed_.count(k)) {
                steps.push_back(s);
                continue;
            }
            auto ip = in_place_.find(k);
            if (ip == in_place_.end())
                continue; // a level folded into its final step
            const InPlace &p = ip->second;
            for (int j : p.copy_inputs) {
                const LayerArg &a = p.concat.inputs[size_t(j)];
                const std::vector<int> ext = {a.extents[0], 1, a.extents[2], 1};
                Step copy;
                copy.node = s.node;
                copy.name = s.name;
                copy.op_type = kConcatCopyInputOp;
                copy.layer = layer_index({"channel_slice",
                                          {{"batch", "1"},
                                           {"in_channels", std::to_string(ext[2])},
                                           {"begin", "0"},
                                           {"channels", std::to_string(ext[2])},
                                           {"height", "1"},
                                           {"width", std::to_string(ext[0])}}});
                copy.inputs = {{a.tensor, ext}};
                copy.output = {fresh_name(s.output.tensor + "__slice" + std::to_string(j)), ext};
                plan_.slices[copy.output.tensor] = {p.root, p.slice_offsets[size_t(j)]};
                steps.push_back(copy);
            }
            Step view = s;
            view.op_type = kConcatInPlaceOp;
            view.layer = -1;
            view.inputs = p.concat.inputs;
            steps.push_back(view);
        }
        lw_.steps = std::move(steps);
        // Drop the concat layers no step calls any more (they would be built for nothing).
        std::vector<int> remap(lw_.layers.size(), -1);
        std::vector<LayerSpec> used;
        for (Step &s : lw_.steps) {
            if (s.layer < 0)
                continue;
            int &r = remap[size_t(s.layer)];
            if (r < 0) {
                r = (int)used.size();
                used.push_back(lw_.layers[size_t(s.layer)]);
            }
            s.layer = r;
        }
        lw_.layers = std::move(used);
    }

    struct InPlace {
        NodeConcat concat;
        std::vector<int> copy_inputs;       ///< indices into concat.inputs
        std::vector<int64_t> slice_offsets; ///< each input's offset into root's buffer
        std::string root;
    };

    const Graph &g_;
    LoweredGraph &lw_;
    ConcatPlacement plan_;
    std::map<std::string, int> producer_;
    std::map<std::string, std::vector<int>> readers_;
    std::map<int, InPlace> in_place_; ///< by final step
    std::set<int> removed_;           ///< steps of in-place concats
};

} // namespace

TensorSlice ConcatPlacement::slice_of(const std::string &tensor) const {
    auto it = slices.find(tensor);
    return it != slices.end() ? it->second : TensorSlice{tensor, 0};
}

ConcatPlacement place_concats_in_place(const Graph &g, LoweredGraph &lw) {
    return Placer(g, lw).run();
}

ConcatPlacement no_concat_placement(const LoweredGraph &lw) {
    ConcatPlacement p;
    count_concat_layers(lw, &p.stats.concat_calls_before, &p.stats.copied_bytes_before);
    p.stats.concat_calls_after = p.stats.concat_calls_before;
    p.stats.copied_bytes_after = p.stats.copied_bytes_before;
    return p;
}

} // namespace sw_graph
