/** \file
 * A printer of lowered Halide IR as plain C99, the common base of the CPE (slave) and MPE
 * (host) code generators.
 *
 * It prints the scalar subset of the IR that Sunway kernels use: loops, lets, loads and
 * stores, arithmetic with Halide's semantics (floor division, Euclidean modulo, division
 * by zero gives zero) through small static inline helpers, min/max, selects, casts and
 * the math intrinsics. Anything else (vectors, GPU intrinsics, unknown calls) is a user
 * error naming the construct, never silently wrong code. Subclasses decide how buffers
 * are allocated and freed, what calls to their own intrinsics print, and what an
 * assertion does.
 */
#ifndef SW_CODEGEN_C99_H
#define SW_CODEGEN_C99_H

#include "Halide.h"

#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace sw {

class CodeGen_C99 : public Halide::Internal::IRVisitor {
public:
    /** Prints \p s at the current indentation into the body stream. */
    void print_stmt(const Halide::Internal::Stmt &s);
    /** \p e as a C expression. */
    std::string print_expr(const Halide::Expr &e);
    /** The C identifier for a Halide name (sanitised, unique in this printer). */
    std::string id(const std::string &name);
    /** The C type of a scalar Halide type. */
    static std::string c_type(const Halide::Type &t);
    /** Definitions of the static inline helpers the printed code needs. */
    std::string helper_definitions() const;
    /** The same, one entry per helper (a definition may span several lines). */
    std::vector<std::string> helper_definition_list() const;
    /** What has been printed so far. */
    std::string body() const { return out.str(); }

    /** Declares \p name as a pointer to \p t elements (so loads and stores need no cast). */
    void declare_buffer(const std::string &name, const Halide::Type &t);

protected:
    std::ostringstream out;
    int indent = 1;
    std::string last; // result of the last visited expression

    void do_indent() { out << std::string(indent * 4, ' '); }
    void open_scope() { scopes.emplace_back(); }
    void close_scope() { scopes.pop_back(); }
    void declare(const std::string &c_name) { scopes.back().insert(c_name); }
    /** Whether \p c_name is declared in the innermost C block (declaring it again there would
     * be a redefinition). */
    bool declared_here(const std::string &c_name) const { return scopes.back().count(c_name) != 0; }
    bool visible(const std::string &c_name) const;
    std::string helper(const std::string &op, const Halide::Type &t);
    /** Adds a helper definition (usually one line) under \p name, once. */
    void define_helper(const std::string &name, const std::string &definition);
    std::string buffer_ref(const std::string &name, const Halide::Type &t,
                           const Halide::Expr &index);

    /** Hooks for subclasses. */
    /** Called at the start of each loop body (with the loop's variable) and branch (with an
     * empty one), before its statements. */
    virtual void begin_region(const Halide::Internal::Stmt &region, const std::string &loop_var) {
        (void)region;
        (void)loop_var;
    }
    virtual void print_allocate(const Halide::Internal::Allocate *op) = 0;
    /** Whether the printed \p body refers to the variable \p name (a let it does not is left
     * out). The base: any use in the IR. */
    virtual bool prints_var(const Halide::Internal::Stmt &body, const std::string &name) const;
    virtual void print_free(const Halide::Internal::Free *op) = 0;
    virtual void print_assert(const Halide::Internal::AssertStmt *op) = 0;
    /** Prints an Evaluate of a call the subclass owns; returns false if it is not one. */
    virtual bool print_own_call(const Halide::Internal::Call *op) = 0;
    /** The C text of a call the base printer does not know, or "" (an error follows). */
    virtual std::string own_call_expr(const Halide::Internal::Call *op) {
        (void)op;
        return "";
    }
    [[noreturn]] void unsupported(const std::string &what) const;
    /** Rejects vector expressions; a printer that supports some vector types overrides it. */
    virtual void check_scalar(const Halide::Expr &e);
    /** The C type of a value (a let); vector-capable printers override it. */
    virtual std::string value_type(const Halide::Type &t) { return c_type(t); }

    using Halide::Internal::IRVisitor::visit;
    void visit(const Halide::Internal::IntImm *) override;
    void visit(const Halide::Internal::UIntImm *) override;
    void visit(const Halide::Internal::FloatImm *) override;
    void visit(const Halide::Internal::StringImm *) override;
    void visit(const Halide::Internal::Cast *) override;
    void visit(const Halide::Internal::Variable *) override;
    void visit(const Halide::Internal::Add *) override;
    void visit(const Halide::Internal::Sub *) override;
    void visit(const Halide::Internal::Mul *) override;
    void visit(const Halide::Internal::Div *) override;
    void visit(const Halide::Internal::Mod *) override;
    void visit(const Halide::Internal::Min *) override;
    void visit(const Halide::Internal::Max *) override;
    void visit(const Halide::Internal::EQ *) override;
    void visit(const Halide::Internal::NE *) override;
    void visit(const Halide::Internal::LT *) override;
    void visit(const Halide::Internal::LE *) override;
    void visit(const Halide::Internal::GT *) override;
    void visit(const Halide::Internal::GE *) override;
    void visit(const Halide::Internal::And *) override;
    void visit(const Halide::Internal::Or *) override;
    void visit(const Halide::Internal::Not *) override;
    void visit(const Halide::Internal::Select *) override;
    void visit(const Halide::Internal::Load *) override;
    void visit(const Halide::Internal::Ramp *) override;
    void visit(const Halide::Internal::Broadcast *) override;
    void visit(const Halide::Internal::Call *) override;
    void visit(const Halide::Internal::Let *) override;
    void visit(const Halide::Internal::Shuffle *) override;
    void visit(const Halide::Internal::VectorReduce *) override;

    void visit(const Halide::Internal::LetStmt *) override;
    void visit(const Halide::Internal::AssertStmt *) override;
    void visit(const Halide::Internal::ProducerConsumer *) override;
    void visit(const Halide::Internal::For *) override;
    void visit(const Halide::Internal::Store *) override;
    void visit(const Halide::Internal::Provide *) override;
    void visit(const Halide::Internal::Allocate *) override;
    void visit(const Halide::Internal::Free *) override;
    void visit(const Halide::Internal::Realize *) override;
    void visit(const Halide::Internal::Block *) override;
    void visit(const Halide::Internal::IfThenElse *) override;
    void visit(const Halide::Internal::Evaluate *) override;
    void visit(const Halide::Internal::Prefetch *) override;
    void visit(const Halide::Internal::Acquire *) override;
    void visit(const Halide::Internal::Fork *) override;
    void visit(const Halide::Internal::Atomic *) override;

private:
    std::map<std::string, std::string> ids;
    std::set<std::string> used_ids;
    std::vector<std::set<std::string>> scopes{{}};
    std::map<std::string, Halide::Type> buffer_types;
    std::map<std::string, std::string> helpers; // name -> definition

    void binary(const Halide::Expr &a, const char *op, const Halide::Expr &b);
};

} // namespace sw

#endif
