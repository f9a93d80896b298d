/** \file
 * Export: see Export.h.
 */
#include "graph/Export.h"

#include "runtime/locate.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <unistd.h>

#ifndef SW_GRAPH_HALIDE_INCLUDE
#define SW_GRAPH_HALIDE_INCLUDE "/usr/include/halide14"
#endif

namespace sw_graph {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kAlignFloats = 32; // 128 bytes: a DMA line

int64_t round_up(int64_t v, int64_t a) {
    return (v + a - 1) / a * a;
}

int64_t count(const std::vector<int> &extents) {
    int64_t n = 1;
    for (int e : extents)
        n *= e;
    return n;
}

/** Where a tensor lives in the exported program. */
struct Loc {
    enum Kind { Input, Weight, Arena } kind = Arena;
    /** elements into the input, floats into the weights, bytes into the arena */
    int64_t offset = 0;
    std::string root;   ///< the tensor that owns the storage (itself unless a view or a slice)
    int64_t within = 0; ///< bytes into the root's storage (a slice of an in-place concat)
    int input = 0;      ///< which graph input (kind Input)
    bool int64 = false; ///< int64 values (an input of token ids, a mask; indices in the weights)
};

std::string c_string(const std::string &s) {
    std::string r;
    for (char c : s) {
        if (c == '\\' || c == '"')
            r += '\\';
        if (c == '\n') {
            r += "\\n";
            continue;
        }
        r += c;
    }
    return r;
}

/** Text safe inside a C comment. */
std::string comment(const std::string &s) {
    std::string r = s;
    for (size_t p = r.find("*/"); p != std::string::npos; p = r.find("*/"))
        r.replace(p, 2, "* /");
    return r;
}

std::string dims_list(const std::vector<int64_t> &shape) {
    std::string s;
    for (size_t i = 0; i < shape.size(); i++)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s;
}

void write_file(const fs::path &path, const std::string &text, const Graph &g) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    f.flush();
    if (!f)
        throw g.error("cannot write " + path.string() + ": " + std::strerror(errno));
}

/** The exported program's plan: weights, arena offsets and the C expression of each tensor. */
struct Plan {
    std::map<std::string, Loc> loc;
    std::vector<std::pair<std::string, const std::vector<float> *>> weights; ///< in file order
    /** int64 constants as two floats per value (their bytes), which weights point into. */
    std::vector<std::shared_ptr<std::vector<float>>> packed;
    int64_t weight_floats = 0, arena_bytes = 0, unshared_bytes = 0;

    std::string expr(const std::string &tensor) const {
        const Loc &l = loc.at(tensor);
        const char *type = l.int64 ? "int64_t" : "float";
        if (l.kind == Loc::Input) {
            const std::string base =
                std::string("(") + type + " *)inputs[" + std::to_string(l.input) + "]";
            return l.offset ? "(" + base + " + " + std::to_string(l.offset) + ")" : base;
        }
        if (l.kind == Loc::Weight) {
            const std::string w = "m->weights + " + std::to_string(l.offset);
            return l.int64 ? "(int64_t *)(" + w + ")" : w;
        }
        return "(float *)(m->arena + " + std::to_string(l.offset) + ")";
    }
};

Plan make_plan(const Graph &g, const LoweredGraph &lw, const ConcatPlacement &placement) {
    Plan p;
    for (size_t i = 0; i < g.inputs.size(); i++) {
        const std::string &input = g.inputs[i];
        p.loc[input] = {Loc::Input, 0, input, 0, int(i), g.tensor(input).dtype == DType::Int64};
    }
    auto constant = [&](const std::string &name) -> const std::vector<float> * {
        auto e = lw.extra_constants.find(name);
        if (e != lw.extra_constants.end())
            return &e->second;
        const Tensor *t = g.find(name);
        if (t && t->is_constant && t->dtype == DType::Float32)
            return &t->f32;
        if (t && t->is_constant && t->dtype == DType::Int64) {
            // Indices left unfolded (a Gather of a large table): the int64 values' bytes as
            // two floats each, 8-byte aligned in the weights (every constant starts on a line).
            auto v = std::make_shared<std::vector<float>>(2 * t->i64.size());
            if (!t->i64.empty())
                std::memcpy(v->data(), t->i64.data(), t->i64.size() * sizeof(int64_t));
            p.packed.push_back(v);
            return v.get();
        }
        return nullptr;
    };
    // Storage roots, their sizes (bytes) and live ranges [first step, last step]. A root is
    // a layer's output, or the buffer of an in-place concat (ConcatInPlace.h), alive from
    // the first step that writes any slice of it to the last that reads any tensor in it.
    std::map<std::string, int64_t> bytes;
    std::map<std::string, std::pair<int, int>> live;
    std::vector<std::string> order;
    const int nsteps = (int)lw.steps.size();
    auto use_root = [&](const std::string &root, int64_t elements, int k) {
        if (!live.count(root)) {
            bytes[root] = round_up(elements * 4, 128);
            live[root] = {k, k};
            order.push_back(root);
        }
        live[root].second = k;
    };
    for (int k = 0; k < nsteps; k++) {
        const Step &s = lw.steps[size_t(k)];
        for (const LayerArg &a : s.inputs) {
            if (!p.loc.count(a.tensor)) {
                const std::vector<float> *c = constant(a.tensor);
                if (!c)
                    throw g.error(s.node + ": tensor '" + a.tensor +
                                  "' is read before it is written");
                const Tensor *t = g.find(a.tensor);
                const bool ints =
                    !lw.extra_constants.count(a.tensor) && t && t->dtype == DType::Int64;
                p.loc[a.tensor] = {Loc::Weight, p.weight_floats, a.tensor, 0, 0, ints};
                p.weights.emplace_back(a.tensor, c);
                p.weight_floats = round_up(p.weight_floats + (int64_t)c->size(), kAlignFloats);
            }
            const std::string &root = p.loc[a.tensor].root;
            if (live.count(root))
                live[root].second = k;
        }
        const std::string &out = s.output.tensor;
        if (placement.placed(out)) {
            // A slice of an in-place concat's buffer (written by this step's layer, or, for
            // the concat's own step, already written by its inputs' producers).
            const TensorSlice sl = placement.slice_of(out);
            use_root(sl.root, placement.roots.at(sl.root), k);
            p.loc[out] = {Loc::Arena, 0, sl.root, sl.offset * 4};
        } else if (s.layer < 0) {
            // A view, of the whole input or (a slice) of a range of it.
            Loc l = p.loc.at(s.inputs.at(0).tensor);
            if (l.kind == Loc::Arena)
                l.within += 4 * s.view_offset;
            else if (l.kind == Loc::Weight && l.int64)
                l.offset += 2 * s.view_offset; // floats
            else
                l.offset += s.view_offset;
            p.loc[out] = l;
        } else {
            use_root(out, count(s.output.extents), k);
            p.loc[out] = {Loc::Arena, 0, out, 0};
        }
    }
    for (const std::string &o : g.outputs) {
        if (!p.loc.count(o))
            throw g.error("graph output '" + o + "' is never written");
        const std::string &root = p.loc.at(o).root;
        if (live.count(root))
            live[root].second = nsteps;
    }
    // First fit: the lowest offset that overlaps no placed root alive at the same time.
    std::map<std::string, int64_t> root_offset;
    std::vector<std::string> placed;
    for (const std::string &t : order) {
        const auto [a0, a1] = live[t];
        std::vector<std::pair<int64_t, int64_t>> busy;
        for (const std::string &u : placed) {
            const auto [b0, b1] = live[u];
            if (a0 <= b1 && b0 <= a1)
                busy.emplace_back(root_offset[u], root_offset[u] + bytes[u]);
        }
        std::sort(busy.begin(), busy.end());
        int64_t at = 0;
        for (const auto &b : busy) {
            if (at + bytes[t] <= b.first)
                break;
            at = std::max(at, b.second);
        }
        root_offset[t] = at;
        p.arena_bytes = std::max(p.arena_bytes, at + bytes[t]);
        p.unshared_bytes += bytes[t];
        placed.push_back(t);
    }
    // Views and slices take their root's final offset.
    for (auto &e : p.loc) {
        if (e.second.kind == Loc::Arena)
            e.second.offset = root_offset.at(e.second.root) + e.second.within;
    }
    return p;
}

/** Whether the exported API keeps sw_model_run (one float32 input). */
bool one_float_input(const Graph &g) {
    return g.inputs.size() == 1 && g.tensor(g.inputs[0]).dtype == DType::Float32;
}

std::string header_text(const Graph &g, const std::string &model, const Plan &p) {
    const Tensor &out = g.tensor(g.outputs.at(0));
    const size_t n = g.inputs.size();
    std::string names, ranks, types, elements, dims;
    for (size_t i = 0; i < n; i++) {
        const Tensor &in = g.tensor(g.inputs[i]);
        const std::string sep = i ? ", " : "";
        names += sep + "\"" + c_string(in.name) + "\"";
        ranks += sep + std::to_string(in.shape.size());
        types += sep + (in.dtype == DType::Int64 ? "SW_MODEL_INT64" : "SW_MODEL_FLOAT32");
        elements += sep + std::to_string(in.elements());
        if (!in.shape.empty())
            dims += (dims.empty() ? "" : ", ") + dims_list(in.shape);
    }
    std::ostringstream h;
    h << "/* sw_model.h: the C API of " << comment(model) << ", generated by sw_net --export.\n"
      << " * Inputs, in the model's order:\n";
    for (size_t i = 0; i < n; i++) {
        const Tensor &in = g.tensor(g.inputs[i]);
        h << " *   " << i << ": '" << comment(in.name) << "' "
          << (in.dtype == DType::Int64 ? "int64" : "float32") << " (" << dims_list(in.shape)
          << ")\n";
    }
    h << " * Output '" << comment(out.name) << "' float32 (" << dims_list(out.shape) << ").\n"
      << " * Every tensor is a dense row-major array (the last dimension fastest; NCHW for "
         "images). */\n"
      << "#ifndef SW_MODEL_H\n#define SW_MODEL_H\n\n"
      << "/* The element types of the inputs. */\n"
      << "#define SW_MODEL_FLOAT32 0 /* float */\n"
      << "#define SW_MODEL_INT64 1   /* int64_t */\n\n"
      << "/* The inputs, in the model's order: their number, and for each its name, rank, type\n"
      << " * (SW_MODEL_FLOAT32 or SW_MODEL_INT64) and element count; SW_MODEL_INPUT_DIMS\n"
      << " * holds every input's shape, one after the other (SW_MODEL_INPUT_RANKS tells where "
         "each\n"
      << " * starts), and SW_MODEL_INPUT<i>_SHAPE, _RANK, _TYPE, _ELEMENTS each input's. */\n"
      << "#define SW_MODEL_INPUTS " << n << "\n"
      << "#define SW_MODEL_INPUT_NAMES {" << names << "}\n"
      << "#define SW_MODEL_INPUT_RANKS {" << ranks << "}\n"
      << "#define SW_MODEL_INPUT_TYPES {" << types << "}\n"
      << "#define SW_MODEL_INPUT_ELEMENTS_EACH {" << elements << "}\n"
      << "#define SW_MODEL_INPUT_DIMS {" << (dims.empty() ? "0" : dims) << "}\n";
    for (size_t i = 0; i < n; i++) {
        const Tensor &in = g.tensor(g.inputs[i]);
        const std::string m = "#define SW_MODEL_INPUT" + std::to_string(i);
        h << m << "_RANK " << in.shape.size() << "\n"
          << m << "_SHAPE {" << dims_list(in.shape) << "}\n"
          << m << "_TYPE " << (in.dtype == DType::Int64 ? "SW_MODEL_INT64" : "SW_MODEL_FLOAT32")
          << "\n"
          << m << "_ELEMENTS " << in.elements() << "\n";
    }
    if (n == 1) {
        const Tensor &in = g.tensor(g.inputs[0]);
        h << "/* The one input's (as SW_MODEL_INPUT0_...). */\n"
          << "#define SW_MODEL_INPUT_RANK " << in.shape.size() << "\n"
          << "#define SW_MODEL_INPUT_SHAPE {" << dims_list(in.shape) << "}\n"
          << "#define SW_MODEL_INPUT_ELEMENTS " << in.elements() << "\n";
    }
    h << "\n#define SW_MODEL_OUTPUT_RANK " << out.shape.size() << "\n"
      << "#define SW_MODEL_OUTPUT_SHAPE {" << dims_list(out.shape) << "}\n"
      << "#define SW_MODEL_OUTPUT_ELEMENTS " << out.elements() << "\n"
      << "#define SW_MODEL_WEIGHT_FLOATS " << p.weight_floats << "\n"
      << "#define SW_MODEL_ARENA_BYTES " << p.arena_bytes << "\n\n"
      << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
      << "typedef struct sw_model sw_model;\n\n"
      << "/* Reads the weights file (layout in README.md) and allocates the activations\n"
      << " * (SW_MODEL_ARENA_BYTES, allocated once, reused by every run). Returns NULL after\n"
      << " * printing why on stderr. */\n"
      << "sw_model *sw_model_load(const char *weights_path);\n\n"
      << "/* Runs the model on inputs[0 .. SW_MODEL_INPUTS - 1], in the model's input order, "
         "each\n"
      << " * SW_MODEL_INPUT<i>_ELEMENTS values of its type (const float * or const int64_t *;\n"
      << " * read in place, not changed), and writes output (SW_MODEL_OUTPUT_ELEMENTS floats).\n"
      << " * Returns 0, or -1 after printing which layer failed. The first layer call "
         "initialises\n"
      << " * athread (athread_init, once per process); the caller owns athread_halt(), called "
         "once\n"
      << " * after the last run. */\n"
      << "int sw_model_run_inputs(sw_model *m, const void *const *inputs, float *output);\n\n";
    if (one_float_input(g)) {
        h << "/* The same for this model's one float32 input (SW_MODEL_INPUT_ELEMENTS floats). "
             "*/\n"
          << "int sw_model_run(sw_model *m, const float *input, float *output);\n\n";
    }
    h << "void sw_model_free(sw_model *m);\n\n"
      << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
    return h.str();
}

/** The C99 support code of sw_model.c that does not depend on the model: the model struct,
 * aligned allocation, Halide buffer set-up, loading the weights file, freeing, and the head
 * of sw_model_run. */
const char *kProgramSupport = R"(
struct sw_model {
    void *weights_block, *arena_block;
    float *weights;
    unsigned char *arena;
};

/* bytes at a 128-byte boundary (a DMA line), the block to free in *block. */
static void *sw_aligned(size_t bytes, void **block) {
    *block = malloc(bytes + 128);
    if (!*block) return NULL;
    return (void *)(((uintptr_t)*block + 127) & ~(uintptr_t)127);
}

/* A dense buffer, float32 or (int64 != 0) int64: extents innermost first (Halide's order). */
static void sw_buffer(struct halide_buffer_t *b, struct halide_dimension_t *d, void *host, int dims,
                      const int32_t *extents, int int64) {
    int32_t stride = 1;
    int i;
    memset(b, 0, sizeof *b);
    for (i = 0; i < dims; i++) {
        d[i].min = 0;
        d[i].extent = extents[i];
        d[i].stride = stride;
        d[i].flags = 0;
        stride *= extents[i];
    }
    b->host = (uint8_t *)host;
    b->type.code = int64 ? halide_type_int : halide_type_float;
    b->type.bits = int64 ? 64 : 32;
    b->type.lanes = 1;
    b->dimensions = dims;
    b->dim = d;
}

sw_model *sw_model_load(const char *weights_path) {
    static const char magic[8] = {'S', 'W', 'N', 'E', 'T', 'W', '0', '1'};
    char head[8];
    uint64_t floats = 0;
    sw_model *m;
    FILE *f = fopen(weights_path, "rb");
    if (!f) {
        fprintf(stderr, "error: %s: cannot open the weights file\n", weights_path);
        return NULL;
    }
    if (fread(head, 1, 8, f) != 8 || memcmp(head, magic, 8) != 0 || fread(&floats, 8, 1, f) != 1 ||
        fseek(f, 32, SEEK_SET) != 0) {
        fprintf(stderr, "error: %s: not a weights file of sw_net --export (bad header)\n", weights_path);
        fclose(f);
        return NULL;
    }
    if (floats != (uint64_t)SW_MODEL_WEIGHT_FLOATS) {
        fprintf(stderr, "error: %s: %llu floats, this model takes %llu\n", weights_path, (unsigned long long)floats,
                (unsigned long long)SW_MODEL_WEIGHT_FLOATS);
        fclose(f);
        return NULL;
    }
    m = (sw_model *)calloc(1, sizeof *m);
    if (!m) {
        fclose(f);
        return NULL;
    }
    m->weights = (float *)sw_aligned((size_t)SW_MODEL_WEIGHT_FLOATS * sizeof(float) + 4, &m->weights_block);
    m->arena = (unsigned char *)sw_aligned((size_t)SW_MODEL_ARENA_BYTES + 4, &m->arena_block);
    if (!m->weights || !m->arena) {
        fprintf(stderr, "error: out of memory for the weights and activations\n");
        fclose(f);
        sw_model_free(m);
        return NULL;
    }
    if (fread(m->weights, sizeof(float), (size_t)SW_MODEL_WEIGHT_FLOATS, f) != (size_t)SW_MODEL_WEIGHT_FLOATS) {
        fprintf(stderr, "error: %s: truncated\n", weights_path);
        fclose(f);
        sw_model_free(m);
        return NULL;
    }
    fclose(f);
    return m;
}

void sw_model_free(sw_model *m) {
    if (!m) return;
    free(m->weights_block);
    free(m->arena_block);
    free(m);
}

int sw_model_run_inputs(sw_model *m, const void *const *inputs, float *output) {
    struct halide_buffer_t b[8];
    struct halide_dimension_t d[8][8];
    (void)inputs; /* unused when no layer reads an input directly */
)";

/** The opening comment and includes of sw_model.c: the runtime, the API, every layer. */
std::string program_includes(const Executor &ex, const std::string &model) {
    std::ostringstream c;
    c << "/* sw_model.c: runs " << comment(model)
      << " on the MPE, layer by layer (each layer spawns\n"
      << " * the 64 CPEs). Generated by sw_net --export; plain C99. */\n"
      << "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
      << "#include \"HalideRuntime.h\"\n#include \"sw_model.h\"\n";
    for (int i = 0; i < (int)ex.lowered().layers.size(); i++) {
        c << "#include \"" << ex.layer_function(i) << ".h\"\n";
    }
    return c.str();
}

/** Step \p k of sw_model_run: a comment for a view or an in-place concat, else the layer's
 * call on buffers over the arena and the weights, failing with the step's name. */
std::string step_text(const Executor &ex, const Plan &p, int k) {
    const Step &s = ex.lowered().steps[size_t(k)];
    std::ostringstream c;
    if (s.layer < 0) {
        if (ex.concat_placement().placed(s.output.tensor)) {
            c << "    /* step " << k << ": " << comment(s.node)
              << ": concat in place, no copy (its inputs were "
              << "written into their slices of " << p.expr(s.output.tensor) << ") */\n";
        } else {
            c << "    /* step " << k << ": " << comment(s.node) << ": a view, no copy */\n";
        }
        return c.str();
    }
    const std::string fn = ex.layer_function(s.layer);
    c << "    /* step " << k << ": " << comment(s.node) << " */\n    {\n";
    std::vector<LayerArg> args = s.inputs;
    args.push_back(s.output);
    for (size_t a = 0; a < args.size(); a++) {
        c << "        static const int32_t e" << a << "[] = {";
        for (size_t i = 0; i < args[a].extents.size(); i++)
            c << (i ? ", " : "") << args[a].extents[i];
        c << "};\n";
    }
    for (size_t a = 0; a < args.size(); a++) {
        c << "        sw_buffer(&b[" << a << "], d[" << a << "], " << p.expr(args[a].tensor) << ", "
          << args[a].extents.size() << ", e" << a << ", "
          << (p.loc.at(args[a].tensor).int64 ? 1 : 0) << ");\n";
    }
    c << "        if (" << fn << "(";
    for (size_t a = 0; a < args.size(); a++)
        c << (a ? ", " : "") << "&b[" << a << "]";
    c << ") != 0) {\n            fprintf(stderr, \"sw_model_run: step " << k << " ("
      << c_string(comment(s.node)) << ") failed\\n\");\n            return -1;\n        }\n    }\n";
    return c.str();
}

/** sw_model.c: the includes, the support code, then sw_model_run's steps in order and the
 * copy of the output. */
std::string program_text(const Executor &ex, const std::string &model, const Plan &p) {
    std::string c = program_includes(ex, model) + kProgramSupport;
    for (int k = 0; k < (int)ex.lowered().steps.size(); k++)
        c += step_text(ex, p, k);
    c += "    memcpy(output, " + p.expr(ex.graph().outputs.at(0)) +
         ", (size_t)SW_MODEL_OUTPUT_ELEMENTS * sizeof(float));\n    return 0;\n}\n";
    if (one_float_input(ex.graph())) {
        c += "\nint sw_model_run(sw_model *m, const float *input, float *output) {\n"
             "    const void *inputs[1];\n    inputs[0] = input;\n"
             "    return sw_model_run_inputs(m, inputs, output);\n}\n";
    }
    return c;
}

const char *kMain =
    R"MAIN(/* main.c: sw_model WEIGHTS.bin INPUT0.npy [INPUT1.npy ...] OUTPUT.npy -- reads one .npy per
 * model input, in the model's input order (SW_MODEL_INPUT_NAMES), each of its input's shape:
 * '<f4' for a float32 input, '<i8' (or '<i4', widened) for an int64 one; runs the model once
 * and writes its output as .npy. Generated by sw_net --export; plain C99. */
#include <athread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_model.h"

/* Reads a version 1/2 .npy in C order whose shape is `shape` for input `name` of `type`
 * (SW_MODEL_FLOAT32: '<f4'; SW_MODEL_INT64: '<i8', or '<i4' widened to int64); returns the
 * data (floats or int64_t) or NULL after printing why. */
static void *read_npy(const char *path, const char *name, int type, const long long *shape, int rank) {
    unsigned char pre[12];
    char *header = NULL, *s;
    unsigned long hlen;
    long long dims[16];
    long long n = 1;
    int nd = 0, i, v, i32 = 0;
    void *data = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "error: %s: cannot open\n", path);
        return NULL;
    }
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) goto bad;
    v = pre[6];
    if (v == 1) {
        hlen = pre[8] | (pre[9] << 8);
    } else if (v == 2 || v == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) goto bad;
        hlen = pre[8] | (pre[9] << 8) | ((unsigned long)pre[10] << 16) | ((unsigned long)pre[11] << 24);
    } else {
        goto bad;
    }
    if (hlen > 65536) goto bad;
    header = (char *)malloc(hlen + 1);
    if (!header || fread(header, 1, hlen, f) != hlen) goto bad;
    header[hlen] = 0;
    if (type == SW_MODEL_INT64) {
        i32 = strstr(header, "'descr': '<i4'") != NULL;
        if ((!i32 && !strstr(header, "'descr': '<i8'")) || !strstr(header, "'fortran_order': False")) {
            fprintf(stderr, "error: %s: not a C-order int64 ('<i8') or int32 ('<i4') array (input '%s' is int64)\n",
                    path, name);
            goto fail;
        }
    } else if (!strstr(header, "'descr': '<f4'") || !strstr(header, "'fortran_order': False")) {
        fprintf(stderr, "error: %s: not a C-order float32 ('<f4') array (input '%s' is float32)\n", path, name);
        goto fail;
    }
    s = strstr(header, "'shape': (");
    if (!s) goto bad;
    s += 10;
    while (*s && *s != ')') {
        char *end;
        long long d = strtoll(s, &end, 10);
        if (end == s) break;
        if (nd == 16) goto bad;
        dims[nd++] = d;
        n *= d;
        s = end;
        while (*s == ',' || *s == ' ') s++;
    }
    if (nd != rank) goto shape;
    for (i = 0; i < rank; i++) {
        if (dims[i] != shape[i]) goto shape;
    }
    if (type == SW_MODEL_INT64) {
        int64_t *w = (int64_t *)malloc((size_t)n * sizeof(int64_t) + 8);
        data = w;
        if (w && i32) {
            /* widened in place, from the last value down */
            long long k;
            if (fread(w, sizeof(int32_t), (size_t)n, f) != (size_t)n) goto truncated;
            for (k = n - 1; k >= 0; k--) {
                int32_t x;
                memcpy(&x, (unsigned char *)w + 4 * k, 4);
                w[k] = x;
            }
        } else if (!w || fread(w, sizeof(int64_t), (size_t)n, f) != (size_t)n) {
            goto truncated;
        }
    } else {
        data = malloc((size_t)n * sizeof(float) + 4);
        if (!data || fread(data, sizeof(float), (size_t)n, f) != (size_t)n) goto truncated;
    }
    free(header);
    fclose(f);
    return data;
truncated:
    fprintf(stderr, "error: %s: truncated\n", path);
    goto fail;
shape:
    fprintf(stderr, "error: %s: input '%s' takes shape (", path, name);
    for (i = 0; i < rank; i++) fprintf(stderr, "%s%lld", i ? ", " : "", shape[i]);
    fprintf(stderr, "), the file has (");
    for (i = 0; i < nd; i++) fprintf(stderr, "%s%lld", i ? ", " : "", dims[i]);
    fprintf(stderr, ")\n");
    goto fail;
bad:
    fprintf(stderr, "error: %s: not a .npy file\n", path);
fail:
    free(header);
    free(data);
    fclose(f);
    return NULL;
}

static int write_npy(const char *path, const long long *shape, int rank, const float *data, long long n) {
    char dict[256];
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    int len, i, ok;
    FILE *f;
    len = sprintf(dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    for (i = 0; i < rank; i++) len += sprintf(dict + len, "%lld%s", shape[i], rank == 1 ? "," : i + 1 < rank ? ", " : "");
    len += sprintf(dict + len, "), }");
    while ((10 + len + 1) % 64 != 0) dict[len++] = ' ';
    dict[len++] = '\n';
    pre[8] = (unsigned char)(len & 0xff);
    pre[9] = (unsigned char)(len >> 8);
    f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "error: %s: cannot write\n", path);
        return -1;
    }
    ok = fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)len, f) == (size_t)len &&
         fwrite(data, sizeof(float), (size_t)n, f) == (size_t)n;
    ok = (fclose(f) == 0) && ok;
    if (!ok) fprintf(stderr, "error: %s: write failed\n", path);
    return ok ? 0 : -1;
}

int main(int argc, char **argv) {
    static const char *const names[] = SW_MODEL_INPUT_NAMES;
    static const int ranks[] = SW_MODEL_INPUT_RANKS, types[] = SW_MODEL_INPUT_TYPES;
    static const long long dims[] = SW_MODEL_INPUT_DIMS, out_shape[] = SW_MODEL_OUTPUT_SHAPE;
    void *inputs[SW_MODEL_INPUTS];
    const void *args[SW_MODEL_INPUTS];
    float *output = NULL;
    sw_model *m;
    int rc = 1, i, j, at;
    if (argc != SW_MODEL_INPUTS + 3) {
        fprintf(stderr, "error: %d argument(s), %d expected: the weights, one .npy per input (%d), the output\n",
                argc - 1, SW_MODEL_INPUTS + 2, SW_MODEL_INPUTS);
        fprintf(stderr, "usage: %s WEIGHTS.bin", argv[0]);
        for (i = 0; i < SW_MODEL_INPUTS; i++) {
            if (SW_MODEL_INPUTS == 1)
                fprintf(stderr, " INPUT.npy");
            else
                fprintf(stderr, " INPUT%d.npy", i);
        }
        fprintf(stderr, " OUTPUT.npy\n");
        for (i = 0, at = 0; i < SW_MODEL_INPUTS; at += ranks[i], i++) {
            fprintf(stderr, "  input %d '%s': %s of shape (", i, names[i],
                    types[i] == SW_MODEL_INT64 ? "int64 ('<i8' or '<i4')" : "float32 ('<f4')");
            for (j = 0; j < ranks[i]; j++) fprintf(stderr, "%s%lld", j ? ", " : "", dims[at + j]);
            fprintf(stderr, ")\n");
        }
        return 1;
    }
    m = sw_model_load(argv[1]);
    if (!m) return 1;
    for (i = 0; i < SW_MODEL_INPUTS; i++) inputs[i] = NULL;
    for (i = 0, at = 0; i < SW_MODEL_INPUTS; at += ranks[i], i++) {
        inputs[i] = read_npy(argv[2 + i], names[i], types[i], dims + at, ranks[i]);
        if (!inputs[i]) goto done;
        args[i] = inputs[i];
    }
    output = (float *)malloc((size_t)SW_MODEL_OUTPUT_ELEMENTS * sizeof(float) + 4);
    if (!output) {
        fprintf(stderr, "error: out of memory for the output\n");
        goto done;
    }
    rc = sw_model_run_inputs(m, args, output);
    if (rc == 0) rc = write_npy(argv[2 + SW_MODEL_INPUTS], out_shape, SW_MODEL_OUTPUT_RANK, output, SW_MODEL_OUTPUT_ELEMENTS);
    athread_halt();
done:
    for (i = 0; i < SW_MODEL_INPUTS; i++) free(inputs[i]);
    free(output);
    sw_model_free(m);
    return rc == 0 ? 0 : 1;
}
)MAIN";

/** "VAR ?= <path>\n" of the emulator's headers or archive as found when exporting
 * (runtime/locate.h); a comment saying what to set when not found. */
std::string emulator_line(const std::string &var, const std::string &what) {
    const std::string path = sw::find_tool_or_empty(what);
    if (!path.empty())
        return var + " ?= " + path + "\n";
    return "# " + var + ": not found when exported (" + sw::tool_variable(what) +
           " was not set): give it to make emu\n" + var + " ?=\n";
}

/** The run line of an exported model on its machine (bsub; the Pro without an LDM data cache:
 * the generated code keeps 32 KB of the LDM for the stack). */
std::string bsub_line(bool pro) {
    return pro ? "bsub -b -I -q <queue> -n 1 -cgsp 64 -cache_size 0"
               : "bsub -b -I -q <queue> -n 1 -cgsp 64 -share_size 4096";
}

std::string makefile_text(const Executor &ex, const std::string &model) {
    const bool pro = ex.machine() == "sw26010-pro";
    std::ostringstream m;
    m << "# Generated by sw_net --export from " << model << " for " << ex.machine() << ".\n"
      << "#   make      -> sw_model with the "
      << (pro ? "SW26010-Pro toolchain (swgcc" : "SW26010 toolchain (sw5cc")
      << "; not available on the machine that\n"
      << "#                exported it, so this build is untested there)\n"
      << "#   make emu  -> sw_model_emu: the same sources with gcc against the athread emulator\n"
      << "# Run: " << bsub_line(pro) << " ./sw_model weights.bin <one .npy per input> y.npy\n";
    if (pro) {
        m << "HOSTCC ?= swgcc -mhost\nSLAVECC ?= swgcc -mslave -msimd\nHYBRIDCC ?= swgcc -mhybrid\n"
          << "STD ?= -std=gnu99\nHOSTFLAGS ?= -O3 -msimd\n"
          << "SLAVEFLAGS ?= -O3 -mieee -mftz -faddress_align=64\nLDLIBS ?= -lm_slave\n"
          // The emulator: the Pro's headers first; the sides as swgcc -mhost / -mslave define.
          << "EMU_CC ?= cc\nEMU_CXX ?= c++\nEMU_FLAGS ?= -O1\n"
          << "EMU_HOST = -D__sw_host__\nEMU_SLAVE = -D__sw_slave__ -Wno-psabi\n"
          << "EMU_HEADERS = -I$(EMU_INCLUDE)/sw26010-pro -I$(EMU_INCLUDE)\n";
    } else {
        m << "HOSTCC ?= sw5cc -host\nSLAVECC ?= sw5cc -slave -msimd\nHYBRIDCC ?= sw5cc -hybrid\n"
          << "STD ?= -std=gnu99\nHOSTFLAGS ?= -O2\nSLAVEFLAGS ?= -O2\nLDLIBS ?= -lm_slave\n"
          << "EMU_CC ?= cc\nEMU_CXX ?= c++\nEMU_FLAGS ?= -O1\n"
          << "EMU_HOST =\nEMU_SLAVE =\nEMU_HEADERS = -I$(EMU_INCLUDE)\n";
    }
    m << emulator_line("EMU_INCLUDE", sw::kEmulatorInclude)
      << emulator_line("EMU_LIB", sw::kEmulatorLibrary) << "\nLAYERS =";
    for (int i = 0; i < (int)ex.lowered().layers.size(); i++)
        m << " \\\n    " << ex.layer_function(i);
    m << R"(

MPE_OBJS = $(LAYERS:%=layers/%.mpe.o) sw_model.o main.o
CPE_OBJS = $(LAYERS:%=layers/%.cpe.o)
EMU_OBJS = $(LAYERS:%=emu/layers/%.mpe.o) $(LAYERS:%=emu/layers/%.cpe.o) emu/sw_model.o emu/main.o

all: sw_model

sw_model: $(MPE_OBJS) $(CPE_OBJS)
	$(HYBRIDCC) $^ -o $@ $(LDLIBS)

layers/%.cpe.o: layers/%.cpe.c
	$(SLAVECC) $(STD) $(SLAVEFLAGS) -I. -Ilayers -c $< -o $@

layers/%.mpe.o: layers/%.mpe.c
	$(HOSTCC) $(STD) $(HOSTFLAGS) -I. -Ilayers -c $< -o $@

%.o: %.c sw_model.h
	$(HOSTCC) $(STD) $(HOSTFLAGS) -I. -Ilayers -c $< -o $@

emu: sw_model_emu

sw_model_emu: $(EMU_OBJS)
	$(EMU_CXX) $^ $(EMU_LIB) -o $@ -lpthread -ldl -lm

emu/layers/%.cpe.o: layers/%.cpe.c
	@mkdir -p $(dir $@)
	$(EMU_CC) $(STD) $(EMU_FLAGS) $(EMU_SLAVE) -DATHREAD_EMULATOR -I. -Ilayers $(EMU_HEADERS) -c $< -o $@

emu/%.o: %.c
	@mkdir -p $(dir $@)
	$(EMU_CC) $(STD) $(EMU_FLAGS) $(EMU_HOST) -DATHREAD_EMULATOR -I. -Ilayers $(EMU_HEADERS) -c $< -o $@

clean:
	rm -rf $(MPE_OBJS) $(CPE_OBJS) sw_model emu sw_model_emu

.PHONY: all emu clean
)";
    return m.str();
}

std::string readme_text(const Executor &ex, const std::string &model, const Plan &p) {
    const Graph &g = ex.graph();
    const Tensor &out = g.tensor(g.outputs.at(0));
    const size_t n = g.inputs.size();
    std::string xs; // the input files of the command lines
    for (size_t i = 0; i < n; i++)
        xs += n == 1 ? "x.npy " : "x" + std::to_string(i) + ".npy ";
    std::ostringstream r;
    const bool pro = ex.machine() == "sw26010-pro";
    r << "# " << model << " for the " << (pro ? "SW26010-Pro" : "SW26010")
      << ", exported by sw_net --export\n\n"
      << "A self-contained folder: the model's " << ex.lowered().layers.size()
      << " distinct layers (" << ex.lowered().steps.size()
      << " steps) as generated athread code, a plain C99 host program\n"
      << "that runs them in order on the MPE, and the weights.\n\n"
      << "## Build and run\n"
      << (pro ? "On the new-generation Sunway (swgcc; `-cache_size 0`: the layers keep 224 KB "
                "of the\n256 KB LDM for data and the rest for the stack, no room for an LDM "
                "cache):\n```\nmake\n"
              : "On the Sunway machine (sw5cc):\n```\nmake\n")
      << bsub_line(pro) << " ./sw_model weights.bin " << xs << "y.npy\n```\n"
      << "Here, against the athread emulator (`EMU_INCLUDE` and `EMU_LIB` default to the build "
         "that\n"
      << "exported the folder):\n```\nmake emu\n./sw_model_emu weights.bin " << xs << "y.npy\n```\n"
      << "One `.npy` per model input, in the model's input order (float32 inputs `<f4`, int64 "
         "ones\n`<i8` or `<i4`, widened; C order, the exact shape):\n\n"
      << "| file | input | type | shape |\n|---|---|---|---|\n";
    for (size_t i = 0; i < n; i++) {
        const Tensor &in = g.tensor(g.inputs[i]);
        r << "| `" << (n == 1 ? "x.npy" : "x" + std::to_string(i) + ".npy") << "` | " << in.name
          << " | " << (in.dtype == DType::Int64 ? "int64" : "float32") << " | ("
          << dims_list(in.shape) << ") |\n";
    }
    r << "\n`y.npy` gets output '" << out.name << "' of shape (" << dims_list(out.shape)
      << "), float32, as the model computes it (no softmax added).\n\n"
      << "## Files\n"
      << "- `layers/<fn>.mpe.c`, `.cpe.c`, `.h`, `.sw_args.h`: each layer's MPE function (spawns "
         "the 64\n"
      << "  CPEs), CPE kernels and header; `HalideRuntime.h`: the `halide_buffer_t` they take.\n"
      << "- `sw_model.h`: the C API (`sw_model_load`, `sw_model_run_inputs` (every input, in "
         "the model's\n"
      << "  order, as `const void *const *`: `const float *` or `const int64_t *` each), "
      << (one_float_input(g) ? "`sw_model_run` (the one float32 input), " : "")
      << "`sw_model_free`)\n"
      << "  and the inputs' names, types and shapes (`SW_MODEL_INPUT<i>_...`), the output's.\n"
      << "- `sw_model.c`: allocates the activations once (" << p.arena_bytes
      << " bytes; each tensor "
      << "in its own buffer would take " << p.unshared_bytes << ") and calls the layers in order;\n"
      << "  views (Flatten, Reshape, Unsqueeze) share their input's memory (a view of a model "
         "input\n"
      << "  points into it), and a concat made in place\n"
      << "  costs nothing: its inputs' producers write into their slices of the concat's buffer\n"
      << "  (an offset into it), which is alive from the first slice written to the last read.\n"
      << "- `main.c`: reads the weights and one `.npy` per input, runs once, writes the output "
         "`.npy`.\n"
      << "- athread: the first layer call runs `athread_init()` (once per process); the program "
         "calls\n"
      << "  `athread_halt()` once at the end (main.c does).\n\n"
      << "## weights.bin\n"
      << "Little-endian. A 32-byte header: the 8 bytes `SWNETW01`, the number of floats that "
         "follow\n"
      << "(uint64), 16 bytes of zeros. Then " << p.weight_floats
      << " float32 values: every constant a layer\n"
      << "reads, in the order below, each starting at a multiple of 32 floats (128 bytes, a DMA "
         "line),\n"
      << "zeros between. Offsets in floats from the first value:\n\n| tensor | offset | floats "
         "|\n|---|---|---|\n";
    for (const auto &w : p.weights) {
        r << "| " << w.first << " | " << p.loc.at(w.first).offset << " | " << w.second->size()
          << (p.loc.at(w.first).int64 ? " (int64 values, two floats each)" : "") << " |\n";
    }
    return r.str();
}

} // namespace

void check_export_dir(const std::string &dir) {
    std::error_code ec;
    const fs::path d(dir);
    if (fs::exists(d, ec)) {
        if (!fs::is_directory(d, ec))
            throw Error("error: --export " + dir + ": exists and is not a directory");
        if (!fs::is_empty(d, ec))
            throw Error("error: --export " + dir + ": the directory is not empty");
        if (access(dir.c_str(), W_OK) != 0)
            throw Error("error: --export " + dir + ": not writable");
        return;
    }
    fs::path parent = d.parent_path();
    if (parent.empty())
        parent = ".";
    if (!fs::is_directory(parent, ec)) {
        throw Error("error: --export " + dir + ": the parent directory " + parent.string() +
                    " does not exist");
    }
    if (access(parent.c_str(), W_OK) != 0)
        throw Error("error: --export " + dir + ": " + parent.string() + " is not writable");
}

ExportSummary export_model(const Executor &ex, const std::string &model_path,
                           const std::string &dir) {
    const Graph &g = ex.graph();
    const LoweredGraph &lw = ex.lowered();
    if (g.inputs.empty() || g.outputs.empty())
        throw g.error("--export needs a model with an input and an output");
    for (const std::string &name : g.inputs) {
        const Tensor &t = g.tensor(name);
        if (t.dtype != DType::Float32 && t.dtype != DType::Int64) {
            throw g.error("--export: input '" + name + "' is " + dtype_name(t.dtype) +
                          " (float32 and int64 inputs are exported)");
        }
    }
    if (g.tensor(g.outputs[0]).dtype != DType::Float32) {
        throw g.error("--export: output '" + g.outputs[0] + "' is " +
                      dtype_name(g.tensor(g.outputs[0]).dtype) + " (a float32 output is exported)");
    }
    check_export_dir(dir);
    const Plan p = make_plan(g, lw, ex.concat_placement());
    if (p.loc.at(g.outputs[0]).int64)
        throw g.error("--export: output '" + g.outputs[0] +
                      "' is int64 (a float32 output is exported)");
    const fs::path d(dir);
    std::error_code ec;
    fs::create_directories(d / "layers", ec);
    if (ec)
        throw g.error("cannot create " + (d / "layers").string() + ": " + ec.message());
    for (int i = 0; i < (int)lw.layers.size(); i++) {
        const std::string fn = ex.layer_function(i);
        for (const char *ext : {".mpe.c", ".cpe.c", ".h", ".sw_args.h"}) {
            fs::copy_file(fs::path(ex.layer_directory(i)) / (fn + ext), d / "layers" / (fn + ext),
                          fs::copy_options::overwrite_existing, ec);
            if (ec)
                throw g.error("cannot copy " + fn + ext + " to " + dir + ": " + ec.message());
        }
    }
    fs::copy_file(fs::path(SW_GRAPH_HALIDE_INCLUDE) / "HalideRuntime.h", d / "HalideRuntime.h",
                  fs::copy_options::overwrite_existing, ec);
    if (ec)
        throw g.error(std::string("cannot copy HalideRuntime.h from ") + SW_GRAPH_HALIDE_INCLUDE +
                      ": " + ec.message());
    write_file(d / "sw_model.h", header_text(g, model_path, p), g);
    write_file(d / "sw_model.c", program_text(ex, model_path, p), g);
    write_file(d / "main.c", kMain, g);
    write_file(d / "Makefile", makefile_text(ex, model_path), g);
    write_file(d / "README.md", readme_text(ex, model_path, p), g);

    std::string w(32, '\0');
    std::memcpy(&w[0], "SWNETW01", 8);
    const uint64_t n = uint64_t(p.weight_floats);
    std::memcpy(&w[8], &n, 8);
    std::vector<float> all(size_t(p.weight_floats), 0.f);
    for (const auto &e : p.weights) {
        std::copy(e.second->begin(), e.second->end(), all.begin() + p.loc.at(e.first).offset);
    }
    w.append(reinterpret_cast<const char *>(all.data()), all.size() * sizeof(float));
    write_file(d / "weights.bin", w, g);

    ExportSummary s;
    s.layers = (int)lw.layers.size();
    s.steps = (int)lw.steps.size();
    s.weight_floats = p.weight_floats;
    s.arena_bytes = p.arena_bytes;
    s.unshared_bytes = p.unshared_bytes;
    return s;
}

} // namespace sw_graph
