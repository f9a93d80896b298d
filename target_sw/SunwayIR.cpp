/** \file
 * Builders and matchers of the Sunway IR vocabulary: the only place that knows the argument
 * positions of the Sunway intrinsics.
 */
#include "target_sw/SunwayIR.h"

#include <sstream>
#include <stdexcept>

namespace sw {
namespace ir {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** Arguments of sw_dma_request, in order. */
enum DmaRequestArg {
    IsPut,     ///< 1 for LDM -> main memory
    LdmBuffer, ///< StringImm
    LdmIndex,
    MainBuffer, ///< StringImm
    MainIndex,
    BlockElems,
    Rows,
    PitchElems,
    SiteId,
    ArgCount, ///< a BCAST_MODE get has one more: the row mask
};

/** A Sunway intrinsic that does not have the shape this file builds: a bug of a pass. */
[[noreturn]] void malformed(const Call *c, const std::string &what) {
    std::ostringstream s;
    s << "internal error: malformed Sunway intrinsic " << Expr(c) << ": " << what;
    throw std::logic_error(s.str());
}

bool named(const Call *c, const char *name) {
    return c && c->name == name;
}

const Call *evaluated(const Stmt &s) {
    const Evaluate *e = s.as<Evaluate>();
    return e ? e->value.as<Call>() : nullptr;
}

int const_int_arg(const Call *c, size_t i) {
    if (i >= c->args.size())
        malformed(c, "no argument " + std::to_string(i));
    const int64_t *v = as_const_int(c->args[i]);
    if (!v)
        malformed(c, "argument " + std::to_string(i) + " is not a constant");
    return int(*v);
}

std::string string_arg(const Call *c, size_t i) {
    if (i >= c->args.size())
        malformed(c, "no argument " + std::to_string(i));
    const StringImm *s = c->args[i].as<StringImm>();
    if (!s)
        malformed(c, "argument " + std::to_string(i) + " is not a string");
    return s->value;
}

Stmt evaluate(Type t, const char *name, const std::vector<Expr> &args) {
    return Evaluate::make(Call::make(t, name, args, Call::Extern));
}

} // namespace

bool is_sunway_intrinsic(const Call *c) {
    if (!c)
        return false;
    for (const char *n : {launch_name, dma_begin_name, dma_request_name, dma_wait_name,
                          bcast_barrier_name, bcast_issuer_name, cpe_id_name, regcomm_share_name}) {
        if (c->name == n)
            return true;
    }
    return false;
}

Stmt make_launch(int kernel) {
    return evaluate(Int(32), launch_name, {kernel});
}

std::optional<int> as_launch(const Call *c) {
    if (!named(c, launch_name))
        return std::nullopt;
    return const_int_arg(c, 0);
}

Stmt make_dma_begin(int site) {
    return evaluate(Int(32), dma_begin_name, {site});
}
Stmt make_dma_wait(int site) {
    return evaluate(Int(32), dma_wait_name, {site});
}

std::optional<int> as_dma_begin(const Call *c) {
    if (!named(c, dma_begin_name))
        return std::nullopt;
    return const_int_arg(c, 0);
}
std::optional<int> as_dma_wait(const Call *c) {
    if (!named(c, dma_wait_name))
        return std::nullopt;
    return const_int_arg(c, 0);
}
std::optional<int> as_dma_begin(const Stmt &s) {
    return as_dma_begin(evaluated(s));
}
std::optional<int> as_dma_wait(const Stmt &s) {
    return as_dma_wait(evaluated(s));
}

namespace {
constexpr const char *padding_fill_prefix = "sw_padding_fill.";
} // namespace

Stmt make_padding_fill(const std::string &buffer, const Stmt &fill) {
    return ProducerConsumer::make(padding_fill_prefix + buffer, true, fill);
}

std::optional<std::pair<std::string, Stmt>> as_padding_fill(const Stmt &s) {
    const ProducerConsumer *p = s.as<ProducerConsumer>();
    const std::string prefix = padding_fill_prefix;
    if (!p || p->name.compare(0, prefix.size(), prefix) != 0)
        return std::nullopt;
    return std::make_pair(p->name.substr(prefix.size()), p->body);
}

Expr dma_request(const DmaRequest &r) {
    std::vector<Expr> args(ArgCount);
    args[IsPut] = r.is_put ? 1 : 0;
    args[LdmBuffer] = StringImm::make(r.ldm_buffer);
    args[LdmIndex] = r.ldm_index;
    args[MainBuffer] = StringImm::make(r.main_buffer);
    args[MainIndex] = r.main_index;
    args[BlockElems] = r.block_elems;
    args[Rows] = r.rows;
    args[PitchElems] = r.pitch_elems;
    args[SiteId] = r.site;
    if (r.bcast_mask.defined())
        args.push_back(r.bcast_mask);
    return Call::make(Int(32), dma_request_name, args, Call::Extern);
}

Stmt make_dma_request(const DmaRequest &r) {
    return Evaluate::make(dma_request(r));
}

std::optional<DmaRequest> as_dma_request(const Call *c) {
    if (!named(c, dma_request_name))
        return std::nullopt;
    if (c->args.size() != ArgCount && c->args.size() != ArgCount + 1)
        malformed(c, "wrong number of arguments");
    DmaRequest r;
    r.is_put = is_const_one(c->args[IsPut]);
    r.ldm_buffer = string_arg(c, LdmBuffer);
    r.ldm_index = c->args[LdmIndex];
    r.main_buffer = string_arg(c, MainBuffer);
    r.main_index = c->args[MainIndex];
    r.block_elems = c->args[BlockElems];
    r.rows = c->args[Rows];
    r.pitch_elems = c->args[PitchElems];
    r.site = const_int_arg(c, SiteId);
    if (c->args.size() > ArgCount)
        r.bcast_mask = c->args[ArgCount];
    return r;
}

bool is_dma_intrinsic(const Call *c) {
    return named(c, dma_begin_name) || named(c, dma_request_name) || named(c, dma_wait_name);
}

std::optional<int> dma_site(const Call *c) {
    if (named(c, dma_request_name))
        return const_int_arg(c, SiteId);
    if (named(c, dma_begin_name) || named(c, dma_wait_name))
        return const_int_arg(c, 0);
    return std::nullopt;
}

Expr with_dma_site(const Call *c, int site) {
    if (!is_dma_intrinsic(c))
        throw std::logic_error(
            "internal error: with_dma_site of a call that is not a DMA intrinsic");
    std::vector<Expr> args = c->args;
    args[named(c, dma_request_name) ? SiteId : 0] = site;
    return Call::make(c->type, c->name, args, c->call_type);
}

Stmt make_bcast_barrier() {
    return evaluate(Int(32), bcast_barrier_name, {});
}
bool is_bcast_barrier(const Call *c) {
    return named(c, bcast_barrier_name);
}
bool is_bcast_barrier(const Stmt &s) {
    return is_bcast_barrier(evaluated(s));
}

Expr bcast_issuer(int issuers, int row_width) {
    std::vector<Expr> args = {Expr(issuers)};
    if (row_width > 0)
        args.push_back(Expr(row_width));
    return Call::make(Bool(), bcast_issuer_name, args, Call::Extern);
}
int bcast_issuers(const Call *c) {
    if (!named(c, bcast_issuer_name))
        malformed(c, "not sw_bcast_issuer");
    const size_t args = c->args.size();
    const int64_t *n = args == 1 || args == 2 ? as_const_int(c->args[0]) : nullptr;
    if (!n || *n < 1)
        malformed(c, "the number of issuers is not a positive constant");
    return int(*n);
}
int bcast_issuer_row_width(const Call *c) {
    bcast_issuers(c); // checks the call
    if (c->args.size() < 2)
        return 0;
    const int64_t *w = as_const_int(c->args[1]);
    if (!w || *w < 1)
        malformed(c, "the row width is not a positive constant");
    return int(*w);
}
Expr cpe_id() {
    return Call::make(Int(32), cpe_id_name, {}, Call::Extern);
}
bool is_cpe_id(const Call *c) {
    return named(c, cpe_id_name);
}
bool is_bcast_issuer(const Call *c) {
    return named(c, bcast_issuer_name);
}
bool is_bcast_issuer(const Expr &e) {
    return is_bcast_issuer(e.as<Call>());
}

Stmt make_regcomm_share(const RegcommShare &r) {
    return evaluate(Int(32), regcomm_share_name,
                    {StringImm::make(r.buffer), Expr(r.bytes), Expr(int(r.how)), r.offset});
}

std::optional<RegcommShare> as_regcomm_share(const Call *c) {
    if (!named(c, regcomm_share_name))
        return std::nullopt;
    if (c->args.size() != 4)
        malformed(c, "wrong number of arguments");
    const int64_t *bytes = as_const_int(c->args[1]), *how = as_const_int(c->args[2]);
    if (!bytes)
        malformed(c, "a size that is not a constant");
    if (!how || (*how != int(Sharing::RegComm) && *how != int(Sharing::RegCommRow) &&
                 *how != int(Sharing::RegCommColumn)))
        malformed(c, "a sharing that is not a register-communication one");
    return RegcommShare{string_arg(c, 0), *bytes, Sharing(*how), c->args[3]};
}

bool is_collective(const Call *c) {
    return named(c, bcast_barrier_name) || named(c, bcast_issuer_name) ||
           named(c, regcomm_share_name);
}

bool has_collective(const Stmt &s) {
    if (!s.defined())
        return false;
    class Find : public IRVisitor {
    public:
        bool found = false;

    private:
        using IRVisitor::visit;
        void visit(const Call *op) override {
            found |= is_collective(op);
            IRVisitor::visit(op);
        }
    } f;
    s.accept(&f);
    return f.found;
}

Expr block_active() {
    return Variable::make(Bool(), block_active_name);
}

std::string new_register_name() {
    return unique_name(register_prefix);
}

bool is_register(const std::string &name) {
    return name.rfind(register_prefix, 0) == 0;
}

bool vector_access_aligned(const Type &t, const ModulusRemainder &a) {
    const int64_t lanes = t.lanes();
    return lanes > 1 && a.modulus % lanes == 0 && a.remainder % lanes == 0;
}

bool issues_only(const Stmt &s) {
    if (const LetStmt *l = s.as<LetStmt>())
        return issues_only(l->body);
    if (const ProducerConsumer *p = s.as<ProducerConsumer>())
        return issues_only(p->body);
    if (const Block *b = s.as<Block>())
        return issues_only(b->first) && issues_only(b->rest);
    if (const IfThenElse *i = s.as<IfThenElse>())
        return issues_only(i->then_case) && (!i->else_case.defined() || issues_only(i->else_case));
    if (const For *f = s.as<For>())
        return issues_only(f->body);
    const Evaluate *e = s.as<Evaluate>();
    if (!e)
        return false;
    if (is_const(e->value))
        return true;
    const Call *c = e->value.as<Call>();
    return c && (as_dma_request(c) || as_dma_begin(c));
}

RequestSites request_sites(const Stmt &s, bool skip_loops) {
    class Find : public IRVisitor {
    public:
        explicit Find(bool skip_loops) : skip_loops(skip_loops) {}
        RequestSites found;

    private:
        using IRVisitor::visit;
        bool skip_loops;
        void visit(const For *op) override {
            if (!skip_loops || issues_only(op->body))
                IRVisitor::visit(op);
        }
        void visit(const Call *op) override {
            if (std::optional<DmaRequest> r = as_dma_request(op)) {
                found.any = true;
                if (!r->is_put)
                    found.gets.insert(r->site);
            }
            IRVisitor::visit(op);
        }
    } f(skip_loops);
    if (s.defined())
        s.accept(&f);
    return f.found;
}

} // namespace ir
} // namespace sw
