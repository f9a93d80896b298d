/** \file
 * Printing CPE kernels as C99 athread slave code.
 */
#include "target_sw/CodeGen_CPE.h"

#include "target_sw/CodeGen_C99.h"
#include "target_sw/InjectDma.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <set>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

std::string args_struct(const CpeKernel &k) { return k.name + "_args"; }

class CodeGen_CPE : public CodeGen_C99 {
public:
    CodeGen_CPE(const CpeKernel &k, const Machine &m) : k(k), m(m) {}

    std::string kernel_source() {
        // The body first, so that the identifiers and helpers it needs are known.
        for (const ClosureArg &a : k.args) {
            if (a.is_buffer) declare_buffer(a.name, a.type);
        }
        for (const BlockLoop &b : k.blocks) id(b.var);
        indent = 2;
        print_stmt(k.body);
        const std::string body_text = body();

        std::ostringstream s;
        s << "/* Kernel " << k.name << ": " << ldm_summary() << " */\n";
        s << "#ifdef ATHREAD_EMULATOR\n#define " << k.name << " slave_" << k.name
          << "\n#endif\n";
        s << "void " << k.name << "(void *sw_arg) {\n";
        s << "    struct " << args_struct(k) << " sw_args;\n";
        s << "    volatile int sw_args_reply = 0;\n";
        s << "    athread_get(PE_MODE, sw_arg, &sw_args, sizeof(sw_args), (void *)&sw_args_reply, 0, 0, 0);\n";
        s << "    while (sw_args_reply != 1) {\n    }\n";
        for (const ClosureArg &a : k.args) {
            const std::string type = a.is_buffer ? c_type(a.type) + " *" : c_type(a.type) + " ";
            s << "    " << (a.is_buffer ? "" : "const ") << type << id(a.name) << " = sw_args."
              << closure_field(a) << ";\n";
            s << "    (void)" << id(a.name) << ";\n";
        }
        // The CPEs take the block iterations cyclically.
        CodeGen_C99 &self = *this;
        Expr total = 1;
        for (const BlockLoop &b : k.blocks) total = total * b.extent;
        s << "    const int32_t sw_blocks = " << self.print_expr(simplify(total)) << ";\n";
        s << "    for (int32_t sw_block = athread_get_id(-1); sw_block < sw_blocks; sw_block += "
          << m.cpes_per_core_group << ") {\n";
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
        s << body_text << "    }\n}\n";
        return s.str();
    }

private:
    const CpeKernel &k;
    const Machine &m;
    std::set<std::string> freed;

    std::string ldm_summary() const {
        std::ostringstream s;
        s << "LDM per CPE " << k.ldm_peak_bytes << " of " << m.ldm_data_budget() << " bytes";
        for (const LdmBuffer &b : k.ldm) s << "; " << b.name << " " << b.bytes << " B";
        return s.str();
    }

    int64_t ldm_bytes(const std::string &name) const {
        for (const LdmBuffer &b : k.ldm) {
            if (b.name == name) return align_up(b.bytes, m.ldm_alignment);
        }
        unsupported("allocation " + name + " unknown to the LDM plan");
    }

    void print_allocate(const Allocate *op) override {
        if (op->new_expr.defined()) unsupported("custom allocators inside a CPE kernel");
        const std::string name = id(op->name);
        const std::string type = c_type(op->type);
        declare_buffer(op->name, op->type);
        do_indent();
        out << type << " *" << name << " = (" << type << " *)ldm_malloc(" << ldm_bytes(op->name)
            << ");\n";
        declare(name);
        print_stmt(op->body);
        if (!freed.count(op->name)) emit_free(op->name);
        freed.erase(op->name);
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

    std::string reply(int site) { return "sw_reply_" + std::to_string(site); }
    std::string issued(int site) { return "sw_issued_" + std::to_string(site); }

    bool print_own_call(const Call *op) override {
        if (op->name == dma_begin_intrinsic) {
            const int site = int(*as_const_int(op->args[0]));
            do_indent();
            out << "volatile int " << reply(site) << " = 0;\n";
            do_indent();
            out << "int " << issued(site) << " = 0;\n";
            return true;
        }
        if (op->name == dma_wait_intrinsic) {
            const int site = int(*as_const_int(op->args[0]));
            do_indent();
            out << "while (" << reply(site) << " != " << issued(site) << ") {\n";
            do_indent();
            out << "}\n";
            return true;
        }
        if (op->name != dma_request_intrinsic) return false;
        const auto &a = op->args;
        const bool is_put = is_const_one(a[DmaIsPut]);
        const std::string ldm_name = a[DmaLdmBuffer].as<StringImm>()->value;
        const std::string main_name = a[DmaMainBuffer].as<StringImm>()->value;
        const int site = int(*as_const_int(a[DmaSiteId]));
        Type t;
        for (const ClosureArg &c : k.args) {
            if (c.name == main_name) t = c.type;
        }
        const Expr bytes = t.bytes();
        const std::string ldm_ptr = "(void *)(" + id(ldm_name) + " + " + print_expr(a[DmaLdmIndex]) + ")";
        const std::string main_ptr = "(void *)(" + id(main_name) + " + " + print_expr(a[DmaMainIndex]) + ")";
        const bool one_block = is_const_one(a[DmaRows]);
        const std::string len = print_expr(simplify(a[DmaRows] * a[DmaBlockElems] * bytes));
        const std::string stride =
            one_block ? "0" : print_expr(simplify((a[DmaPitchElems] - a[DmaBlockElems]) * bytes));
        const std::string bsize = one_block ? "0" : print_expr(simplify(a[DmaBlockElems] * bytes));
        do_indent();
        if (is_put) {
            out << "athread_put(PE_MODE, " << ldm_ptr << ", " << main_ptr << ", " << len
                << ", (void *)&" << reply(site) << ", " << stride << ", " << bsize << ");\n";
        } else {
            out << "athread_get(PE_MODE, " << main_ptr << ", " << ldm_ptr << ", " << len
                << ", (void *)&" << reply(site) << ", 0, " << stride << ", " << bsize << ");\n";
        }
        do_indent();
        out << issued(site) << "++;\n";
        return true;
    }
};

}  // namespace

std::string closure_field(const ClosureArg &a) {
    std::string s;
    for (char ch : a.name) s += (std::isalnum((unsigned char)ch) || ch == '_') ? ch : '_';
    return "a_" + s;
}

std::string generate_args_header(const SwFunction &f) {
    std::ostringstream s;
    const std::string guard = "SW_ARGS_" + f.name + "_H";
    s << "/* Argument structs of the CPE kernels of " << f.name
      << ", shared by the MPE and CPE code. Generated; do not edit. */\n";
    s << "#ifndef " << guard << "\n#define " << guard << "\n\n#include <stdbool.h>\n#include <stdint.h>\n\n";
    for (const CpeKernel &k : f.kernels) {
        s << "struct " << args_struct(k) << " {\n";
        for (const ClosureArg &a : k.args) {
            s << "    " << CodeGen_C99::c_type(a.type) << (a.is_buffer ? " *" : " ")
              << closure_field(a) << ";\n";
        }
        if (k.args.empty()) s << "    int32_t a_unused;\n";
        s << "};\n\n";
    }
    s << "#endif\n";
    return s.str();
}

std::string generate_cpe_source(const SwFunction &f, const std::string &args_header) {
    std::ostringstream s;
    s << "/* CPE (slave) code of " << f.name << " for " << f.machine->name
      << ". Generated by the Sunway target; plain C99 + athread.\n"
      << " * Real machine: sw5cc -slave -msimd -c " << f.name << ".cpe.c */\n";
    s << "#include <slave.h>\n#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n";
    s << "#include \"" << args_header << "\"\n\n";
    std::set<std::string> helpers;  // one definition per line
    std::string kernels;
    for (const CpeKernel &k : f.kernels) {
        CodeGen_CPE cg(k, *f.machine);
        kernels += "\n" + cg.kernel_source();
        std::istringstream lines(cg.helper_definitions());
        for (std::string line; std::getline(lines, line);) helpers.insert(line);
    }
    for (const std::string &h : helpers) s << h << "\n";
    s << kernels;
    return s.str();
}

}  // namespace sw
