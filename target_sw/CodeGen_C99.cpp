/** \file
 * Printing lowered Halide IR as C99.
 */
#include "target_sw/CodeGen_C99.h"

#include "target_sw/Errors.h"

#include <cmath>
#include <iomanip>
#include <limits>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

const std::set<std::string> &c_reserved() {
    static const std::set<std::string> words = {
        "auto",     "break",  "case",   "char",     "const",    "continue", "default",  "do",
        "double",   "else",   "enum",   "extern",   "float",    "for",      "goto",     "if",
        "inline",   "int",    "long",   "register", "restrict", "return",   "short",    "signed",
        "sizeof",   "static", "struct", "switch",   "typedef",  "union",    "unsigned", "void",
        "volatile", "while",  "bool",   "true",     "false",    "main",     "errno",    "abs",
        "min",      "max",    "exp",    "log",      "sqrt",     "floor",    "ceil"};
    return words;
}

/** Math intrinsics: Halide's name without the _f32/_f64 suffix -> C99 math.h name stem. */
const std::map<std::string, std::string> &math_functions() {
    static const std::map<std::string, std::string> m = {
        {"sqrt", "sqrt"},   {"exp", "exp"},       {"log", "log"},           {"pow", "pow"},
        {"floor", "floor"}, {"ceil", "ceil"},     {"round", "nearbyint"},   {"trunc", "trunc"},
        {"sin", "sin"},     {"cos", "cos"},       {"tan", "tan"},           {"asin", "asin"},
        {"acos", "acos"},   {"atan", "atan"},     {"atan2", "atan2"},       {"sinh", "sinh"},
        {"cosh", "cosh"},   {"tanh", "tanh"},     {"asinh", "asinh"},       {"acosh", "acosh"},
        {"atanh", "atanh"}, {"fast_inverse", ""}, {"fast_inverse_sqrt", ""}};
    return m;
}

std::string suffix(const Type &t) {
    std::string s = t.is_float() ? "f" : t.is_uint() ? "u" : "i";
    return s + std::to_string(t.bits());
}

} // namespace

void CodeGen_C99::unsupported(const std::string &what) const {
    throw UserError("the Sunway C code generator does not support " + what);
}

bool CodeGen_C99::visible(const std::string &c_name) const {
    for (const auto &s : scopes) {
        if (s.count(c_name))
            return true;
    }
    return false;
}

std::string CodeGen_C99::id(const std::string &name) {
    auto it = ids.find(name);
    if (it != ids.end())
        return it->second;
    std::string s;
    for (char ch : name)
        s += (std::isalnum((unsigned char)ch) || ch == '_') ? ch : '_';
    if (s.empty() || std::isdigit((unsigned char)s[0]))
        s = "v_" + s;
    if (s.rfind("sw_", 0) == 0 || s.rfind("athread", 0) == 0 || c_reserved().count(s)) {
        s = "h_" + s;
    }
    std::string unique = s;
    for (int i = 2; used_ids.count(unique); i++)
        unique = s + "_" + std::to_string(i);
    used_ids.insert(unique);
    ids[name] = unique;
    return unique;
}

std::string CodeGen_C99::c_type(const Type &t) {
    if (!t.is_scalar())
        throw UserError("vector types (" + std::to_string(t.lanes()) + " lanes) in C99 code");
    if (t.is_handle())
        return "void *";
    if (t.is_bool())
        return "bool";
    if (t.is_float()) {
        if (t.bits() == 32)
            return "float";
        if (t.bits() == 64)
            return "double";
        throw UserError("float16/bfloat16 are not supported by the Sunway target");
    }
    return std::string(t.is_uint() ? "uint" : "int") + std::to_string(t.bits()) + "_t";
}

void CodeGen_C99::declare_buffer(const std::string &name, const Type &t) {
    buffer_types[id(name)] = t;
}

std::string CodeGen_C99::buffer_ref(const std::string &name, const Type &t, const Expr &index) {
    const std::string b = id(name);
    const std::string i = print_expr(index);
    auto it = buffer_types.find(b);
    if (it != buffer_types.end() && it->second == t)
        return b + "[" + i + "]";
    return "((" + c_type(t) + " *)" + b + ")[" + i + "]";
}

std::string CodeGen_C99::helper(const std::string &op, const Type &t) {
    const std::string ct = c_type(t);
    const std::string name = "sw_" + op + "_" + suffix(t);
    if (helpers.count(name))
        return name;
    std::ostringstream d;
    d << "static inline " << ct << " " << name << "(" << ct << " a, " << ct << " b) { ";
    if ((op == "min" || op == "max") && t.is_float()) {
        // NaN-propagating, as PyTorch's minimum/maximum (relu(nan) = nan, a max pool over a
        // NaN gives NaN): a NaN in a is returned by the first test (a != a), a NaN in b by
        // the fallback, since every comparison with NaN is false. Plain C99 for sw5cc.
        d << "return (a " << (op == "min" ? "<" : ">") << " b || a != a) ? a : b;";
    } else if (op == "min") {
        d << "return a < b ? a : b;";
    } else if (op == "max") {
        d << "return a > b ? a : b;";
    } else if (op == "div" && t.is_float()) {
        d << "return a / b;";
    } else if (op == "mod" && t.is_float()) {
        d << "return a - b * " << (t.bits() == 32 ? "floorf" : "floor") << "(a / b);";
    } else if (op == "div" && t.is_uint()) {
        d << "return b == 0 ? 0 : a / b;";
    } else if (op == "mod" && t.is_uint()) {
        d << "return b == 0 ? 0 : a % b;";
    } else if (op == "div") {
        // Halide: rounds towards negative infinity (Euclidean for b < 0); x / 0 == 0.
        d << "if (b == 0) return 0; " << ct << " q = a / b, r = a % b; "
          << "if (r < 0) q = b > 0 ? q - 1 : q + 1; return q;";
    } else if (op == "mod") {
        d << "if (b == 0) return 0; " << ct << " r = a % b; "
          << "if (r < 0) r = b > 0 ? r + b : r - b; return r;";
    } else {
        unsupported("helper " + op);
    }
    d << " }\n";
    helpers[name] = d.str();
    return name;
}

void CodeGen_C99::define_helper(const std::string &name, const std::string &definition) {
    helpers.emplace(name, definition);
}

std::string CodeGen_C99::helper_definitions() const {
    std::string s;
    for (const auto &h : helpers)
        s += h.second;
    return s;
}

std::vector<std::string> CodeGen_C99::helper_definition_list() const {
    std::vector<std::string> list;
    for (const auto &h : helpers)
        list.push_back(h.second);
    return list;
}

void CodeGen_C99::print_stmt(const Stmt &s) {
    s.accept(this);
}

std::string CodeGen_C99::print_expr(const Expr &e) {
    check_scalar(e);
    e.accept(this);
    return last;
}

void CodeGen_C99::check_scalar(const Expr &e) {
    if (e.defined() && !e.type().is_scalar()) {
        unsupported("vector code (" + std::to_string(e.type().lanes()) +
                    " lanes) yet: remove vectorize() from loops inside CPE kernels");
    }
}

// Expressions

void CodeGen_C99::visit(const IntImm *op) {
    if (op->type.bits() == 64) {
        last = "INT64_C(" + std::to_string(op->value) + ")";
    } else if (op->value == std::numeric_limits<int32_t>::min()) {
        last = "(-2147483647 - 1)";
    } else if (op->type.bits() == 32) {
        last = op->value < 0 ? "(" + std::to_string(op->value) + ")" : std::to_string(op->value);
    } else {
        last = "((" + c_type(op->type) + ")" + std::to_string(op->value) + ")";
    }
}

void CodeGen_C99::visit(const UIntImm *op) {
    if (op->type.is_bool()) {
        last = op->value ? "true" : "false";
    } else if (op->type.bits() == 64) {
        last = "UINT64_C(" + std::to_string(op->value) + ")";
    } else {
        last = "((" + c_type(op->type) + ")" + std::to_string(op->value) + "u)";
    }
}

void CodeGen_C99::visit(const FloatImm *op) {
    const bool f32 = op->type.bits() == 32;
    if (op->type.bits() != 32 && op->type.bits() != 64)
        unsupported("float16 constants");
    if (std::isnan(op->value)) {
        last = f32 ? "NAN" : "((double)NAN)";
    } else if (std::isinf(op->value)) {
        last = std::string(op->value < 0 ? "(-" : "(") + (f32 ? "INFINITY)" : "(double)INFINITY)");
    } else {
        std::ostringstream s;
        s << std::setprecision(f32 ? 9 : 17) << op->value;
        std::string t = s.str();
        if (t.find_first_of(".e") == std::string::npos)
            t += ".0";
        if (f32)
            t += "f";
        last = op->value < 0 ? "(" + t + ")" : t;
    }
}

void CodeGen_C99::visit(const StringImm *op) {
    std::string s = "\"";
    for (char ch : op->value) {
        if (ch == '"' || ch == '\\')
            s += '\\';
        if (ch == '\n') {
            s += "\\n";
            continue;
        }
        s += ch;
    }
    last = s + "\"";
}

void CodeGen_C99::visit(const Cast *op) {
    check_scalar(op->value);
    last = "((" + c_type(op->type) + ")" + print_expr(op->value) + ")";
}

void CodeGen_C99::visit(const Variable *op) {
    last = id(op->name);
}

void CodeGen_C99::binary(const Expr &a, const char *op, const Expr &b) {
    const std::string x = print_expr(a), y = print_expr(b);
    last = "(" + x + " " + op + " " + y + ")";
}

void CodeGen_C99::visit(const Add *op) {
    binary(op->a, "+", op->b);
}
void CodeGen_C99::visit(const Sub *op) {
    binary(op->a, "-", op->b);
}
void CodeGen_C99::visit(const Mul *op) {
    binary(op->a, "*", op->b);
}
void CodeGen_C99::visit(const Div *op) {
    if (op->type.is_float())
        return binary(op->a, "/", op->b);
    const std::string x = print_expr(op->a), y = print_expr(op->b);
    last = helper("div", op->type) + "(" + x + ", " + y + ")";
}
void CodeGen_C99::visit(const Mod *op) {
    const std::string x = print_expr(op->a), y = print_expr(op->b);
    last = helper("mod", op->type) + "(" + x + ", " + y + ")";
}
void CodeGen_C99::visit(const Min *op) {
    const std::string x = print_expr(op->a), y = print_expr(op->b);
    last = helper("min", op->type) + "(" + x + ", " + y + ")";
}
void CodeGen_C99::visit(const Max *op) {
    const std::string x = print_expr(op->a), y = print_expr(op->b);
    last = helper("max", op->type) + "(" + x + ", " + y + ")";
}
void CodeGen_C99::visit(const EQ *op) {
    binary(op->a, "==", op->b);
}
void CodeGen_C99::visit(const NE *op) {
    binary(op->a, "!=", op->b);
}
void CodeGen_C99::visit(const LT *op) {
    binary(op->a, "<", op->b);
}
void CodeGen_C99::visit(const LE *op) {
    binary(op->a, "<=", op->b);
}
void CodeGen_C99::visit(const GT *op) {
    binary(op->a, ">", op->b);
}
void CodeGen_C99::visit(const GE *op) {
    binary(op->a, ">=", op->b);
}
void CodeGen_C99::visit(const And *op) {
    binary(op->a, "&&", op->b);
}
void CodeGen_C99::visit(const Or *op) {
    binary(op->a, "||", op->b);
}
void CodeGen_C99::visit(const Not *op) {
    last = "(!" + print_expr(op->a) + ")";
}

void CodeGen_C99::visit(const Select *op) {
    const std::string c = print_expr(op->condition), t = print_expr(op->true_value),
                      f = print_expr(op->false_value);
    last = "(" + c + " ? " + t + " : " + f + ")";
}

void CodeGen_C99::visit(const Load *op) {
    check_scalar(op->index);
    if (!is_const_one(op->predicate))
        unsupported("predicated loads");
    last = buffer_ref(op->name, op->type, op->index);
}

void CodeGen_C99::visit(const Ramp *) {
    unsupported("vector code (Ramp)");
}
void CodeGen_C99::visit(const Broadcast *) {
    unsupported("vector code (Broadcast)");
}
void CodeGen_C99::visit(const Shuffle *) {
    unsupported("vector code (Shuffle)");
}
void CodeGen_C99::visit(const VectorReduce *) {
    unsupported("vector code (VectorReduce)");
}

void CodeGen_C99::visit(const Let *op) {
    // C99 has no let-expressions: substitute (lowered code has few of them).
    last = print_expr(substitute(op->name, op->value, op->body));
}

void CodeGen_C99::visit(const Call *op) {
    check_scalar(op);
    auto arg = [&](int i) { return print_expr(op->args[i]); };
    if (op->is_intrinsic(Call::likely) || op->is_intrinsic(Call::likely_if_innermost) ||
        op->is_intrinsic(Call::promise_clamped) || op->is_intrinsic(Call::unsafe_promise_clamped) ||
        op->is_intrinsic(Call::strict_float)) {
        last = arg(0);
    } else if (op->is_intrinsic(Call::bitwise_and)) {
        binary(op->args[0], "&", op->args[1]);
    } else if (op->is_intrinsic(Call::bitwise_or)) {
        binary(op->args[0], "|", op->args[1]);
    } else if (op->is_intrinsic(Call::bitwise_xor)) {
        binary(op->args[0], "^", op->args[1]);
    } else if (op->is_intrinsic(Call::bitwise_not)) {
        last = "(~" + arg(0) + ")";
    } else if (op->is_intrinsic(Call::shift_left)) {
        binary(op->args[0], "<<", op->args[1]);
    } else if (op->is_intrinsic(Call::shift_right)) {
        binary(op->args[0], ">>", op->args[1]);
    } else if (op->is_intrinsic(Call::if_then_else) && op->args.size() == 3) {
        const std::string c = arg(0), t = arg(1), f = arg(2);
        last = "(" + c + " ? " + t + " : " + f + ")";
    } else if (op->is_intrinsic(Call::div_round_to_zero)) {
        binary(op->args[0], "/", op->args[1]);
    } else if (op->is_intrinsic(Call::mod_round_to_zero)) {
        binary(op->args[0], "%", op->args[1]);
    } else if (op->is_intrinsic(Call::abs)) {
        const Type t = op->args[0].type();
        if (t.is_float()) {
            last = std::string(t.bits() == 32 ? "fabsf(" : "fabs(") + arg(0) + ")";
        } else {
            const std::string x = arg(0);
            last = "((" + c_type(op->type) + ")" + helper("max", t) + "(" + x + ", -" + x + "))";
        }
    } else if (op->call_type == Call::PureExtern || op->call_type == Call::Extern) {
        const std::string own = own_call_expr(op);
        if (!own.empty()) {
            last = own;
            return;
        }
        const std::string &n = op->name;
        const size_t us = n.rfind('_');
        const std::string stem = us == std::string::npos ? n : n.substr(0, us);
        const std::string sfx = us == std::string::npos ? "" : n.substr(us + 1);
        auto m = math_functions().find(stem);
        if ((sfx == "f32" || sfx == "f64") && m != math_functions().end() && !m->second.empty()) {
            std::string s = m->second + (sfx == "f32" ? "f(" : "(");
            for (size_t i = 0; i < op->args.size(); i++)
                s += (i ? ", " : "") + arg(int(i));
            last = s + ")";
        } else if (stem == "is_nan" || stem == "is_inf" || stem == "is_finite") {
            last = (stem == "is_nan"   ? "isnan("
                    : stem == "is_inf" ? "isinf("
                                       : "isfinite(") +
                   arg(0) + ")";
        } else {
            unsupported("the call " + n);
        }
    } else {
        const std::string own = own_call_expr(op);
        if (own.empty())
            unsupported("the intrinsic " + op->name);
        last = own;
    }
}

// Statements

bool CodeGen_C99::prints_var(const Stmt &body, const std::string &name) const {
    return stmt_uses_var(body, name);
}

void CodeGen_C99::visit(const LetStmt *op) {
    if (!prints_var(op->body, op->name))
        return print_stmt(op->body);
    const std::string value = print_expr(op->value);
    const std::string name = id(op->name);
    const bool nested = visible(name);
    if (nested) {
        do_indent();
        out << "{\n";
        indent++;
        open_scope();
    }
    do_indent();
    out << "const " << value_type(op->value.type()) << " " << name << " = " << value << ";\n";
    declare(name);
    print_stmt(op->body);
    if (nested) {
        close_scope();
        indent--;
        do_indent();
        out << "}\n";
    }
}

void CodeGen_C99::visit(const AssertStmt *op) {
    print_assert(op);
}

void CodeGen_C99::visit(const ProducerConsumer *op) {
    do_indent();
    out << "/* " << (op->is_producer ? "produce " : "consume ") << op->name << " */\n";
    print_stmt(op->body);
}

void CodeGen_C99::visit(const For *op) {
    if (op->for_type == ForType::Vectorized)
        unsupported("vectorized loops inside kernels yet");
    const std::string v = id(op->name);
    const std::string mn = print_expr(op->min), ext = print_expr(op->extent);
    do_indent();
    if (is_const_zero(op->min)) {
        out << "for (int32_t " << v << " = 0; " << v << " < " << ext << "; " << v << "++) {\n";
    } else {
        out << "for (int32_t " << v << " = " << mn << "; " << v << " < " << mn << " + " << ext
            << "; " << v << "++) {\n";
    }
    indent++;
    open_scope();
    declare(v);
    begin_region(op->body, op->name);
    print_stmt(op->body);
    close_scope();
    indent--;
    do_indent();
    out << "}\n";
}

void CodeGen_C99::visit(const Store *op) {
    check_scalar(op->value);
    check_scalar(op->index);
    if (!is_const_one(op->predicate))
        unsupported("predicated stores");
    const std::string value = print_expr(op->value);
    const std::string ref = buffer_ref(op->name, op->value.type(), op->index);
    do_indent();
    out << ref << " = " << value << ";\n";
}

void CodeGen_C99::visit(const Provide *) {
    unsupported("Provide (IR before storage flattening)");
}
void CodeGen_C99::visit(const Realize *) {
    unsupported("Realize (IR before storage flattening)");
}
void CodeGen_C99::visit(const Allocate *op) {
    print_allocate(op);
}
void CodeGen_C99::visit(const Free *op) {
    print_free(op);
}

void CodeGen_C99::visit(const Block *op) {
    print_stmt(op->first);
    print_stmt(op->rest);
}

void CodeGen_C99::visit(const IfThenElse *op) {
    const std::string c = print_expr(op->condition);
    do_indent();
    out << "if (" << c << ") {\n";
    indent++;
    open_scope();
    begin_region(op->then_case, "");
    print_stmt(op->then_case);
    close_scope();
    indent--;
    if (op->else_case.defined()) {
        do_indent();
        out << "} else {\n";
        indent++;
        open_scope();
        begin_region(op->else_case, "");
        print_stmt(op->else_case);
        close_scope();
        indent--;
    }
    do_indent();
    out << "}\n";
}

void CodeGen_C99::visit(const Evaluate *op) {
    if (const Call *c = op->value.as<Call>()) {
        if (print_own_call(c))
            return;
    }
    if (is_const(op->value))
        return;
    const std::string e = print_expr(op->value);
    do_indent();
    out << "(void)" << e << ";\n";
}

void CodeGen_C99::visit(const Prefetch *op) {
    print_stmt(op->body);
}
void CodeGen_C99::visit(const Acquire *) {
    unsupported("semaphores (async)");
}
void CodeGen_C99::visit(const Fork *) {
    unsupported("fork (async)");
}
void CodeGen_C99::visit(const Atomic *) {
    unsupported("atomics");
}

} // namespace sw
