/** \file
 * Printing CPE kernels as C99 athread slave code.
 */
#include "target_sw/CodeGen_CPE.h"

#include "target_sw/CodeGen_C99.h"
#include "target_sw/SunwayIR.h"
#include "target_sw/WorkCount.h"

#include <set>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

std::string args_struct(const CpeKernel &k) {
    return k.name + "_args";
}

class CodeGen_CPE : public CodeGen_C99 {
public:
    CodeGen_CPE(const CpeKernel &k, const Machine &m) : k(k), m(m) {}
    using CodeGen_C99::visit;

    /** Whether the printed kernel uses floatv4 (the file then includes simd.h). */
    bool uses_simd = false;
    /** Whether it calls ldm_malloc/ldm_free (the file then declares them: slave.h does not). */
    bool uses_ldm_malloc = false;

    std::string kernel_source() {
        // The body first, so that the identifiers and helpers it needs are known.
        for (const ClosureArg &a : k.args) {
            if (a.is_buffer)
                declare_buffer(a.name, a.type);
        }
        for (const BlockLoop &b : k.blocks)
            id(b.var);
        const bool uniform = ir::has_collective(k.body); // a broadcast (BroadcastDma.h)
        const std::string active = uniform ? id(ir::block_active_name) : "";
        // PipelineRoundPuts: the body is the CPE's loop over its rounds, not one block.
        indent = k.rounds_in_body ? 1 : 2;
        for (const LdmBuffer &b : k.ldm)
            ldm_names.insert(b.name);
        count_region(k.body, true, ""); // the block loop's body: nothing taken as invariant
        print_stmt(k.body);
        const std::string body_text = body();

        std::ostringstream s;
        s << "/* Kernel " << k.name << ": " << ldm_summary() << " */\n";
        s << "#ifdef ATHREAD_EMULATOR\n#define " << k.name << " slave_" << k.name << "\n#endif\n";
        s << "void " << k.name << "(void *sw_arg) {\n";
        s << "    struct " << args_struct(k) << " sw_args;\n";
        s << "    " << reply_type() << " sw_args_reply = 0;\n";
        if (pro()) {
            s << "    CRTS_dma_iget(&sw_args, sw_arg, sizeof(sw_args), &sw_args_reply);\n";
        } else {
            s << "    athread_get(PE_MODE, sw_arg, &sw_args, sizeof(sw_args), (void "
                 "*)&sw_args_reply, 0, 0, 0);\n";
        }
        s << "    SW_WORK_DECL\n";
        // One reply word per DMA site; waits may come after the site's own C scope
        // (DelayDmaWaits.h), so the words live for the whole kernel.
        for (size_t i = 0; i < k.dma.size(); i++) {
            s << "    " << reply_type() << " " << reply(int(i)) << " = 0;\n";
            s << "    int " << issued(int(i)) << " = 0;\n";
            s << "    (void)" << issued(int(i)) << ";\n";
        }
        s << wait_text("sw_args_reply", "1", "    ");
        for (const ClosureArg &a : k.args) {
            const std::string type = a.is_buffer ? c_type(a.type) + " *" : c_type(a.type) + " ";
            s << "    " << (a.is_buffer ? "" : "const ") << type << id(a.name) << " = sw_args."
              << closure_field(a) << ";\n";
            s << "    (void)" << id(a.name) << ";\n";
        }
        // The CPEs take the block iterations cyclically.
        CodeGen_C99 &self = *this;
        Expr total = 1;
        for (const BlockLoop &b : k.blocks)
            total = total * b.extent;
        s << "    const int32_t sw_blocks = " << self.print_expr(simplify(total)) << ";\n";
        if (k.rounds_in_body) {
            // The rounds pipelined (PipelineRoundPuts.h): every CPE runs sw_blocks / 64
            // rounds, block round * 64 + id, its block variables bound in the body's loop.
            s << "    (void)sw_blocks;\n" << body_text << "    SW_FLUSH();\n}\n";
            return s.str();
        }
        if (uniform) {
            // A kernel with a broadcast (BroadcastDma.h): every CPE runs the same number of
            // rounds; past the last block it takes the last block's indices, skips the work
            // (if (sw_active)) but meets the barriers and takes part in the sharings.
            const int cpes = m.cpes_per_core_group;
            s << "    const int32_t sw_rounds = (sw_blocks + " << cpes - 1 << ") / " << cpes
              << ";\n";
            s << "    for (int32_t sw_round = 0; sw_round < sw_rounds; sw_round++) {\n";
            s << "        const int32_t sw_next = sw_round * " << cpes << " + " << cpe_id()
              << ";\n";
            s << "        const bool " << active << " = sw_next < sw_blocks;\n";
            s << "        const int32_t sw_block = " << active << " ? sw_next : sw_blocks - 1;\n";
        } else {
            s << "    for (int32_t sw_block = " << cpe_id()
              << "; sw_block < sw_blocks; sw_block += " << m.cpes_per_core_group << ") {\n";
        }
        std::string rest = "sw_block";
        for (size_t i = k.blocks.size(); i-- > 0;) {
            const BlockLoop &b = k.blocks[i];
            const std::string ext = self.print_expr(b.extent), mn = self.print_expr(b.min);
            if (i == 0) {
                s << "        const int32_t " << id(b.var) << " = " << mn << " + " << rest << ";\n";
            } else {
                s << "        const int32_t " << id(b.var) << " = " << mn << " + " << rest << " % "
                  << ext << ";\n";
                rest = "(" + rest + " / " + ext + ")";
            }
            s << "        (void)" << id(b.var) << ";\n";
        }
        s << body_text << "    }\n    SW_FLUSH();\n}\n";
        return s.str();
    }

private:
    const CpeKernel &k;
    const Machine &m;
    std::set<std::string> freed;
    std::set<std::string> ldm_names;

    // The machine's dialect: SW26010 (athread: athread_get / athread_put, spin-waits on reply
    // words, athread_syn, floatv4, register communication) or SW26010-Pro (CRTS: destination-
    // first DMA with reply counters, CRTS_ssync_*, floatv8, RMA).
    bool pro() const { return m.crts_runtime; }
    std::string reply_type() const { return pro() ? "crts_rply_t" : "volatile int"; }
    std::string cpe_id() const { return pro() ? "CRTS_tid" : "athread_get_id(-1)"; }
    /** The wait until reply word \p word has counted \p count requests, at \p pad. */
    std::string wait_text(const std::string &word, const std::string &count,
                          const std::string &pad) const {
        if (pro())
            return pad + "CRTS_dma_wait_value(&" + word + ", " + count + ");\n";
        return pad + "while (" + word + " != " + count + ") {\n" + pad + "}\n" + pad + "SW_WAIT(" +
               word + ");\n";
    }

    // SIMD: the machine's float vectors (floatv4 on SW26010, floatv8 on SW26010-Pro), dense
    // loads and stores, + - * / and fused a*b+c, min and max.
    int lanes() const { return m.simd_float_lanes; }
    std::string vector_type() const { return "floatv" + std::to_string(lanes()); }
    /** Helper names carry the lanes: sw_load4, sw_load8, ... */
    std::string helper_name(const std::string &base) const {
        return base + std::to_string(lanes());
    }
    bool is_floatv4(const Type &t) const {
        return t.is_float() && t.bits() == 32 && t.lanes() == lanes();
    }

    void check_scalar(const Expr &e) override {
        if (e.defined() && !e.type().is_scalar() && !is_floatv4(e.type())) {
            unsupported("vectors of type " + type_to_string(e.type()) + " in CPE code for " +
                        m.name + " (vectorize(x, " + std::to_string(lanes()) +
                        ") on float32 only)");
        }
    }
    std::string value_type(const Type &t) override {
        return is_floatv4(t) ? vector_type() : c_type(t);
    }

    static std::string type_to_string(const Type &t) {
        std::ostringstream s;
        s << t;
        return s.str();
    }
    /** Defines the helper named \p base + lanes + \p suffix as `static inline <signature> {
     * <body> }`, where "@" in the signature is its name and "V" the vector type; returns the
     * name. */
    std::string simd_helper(const std::string &base, const std::string &suffix,
                            const std::string &signature, const std::string &body) {
        uses_simd = true;
        const std::string name = helper_name(base) + suffix;
        auto expand = [&](std::string s) {
            for (size_t at = s.find("V"); at != std::string::npos; at = s.find("V", at))
                s.replace(at, 1, vector_type());
            return s;
        };
        std::string sig = expand(signature);
        sig.replace(sig.find("@"), 1, name);
        define_helper(name, "static inline " + sig + " { " + expand(body) + " }\n");
        return name;
    }
    void use_simd() {
        simd_helper("sw_load", "", "V @(const float *p)",
                    "V v; simd_loadu(v, (float *)p); return v;");
        simd_helper("sw_store", "", "void @(float *p, V v)", "simd_storeu(v, p);");
        // SW26010: simd_set_floatv4 (no splat instruction in sw5cc's simd.h); the Pro: vcpyfs.
        if (pro())
            simd_helper("sw_splat", "", "V @(float x)", "return simd_vcpyfs(x);");
        else
            simd_helper("sw_splat", "", "V @(float x)", "return simd_set_floatv4(x, x, x, x);");
    }
    /** The helper of an aligned (simd_load / simd_store) or unaligned (simd_loadu /
     * simd_storeu) access (AlignVectorAccesses.h). */
    std::string vector_access(bool store, const ModulusRemainder &alignment) {
        use_simd();
        if (!ir::vector_access_aligned(Float(32, lanes()), alignment))
            return helper_name(store ? "sw_store" : "sw_load");
        if (store)
            return simd_helper("sw_store", "a", "void @(float *p, V v)", "simd_store(v, p);");
        return simd_helper("sw_load", "a", "V @(const float *p)",
                           "V v; simd_load(v, (float *)p); return v;");
    }
    /** The scalar base of a dense vector index, or an error. */
    Expr dense_base(const Expr &index, const std::string &what) {
        const Ramp *r = index.as<Ramp>();
        if (!r || !is_const_one(r->stride) || r->lanes != lanes()) {
            unsupported(what + " with a non-contiguous vector index (only dense " + vector_type() +
                        " accesses)");
        }
        return r->base;
    }
    static bool is_register(const std::string &name) { return ir::is_register(name); }

    void visit(const Load *op) override {
        if (is_register(op->name)) {
            last = id(op->name);
            return;
        }
        if (!is_floatv4(op->type))
            return CodeGen_C99::visit(op);
        if (!is_const_one(op->predicate))
            unsupported("predicated vector loads");
        const Ramp *strided = op->index.as<Ramp>();
        if (strided && strided->lanes == lanes() && !is_const_one(strided->stride)) {
            // A strided vector (e.g. the input of a conv of stride > 1 along x): one scalar
            // load per lane built into a vector (no strided vector load on the CPE).
            std::string elems = "p[0], p[s]";
            for (int i = 2; i < lanes(); i++)
                elems += ", p[" + std::to_string(i) + " * s]";
            const std::string gather =
                simd_helper("sw_gather", "", "V @(const float *p, int s)",
                            "return simd_set_" + vector_type() + "(" + elems + ");");
            last = gather + "(&" + id(op->name) + "[" + print_expr(strided->base) + "], " +
                   print_expr(strided->stride) + ")";
            return;
        }
        const std::string helper = vector_access(false, op->alignment);
        const std::string base = print_expr(dense_base(op->index, "a vector load of " + op->name));
        last = helper + "(&" + id(op->name) + "[" + base + "])";
    }
    void visit(const Store *op) override {
        if (is_register(op->name)) {
            const std::string value = print_expr(op->value);
            do_indent();
            out << id(op->name) << " = " << value << ";\n";
            return;
        }
        if (!is_floatv4(op->value.type()))
            return CodeGen_C99::visit(op);
        if (!is_const_one(op->predicate))
            unsupported("predicated vector stores");
        const std::string helper = vector_access(true, op->alignment);
        const std::string value = print_expr(op->value);
        const std::string base = print_expr(dense_base(op->index, "a vector store to " + op->name));
        do_indent();
        out << helper << "(&" << id(op->name) << "[" << base << "], " << value << ");\n";
    }
    void visit(const Broadcast *op) override {
        if (!is_floatv4(op->type))
            unsupported("broadcasts of type " + type_to_string(op->type));
        use_simd();
        const Load *l = op->value.as<Load>();
        if (l && ldm_names.count(l->name) && is_const_one(l->predicate) && m.broadcast_load) {
            // A value of the LDM: one load that broadcasts it (ldse), the cheap splat.
            const std::string loade = simd_helper("sw_loade", "", "V @(const float *p)",
                                                  "V v; simd_loade(v, (float *)p); return v;");
            last = loade + "(&" + id(l->name) + "[" + print_expr(l->index) + "])";
            return;
        }
        last = helper_name("sw_splat") + "(" + print_expr(op->value) + ")";
    }
    void visit(const Add *op) override {
        const Mul *mul = op->a.as<Mul>() ? op->a.as<Mul>() : op->b.as<Mul>();
        if (is_floatv4(op->type) && mul) {
            const std::string a = print_expr(mul->a), b = print_expr(mul->b);
            const std::string c = print_expr(op->a.as<Mul>() ? op->b : op->a);
            last = "simd_vmas(" + a + ", " + b + ", " + c +
                   ")"; // float a*b+c (simd_vmad is for double vectors)
            return;
        }
        CodeGen_C99::visit(op);
    }
    void vector_unsupported(const Type &t, const char *what) {
        if (!t.is_scalar())
            unsupported(std::string("vector ") + what + " in CPE code (" + vector_type() +
                        " supports + - * /, a*b+c, min and max)");
    }
    /** floatv4 division: the C operator, as sw5cc's <simd.h> writes simd_vdivs (vdivs). */
    void visit(const Div *op) override {
        if (!is_floatv4(op->type))
            vector_unsupported(op->type, "division");
        CodeGen_C99::visit(op);
    }
    /** Vector min / max: the difference's sign selects a lane of one operand or the other
     * (simd_vsellts(a, b, c): per lane a < 0 ? b : c; sw5cc's <simd.h>; the Pro's floatv8
     * form is simd_vfsellts). */
    void vector_min_max(const Halide::Expr &a, const Halide::Expr &b, bool is_max) {
        use_simd();
        const std::string sel = pro() ? "simd_vfsellts" : "simd_vsellts";
        simd_helper("sw_max", "", "V @(V a, V b)", "return " + sel + "(a - b, b, a);");
        simd_helper("sw_min", "", "V @(V a, V b)", "return " + sel + "(a - b, a, b);");
        const std::string x = print_expr(a), y = print_expr(b);
        last = helper_name(is_max ? "sw_max" : "sw_min") + "(" + x + ", " + y + ")";
    }
    void visit(const Min *op) override {
        if (is_floatv4(op->type))
            return vector_min_max(op->a, op->b, false);
        vector_unsupported(op->type, "min");
        CodeGen_C99::visit(op);
    }
    void visit(const Max *op) override {
        if (is_floatv4(op->type))
            return vector_min_max(op->a, op->b, true);
        vector_unsupported(op->type, "max");
        CodeGen_C99::visit(op);
    }
    /** The even or odd lanes of two floatv4 a, b (a de-interleave, SplitPhases.h):
     * simd_vshff(b, a, 0x88) is (a0, a2, b0, b2), 0xDD (a1, a3, b1, b3). */
    void visit(const Shuffle *op) override {
        const bool pair = op->vectors.size() == 2 && is_floatv4(op->vectors[0].type()) &&
                          is_floatv4(op->vectors[1].type()) && is_floatv4(op->type) &&
                          m.even_odd_shuffle && lanes() == 4;
        const bool even = op->indices == std::vector<int>{0, 2, 4, 6},
                   odd = op->indices == std::vector<int>{1, 3, 5, 7};
        if (!pair || !(even || odd)) {
            unsupported("vector shuffles other than the even or odd lanes of two floatv4 (on "
                        "SW26010)");
            return;
        }
        use_simd();
        const std::string a = print_expr(op->vectors[0]), b = print_expr(op->vectors[1]);
        last = "simd_vshff(" + b + ", " + a + ", " + (even ? "0x88" : "0xDD") + ")";
    }
    void visit(const Select *op) override {
        vector_unsupported(op->type, "select");
        CodeGen_C99::visit(op);
    }
    void visit(const Cast *op) override {
        vector_unsupported(op->type, "casts");
        CodeGen_C99::visit(op);
    }

    void begin_region(const Stmt &region, const std::string &loop_var) override {
        count_region(region, !loop_var.empty(), loop_var);
    }
    void count_region(const Stmt &region, bool loop_body, const std::string &loop_var) {
        const Work w = count_straight_line(region, loop_body, ldm_names, m, loop_var);
        if (w.empty())
            return;
        // The region's cycles, bounded here per region (issue rate, FP chains; WorkCount.h),
        // then the flops and accesses for the statistics, then its cycles if no P0/P1
        // instructions paired (the other end of the band).
        do_indent();
        out << "SW_WORK(" << region_cycles(w, m) << ", " << w.flops << ", " << w.ldm_accesses
            << ", " << w.direct_accesses << ", " << region_unpaired_cycles(w, m) << ");\n";
    }

    std::string ldm_summary() const {
        std::ostringstream s;
        s << "LDM per CPE " << k.ldm_peak_bytes << " of " << m.ldm_data_budget() << " bytes";
        for (const LdmBuffer &b : k.ldm)
            s << "; " << b.name << " " << b.bytes << " B";
        return s.str();
    }

    int64_t ldm_bytes(const std::string &name) const {
        for (const LdmBuffer &b : k.ldm) {
            if (b.name == name)
                return align_up(b.bytes, m.ldm_alignment);
        }
        unsupported("allocation " + name + " unknown to the LDM plan");
    }

    /** Uses of \p name outside the extents of allocations: an LDM buffer's size comes from the
     * LDM plan, its extents are never printed (a let of a staged box's outermost extent, e.g. a
     * pad tile's rows at the border, is used by nothing else). */
    class UsesOutsideExtents : public IRVisitor {
    public:
        explicit UsesOutsideExtents(const std::string &name) : name(name) {}
        const std::string &name;
        bool found = false;

    private:
        using IRVisitor::visit;
        void visit(const Variable *op) override { found = found || op->name == name; }
        void visit(const Allocate *op) override {
            if (op->condition.defined())
                op->condition.accept(this);
            if (op->new_expr.defined())
                op->new_expr.accept(this);
            op->body.accept(this);
        }
    };
    bool prints_var(const Stmt &body, const std::string &name) const override {
        UsesOutsideExtents u(name);
        body.accept(&u);
        return u.found;
    }

    void print_allocate(const Allocate *op) override {
        if (op->new_expr.defined())
            unsupported("custom allocators inside a CPE kernel");
        if (is_register(op->name)) {
            // A promoted accumulator (PromoteAccumulators.h): a C local, kept in a register.
            const int lanes = int(*as_const_int(op->extents[0]));
            do_indent();
            out << value_type(op->type.with_lanes(lanes)) << " " << id(op->name) << ";\n";
            declare(id(op->name));
            print_stmt(op->body);
            return;
        }
        const std::string name = id(op->name);
        const std::string type = c_type(op->type);
        declare_buffer(op->name, op->type);
        uses_ldm_malloc = true;
        // The size is the LDM plan's constant: a local that only the extents read (a realized
        // extent Halide computes per tile, e.g. from a resize's double coordinates) would be
        // unused in C.
        struct Vars : public IRVisitor {
            std::set<std::string> names;
            using IRVisitor::visit;
            void visit(const Variable *v) override { names.insert(v->name); }
        } vars;
        for (const Expr &e : op->extents)
            e.accept(&vars);
        std::set<std::string> only_here;
        for (const std::string &v : vars.names) {
            if (visible(id(v)) && !stmt_uses_var(op->body, v))
                only_here.insert(id(v));
        }
        for (const std::string &v : only_here) {
            do_indent();
            out << "(void)" << v << ";\n";
        }
        // The same buffer allocated again in the same C block (a double-buffered stage's last
        // iteration peeled after its loop, at the block level of the loop's own allocation):
        // this one gets a block of its own.
        const bool again = declared_here(name);
        if (again) {
            do_indent();
            out << "{\n";
            indent++;
            open_scope();
        }
        do_indent();
        out << type << " *" << name << " = (" << type << " *)ldm_malloc(" << ldm_bytes(op->name)
            << ");\n";
        declare(name);
        print_stmt(op->body);
        if (!freed.count(op->name))
            emit_free(op->name);
        freed.erase(op->name);
        if (again) {
            close_scope();
            indent--;
            do_indent();
            out << "}\n";
        }
    }
    void print_free(const Free *op) override {
        emit_free(op->name);
        freed.insert(op->name);
    }
    void emit_free(const std::string &name) {
        do_indent();
        out << "ldm_free(" << id(name) << ", " << ldm_bytes(name) << ");\n";
    }
    void print_assert(const AssertStmt *) override {
        // Host-side checks only: CPEs have no error channel back to the MPE.
    }

    static std::string reply(int site) { return "sw_reply_" + std::to_string(site); }
    static std::string issued(int site) { return "sw_issued_" + std::to_string(site); }

    void visit(const Call *op) override {
        if (ir::is_bcast_issuer(op)) {
            // CPEs 0 .. issuers - 1 issue a broadcast's pieces (BroadcastDma.h), or the CPEs in
            // columns 0 .. issuers - 1 of each mesh row for a broadcast to each row.
            const int n = ir::bcast_issuers(op), width = ir::bcast_issuer_row_width(op);
            const std::string id = width > 0 ? cpe_id() + " % " + std::to_string(width) : cpe_id();
            last = n == 1 ? "(" + id + " == 0)" : "(" + id + " < " + std::to_string(n) + ")";
            return;
        }
        if (ir::is_cpe_id(op)) {
            last = cpe_id();
            return;
        }
        CodeGen_C99::visit(op);
    }

    /** The end of a register-communication helper: the last 1..15 bytes of the buffer, sent by
     * the CPEs where \p source holds (\p send, after v is loaded) and received by the others
     * (\p receive, before v is stored), through a 16-byte local. */
    static std::string regcomm_tail(const std::string &source, const std::string &send,
                                    const std::string &receive) {
        return "    if (tail) {\n"
               "        /* The last 1..15 bytes: one vector through a local, nothing read or "
               "written past p. */\n"
               "        float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n"
               "        unsigned char *last = (unsigned char *)p + 16 * vectors, *b = "
               "(unsigned char *)t;\n"
               "        if (" +
               source +
               ") {\n"
               "            for (i = 0; i < tail; i++) b[i] = last[i];\n"
               "            simd_loadu(v, t);\n" +
               send + "        } else {\n" + receive +
               "            simd_storeu(v, t);\n"
               "            for (i = 0; i < tail; i++) last[i] = b[i];\n"
               "        }\n"
               "    }\n";
    }

    /** The static helper of Sharing::RegComm (BroadcastDma.h), defined once per file: CPE
     * (0, 0) holds `bytes` bytes at p (16-byte aligned: an ldm_malloc block); afterwards every
     * CPE of the mesh holds them at its own p. */
    void define_regcomm_share() {
        use_simd();
        const std::string cols = std::to_string(m.cpe_mesh_cols);
        define_helper(ir::regcomm_share_name,
                      "/* sw::broadcast(f, Sharing::RegComm): CPE (0, 0) holds `bytes` bytes at p; "
                      "then every CPE\n"
                      " * holds them at its own p. (0, 0) sends each vector along its row and its "
                      "column, the rest\n"
                      " * of row 0 receives it and forwards it down its column, the other rows "
                      "receive it from\n"
                      " * their column. Destination 8 (bit 3) of simd_putr / simd_putc: the whole "
                      "row / column. */\n"
                      "static void sw_regcomm_share(void *p, int bytes) {\n"
                      "    float *f = (float *)p;\n"
                      "    const int id = athread_get_id(-1), row = id / " +
                          cols + ", col = id % " + cols +
                          ";\n"
                          "    const int vectors = bytes / 16, tail = bytes % 16;\n"
                          "    floatv4 v = simd_set_floatv4(0.0f, 0.0f, 0.0f, 0.0f);\n"
                          "    int i;\n"
                          "    if (row == 0 && col == 0) {\n"
                          "        for (i = 0; i < vectors; i++) {\n"
                          "            simd_load(v, &f[4 * i]);\n"
                          "            simd_putr(v, 8);\n"
                          "            simd_putc(v, 8);\n"
                          "        }\n"
                          "    } else if (row == 0) {\n"
                          "        for (i = 0; i < vectors; i++) {\n"
                          "            v = simd_getr(v);\n"
                          "            simd_store(v, &f[4 * i]);\n"
                          "            simd_putc(v, 8);\n"
                          "        }\n"
                          "    } else {\n"
                          "        for (i = 0; i < vectors; i++) {\n"
                          "            v = simd_getc(v);\n"
                          "            simd_store(v, &f[4 * i]);\n"
                          "        }\n"
                          "    }\n" +
                          regcomm_tail("row == 0 && col == 0",
                                       "            simd_putr(v, 8);\n"
                                       "            simd_putc(v, 8);\n",
                                       "            if (row == 0) {\n"
                                       "                v = simd_getr(v);\n"
                                       "                simd_putc(v, 8);\n"
                                       "            } else {\n"
                                       "                v = simd_getc(v);\n"
                                       "            }\n") +
                          "}\n");
    }

    /** The static helper of Sharing::RegCommRow (\p row) or RegCommColumn (BroadcastDma.h),
     * defined once per file, named \p name: the CPE in column 0 of each row (row 0 of each
     * column) holds `bytes` bytes at p; afterwards the other CPEs of its row (column) hold
     * them at their own p. */
    void define_regcomm_line(bool row, const std::string &name) {
        use_simd();
        const std::string cols = std::to_string(m.cpe_mesh_cols);
        const std::string put = row ? "simd_putr" : "simd_putc",
                          get = row ? "simd_getr" : "simd_getc";
        const std::string source =
            row ? "athread_get_id(-1) % " + cols + " == 0" : "athread_get_id(-1) < " + cols;
        define_helper(name,
                      std::string("/* sw::broadcast(f, ") +
                          (row ? "Sharing::RegCommRow" : "Sharing::RegCommColumn") +
                          "): the CPE in " + (row ? "column 0 of its row" : "row 0 of its column") +
                          " holds `bytes` bytes at p\n"
                          " * and sends each vector " +
                          (row ? "along the row" : "down the column") + " (destination 8 of " +
                          put + ": the whole " + (row ? "row" : "column") +
                          "); the\n * others receive it and store it at their own p. */\n"
                          "static void " +
                          name +
                          "(void *p, int bytes) {\n"
                          "    float *f = (float *)p;\n"
                          "    const int source = " +
                          source +
                          ";\n"
                          "    const int vectors = bytes / 16, tail = bytes % 16;\n"
                          "    floatv4 v = simd_set_floatv4(0.0f, 0.0f, 0.0f, 0.0f);\n"
                          "    int i;\n"
                          "    if (source) {\n"
                          "        for (i = 0; i < vectors; i++) {\n"
                          "            simd_load(v, &f[4 * i]);\n"
                          "            " +
                          put +
                          "(v, 8);\n"
                          "        }\n"
                          "    } else {\n"
                          "        for (i = 0; i < vectors; i++) {\n"
                          "            v = " +
                          get +
                          "(v);\n"
                          "            simd_store(v, &f[4 * i]);\n"
                          "        }\n"
                          "    }\n" +
                          regcomm_tail("source", "            " + put + "(v, 8);\n",
                                       "            v = " + get + "(v);\n") +
                          "}\n");
    }

    /** The SW26010-Pro's form of a register-communication sharing (BroadcastDma.h): the same
     * roles, the bytes moved by one RMA broadcast from the holder to the same LDM address of
     * the others (CRTS_rma_*_ibcast_other: the holder does not receive). Every CPE first
     * resets its arrival word, then all meet at a barrier of the CPEs involved (nobody still
     * reads the old contents, every arrival word reset), then the holder broadcasts and waits
     * for its local reply, the others for the arrival. Defined once per file; returns its name. */
    std::string define_rma_share(Sharing how) {
        const bool all = how == Sharing::RegComm, row = how == Sharing::RegCommRow;
        const std::string name = all ? "sw_rma_share" : (row ? "sw_rma_row" : "sw_rma_column");
        const std::string arrived = name + "_arrived";
        const std::string holder =
            all ? "CRTS_tid == 0" : (row ? "CRTS_cid == 0" : "CRTS_rid == 0");
        // The whole mesh: a column broadcast to every column (mask 0xff), as the SDK's
        // CRTS_rma_ibcast does.
        const std::string issue =
            all ? "CRTS_rma_col_imcast_other(p, p, bytes, &sent, 0xff, &" + arrived + ")"
                : std::string(row ? "CRTS_rma_row_ibcast_other" : "CRTS_rma_col_ibcast_other") +
                      "(p, p, bytes, &sent, &" + arrived + ")";
        const std::string sync =
            all ? "CRTS_ssync_array()" : (row ? "CRTS_ssync_row()" : "CRTS_ssync_col()");
        define_helper(name, std::string("/* sw::broadcast(f, ") + sharing_name(how) +
                                ") on the SW26010-Pro: the CPE where " + holder +
                                " holds `bytes` bytes\n * at p and sends them by RMA to p of " +
                                (all   ? "every other CPE"
                                 : row ? "the rest of its row"
                                       : "the rest of its column") +
                                ". */\n"
                                "static __thread_local crts_rply_t " +
                                arrived +
                                ";\n"
                                "static void " +
                                name +
                                "(void *p, int bytes) {\n"
                                "    crts_rply_t sent = 0;\n"
                                "    " +
                                arrived +
                                " = 0;\n"
                                "    " +
                                sync +
                                ";\n"
                                "    if (" +
                                holder +
                                ") {\n"
                                "        " +
                                issue +
                                ";\n"
                                "        CRTS_rma_wait_value(&sent, 1);\n"
                                "    } else {\n"
                                "        CRTS_rma_wait_value(&" +
                                arrived +
                                ", 1);\n"
                                "    }\n"
                                "}\n");
        return name;
    }

    /** The SW26010-Pro's form of a broadcast get (BroadcastDma.h; SW26010: athread_get in
     * BCAST_MODE): the issuer gets the bytes into its own LDM, then multicasts them by RMA to
     * the same LDM address of the other CPEs of the mesh rows in `rows`, waits for both, and
     * counts the request on *reply. The receivers learn of the data through the barrier
     * that follows (as on SW26010). [U] whether the issuer's local RMA reply means the bytes
     * have landed remotely: not documented; the SDK's collectives wait on the remote reply. */
    void define_bcast_get() {
        define_helper("sw_bcast_get",
                      "/* A broadcast get on the SW26010-Pro: the issuer's DMA get, then an RMA "
                      "multicast of the\n * bytes to the other CPEs of the mesh rows in `rows` "
                      "(the Pro's DMA has no row broadcast). */\n"
                      "static __thread_local crts_rply_t sw_bcast_get_arrived;\n"
                      "static void sw_bcast_get(void *ldm, void *mem, int len, int bsize, int "
                      "stride, int rows,\n"
                      "                         crts_rply_t *reply) {\n"
                      "    crts_rply_t got = 0, sent = 0;\n"
                      "    if (bsize)\n"
                      "        CRTS_dma_iget_stride(ldm, mem, len, bsize, stride, &got);\n"
                      "    else\n"
                      "        CRTS_dma_iget(ldm, mem, len, &got);\n"
                      "    CRTS_dma_wait_value(&got, 1);\n"
                      "    CRTS_rma_row_imcast_other(ldm, ldm, len, &sent, rows, "
                      "&sw_bcast_get_arrived);\n"
                      "    CRTS_rma_wait_value(&sent, 1);\n"
                      "    *reply += 1;\n"
                      "}\n");
    }

    /** A DMA request in the Pro's CRTS form: destination first, the stride a gap, the reply
     * word counted when it completes. */
    void print_crts_request(const ir::DmaRequest &r, const std::string &ldm_ptr,
                            const std::string &main_ptr, const std::string &len,
                            const std::string &stride, const std::string &bsize) {
        const std::string rep = "&" + reply(r.site);
        const bool strided = bsize != "0";
        const std::string blocks = strided ? ", " + bsize + ", " + stride : "";
        if (r.is_put) {
            out << (strided ? "CRTS_dma_iput_stride(" : "CRTS_dma_iput(") << main_ptr << ", "
                << ldm_ptr << ", " << len << blocks << ", " << rep << ");\n";
        } else if (r.bcast_mask.defined()) {
            define_bcast_get();
            out << "sw_bcast_get(" << ldm_ptr << ", " << main_ptr << ", " << len << ", " << bsize
                << ", " << stride << ", " << bcast_mask << ", " << rep << ");\n";
        } else {
            out << (strided ? "CRTS_dma_iget_stride(" : "CRTS_dma_iget(") << ldm_ptr << ", "
                << main_ptr << ", " << len << blocks << ", " << rep << ");\n";
        }
    }
    std::string bcast_mask; ///< the printed row mask of the broadcast request being printed

    bool print_own_call(const Call *op) override {
        if (const std::optional<ir::RegcommShare> share = ir::as_regcomm_share(op)) {
            // Every CPE passes CPE (0, 0)'s buffer on, or the first CPE of its row or column
            // (BroadcastDma.h); the helper's loads, stores and loops counted here
            // (WorkCount.h), its puts and gets by the emulator.
            std::string helper = "sw_regcomm_share";
            if (pro()) {
                helper = define_rma_share(share->how);
            } else if (share->how == Sharing::RegComm) {
                define_regcomm_share();
            } else {
                const bool row = share->how == Sharing::RegCommRow;
                helper = row ? "sw_regcomm_row" : "sw_regcomm_column";
                define_regcomm_line(row, helper);
            }
            const std::string &buffer = share->buffer;
            const int64_t bytes = share->bytes;
            const ShareWork w = pro() ? rma_share_work(m) : regcomm_share_work(bytes, m);
            // (print_expr may print the offset's parts as statements first.)
            const Expr offset = simplify(share->offset);
            const std::string at = is_const_zero(offset)
                                       ? id(buffer)
                                       : "(" + id(buffer) + " + " + print_expr(offset) + ")";
            do_indent();
            out << "SW_FLUSH();\n";
            do_indent();
            out << helper << "(" << at << ", " << bytes << ");\n";
            do_indent();
            out << "SW_WORK(" << w.cycles << ", 0, " << w.ldm_accesses << ", 0, "
                << w.unpaired_cycles << ");\n";
            return true;
        }
        if (ir::is_bcast_barrier(op)) {
            do_indent();
            out << "SW_FLUSH();\n";
            do_indent();
            out << (pro() ? "CRTS_ssync_array();\n" : "athread_syn(ARRAY_SCOPE, 0xffff);\n");
            return true;
        }
        if (const std::optional<int> begin = ir::as_dma_begin(op)) {
            const int site = *begin;
            do_indent();
            out << reply(site) << " = 0;\n";
            do_indent();
            out << issued(site) << " = 0;\n";
            return true;
        }
        if (const std::optional<int> wait = ir::as_dma_wait(op)) {
            const int site = *wait;
            do_indent();
            out << "SW_FLUSH();\n";
            out << wait_text(reply(site), issued(site), std::string(indent * 4, ' '));
            return true;
        }
        const std::optional<ir::DmaRequest> r = ir::as_dma_request(op);
        if (!r)
            return false;
        const bool is_put = r->is_put;
        const std::string &ldm_name = r->ldm_buffer;
        const std::string &main_name = r->main_buffer;
        const int site = r->site;
        Type t;
        for (const ClosureArg &c : k.args) {
            if (c.name == main_name)
                t = c.type;
        }
        const Expr bytes = t.bytes();
        const std::string ldm_ptr =
            "(void *)(" + id(ldm_name) + " + " + print_expr(r->ldm_index) + ")";
        const std::string main_ptr =
            "(void *)(" + id(main_name) + " + " + print_expr(r->main_index) + ")";
        const bool one_block = is_const_one(r->rows);
        const std::string len = print_expr(simplify(r->rows * r->block_elems * bytes));
        const std::string stride =
            one_block ? "0" : print_expr(simplify((r->pitch_elems - r->block_elems) * bytes));
        const std::string bsize = one_block ? "0" : print_expr(simplify(r->block_elems * bytes));
        bcast_mask = r->bcast_mask.defined() ? print_expr(r->bcast_mask) : "";
        do_indent();
        out << "SW_FLUSH();\n";
        do_indent();
        if (pro()) {
            print_crts_request(*r, ldm_ptr, main_ptr, len, stride, bsize);
        } else if (is_put) {
            out << "athread_put(PE_MODE, " << ldm_ptr << ", " << main_ptr << ", " << len
                << ", (void *)&" << reply(site) << ", " << stride << ", " << bsize << ");\n";
        } else if (r->bcast_mask.defined()) {
            // A broadcast (BroadcastDma.h): the issuer's get lands on every CPE of the masked rows.
            out << "athread_get(BCAST_MODE, " << main_ptr << ", " << ldm_ptr << ", " << len
                << ", (void *)&" << reply(site) << ", (char)" << bcast_mask << ", " << stride
                << ", " << bsize << ");\n";
        } else {
            out << "athread_get(PE_MODE, " << main_ptr << ", " << ldm_ptr << ", " << len
                << ", (void *)&" << reply(site) << ", 0, " << stride << ", " << bsize << ");\n";
        }
        do_indent();
        out << issued(site) << "++;\n";
        return true;
    }
};

} // namespace

std::string closure_field(const ClosureArg &a) {
    std::string s;
    for (char ch : a.name)
        s += (std::isalnum((unsigned char)ch) || ch == '_') ? ch : '_';
    return "a_" + s;
}

std::string generate_args_header(const SwFunction &f) {
    std::ostringstream s;
    const std::string guard = "SW_ARGS_" + f.name + "_H";
    s << "/* Argument structs of the CPE kernels of " << f.name
      << ", shared by the MPE and CPE code. Generated; do not edit. */\n";
    s << "#ifndef " << guard << "\n#define " << guard
      << "\n\n#include <stdbool.h>\n#include <stdint.h>\n\n";
    for (const CpeKernel &k : f.kernels) {
        s << "struct " << args_struct(k) << " {\n";
        for (const ClosureArg &a : k.args) {
            s << "    " << CodeGen_C99::c_type(a.type) << (a.is_buffer ? " *" : " ")
              << closure_field(a) << ";\n";
        }
        if (k.args.empty())
            s << "    int32_t a_unused;\n";
        s << "};\n\n";
    }
    s << "#endif\n";
    return s.str();
}

std::string generate_cpe_source(const SwFunction &f, const std::string &args_header) {
    std::ostringstream s;
    const bool pro = f.machine->crts_runtime;
    if (pro) {
        s << "/* CPE (slave) code of " << f.name << " for " << f.machine->name
          << ". Generated by the Sunway target; GNU C99 + CRTS.\n"
          << " * Real machine: swgcc -mslave -msimd -O3 -mieee -mftz -faddress_align=64 "
             "-std=gnu99 -c "
          << f.name << ".cpe.c */\n";
        s << "#include <crts.h>\n";
    } else {
        s << "/* CPE (slave) code of " << f.name << " for " << f.machine->name
          << ". Generated by the Sunway target; plain C99 + athread.\n"
          << " * Real machine: sw5cc -slave -msimd -std=gnu99 -c " << f.name << ".cpe.c */\n";
        s << "#include <slave.h>\n";
    }
    s << "#include <math.h>\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n";
    s << "#include \"" << args_header << "\"\n\n";
    s << "/* Work counters for the emulator's timing model (WorkCount.h); nothing on the real "
         "machine.\n"
         " * SW_WORK(cycles, flops, LDM accesses, direct accesses, cycles if no P0/P1 pairing) "
         "of one\n"
         " * straight-line region. */\n"
         "#ifdef ATHREAD_EMULATOR\n"
         "#include <athread_emu.h>\n"
         "#define SW_WORK_DECL athread_emu_work sw_work = {0, 0, 0, 0, 0, 0, 0, 0};\n"
         "#define SW_WORK(c, f, l, d, u) (sw_work.slow_cycles += (c), sw_work.flops += (f), "
         "sw_work.ldm_accesses += (l), "
         "sw_work.direct_accesses += (d), sw_work.unpaired_extra_cycles += (u) - (c))\n"
         "#define SW_FLUSH() athread_emu_account(&sw_work)\n"
         "#define SW_WAIT(r) athread_emu_wait_reply(&(r))\n"
         "#else\n"
         "#define SW_WORK_DECL\n"
         "#define SW_WORK(c, f, l, d, u) ((void)0)\n"
         "#define SW_FLUSH() ((void)0)\n"
         "#define SW_WAIT(r) ((void)0)\n"
         "#endif\n\n";
    std::set<std::string> helpers; // each definition once (most are one line)
    std::string kernels;
    bool simd = false, ldm_malloc = false;
    for (const CpeKernel &k : f.kernels) {
        CodeGen_CPE cg(k, *f.machine);
        kernels += "\n" + cg.kernel_source();
        simd |= cg.uses_simd;
        ldm_malloc |= cg.uses_ldm_malloc;
        for (std::string h : cg.helper_definition_list()) {
            if (!h.empty() && h.back() == '\n')
                h.pop_back();
            helpers.insert(h);
        }
    }
    if (simd)
        s << "#include <simd.h>\n\n";
    if (ldm_malloc && !pro) {
        // In the CPE runtime library, but not declared by the installed slave.h (the Pro's
        // crts.h declares them).
        s << "void *ldm_malloc(size_t size);\nvoid ldm_free(void *p, size_t size);\n\n";
    }
    for (const std::string &h : helpers)
        s << h << "\n";
    s << kernels;
    return s.str();
}

} // namespace sw
