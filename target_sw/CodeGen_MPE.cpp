/** \file
 * Printing the host (MPE) function of a Sunway function.
 */
#include "target_sw/CodeGen_MPE.h"

#include "target_sw/ArgumentShapes.h"
#include "target_sw/CodeGen_C99.h"
#include "target_sw/CodeGen_CPE.h"
#include "target_sw/SunwayIR.h"

#include <map>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** Halide's runtime error calls in assertions -> a printf format for their arguments. */
const std::map<std::string, std::string> &error_formats() {
    static const std::map<std::string, std::string> m = {
        {"halide_error_buffer_argument_is_null", "buffer argument %s is NULL"},
        {"halide_error_host_is_null", "%s has no host memory"},
        {"halide_error_bad_type", "%s has element type code %lld, but %lld was expected"},
        {"halide_error_bad_dimensions", "%s has %lld dimensions, but %lld were expected"},
        {"halide_error_access_out_of_bounds",
         "%s is accessed in dimension %lld at %lld..%lld, outside its bounds %lld..%lld"},
        {"halide_error_buffer_extents_negative",
         "%s has a negative extent in dimension %lld: %lld"},
        {"halide_error_constraint_violated",
         "%s is %lld, but this function was generated for %s == %lld"},
        {"halide_error_device_dirty_with_no_device_support",
         "%s is dirty on a device, and the Sunway target has none"},
        {"halide_error_buffer_allocation_too_large", "buffer %s needs %lld bytes, more than %lld"},
        {"halide_error_buffer_extents_too_large", "buffer %s has %lld elements, more than %lld"},
    };
    return m;
}

class CodeGen_MPE : public CodeGen_C99 {
public:
    explicit CodeGen_MPE(const SwFunction &f) : f(f) {
        for (const LoweredArgument &a : f.args) {
            if (a.is_buffer())
                arg_buffers.insert(a.name);
        }
    }

    std::string function_source() {
        for (const LoweredArgument &a : f.args)
            id(a.is_buffer() ? a.name + ".buffer" : a.name);
        print_stmt(f.host_body);
        std::ostringstream s;
        s << signature(f, [&](const LoweredArgument &a) {
            return id(a.is_buffer() ? a.name + ".buffer" : a.name);
        }) << " {\n";
        // athread_init once per process (the flag is shared by every generated function);
        // the machine it was generated for: selected on the emulator, checked on the real one.
        const Machine &m = *f.machine;
        s << "    if (!sw_athread_initialized) {\n        athread_init();\n        "
             "sw_athread_initialized = 1;\n    }\n";
        s << "#ifdef ATHREAD_EMULATOR\n"
          << "    if (strcmp(athread_emu_machine_name(), \"" << m.name
          << "\") != 0) athread_emu_set_machine(\"" << m.name << "\");\n"
          << "#endif\n";
        s << "    if (athread_get_max_threads() != " << m.cpes_per_core_group << ") {\n"
          << "        fprintf(stderr, \"" << f.name << ": generated for " << m.name << " ("
          << m.cpes_per_core_group
          << " CPEs per core group), but athread_get_max_threads() is %d\\n\", "
             "athread_get_max_threads());\n"
          << "        return -1;\n    }\n";
        s << body() << "    return 0;\n}\n";
        return s.str();
    }

    template <typename Name> static std::string signature(const SwFunction &f, Name name) {
        std::string s = "int " + f.name + "(";
        for (size_t i = 0; i < f.args.size(); i++) {
            const LoweredArgument &a = f.args[i];
            s += i ? ", " : "";
            s += a.is_buffer() ? "struct halide_buffer_t *" + name(a)
                               : c_type(a.type) + " " + name(a);
        }
        return s + (f.args.empty() ? "void)" : ")");
    }

private:
    const SwFunction &f;
    std::set<std::string> arg_buffers;
    std::map<std::string, std::string> host_allocation_bytes;

    std::string own_call_expr(const Call *op) override {
        const std::string &n = op->name;
        if (n.rfind("_halide_buffer_", 0) == 0 && !op->args.empty()) {
            const std::string b = "((struct halide_buffer_t *)" + print_expr(op->args[0]) + ")";
            auto dim = [&](const char *field) {
                return "((int32_t)" + b + "->dim[" + print_expr(op->args[1]) + "]." + field + ")";
            };
            if (n == "_halide_buffer_get_host")
                return "((void *)" + b + "->host)";
            if (n == "_halide_buffer_get_dimensions")
                return "((int32_t)" + b + "->dimensions)";
            if (n == "_halide_buffer_get_min")
                return dim("min");
            if (n == "_halide_buffer_get_extent")
                return dim("extent");
            if (n == "_halide_buffer_get_stride")
                return dim("stride");
            if (n == "_halide_buffer_get_max") {
                return "(" + dim("min") + " + " + dim("extent") + " - 1)";
            }
            if (n == "_halide_buffer_get_type") {
                return "((uint32_t)" + b + "->type.code | ((uint32_t)" + b +
                       "->type.bits << 8) | ((uint32_t)" + b + "->type.lanes << 16))";
            }
            if (n == "_halide_buffer_get_device_dirty")
                return "((" + b + "->flags & 2) != 0)";
            if (n == "_halide_buffer_get_host_dirty")
                return "((" + b + "->flags & 1) != 0)";
            if (n == "_halide_buffer_get_device")
                return "((uint64_t)" + b + "->device)";
            if (n == "_halide_buffer_is_bounds_query")
                return "(" + b + "->host == NULL)";
        }
        if (op->is_intrinsic(Call::reinterpret)) {
            const Type from = op->args[0].type(), to = op->type;
            if (from.is_handle() || to.is_handle()) {
                return "((" + c_type(to) + ")(uintptr_t)" + print_expr(op->args[0]) + ")";
            }
        }
        return "";
    }

    bool print_own_call(const Call *op) override {
        if (const std::optional<int> kernel = ir::as_launch(op)) {
            print_launch(f.kernels[size_t(*kernel)]);
            return true;
        }
        if (op->name == "_halide_buffer_set_host_dirty" ||
            op->name == "_halide_buffer_set_device_dirty") {
            const std::string b = "((struct halide_buffer_t *)" + print_expr(op->args[0]) + ")";
            const std::string bit = op->name == "_halide_buffer_set_host_dirty" ? "1" : "2";
            const std::string v = print_expr(op->args[1]);
            do_indent();
            out << "if (" << v << ") " << b << "->flags |= " << bit << "; else " << b
                << "->flags &= ~(uint64_t)" << bit << ";\n";
            return true;
        }
        return false;
    }

    void print_launch(const CpeKernel &k) {
        do_indent();
        out << "{\n";
        indent++;
        do_indent();
        out << "/* Kernel " << k.name << " on the " << f.machine->cpes_per_core_group
            << " CPEs: LDM per CPE " << k.ldm_peak_bytes << " bytes */\n";
        do_indent();
        // On a 128-byte DMA line (as real athread code aligns what the CPEs fetch): every CPE
        // gets the struct by DMA, and where it sits on the stack would otherwise change the
        // line bytes, so the modelled time, from run to run.
        out << "struct " << k.name << "_args sw_a __attribute__((aligned("
            << f.machine->dma_line_bytes << ")));\n";
        for (const ClosureArg &a : k.args) {
            do_indent();
            out << "sw_a." << closure_field(a) << " = ";
            if (a.is_buffer) {
                out << "(" << c_type(a.type) << " *)" << id(a.name) << ";\n";
            } else {
                out << id(a.name) << ";\n";
            }
        }
        out << "#ifdef ATHREAD_EMULATOR\n";
        do_indent();
        out << "athread_emu_set_kernel_name(\"" << k.name << "\");\n";
        do_indent();
        out << "athread_emu_register_buffer(\"" << k.name
            << " arguments\", &sw_a, sizeof(sw_a));\n";
        for (const ClosureArg &a : k.args) {
            if (!a.is_buffer)
                continue;
            do_indent();
            out << "athread_emu_register_buffer(\"" << a.name << "\", " << id(a.name) << ", ";
            if (arg_buffers.count(a.name)) {
                out << "sw_buffer_bytes(" << id(a.name + ".buffer") << ")";
            } else {
                out << host_allocation_bytes.at(a.name);
            }
            out << ");\n";
        }
        out << "#endif\n";
        do_indent();
        out << "athread_spawn(" << k.name << ", &sw_a);\n";
        do_indent();
        out << "athread_join();\n";
        indent--;
        do_indent();
        out << "}\n";
    }

    void print_allocate(const Allocate *op) override {
        if (op->new_expr.defined())
            unsupported("custom allocators on the host");
        std::string bytes = "(size_t)" + std::to_string(op->type.bytes());
        for (const Expr &e : op->extents)
            bytes += " * (size_t)" + print_expr(e);
        const std::string name = id(op->name), type = c_type(op->type);
        host_allocation_bytes[op->name] = "(" + bytes + ")";
        declare_buffer(op->name, op->type);
        do_indent();
        out << type << " *" << name << " = (" << type << " *)malloc(" << bytes << ");\n";
        do_indent();
        out << "if (!" << name << ") {\n";
        do_indent();
        out << "    fprintf(stderr, \"" << f.name << ": out of memory allocating " << op->name
            << "\\n\");\n";
        do_indent();
        out << "    return -1;\n";
        do_indent();
        out << "}\n";
        declare(name);
        print_stmt(op->body);
    }
    void print_free(const Free *op) override {
        do_indent();
        out << "free(" << id(op->name) << ");\n";
    }

    void print_assert(const AssertStmt *op) override {
        const std::string cond = print_expr(op->condition);
        do_indent();
        out << "if (!" << cond << ") {\n";
        indent++;
        const Call *c = op->message.as<Call>();
        auto fmt = c ? error_formats().find(c->name) : error_formats().end();
        do_indent();
        if (fmt != error_formats().end()) {
            out << "fprintf(stderr, \"" << f.name << ": " << fmt->second << "\\n\"";
            for (const Expr &a : c->args) {
                out << ", "
                    << (a.type().is_handle() || a.as<StringImm>() ? print_expr(a)
                                                                  : "(long long)" + print_expr(a));
            }
            out << ");\n";
        } else {
            std::ostringstream what;
            what << op->message;
            std::string text;
            for (char ch : what.str())
                text += (ch == '"' || ch == '\\') ? '\'' : ch;
            out << "fprintf(stderr, \"" << f.name << ": check failed: " << text << "\\n\");\n";
        }
        do_indent();
        out << "return -1;\n";
        indent--;
        do_indent();
        out << "}\n";
    }
};

} // namespace

std::string generate_header(const SwFunction &f) {
    const std::vector<ArgumentShape> args = argument_shapes(f);
    std::ostringstream s;
    const std::string guard = "SW_" + f.name + "_H";
    s << header_documentation(f, args);
    s << "#ifndef " << guard << "\n#define " << guard << "\n\n#include \"HalideRuntime.h\"\n\n";
    s << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
    const std::string upper_fn = upper_case(f.name);
    s << "#define " << upper_fn << "_MACHINE \"" << f.machine->name << "\"\n";
    for (const ArgumentShape &a : args) {
        if (!a.is_buffer || !a.fixed())
            continue;
        s << "#define " << upper_fn << "_" << upper_case(a.name) << "_ELEMENTS " << a.elements()
          << "L\n";
    }
    s << "\n/* 1 once athread_init() has been called (by a generated function or by the program). "
         "*/\n"
      << "extern int sw_athread_initialized;\n\n";
    size_t i = 0;
    s << CodeGen_MPE::signature(f, [&](const LoweredArgument &) { return args[i++].name; })
      << ";\n";
    if (has_f32_entry(args))
        s << f32_signature(f, args) << ";\n";
    s << "\n";
    s << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
    return s.str();
}

std::string generate_mpe_source(const SwFunction &f, const std::string &header,
                                const std::string &args_header) {
    CodeGen_MPE cg(f);
    const std::string fn = cg.function_source();
    std::ostringstream s;
    s << "/* MPE (host) code of " << f.name << " for " << f.machine->name
      << ". Generated by the Sunway target.\n"
      << " * Real machine: sw5cc -host -std=gnu99 -c " << f.name << ".mpe.c */\n";
    s << "#include <athread.h>\n#include <math.h>\n#include <stdbool.h>\n#include <stddef.h>\n"
         "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n";
    s << "#include \"" << header << "\"\n#include \"" << args_header << "\"\n";
    s << "#ifdef ATHREAD_EMULATOR\n#include <athread_emu.h>\n#endif\n\n";
    for (const CpeKernel &k : f.kernels)
        s << "extern void SLAVE_FUN(" << k.name << ")(void *);\n";
    // Weak: every generated MPE file defines it, the linker keeps one for the process.
    s << "\nint sw_athread_initialized __attribute__((weak)) = 0;\n\n";
    s << "#ifdef ATHREAD_EMULATOR\n"
         "/* Bytes from a buffer's host pointer to its last element (dense, non-negative strides). "
         "*/\n"
         "static size_t sw_buffer_bytes(const struct halide_buffer_t *b) {\n"
         "    int64_t last = 0;\n"
         "    for (int i = 0; i < b->dimensions; i++) {\n"
         "        if (b->dim[i].extent > 0) last += (int64_t)(b->dim[i].extent - 1) * "
         "b->dim[i].stride;\n"
         "    }\n"
         "    return (size_t)((last + 1) * ((b->type.bits + 7) / 8));\n"
         "}\n#endif\n\n";
    s << cg.helper_definitions() << "\n" << fn;
    const std::vector<ArgumentShape> args = argument_shapes(f);
    if (has_f32_entry(args))
        s << "\n" << f32_definition(f, args);
    return s.str();
}

} // namespace sw
