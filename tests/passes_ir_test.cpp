/** \file
 * IR-level tests of four Sunway passes that had none (issue 22): DelayDmaWaits,
 * PromoteAccumulators, AlignVectorAccesses and DoubleBuffer; and of DeferTileGets,
 * PipelineTilePuts and MergeBlockPartitions. Each test builds
 * a small sw::CpeKernel whose body is hand-made IR (the shape InjectDma and Halide's lowering give
 * the passes), runs the pass function directly and asserts on the IR it returns: where each
 * statement went, what was added, and that the pass leaves alone what its header says it
 * must not touch.
 *
 * Most assertions compare a trace of the body: its DMA calls, loads, stores, loops,
 * branches, lets and allocations in program order, one token each (see Trace).
 */
#include "Halide.h"
#include "target_sw/AlignVectorAccesses.h"
#include "target_sw/DeferTileGets.h"
#include "target_sw/DelayDmaWaits.h"
#include "target_sw/DoubleBuffer.h"
#include "target_sw/HoistPaddingFill.h"
#include "target_sw/InjectDma.h"
#include "target_sw/MergeBlockPartitions.h"
#include "target_sw/PipelineRoundPuts.h"
#include "target_sw/PipelineTilePuts.h"
#include "target_sw/PromoteAccumulators.h"
#include "target_sw/SunwayIR.h"
#include "target_sw/SwModule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace Halide;
using namespace Halide::Internal;

// ---------------------------------------------------------------------------------------
// Building IR

Expr var(const std::string &name, Type t = Int(32)) {
    return Variable::make(t, name);
}

/** A dense floatv4 index starting at \p base (or any stride). */
Expr ramp(const Expr &base, int stride = 1) {
    return Ramp::make(base, stride, 4);
}

/** A float load (a vector load when \p index is a vector). */
Expr load(const std::string &buffer, const Expr &index) {
    const int lanes = index.type().lanes();
    return Load::make(Float(32, lanes), buffer, index, Buffer<>(), Parameter(), const_true(lanes),
                      ModulusRemainder());
}

Stmt store(const std::string &buffer, const Expr &value, const Expr &index) {
    return Store::make(buffer, value, index, Parameter(), const_true(index.type().lanes()),
                       ModulusRemainder());
}

/** A float constant of the lanes of \p index. */
Expr fconst(float v, const Expr &index) {
    const int lanes = index.type().lanes();
    return lanes > 1 ? Broadcast::make(Expr(v), lanes) : Expr(v);
}

Stmt loop(const std::string &name, const Expr &min, const Expr &extent, const Stmt &body,
          ForType type = ForType::Serial) {
    return For::make(name, min, extent, type, DeviceAPI::None, body);
}

/** An LDM (GPUShared) float buffer of \p elems elements around \p body. */
Stmt alloc(const std::string &name, int elems, const Stmt &body) {
    return Allocate::make(name, Float(32), MemoryType::GPUShared, {Expr(elems)}, const_true(),
                          body);
}

Stmt block(const std::vector<Stmt> &stmts) {
    return Block::make(stmts);
}

/** One sw_dma_request of \p site as InjectDma emits it: \p block contiguous elements. */
Stmt request(int site, bool is_put, const std::string &ldm, const Expr &ldm_index,
             const std::string &main, const Expr &main_index, int block_elems) {
    sw::ir::DmaRequest r;
    r.is_put = is_put;
    r.ldm_buffer = ldm;
    r.ldm_index = ldm_index;
    r.main_buffer = main;
    r.main_index = main_index;
    r.block_elems = block_elems;
    r.rows = 1;
    r.pitch_elems = block_elems;
    r.site = site;
    return sw::ir::make_dma_request(r);
}

/** The whole transfer of \p site as InjectDma leaves it: begin, one request, wait. */
Stmt transfer(int site, bool is_put, const std::string &ldm, const Expr &ldm_index,
              const std::string &main, const Expr &main_index, int block_elems) {
    return block({sw::ir::make_dma_begin(site),
                  request(site, is_put, ldm, ldm_index, main, main_index, block_elems),
                  sw::ir::make_dma_wait(site)});
}
Stmt get(int site, const std::string &ldm, const std::string &main = "main") {
    return transfer(site, false, ldm, 0, main, 0, 16);
}
Stmt put(int site, const std::string &ldm, const std::string &main = "main") {
    return transfer(site, true, ldm, 0, main, 0, 16);
}

sw::CpeKernel kernel(const Stmt &body, const std::vector<std::string> &ldm_buffers) {
    sw::CpeKernel k;
    k.name = "k";
    for (const std::string &b : ldm_buffers)
        k.ldm.push_back({b, Float(32), 64});
    k.body = body;
    return k;
}

// ---------------------------------------------------------------------------------------
// Inspecting IR

/** The body in program order, one token per event: "begin0", "get0" / "put0" (a request of
 * site 0), "wait0", "ld:B", "st:B" (after the loads of its value), "for:x{ ... }",
 * "if{ ... }" and "else{ ... }", "let:x{ ... }" (after the loads of its value), "alloc:B{ ... }"
 * ("alloc:B(register){" for a register), "free:B". The registers PromoteAccumulators introduces are
 * named reg0, reg1, ... in order of appearance. Evaluate(0) (left by passes in place of a
 * statement) is not shown. Conditions of branches are not traced. */
class Trace : public IRVisitor {
public:
    /** \p registers: the register names of the body, in the order they were created. */
    explicit Trace(const std::vector<std::string> &registers) {
        for (size_t i = 0; i < registers.size(); i++)
            this->registers[registers[i]] = "reg" + std::to_string(i);
    }
    std::vector<std::string> tokens;

private:
    using IRVisitor::visit;
    std::map<std::string, std::string> registers;

    std::string name(const std::string &n) {
        auto it = registers.find(n);
        return it == registers.end() ? n : it->second;
    }
    void visit(const Evaluate *op) override {
        const Call *c = op->value.as<Call>();
        if (!c)
            return;
        if (const auto site = sw::ir::as_dma_begin(c)) {
            tokens.push_back("begin" + std::to_string(*site));
        } else if (const auto site = sw::ir::as_dma_wait(c)) {
            tokens.push_back("wait" + std::to_string(*site));
        } else if (const auto r = sw::ir::as_dma_request(c)) {
            tokens.push_back((r->is_put ? "put" : "get") + std::to_string(r->site));
        } else {
            IRVisitor::visit(op);
        }
    }
    void visit(const Load *op) override {
        IRVisitor::visit(op);
        tokens.push_back("ld:" + name(op->name));
    }
    void visit(const Store *op) override {
        IRVisitor::visit(op);
        tokens.push_back("st:" + name(op->name));
    }
    void visit(const For *op) override {
        tokens.push_back("for:" + op->name + "{");
        op->body.accept(this);
        tokens.push_back("}");
    }
    void visit(const IfThenElse *op) override {
        tokens.push_back("if{");
        op->then_case.accept(this);
        tokens.push_back("}");
        if (op->else_case.defined()) {
            tokens.push_back("else{");
            op->else_case.accept(this);
            tokens.push_back("}");
        }
    }
    void visit(const LetStmt *op) override {
        op->value.accept(this);
        tokens.push_back("let:" + op->name + "{");
        op->body.accept(this);
        tokens.push_back("}");
    }
    void visit(const Allocate *op) override {
        tokens.push_back("alloc:" + name(op->name) +
                         (op->memory_type == MemoryType::Register ? "(register)" : "") + "{");
        op->body.accept(this);
        tokens.push_back("}");
    }
    void visit(const Free *op) override { tokens.push_back("free:" + name(op->name)); }
};

/** The names of the Register allocations of a body in the order unique_name made them (its
 * numeric suffix). */
class Registers : public IRVisitor {
public:
    std::vector<std::pair<long, std::string>> found;

private:
    using IRVisitor::visit;
    void visit(const Allocate *op) override {
        if (op->memory_type == MemoryType::Register) {
            const size_t digits = op->name.find_last_not_of("0123456789") + 1;
            found.push_back(
                {digits < op->name.size() ? std::stol(op->name.substr(digits)) : -1, op->name});
        }
        IRVisitor::visit(op);
    }
};

std::string trace(const Stmt &s) {
    Registers r;
    s.accept(&r);
    std::sort(r.found.begin(), r.found.end());
    std::vector<std::string> registers;
    for (const auto &reg : r.found)
        registers.push_back(reg.second);
    Trace t(registers);
    s.accept(&t);
    std::string out;
    for (const std::string &tok : t.tokens)
        out += (out.empty() ? "" : " ") + tok;
    return out;
}

/** The IR as Halide prints it, for failure messages. */
std::string ir(const Stmt &s) {
    std::ostringstream o;
    o << s;
    return o.str();
}

/** Every Allocate of a body. */
class Allocations : public IRVisitor {
public:
    std::vector<const Allocate *> found;

private:
    using IRVisitor::visit;
    void visit(const Allocate *op) override {
        found.push_back(op);
        IRVisitor::visit(op);
    }
};
std::vector<const Allocate *> allocations(const Stmt &s) {
    Allocations a;
    s.accept(&a);
    return a.found;
}

/** Every sw_dma_request of a body, in program order. */
class Requests : public IRVisitor {
public:
    std::vector<const Call *> found;

private:
    using IRVisitor::visit;
    void visit(const Call *op) override {
        if (sw::ir::as_dma_request(op))
            found.push_back(op);
        IRVisitor::visit(op);
    }
};
std::vector<const Call *> requests(const Stmt &s) {
    Requests r;
    s.accept(&r);
    return r.found;
}

/** The loads and stores of one buffer, in program order (stores after their value). */
struct Access {
    bool is_store;
    Expr index;
    ModulusRemainder alignment;
    Type type;
};
class Accesses : public IRVisitor {
public:
    explicit Accesses(const std::string &buffer) : buffer(buffer) {}
    std::vector<Access> found;

private:
    using IRVisitor::visit;
    std::string buffer;
    void visit(const Load *op) override {
        IRVisitor::visit(op);
        if (op->name == buffer)
            found.push_back({false, op->index, op->alignment, op->type});
    }
    void visit(const Store *op) override {
        IRVisitor::visit(op);
        if (op->name == buffer)
            found.push_back({true, op->index, op->alignment, op->value.type()});
    }
};
std::vector<Access> accesses(const Stmt &s, const std::string &buffer) {
    Accesses a(buffer);
    s.accept(&a);
    return a.found;
}

/** Whether \p a - \p b simplifies to zero. */
bool same(const Expr &a, const Expr &b) {
    return is_const_zero(simplify(a - b));
}

// =======================================================================================
// DelayDmaWaits: a wait moves down to the first statement that needs the transfer done.

TEST(DelayDmaWaits, AGetsWaitMovesToJustBeforeTheFirstReadOfItsBuffer) {
    sw::CpeKernel k =
        kernel(alloc("A", 16,
                     alloc("C", 16,
                           block({get(0, "A"), store("C", 1.f, 0), store("C", 2.f, 1),
                                  store("C", load("A", 0), 2), store("C", load("A", 1), 3)}))),
               {"A", "C"});
    sw::delay_dma_waits(k);
    // Past the two stores that do not touch A, not past the first read of A.
    EXPECT_EQ(trace(k.body),
              "alloc:A{ alloc:C{ begin0 get0 st:C st:C wait0 ld:A st:C ld:A st:C } }")
        << ir(k.body);
}

TEST(DelayDmaWaits, AGetsWaitDoesNotMovePastAWriteOfItsBuffer) {
    sw::CpeKernel k = kernel(alloc("A", 16,
                                   alloc("C", 16,
                                         block({get(0, "A"), store("C", 1.f, 0), store("A", 5.f, 0),
                                                store("C", 2.f, 1)}))),
                             {"A", "C"});
    sw::delay_dma_waits(k);
    EXPECT_EQ(trace(k.body), "alloc:A{ alloc:C{ begin0 get0 st:C wait0 st:A st:C } }")
        << ir(k.body);
}

TEST(DelayDmaWaits, TwoGetsAreBothIssuedBeforeEitherIsWaitedFor) {
    sw::CpeKernel k =
        kernel(alloc("A", 16,
                     alloc("B", 16,
                           alloc("C", 16,
                                 block({get(0, "A"), get(1, "B"), store("C", load("A", 0), 0),
                                        store("C", load("B", 0), 1)})))),
               {"A", "B", "C"});
    sw::delay_dma_waits(k);
    // The transfers overlap; each wait sits right before its own buffer's first use.
    EXPECT_EQ(
        trace(k.body),
        "alloc:A{ alloc:B{ alloc:C{ begin0 get0 begin1 get1 wait0 ld:A st:C wait1 ld:B st:C } } }")
        << ir(k.body);
}

TEST(DelayDmaWaits, APutsWaitMovesPastReadsOfItsBufferButNotPastAWrite) {
    sw::CpeKernel k =
        kernel(alloc("A", 16,
                     alloc("C", 16,
                           block({store("A", 3.f, 0), put(0, "A"), store("C", load("A", 0), 0),
                                  store("C", 2.f, 1), store("A", 4.f, 0)}))),
               {"A", "C"});
    sw::delay_dma_waits(k);
    EXPECT_EQ(trace(k.body), "alloc:A{ alloc:C{ st:A begin0 put0 ld:A st:C st:C wait0 st:A } }")
        << ir(k.body);
}

TEST(DelayDmaWaits, ASecondTransferOfTheSameBufferWaitsForTheFirstBeforeItsRequest) {
    sw::CpeKernel k = kernel(
        alloc("A", 16,
              alloc("C", 16, block({get(0, "A"), get(1, "A"), store("C", load("A", 0), 0)}))),
        {"A", "C"});
    sw::delay_dma_waits(k);
    EXPECT_EQ(trace(k.body), "alloc:A{ alloc:C{ begin0 get0 begin1 wait0 get1 wait1 ld:A st:C } }")
        << ir(k.body);
}

TEST(DelayDmaWaits, AWaitMovesThroughLetsToTheUseInsideThem) {
    sw::CpeKernel k =
        kernel(alloc("A", 16,
                     alloc("C", 16,
                           block({get(0, "A"),
                                  LetStmt::make("t", 3,
                                                block({store("C", 1.f, 0),
                                                       store("C", load("A", var("t")), 1)}))}))),
               {"A", "C"});
    sw::delay_dma_waits(k);
    EXPECT_EQ(trace(k.body), "alloc:A{ alloc:C{ begin0 get0 let:t{ st:C wait0 ld:A st:C } } }")
        << ir(k.body);
}

TEST(DelayDmaWaits, AWaitMovesPastALoopThatDoesNotTouchTheBufferButNotIntoOneThatDoes) {
    // A loop that does not touch A: the wait goes past it.
    sw::CpeKernel past =
        kernel(alloc("A", 16,
                     alloc("C", 16,
                           block({get(0, "A"), loop("i", 0, 16, store("C", 1.f, var("i"))),
                                  store("C", load("A", 0), 0)}))),
               {"A", "C"});
    sw::delay_dma_waits(past);
    EXPECT_EQ(trace(past.body), "alloc:A{ alloc:C{ begin0 get0 for:i{ st:C } wait0 ld:A st:C } }")
        << ir(past.body);

    // A loop that reads A: the wait stays before it, not inside it (once, not per iteration).
    sw::CpeKernel before =
        kernel(alloc("A", 16,
                     alloc("C", 16,
                           block({get(0, "A"), store("C", 1.f, 0),
                                  loop("i", 0, 16, store("C", load("A", var("i")), var("i")))}))),
               {"A", "C"});
    sw::delay_dma_waits(before);
    EXPECT_EQ(trace(before.body), "alloc:A{ alloc:C{ begin0 get0 st:C wait0 for:i{ ld:A st:C } } }")
        << ir(before.body);
}

TEST(DelayDmaWaits, AWaitIssuedInALoopBodyStaysInThatBody) {
    // Nothing in the body uses A after the transfer: the wait goes to the end of the
    // iteration, never past the loop (each iteration waits for its own transfer).
    sw::CpeKernel k =
        kernel(alloc("A", 16,
                     alloc("C", 16,
                           block({loop("i", 0, 4,
                                       block({transfer(0, false, "A", 0, "main", var("i") * 16, 16),
                                              store("C", 1.f, var("i"))})),
                                  store("C", load("A", 0), 0)}))),
               {"A", "C"});
    sw::delay_dma_waits(k);
    EXPECT_EQ(trace(k.body), "alloc:A{ alloc:C{ for:i{ begin0 get0 st:C wait0 } ld:A st:C } }")
        << ir(k.body);
}

TEST(DelayDmaWaits, AWaitIssuedInABranchStaysInThatBranch) {
    sw::CpeKernel k = kernel(
        alloc("A", 16,
              alloc("C", 16,
                    block({IfThenElse::make(var("c") > 0, block({get(0, "A"), store("C", 1.f, 0)})),
                           store("C", load("A", 0), 1)}))),
        {"A", "C"});
    sw::delay_dma_waits(k);
    EXPECT_EQ(trace(k.body), "alloc:A{ alloc:C{ if{ begin0 get0 st:C wait0 } ld:A st:C } }")
        << ir(k.body);
}

TEST(DelayDmaWaits, PendingWaitsAreIssuedBeforeTheFreeOrTheEndOfTheirBufferAndOfTheKernel) {
    // An explicit Free of the buffer.
    sw::CpeKernel freed =
        kernel(alloc("C", 16,
                     block({get(0, "A"), store("C", 1.f, 0), Free::make("A"), store("C", 2.f, 1)})),
               {"A", "C"});
    sw::delay_dma_waits(freed);
    EXPECT_EQ(trace(freed.body), "alloc:C{ begin0 get0 st:C wait0 free:A st:C }") << ir(freed.body);

    // The end of the buffer's allocation: the wait stays inside it.
    sw::CpeKernel scoped =
        kernel(alloc("C", 16,
                     block({alloc("A", 16, block({get(0, "A"), store("C", 1.f, 0)})),
                            store("C", 2.f, 1)})),
               {"A", "C"});
    sw::delay_dma_waits(scoped);
    EXPECT_EQ(trace(scoped.body), "alloc:C{ alloc:A{ begin0 get0 st:C wait0 } st:C }")
        << ir(scoped.body);

    // A put never followed by anything touching its buffer: waited for at the end of the body.
    sw::CpeKernel tail = kernel(block({put(0, "A"), store("C", 1.f, 0)}), {"A", "C"});
    sw::delay_dma_waits(tail);
    EXPECT_EQ(trace(tail.body), "begin0 put0 st:C wait0") << ir(tail.body);
}

TEST(DelayDmaWaits, AWaitAlreadyAtItsFirstUseStaysThere) {
    sw::CpeKernel k =
        kernel(alloc("A", 16, alloc("C", 16, block({get(0, "A"), store("C", load("A", 0), 0)}))),
               {"A", "C"});
    const std::string before = trace(k.body);
    sw::delay_dma_waits(k);
    EXPECT_EQ(trace(k.body), before) << ir(k.body);
}

// =======================================================================================
// DeferTileGets: a tile's get needed only after a double-buffered loop is issued in that loop,
// after its last prefetch.

/** A get of \p site as DelayDmaWaits leaves it when its wait moved away: begin, request and
 * the no-op left in the wait's place. */
Stmt get_issue(int site, const std::string &ldm, const std::string &main = "main") {
    return block({sw::ir::make_dma_begin(site), request(site, false, ldm, 0, main, 0, 16),
                  Evaluate::make(0)});
}

/** The tile body of a fused residual add: the residual R requested, the chunk loop over W
 * (its prologue before the loop when \p prologue, its prefetch at the top of each iteration),
 * then R waited for and read. */
Stmt residual_tile(bool prologue, const Expr &extent, bool loop_reads_r = false) {
    std::vector<Stmt> loop_body = {
        block({sw::ir::make_dma_begin(1), request(1, false, "W", 0, "weights", var("r"), 16)}),
        sw::ir::make_dma_wait(1), store("C", load("W", 0), var("r"))};
    if (loop_reads_r)
        loop_body.push_back(store("C", load("R", 0), var("r")));
    std::vector<Stmt> tile = {get_issue(0, "R", "residual")};
    if (prologue)
        tile.push_back(
            block({sw::ir::make_dma_begin(1), request(1, false, "W", 0, "weights", 0, 16)}));
    tile.push_back(loop("r", 0, extent, block(loop_body)));
    tile.push_back(sw::ir::make_dma_wait(0));
    tile.push_back(store("C", load("R", 0), 0));
    return alloc("R", 16, alloc("W", 16, alloc("C", 16, block(tile))));
}

TEST(DeferTileGets, AGetUsedAfterADoubleBufferedLoopIsIssuedAfterTheLastPrefetch) {
    sw::CpeKernel k = kernel(residual_tile(true, 4), {"R", "W", "C"});
    sw::defer_tile_gets(k);
    EXPECT_EQ(trace(k.body), "alloc:R{ alloc:W{ alloc:C{ begin1 get1 for:r{ begin1 get1 if{ "
                             "begin0 get0 } wait1 ld:W st:C } wait0 ld:R st:C } } }")
        << ir(k.body);
    // Only in the iteration that issues the last prefetch: r == min + extent - 2.
    class Guard : public IRVisitor {
    public:
        Expr condition;

    private:
        using IRVisitor::visit;
        void visit(const IfThenElse *op) override { condition = op->condition; }
    } guard;
    k.body.accept(&guard);
    ASSERT_TRUE(guard.condition.defined()) << ir(k.body);
    EXPECT_TRUE(equal(guard.condition, var("r") == 2)) << guard.condition;
}

TEST(DeferTileGets, AGuardedGetInRowsFollowsAMeshSourcesPrefetchInRows) {
    // A mesh plan's tile: the residual's rows requested one each by a CPE with a block of the
    // round, the chunk's staging fetched channel by channel by the mesh row's source only
    // (before the loop and as the loop's prefetch). Found on the Pro's emulator: issued at
    // the top, ResNet-18's layer2.0/conv2 waited 32 us for every CPE's residual before its
    // first chunk (0.230 -> 0.204 ms).
    const Expr active = var("active") != 0, source = var("source") != 0;
    auto rows = [](int site, const std::string &ldm, const std::string &main, const Expr &at) {
        return block({sw::ir::make_dma_begin(site),
                      loop("row", 0, 4,
                           request(site, false, ldm, var("row") * 8, main, at + var("row"), 7))});
    };
    const Stmt tile =
        block({IfThenElse::make(active, rows(0, "R", "residual", Expr(0))),
               IfThenElse::make(source, rows(1, "W", "weights", Expr(0))),
               loop("r", 0, 4,
                    block({IfThenElse::make(source, rows(1, "W", "weights", var("r") * 64)),
                           sw::ir::make_dma_wait(1), store("C", load("W", 0), var("r"))})),
               sw::ir::make_dma_wait(0), store("C", load("R", 0), 0)});
    sw::CpeKernel k = kernel(alloc("R", 32, alloc("W", 32, alloc("C", 16, tile))), {"R", "W", "C"});
    sw::defer_tile_gets(k);
    EXPECT_EQ(trace(k.body),
              "alloc:R{ alloc:W{ alloc:C{ if{ begin1 for:row{ get1 } } for:r{ if{ begin1 "
              "for:row{ get1 } } if{ if{ begin0 for:row{ get0 } } } wait1 ld:W st:C } wait0 "
              "ld:R st:C } } }")
        << ir(k.body);
}

TEST(DeferTileGets, AGetStaysWhereItIsWithoutADoubleBufferedLoopAfterIt) {
    // The loop's get is not a prefetch (nothing issued it before the loop): single buffered,
    // the get stays at the top of the tile.
    sw::CpeKernel single = kernel(residual_tile(false, 4), {"R", "W", "C"});
    const std::string before = trace(single.body);
    sw::defer_tile_gets(single);
    EXPECT_EQ(trace(single.body), before) << ir(single.body);

    // A loop of one iteration, or of an extent not known: nothing to overlap.
    for (const Expr &extent : {Expr(1), var("n")}) {
        sw::CpeKernel k = kernel(residual_tile(true, extent), {"R", "W", "C"});
        const std::string was = trace(k.body);
        sw::defer_tile_gets(k);
        EXPECT_EQ(trace(k.body), was) << ir(k.body);
    }
}

TEST(DeferTileGets, AGetStaysWhereItIsWhenTheLoopOrAStatementBeforeItUsesTheBuffer) {
    sw::CpeKernel reads = kernel(residual_tile(true, 4, true), {"R", "W", "C"});
    const std::string before = trace(reads.body);
    sw::defer_tile_gets(reads);
    EXPECT_EQ(trace(reads.body), before) << ir(reads.body);

    // A statement before the loop writes the main-memory buffer the get reads.
    sw::CpeKernel writes =
        kernel(alloc("R", 16,
                     alloc("W", 16,
                           block({get_issue(0, "R", "residual"), store("residual", 1.f, 0),
                                  block({sw::ir::make_dma_begin(1),
                                         request(1, false, "W", 0, "weights", 0, 16)}),
                                  loop("r", 0, 4,
                                       block({sw::ir::make_dma_begin(1),
                                              request(1, false, "W", 0, "weights", var("r"), 16),
                                              sw::ir::make_dma_wait(1)})),
                                  sw::ir::make_dma_wait(0), store("C", load("R", 0), 0)}))),
               {"R", "W", "C"});
    const std::string was = trace(writes.body);
    sw::defer_tile_gets(writes);
    EXPECT_EQ(trace(writes.body), was) << ir(writes.body);
}

// =======================================================================================
// PipelineTilePuts: a tile's put in pieces over the next tile's chunk loop, two output slots.

/** Pixel tiles in turn: for p in [0, tiles), the output tile O (2 rows of 8) computed over a
 * double-buffered chunk loop of \p chunks over W, then put (site 0, rows 64 apart in `out`)
 * and waited for. Sites: 0 the put of O, 1 the gets of W. */
/** Tile p's put of O (site 0): 2 rows of 8, 64 apart in `out`, from out + p * 8. */
sw::ir::DmaRequest tile_put() {
    sw::ir::DmaRequest put;
    put.is_put = true;
    put.ldm_buffer = "O";
    put.ldm_index = 0;
    put.main_buffer = "out";
    put.main_index = var("p") * 8;
    put.block_elems = 8;
    put.rows = 2;
    put.pitch_elems = 64;
    put.site = 0;
    return put;
}

/** A double-buffered loop of \p chunks over W (site 1): each chunk prefetches the next and
 * stores into O. */
Stmt chunk_loop_over_w(int chunks) {
    return loop("r", 0, chunks,
                block({block({sw::ir::make_dma_begin(1),
                              request(1, false, "W", 0, "weights", var("r") + 1, 16)}),
                       sw::ir::make_dma_wait(1), store("O", load("W", 0), var("r"))}));
}

sw::CpeKernel tiles_in_turn(int tiles, int chunks, const sw::ir::DmaRequest &put = tile_put()) {
    const Stmt chunk_loop = chunk_loop_over_w(chunks);
    const Stmt tile = alloc(
        "O", 16,
        block({store("O", 0.f, 0),
               block({sw::ir::make_dma_begin(1), request(1, false, "W", 0, "weights", 0, 16)}),
               chunk_loop,
               ProducerConsumer::make_consume(
                   "O", block({sw::ir::make_dma_begin(0), sw::ir::make_dma_request(put),
                               Evaluate::make(0)})),
               sw::ir::make_dma_wait(0), Free::make("O")}));
    sw::CpeKernel k = kernel(alloc("W", 16, loop("p", 0, tiles, tile)), {"O", "W"});
    k.dma = {{"O", "out", true, "put"}, {"W", "weights", false, "get"}};
    return k;
}

TEST(PipelineTilePuts, EachChunkPutsItsShareOfThePreviousTileAndTheLastTileIsPutAfterTheLoop) {
    sw::CpeKernel k = tiles_in_turn(4, 2);
    sw::pipeline_tile_puts(k, sw::sw26010());
    // O in two slots around the tile loop; a tile waits for the put of its slot two tiles
    // back; each chunk, after its prefetch, puts one of the previous tile's two rows (site 0
    // for slot 0, the new site 2 for slot 1, begun at the first chunk); after the loop the last
    // tile (slot 1) is put whole and both slots are waited for.
    EXPECT_EQ(trace(k.body),
              "alloc:W{ alloc:O{ for:p{ if{ if{ wait0 } else{ wait2 } } st:O begin1 get1 "
              "for:r{ begin1 get1 if{ if{ if{ begin0 } put0 } else{ if{ begin2 } put2 } } "
              "wait1 ld:W st:O } } begin2 put2 wait0 wait2 } }")
        << ir(k.body);
    ASSERT_EQ(k.dma.size(), 3u);
    EXPECT_TRUE(k.dma[2].is_put && k.dma[2].ldm_buffer == "O");
    // Slot p % 2: the stores of tile p at (p % 2) * 32 (16 floats aligned to 128 bytes); the
    // piece of chunk r: row r of tile p - 1, from its slot, to out + (p - 1) * 8 + r * 64.
    const std::vector<const Call *> reqs = requests(k.body);
    ASSERT_EQ(reqs.size(), 5u) << ir(k.body);
    const sw::ir::DmaRequest slot0 = *sw::ir::as_dma_request(reqs[2]);
    const sw::ir::DmaRequest slot1 = *sw::ir::as_dma_request(reqs[3]);
    const sw::ir::DmaRequest last = *sw::ir::as_dma_request(reqs[4]);
    EXPECT_TRUE(same(slot0.ldm_index, var("r") * 8)) << slot0.ldm_index;
    EXPECT_TRUE(same(slot1.ldm_index, var("r") * 8 + 32)) << slot1.ldm_index;
    EXPECT_TRUE(same(slot0.main_index, (var("p") - 1) * 8 + var("r") * 64)) << slot0.main_index;
    EXPECT_TRUE(same(slot0.rows, 1)) << slot0.rows;
    EXPECT_TRUE(same(last.ldm_index, 32) && same(last.main_index, 24) && same(last.rows, 2))
        << last.ldm_index << " " << last.main_index << " " << last.rows;
    const std::vector<Access> stores = accesses(k.body, "O");
    ASSERT_FALSE(stores.empty());
    EXPECT_TRUE(same(stores[0].index, (var("p") % 2) * 32)) << stores[0].index;
}

TEST(PipelineTilePuts, APutOfOneBlockLongerThanItsRowPitchKeepsAContiguousPitchInPieces) {
    // A tile of whole output rows is put as one block of 16 floats whose recorded pitch is the
    // row's 4 (rows = 1, the pitch unused). Its pieces have a number of rows that is not the
    // constant 1, so their pitch becomes a stride: it must be the block, not 4 - 16 (a negative
    // athread stride; a 30x15 tile of a 30-wide conv output did this).
    sw::ir::DmaRequest put = tile_put();
    put.block_elems = 16;
    put.rows = 1;
    put.pitch_elems = 4;
    sw::CpeKernel k = tiles_in_turn(4, 3, put);
    sw::pipeline_tile_puts(k, sw::sw26010());
    ASSERT_EQ(k.dma.size(), 3u) << ir(k.body);
    const std::vector<const Call *> reqs = requests(k.body);
    int puts = 0;
    for (const Call *c : reqs) {
        const sw::ir::DmaRequest r = *sw::ir::as_dma_request(c);
        if (!r.is_put)
            continue;
        ++puts;
        EXPECT_TRUE(is_const_one(simplify(r.rows)) || can_prove(r.pitch_elems >= r.block_elems))
            << r.rows << " rows of " << r.block_elems << ", pitch " << r.pitch_elems;
    }
    EXPECT_EQ(puts, 3) << ir(k.body);
}

TEST(PipelineTilePuts, PrefetchedTilesInTurnPutWholeTilesIntoTwoSlots) {
    // Tiles in turn without a chunk loop, the next tile's W prefetched (DoubleBuffer: a get
    // of site 1 before the loop and at the top of each tile): each tile's put, whole, into its
    // slot where it was issued, waited for two tiles later and after the loop.
    const sw::ir::DmaRequest put = tile_put();
    const Stmt tile =
        alloc("O", 16,
              block({block({sw::ir::make_dma_begin(1),
                            request(1, false, "W", 0, "weights", var("p") + 1, 16)}),
                     sw::ir::make_dma_wait(1), store("O", load("W", 0), 0),
                     ProducerConsumer::make_consume(
                         "O", block({sw::ir::make_dma_begin(0), sw::ir::make_dma_request(put),
                                     Evaluate::make(0)})),
                     sw::ir::make_dma_wait(0), Free::make("O")}));
    const Stmt prologue =
        block({sw::ir::make_dma_begin(1), request(1, false, "W", 0, "weights", 0, 16)});
    sw::CpeKernel k = kernel(alloc("W", 16, block({prologue, loop("p", 0, 5, tile)})), {"O", "W"});
    k.dma = {{"O", "out", true, "put"}, {"W", "weights", false, "get"}};
    sw::pipeline_tile_puts(k, sw::sw26010());
    EXPECT_EQ(trace(k.body),
              "alloc:W{ begin1 get1 alloc:O{ for:p{ if{ if{ wait0 } else{ wait2 } } begin1 get1 "
              "wait1 ld:W st:O if{ begin0 put0 } else{ begin2 put2 } } wait0 wait2 } }")
        << ir(k.body);
    ASSERT_EQ(k.dma.size(), 3u);
    EXPECT_NE(k.dma[0].shape.find("waited for two tiles later, slot 0"), std::string::npos)
        << k.dma[0].shape;
    // Slot p % 2 of 32 floats (16 aligned to 128 bytes): tile p's rows from its slot to
    // out + p * 8, both rows in one request.
    const std::vector<const Call *> reqs = requests(k.body);
    ASSERT_EQ(reqs.size(), 4u) << ir(k.body);
    const sw::ir::DmaRequest slot0 = *sw::ir::as_dma_request(reqs[2]);
    const sw::ir::DmaRequest slot1 = *sw::ir::as_dma_request(reqs[3]);
    EXPECT_TRUE(same(slot0.ldm_index, 0) && same(slot1.ldm_index, 32))
        << slot0.ldm_index << " " << slot1.ldm_index;
    EXPECT_TRUE(same(slot1.main_index, var("p") * 8) && same(slot1.rows, 2))
        << slot1.main_index << " " << slot1.rows;
    const std::vector<Access> stores = accesses(k.body, "O");
    ASSERT_FALSE(stores.empty());
    EXPECT_TRUE(same(stores[0].index, (var("p") % 2) * 32)) << stores[0].index;
}

TEST(PipelineTilePuts, AKernelWithoutADoubleBufferedChunkLoopOrOfOneTileIsLeftAlone) {
    for (const auto &[tiles, chunks] : std::vector<std::pair<int, int>>{{1, 2}, {4, 1}}) {
        sw::CpeKernel k = tiles_in_turn(tiles, chunks);
        const std::string before = trace(k.body);
        sw::pipeline_tile_puts(k, sw::sw26010());
        EXPECT_EQ(trace(k.body), before) << tiles << " tiles, " << chunks << " chunks";
        EXPECT_EQ(k.dma.size(), 2u);
    }
}

// =======================================================================================
// PipelineRoundPuts: a CPE's rounds of blocks in turn, each block's put in pieces over the next.

/** One block of a kernel whose blocks are n (outer, \p images) x c (inner, 64): the output
 * tile O computed over a double-buffered chunk loop of 2 over W, then put as a loop of 3
 * requests (its channel planes, 8 floats each, 64 apart in `out`) and waited for; with
 * \p guarded, the work in `if (sw_active)` as make_block_loop_uniform leaves it. Sites: 0 the
 * put of O, 1 the gets of W. */
sw::CpeKernel blocks_kernel(int images, bool guarded) {
    const Stmt chunk_loop = chunk_loop_over_w(2);
    sw::ir::DmaRequest plane = tile_put();
    plane.ldm_index = var("ch") * 8;
    plane.main_index = var("n") * 4096 + var("c") * 8 + var("ch") * 64;
    plane.rows = 1;
    plane.pitch_elems = 8;
    Stmt work = block(
        {store("O", 0.f, 0),
         block({sw::ir::make_dma_begin(1), request(1, false, "W", 0, "weights", 0, 16)}),
         chunk_loop,
         ProducerConsumer::make_consume(
             "O",
             block({sw::ir::make_dma_begin(0), loop("ch", 0, 3, sw::ir::make_dma_request(plane))})),
         sw::ir::make_dma_wait(0)});
    if (guarded)
        work = IfThenElse::make(sw::ir::block_active(), work);
    const Stmt body = alloc("W", 16, alloc("O", 24, block({work, Free::make("O")})));
    sw::CpeKernel k = kernel(body, {"O", "W"});
    k.blocks = {{"n", 0, images}, {"c", 0, 64}};
    k.dma = {{"O", "out", true, "put"}, {"W", "weights", false, "get"}};
    return k;
}

TEST(PipelineRoundPuts, TheRoundsBecomeALoopAndEachBlockPutsItsPlanesOverTheNextBlocksChunks) {
    for (const bool guarded : {false, true}) {
        sw::CpeKernel k = blocks_kernel(3, guarded);
        sw::pipeline_round_puts(k, sw::sw26010());
        ASSERT_TRUE(k.rounds_in_body) << ir(k.body);
        // O in two slots around the 3 rounds; a round waits for its slot's put two rounds
        // back, then binds its block (n, c); chunk r of round p puts planes
        // [ceil(3r / 2), ceil(3(r + 1) / 2)) of round p - 1 (two, then one; guarded, 3 not
        // dividing by 2) after its prefetch; the last round (slot 0) is put whole after the
        // loop. Every round is active: the guard is gone.
        EXPECT_EQ(trace(k.body),
                  "alloc:O{ for:sw_round{ if{ if{ wait0 } else{ wait2 } } let:n{ let:c{ "
                  "alloc:W{ st:O begin1 get1 for:r{ begin1 get1 if{ if{ if{ begin0 } if{ "
                  "for:ch{ put0 } } } else{ if{ begin2 } if{ for:ch{ put2 } } } } wait1 ld:W "
                  "st:O } } } } } begin0 for:ch{ put0 } wait0 wait2 }")
            << ir(k.body);
        ASSERT_EQ(k.dma.size(), 3u);
        EXPECT_TRUE(k.dma[2].is_put && k.dma[2].ldm_buffer == "O");
        // Round p's block: n = p (64 blocks a round), c = the CPE's id; the piece of round
        // p - 1 goes to its own image's planes.
        const std::vector<const Call *> reqs = requests(k.body);
        ASSERT_EQ(reqs.size(), 5u) << ir(k.body);
        const sw::ir::DmaRequest piece = *sw::ir::as_dma_request(reqs[2]);
        EXPECT_TRUE(same(piece.ldm_index, var("ch") * 8)) << piece.ldm_index;
        const sw::ir::DmaRequest piece1 = *sw::ir::as_dma_request(reqs[3]);
        EXPECT_TRUE(same(piece1.ldm_index, var("ch") * 8 + 32)) << piece1.ldm_index;
        auto text = [](const Expr &e) {
            std::ostringstream o;
            o << e;
            return o.str();
        };
        EXPECT_NE(text(piece.main_index).find("sw_round"), std::string::npos) << piece.main_index;
        const sw::ir::DmaRequest last = *sw::ir::as_dma_request(reqs[4]);
        EXPECT_EQ(text(last.main_index).find("sw_round"), std::string::npos) << last.main_index;
    }
}

TEST(PipelineRoundPuts, BlocksThatAreNotAMultipleOfTheCpesOrOneRoundAreLeftAlone) {
    for (const int columns : {64, 32}) {
        // 64 blocks (n of 1 over c of 64): one round; 96 (n of 3 over c of 32): the CPEs'
        // rounds differ.
        sw::CpeKernel k = blocks_kernel(columns == 64 ? 1 : 3, false);
        k.blocks.back().extent = columns;
        const std::string before = trace(k.body);
        sw::pipeline_round_puts(k, sw::sw26010());
        EXPECT_FALSE(k.rounds_in_body);
        EXPECT_EQ(trace(k.body), before);
        EXPECT_EQ(k.dma.size(), 2u);
    }
}
// =======================================================================================
// PromoteAccumulators: a loop-invariant LDM accumulator becomes a register.

/** for r in [0, 16): acc[index] = acc[index] + W[r], inside the LDM buffers acc and W. */
Stmt accumulate(const Expr &index, const std::string &acc = "acc", const std::string &r = "r") {
    return loop(r, 0, 16,
                store(acc, load(acc, index) + fconst(1.f, index) * load("W", var(r)), index));
}

TEST(PromoteAccumulators, AnInvariantScalarAccumulatorIsLoadedOnceBeforeAndStoredOnceAfterTheLoop) {
    sw::CpeKernel k = kernel(LetStmt::make("j", var("b") * 4, accumulate(var("j"))), {"acc", "W"});
    sw::promote_accumulators(k, sw::sw26010());
    EXPECT_EQ(trace(k.body), "let:j{ alloc:reg0(register){ ld:acc st:reg0 for:r{ ld:reg0 ld:W "
                             "st:reg0 } ld:reg0 st:acc } }")
        << ir(k.body);
    const std::vector<const Allocate *> regs = allocations(k.body);
    ASSERT_EQ(regs.size(), 1u);
    EXPECT_EQ(regs[0]->memory_type, MemoryType::Register);
    EXPECT_EQ(regs[0]->type, Float(32));
    ASSERT_EQ(regs[0]->extents.size(), 1u);
    EXPECT_TRUE(is_const(regs[0]->extents[0], 1));
    // The load before and the store after use the accumulator's own index.
    const std::vector<Access> acc = accesses(k.body, "acc");
    ASSERT_EQ(acc.size(), 2u);
    EXPECT_FALSE(acc[0].is_store);
    EXPECT_TRUE(acc[1].is_store);
    EXPECT_TRUE(same(acc[0].index, var("j")));
    EXPECT_TRUE(same(acc[1].index, var("j")));
}

TEST(PromoteAccumulators, AFloatv4AccumulatorBecomesAVectorRegister) {
    sw::CpeKernel k = kernel(accumulate(ramp(var("j"))), {"acc", "W"});
    sw::promote_accumulators(k, sw::sw26010());
    EXPECT_EQ(trace(k.body),
              "alloc:reg0(register){ ld:acc st:reg0 for:r{ ld:reg0 ld:W st:reg0 } ld:reg0 st:acc }")
        << ir(k.body);
    const std::vector<const Allocate *> regs = allocations(k.body);
    ASSERT_EQ(regs.size(), 1u);
    EXPECT_TRUE(is_const(regs[0]->extents[0], 4));
    const std::vector<Access> reg = accesses(k.body, regs[0]->name);
    ASSERT_EQ(reg.size(), 4u); // set before, load and store in the loop, read after
    for (const Access &a : reg) {
        EXPECT_EQ(a.type, Float(32, 4));
        EXPECT_TRUE(equal(a.index, Ramp::make(0, 1, 4))) << a.index;
    }
}

TEST(PromoteAccumulators, AnIndexComputedByALetInsideTheNestIsPromotedWhenItsValueIsInvariant) {
    // let q = j + 1 inside the loop: invariant once the let is substituted.
    Stmt body =
        loop("r", 0, 16,
             LetStmt::make("q", var("j") + 1,
                           store("acc", load("acc", var("q")) + load("W", var("r")), var("q"))));
    sw::CpeKernel k = kernel(body, {"acc", "W"});
    sw::promote_accumulators(k, sw::sw26010());
    EXPECT_EQ(trace(k.body), "alloc:reg0(register){ ld:acc st:reg0 for:r{ let:q{ ld:reg0 ld:W "
                             "st:reg0 } } ld:reg0 st:acc }")
        << ir(k.body);
    const std::vector<Access> acc = accesses(k.body, "acc");
    ASSERT_EQ(acc.size(), 2u);
    EXPECT_TRUE(same(acc[0].index, var("j") + 1)) << acc[0].index; // outside the let: expanded
}

TEST(PromoteAccumulators, AnIndexThatDependsOnTheLoopIsLeftAlone) {
    for (const Stmt &body :
         {accumulate(var("r")),
          // through a let of the nest
          loop("r", 0, 16,
               LetStmt::make("q", var("r") / 4,
                             store("acc", load("acc", var("q")) + 1.f, var("q"))))}) {
        sw::CpeKernel k = kernel(body, {"acc", "W"});
        sw::promote_accumulators(k, sw::sw26010());
        EXPECT_TRUE(equal(k.body, body)) << ir(k.body);
        EXPECT_EQ(trace(k.body).find("reg"), std::string::npos);
    }
}

TEST(PromoteAccumulators, AMainMemoryBufferIsNotPromoted) {
    // "out" is not an LDM buffer of the kernel (a direct main-memory access).
    const Stmt body = accumulate(var("j"), "out");
    sw::CpeKernel k = kernel(body, {"W"});
    sw::promote_accumulators(k, sw::sw26010());
    EXPECT_TRUE(equal(k.body, body)) << ir(k.body);
}

TEST(PromoteAccumulators, ANestThatIssuesDmaIsNotPromoted) {
    const Stmt body = loop("r", 0, 16,
                           block({transfer(0, false, "W", 0, "main", var("r") * 16, 16),
                                  store("acc", load("acc", var("j")) + load("W", 0), var("j"))}));
    sw::CpeKernel k = kernel(body, {"acc", "W"});
    sw::promote_accumulators(k, sw::sw26010());
    EXPECT_TRUE(equal(k.body, body)) << ir(k.body);
}

TEST(PromoteAccumulators, DisjointVectorsOfOneBufferBecomeARegisterBlockButOverlappingOnesDoNot) {
    auto two = [](const Expr &second) {
        return loop("r", 0, 16,
                    block({store("acc", load("acc", ramp(var("j"))) + load("W", ramp(var("r"))),
                                 ramp(var("j"))),
                           store("acc", load("acc", second) + load("W", ramp(var("r"))), second)}));
    };
    // A whole vector apart: two registers, the loop no longer touches acc.
    sw::CpeKernel block_k = kernel(two(ramp(var("j") + 4)), {"acc", "W"});
    sw::promote_accumulators(block_k, sw::sw26010());
    EXPECT_EQ(allocations(block_k.body).size(), 2u) << ir(block_k.body);
    EXPECT_EQ(
        trace(block_k.body),
        "alloc:reg1(register){ alloc:reg0(register){ ld:acc st:reg0 ld:acc st:reg1 "
        "for:r{ ld:reg0 ld:W st:reg0 ld:reg1 ld:W st:reg1 } ld:reg0 st:acc ld:reg1 st:acc } }")
        << ir(block_k.body);

    // Two lanes apart: the vectors overlap, no register could hold both.
    const Stmt overlapping = two(ramp(var("j") + 2));
    sw::CpeKernel overlap_k = kernel(overlapping, {"acc", "W"});
    sw::promote_accumulators(overlap_k, sw::sw26010());
    EXPECT_TRUE(equal(overlap_k.body, overlapping)) << ir(overlap_k.body);

    // Unrelated invariant indices (j and m): not provably disjoint.
    const Stmt unknown = two(ramp(var("m")));
    sw::CpeKernel unknown_k = kernel(unknown, {"acc", "W"});
    sw::promote_accumulators(unknown_k, sw::sw26010());
    EXPECT_TRUE(equal(unknown_k.body, unknown)) << ir(unknown_k.body);
}

TEST(PromoteAccumulators, ARegisterBlockLargerThanTheFreeRegistersStaysInTheLdm) {
    sw::Machine m = sw::sw26010();
    m.vector_registers = m.operand_registers + 2; // two registers for accumulators
    auto nest = [](int n) {
        std::vector<Stmt> updates;
        for (int c = 0; c < n; c++) {
            updates.push_back(
                store("acc", load("acc", var("j") + c) + load("W", var("r")), var("j") + c));
        }
        return loop("r", 0, 16, block(updates));
    };
    sw::CpeKernel fits = kernel(nest(2), {"acc", "W"});
    sw::promote_accumulators(fits, m);
    EXPECT_EQ(allocations(fits.body).size(), 2u) << ir(fits.body);

    const Stmt three = nest(3);
    sw::CpeKernel too_many = kernel(three, {"acc", "W"});
    sw::promote_accumulators(too_many, m);
    EXPECT_TRUE(equal(too_many.body, three)) << ir(too_many.body);
}

TEST(PromoteAccumulators, RegistersOfAnEnclosingNestCountAgainstTheInnerNests) {
    // for r { acc[j] += W[r]; for s { acc2[r] += W[s] } }: acc is invariant in the r nest,
    // acc2 only in the s nest.
    const Stmt body =
        loop("r", 0, 8,
             block({store("acc", load("acc", var("j")) + load("W", var("r")), var("j")),
                    accumulate(var("r"), "acc2", "s")}));
    sw::Machine one = sw::sw26010();
    one.vector_registers = one.operand_registers + 1;
    sw::CpeKernel k1 = kernel(body, {"acc", "acc2", "W"});
    sw::promote_accumulators(k1, one);
    EXPECT_EQ(trace(k1.body), "alloc:reg0(register){ ld:acc st:reg0 for:r{ ld:reg0 ld:W st:reg0 "
                              "for:s{ ld:acc2 ld:W st:acc2 } } "
                              "ld:reg0 st:acc }")
        << ir(k1.body);

    sw::Machine two = sw::sw26010();
    two.vector_registers = two.operand_registers + 2;
    sw::CpeKernel k2 = kernel(body, {"acc", "acc2", "W"});
    sw::promote_accumulators(k2, two);
    EXPECT_EQ(trace(k2.body), "alloc:reg0(register){ ld:acc st:reg0 for:r{ ld:reg0 ld:W st:reg0 "
                              "alloc:reg1(register){ ld:acc2 st:reg1 for:s{ ld:reg1 ld:W st:reg1 } "
                              "ld:reg1 st:acc2 } } ld:reg0 st:acc }")
        << ir(k2.body);
}

// Found by this test: PromoteAccumulators promoted an LDM buffer allocated inside the nest,
// loading it before the loop (outside its allocation) and storing it after; from a Pipeline
// too (g.compute_at(out, r).store_in(sw::LDM)), whose CPE code then used g outside the block
// that declares it.
TEST(PromoteAccumulators, ABufferAllocatedInsideTheNestIsNotPromotedOutsideItsAllocation) {
    // for r { allocate t { t[0] = W[r]; t[0] = t[0] * 2; acc[r] = t[0] } }: t's index is
    // invariant, but t does not exist before or after the loop, so it cannot be loaded
    // there. (A register of the loop body would be fine; the nest of r is not.)
    const Stmt body =
        loop("r", 0, 16,
             alloc("t", 1,
                   block({store("t", load("W", var("r")), 0), store("t", load("t", 0) * 2.f, 0),
                          store("acc", load("t", 0), var("r"))})));
    sw::CpeKernel k = kernel(body, {"acc", "W", "t"});
    sw::promote_accumulators(k, sw::sw26010());
    const std::string t = trace(k.body);
    // Every access to t is inside t's allocation.
    const size_t alloc_t = t.find("alloc:t{");
    ASSERT_NE(alloc_t, std::string::npos) << t;
    EXPECT_EQ(t.find("ld:t"), t.find("ld:t", alloc_t)) << t << "\n" << ir(k.body);
    EXPECT_EQ(t.find("st:t"), t.find("st:t", alloc_t)) << t << "\n" << ir(k.body);
}

// Found by this test: the value of a LetStmt was not rewritten, while the nest's check counted
// it: a promoted accumulator read through `let t = acc[j]` (as Halide's CSE writes acc*acc)
// kept reading the LDM element, which holds the value from before the loop while the register
// is updated: wrong results, silently.
TEST(PromoteAccumulators, AnAccumulatorReadThroughALetValueReadsTheRegister) {
    // for r { let t = acc[j] in acc[j] = t * t + W[r] }
    const Stmt body = loop(
        "r", 0, 16,
        LetStmt::make("t", load("acc", var("j")),
                      store("acc", var("t", Float(32)) * var("t", Float(32)) + load("W", var("r")),
                            var("j"))));
    sw::CpeKernel k = kernel(body, {"acc", "W"});
    sw::promote_accumulators(k, sw::sw26010());
    EXPECT_EQ(trace(k.body), "alloc:reg0(register){ ld:acc st:reg0 for:r{ ld:reg0 let:t{ ld:W "
                             "st:reg0 } } ld:reg0 st:acc }")
        << ir(k.body);
    // Inside the loop, acc is neither read nor written: only the register is.
    EXPECT_EQ(accesses(k.body, "acc").size(), 2u) << ir(k.body);
}

// =======================================================================================
// AlignVectorAccesses: which floatv4 LDM accesses are proved to start on a whole vector.

/** The alignment recorded on every access to \p buffer, in program order. */
std::vector<ModulusRemainder> alignments(const Stmt &s, const std::string &buffer) {
    std::vector<ModulusRemainder> out;
    for (const Access &a : accesses(s, buffer))
        out.push_back(a.alignment);
    return out;
}

bool aligned(const Access &a) {
    return sw::ir::vector_access_aligned(a.type, a.alignment);
}

TEST(AlignVectorAccesses, ABaseThatIsAMultipleOfFourIsAligned) {
    // for x { L[ramp(8x + 4)] = L[ramp(4x)] }: loads and stores alike.
    sw::CpeKernel k = kernel(
        loop("x", 0, 8, store("L", load("L", ramp(var("x") * 4)), ramp(var("x") * 8 + 4))), {"L"});
    sw::align_vector_accesses(k);
    const std::vector<Access> a = accesses(k.body, "L");
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].alignment.modulus, 4);
    EXPECT_EQ(a[0].alignment.remainder, 0);
    EXPECT_TRUE(aligned(a[0]));
    EXPECT_TRUE(a[1].is_store);
    EXPECT_EQ(a[1].alignment.modulus, 8);
    EXPECT_EQ(a[1].alignment.remainder, 4);
    EXPECT_TRUE(aligned(a[1]));
}

TEST(AlignVectorAccesses, AlignmentIsProvedThroughEnclosingLets) {
    // let row = 12 * y in let base = row + 4 * x in L[ramp(base)]: (4, 0).
    Stmt body = store("C", load("L", ramp(var("base"))), ramp(0));
    body = LetStmt::make("base", var("row") + var("x") * 4, body);
    body = LetStmt::make("row", var("y") * 12, body);
    // and a Let expression inside the index's value
    Stmt with_let =
        store("C", load("L", ramp(Let::make("e", var("x") * 8, var("e") + 16))), ramp(4));
    sw::CpeKernel k = kernel(loop("y", 0, 4, loop("x", 0, 3, block({body, with_let}))), {"L", "C"});
    sw::align_vector_accesses(k);
    const std::vector<Access> a = accesses(k.body, "L");
    ASSERT_EQ(a.size(), 2u);
    EXPECT_TRUE(aligned(a[0])) << a[0].alignment.modulus << " " << a[0].alignment.remainder;
    EXPECT_TRUE(aligned(a[1])) << a[1].alignment.modulus << " " << a[1].alignment.remainder;
    // The stores to C at constant whole-vector bases too.
    for (const Access &c : accesses(k.body, "C"))
        EXPECT_TRUE(aligned(c));
}

TEST(AlignVectorAccesses, UnprovableBasesStayUnaligned) {
    // A loop variable is any integer, even when the loop starts at 0: ramp(x) is unknown.
    // ramp(4x + 2) is provably misaligned; ramp(j) with j from outside is unknown.
    sw::CpeKernel k = kernel(loop("x", 0, 8,
                                  block({store("C", load("L", ramp(var("x"))), ramp(0)),
                                         store("C", load("L", ramp(var("x") * 4 + 2)), ramp(4)),
                                         store("C", load("L", ramp(var("j"))), ramp(8))})),
                             {"L", "C"});
    sw::align_vector_accesses(k);
    const std::vector<Access> a = accesses(k.body, "L");
    ASSERT_EQ(a.size(), 3u);
    for (const Access &x : a)
        EXPECT_FALSE(aligned(x)) << x.index;
    EXPECT_EQ(a[1].alignment.modulus, 4);
    EXPECT_EQ(a[1].alignment.remainder, 2);
}

TEST(AlignVectorAccesses, OnlyDenseVectorAccessesToLdmBuffersAreMarked) {
    // "out" is a main-memory buffer; ramp(4x, 2) is strided; L[4x] is a scalar.
    sw::CpeKernel k =
        kernel(loop("x", 0, 8,
                    block({store("out", load("L", ramp(var("x") * 4, 2)), ramp(var("x") * 4)),
                           store("C", load("L", var("x") * 4), var("x") * 4)})),
               {"L", "C"});
    sw::align_vector_accesses(k);
    const std::vector<Access> out = accesses(k.body, "out");
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].alignment.modulus, 1);
    EXPECT_FALSE(aligned(out[0]));
    const std::vector<Access> l = accesses(k.body, "L");
    ASSERT_EQ(l.size(), 2u);
    EXPECT_EQ(l[0].alignment.modulus, 1); // strided
    EXPECT_FALSE(aligned(l[0]));
    EXPECT_EQ(l[1].alignment.modulus, 1); // scalar: nothing recorded
    EXPECT_FALSE(aligned(l[1]));
}

TEST(AlignVectorAccesses, VectorAccessAlignedNeedsAWholeVectorModulusAndRemainder) {
    EXPECT_TRUE(sw::ir::vector_access_aligned(Float(32, 4), ModulusRemainder(4, 0)));
    EXPECT_TRUE(sw::ir::vector_access_aligned(Float(32, 4), ModulusRemainder(16, 8)));
    EXPECT_FALSE(sw::ir::vector_access_aligned(Float(32, 4), ModulusRemainder(2, 0)));
    EXPECT_FALSE(sw::ir::vector_access_aligned(Float(32, 4), ModulusRemainder(8, 6)));
    EXPECT_FALSE(sw::ir::vector_access_aligned(Float(32, 4), ModulusRemainder()));
    EXPECT_FALSE(sw::ir::vector_access_aligned(Float(32), ModulusRemainder(4, 0))); // a scalar
    EXPECT_TRUE(sw::ir::vector_access_aligned(Float(32, 8),
                                              ModulusRemainder(8, 0))); // floatv8 (SW26010-Pro)
    EXPECT_FALSE(sw::ir::vector_access_aligned(Float(32, 8), ModulusRemainder(4, 0)));
}

// =======================================================================================
// DoubleBuffer: a marked LDM buffer staged in a serial loop gets two slots and a prefetch.

/** for r in [0, 4) { allocate W[16] { get W[0..16) from wmain[16r..]; acc[i] += W[i] } }
 * inside acc. W: 64 bytes, a slot of 128 bytes (the LDM alignment) = 32 floats. */
sw::CpeKernel staged_in_loop(ForType type = ForType::Serial) {
    Stmt use =
        loop("i", 0, 16, store("acc", load("acc", var("i")) + load("W", var("i")), var("i")));
    Stmt body =
        alloc("W", 16, block({transfer(0, false, "W", 0, "wmain", var("r") * 16, 16), use}));
    sw::CpeKernel k = kernel(alloc("acc", 16, loop("r", 0, 4, body, type)), {});
    k.ldm = {{"acc", Float(32), 64}, {"W", Float(32), 64}};
    k.dma = {{"W", "wmain", false, "1 request(s) of 1 block(s) x 64 B"}};
    return k;
}

TEST(DoubleBuffer, TwoSlotsTheFirstTransferBeforeTheLoopAndTheNextInsideIt) {
    sw::CpeKernel k = staged_in_loop();
    sw::apply_double_buffering(k, sw::sw26010(), {"W"});
    EXPECT_TRUE(k.notes.empty()) << k.notes[0];
    // Slot 0 or 1 (sites 0 and 1, each its own reply word) before the loop; in iteration r
    // the transfer of r + 1 (if any) first, then the wait for this iteration's slot, then the use.
    EXPECT_EQ(trace(k.body),
              "alloc:acc{ alloc:W{ if{ begin0 get0 } else{ begin1 get1 } "
              "for:r{ if{ if{ begin0 get0 } else{ begin1 get1 } } if{ wait0 } else{ wait1 } "
              "for:i{ ld:acc ld:W st:acc } } } }")
        << ir(k.body);

    // One allocation of W, outside the loop, of two 128-byte slots.
    std::vector<const Allocate *> w;
    for (const Allocate *a : allocations(k.body)) {
        if (a->name == "W")
            w.push_back(a);
    }
    ASSERT_EQ(w.size(), 1u);
    ASSERT_EQ(w[0]->extents.size(), 1u);
    EXPECT_TRUE(is_const(w[0]->extents[0], 64)) << w[0]->extents[0];
    EXPECT_EQ(w[0]->memory_type, MemoryType::GPUShared);

    // A second DMA site for slot 1; both slots count in the LDM budget.
    ASSERT_EQ(k.dma.size(), 2u);
    EXPECT_EQ(k.dma[1].ldm_buffer, "W");
    EXPECT_EQ(k.dma[1].main_buffer, "wmain");
    EXPECT_FALSE(k.dma[1].is_put);
    EXPECT_NE(k.dma[1].shape.find("(double buffered)"), std::string::npos) << k.dma[1].shape;
    int64_t w_bytes = -1;
    for (const sw::LdmBuffer &b : k.ldm) {
        if (b.name == "W")
            w_bytes = b.bytes;
    }
    EXPECT_EQ(w_bytes, 256);
    EXPECT_EQ(k.ldm_peak_bytes, 256 + 128);

    // The requests: r = 0 into slot 0 and slot 1 (before the loop), then r + 1 into either.
    const Expr r = var("r");
    const std::vector<const Call *> req = requests(k.body);
    ASSERT_EQ(req.size(), 4u);
    const int expected_site[] = {0, 1, 0, 1};
    const Expr expected_ldm[] = {0, 32, 0, 32};
    const Expr expected_main[] = {0, 0, (r + 1) * 16, (r + 1) * 16};
    for (size_t n = 0; n < 4; n++) {
        const sw::ir::DmaRequest r = *sw::ir::as_dma_request(req[n]);
        EXPECT_EQ(r.site, expected_site[n]) << n;
        EXPECT_TRUE(same(r.ldm_index, expected_ldm[n])) << n << ": " << r.ldm_index;
        EXPECT_TRUE(same(r.main_index, expected_main[n])) << n << ": " << r.main_index;
    }

    // The uses read iteration r's slot: W[i + (r % 2) * 32].
    const std::vector<Access> uses = accesses(k.body, "W");
    ASSERT_EQ(uses.size(), 1u);
    EXPECT_TRUE(same(uses[0].index, var("i") + (r % 2) * 32)) << uses[0].index;
}

TEST(DoubleBuffer, AnUnmarkedBufferIsLeftAlone) {
    sw::CpeKernel k = staged_in_loop();
    const Stmt before = k.body;
    sw::apply_double_buffering(k, sw::sw26010(), {});
    sw::apply_double_buffering(k, sw::sw26010(), {"not_a_buffer_of_k"});
    EXPECT_TRUE(equal(k.body, before)) << ir(k.body);
    EXPECT_EQ(k.dma.size(), 1u);
    EXPECT_TRUE(k.notes.empty());
}

TEST(DoubleBuffer, ABufferNotFilledByDmaStaysSingleBufferedWithANote) {
    sw::CpeKernel k = staged_in_loop();
    const Stmt before = k.body;
    sw::apply_double_buffering(k, sw::sw26010(), {"acc"});
    EXPECT_TRUE(equal(k.body, before)) << ir(k.body);
    EXPECT_EQ(k.dma.size(), 1u);
    ASSERT_EQ(k.notes.size(), 1u);
    EXPECT_EQ(k.notes[0], "double_buffer(acc) not applied: not filled by DMA");
}

TEST(DoubleBuffer, ABufferNotInASerialLoopStaysSingleBufferedWithANote) {
    const std::string note = "double_buffer(W) not applied to one of its transfers: not staged at "
                             "the top of a serial loop";
    // No loop around the staging at all.
    {
        Stmt use =
            loop("i", 0, 16, store("acc", load("acc", var("i")) + load("W", var("i")), var("i")));
        sw::CpeKernel k =
            kernel(alloc("acc", 16,
                         alloc("W", 16, block({transfer(0, false, "W", 0, "wmain", 0, 16), use}))),
                   {"acc", "W"});
        k.dma = {{"W", "wmain", false, "1 request(s) of 1 block(s) x 64 B"}};
        const Stmt before = k.body;
        sw::apply_double_buffering(k, sw::sw26010(), {"W"});
        EXPECT_TRUE(equal(k.body, before)) << ir(k.body);
        EXPECT_EQ(k.dma.size(), 1u);
        EXPECT_EQ(allocations(k.body).size(), 2u);
        ASSERT_EQ(k.notes.size(), 1u);
        EXPECT_EQ(k.notes[0], note);
    }
    // The loop around it is not serial.
    {
        sw::CpeKernel k = staged_in_loop(ForType::Parallel);
        const Stmt before = k.body;
        sw::apply_double_buffering(k, sw::sw26010(), {"W"});
        EXPECT_TRUE(equal(k.body, before)) << ir(k.body);
        EXPECT_EQ(k.dma.size(), 1u);
        ASSERT_EQ(k.notes.size(), 1u);
        EXPECT_EQ(k.notes[0], note);
    }
}

TEST(DoubleBuffer, ATransferInsideAnInnerLoopIsNotAtTheTopOfTheLoopBody) {
    // for r { allocate W { for c { get a row of W }; use } }: the transfer is reached from
    // r's body only through the loop over c.
    Stmt rows = loop(
        "c", 0, 4, transfer(0, false, "W", var("c") * 4, "wmain", var("r") * 16 + var("c") * 4, 4));
    Stmt use =
        loop("i", 0, 16, store("acc", load("acc", var("i")) + load("W", var("i")), var("i")));
    sw::CpeKernel k =
        kernel(alloc("acc", 16, loop("r", 0, 4, alloc("W", 16, block({rows, use})))), {"acc", "W"});
    k.dma = {{"W", "wmain", false, "4 request(s) of 1 block(s) x 16 B"}};
    const Stmt before = k.body;
    sw::apply_double_buffering(k, sw::sw26010(), {"W"});
    EXPECT_TRUE(equal(k.body, before)) << ir(k.body);
    EXPECT_EQ(k.dma.size(), 1u);
    ASSERT_EQ(k.notes.size(), 1u);
    EXPECT_NE(k.notes[0].find("not staged at the top of a serial loop"), std::string::npos)
        << k.notes[0];
}

// ---------------------------------------------------------------------------------------
// MergeBlockPartitions

/** The partition of a tile loop over rows of 28 of 197 that Halide's ShiftInwards and loop
 * partitioning give: the steady part with its row base n_o*28, the last tile's with 169, each
 * in a block loop over o_o; the row base in a let (named apart in the two parts, as Halide's
 * CSE names them) or, in the last tile's part when \p tail_let is false, folded in. */
Stmt partitioned_tiles(bool tail_let, bool same_structure = true) {
    auto part = [&](const Expr &row_base, bool with_let, const std::string &let) {
        const Expr base = with_let ? var(let) : row_base;
        Stmt copy =
            loop("i", 0, 4,
                 store("tile", load("in", ramp((base + var("i")) * 768)), ramp(var("i") * 4)));
        if (!same_structure && !with_let)
            copy = block({copy, copy});
        Stmt body = with_let ? LetStmt::make(let, row_base, copy) : copy;
        return loop("o_o", 0, 8, body, ForType::GPUBlock);
    };
    return IfThenElse::make(var("n_o") < 7, part(var("n_o") * 28, true, "t1"),
                            part(169, tail_let, "t2"));
}

/** The copy of \p s (a block loop over o_o, then lets): the index of its load. */
Expr merged_load_index(const Stmt &s, Expr *let_value) {
    const For *o_o = s.as<For>();
    if (!o_o || o_o->name != "o_o" || o_o->for_type != ForType::GPUBlock)
        return Expr();
    Stmt body = o_o->body;
    if (const LetStmt *let = body.as<LetStmt>()) {
        *let_value = let->value;
        body = let->body;
    }
    const For *i = body.as<For>();
    const Store *st = i ? i->body.as<Store>() : nullptr;
    const Load *ld = st ? st->value.as<Load>() : nullptr;
    return ld ? ld->index : Expr();
}

TEST(MergeBlockPartitions, TwoPartsOfOneStructureBecomeOneBodyWithTheirDifferenceSelected) {
    const Expr row_base = Select::make(var("n_o") < 7, var("n_o") * 28, 169);
    {
        // Both parts with the let: one let, its value selected; the load stays a vector
        // load whose ramp holds the let (a DMA source).
        const Stmt merged = sw::merge_block_partitions(partitioned_tiles(true));
        Expr let_value;
        const Expr index = merged_load_index(merged, &let_value);
        ASSERT_TRUE(index.defined()) << ir(merged);
        ASSERT_TRUE(let_value.defined()) << ir(merged);
        EXPECT_TRUE(equal(let_value, row_base)) << let_value;
        EXPECT_TRUE(equal(index, ramp((var("t1") + var("i")) * 768))) << index;
    }
    {
        // The let in one part only: substituted; the address is the first part's plus the
        // selected difference (affine in the loop over i), the value of each part.
        const Stmt merged = sw::merge_block_partitions(partitioned_tiles(false));
        Expr let_value;
        const Expr index = merged_load_index(merged, &let_value);
        ASSERT_TRUE(index.defined()) << ir(merged);
        EXPECT_FALSE(let_value.defined()) << ir(merged);
        const Ramp *r = index.as<Ramp>();
        ASSERT_NE(r, nullptr) << index;
        EXPECT_TRUE(is_const_one(r->stride)) << index;
        for (int n_o : {0, 6, 7}) {
            for (int i : {0, 3}) {
                const Expr at = simplify(substitute("i", i, substitute("n_o", n_o, r->base)));
                const int row = n_o < 7 ? n_o * 28 : 169;
                EXPECT_TRUE(is_const(at, (row + i) * 768))
                    << "n_o " << n_o << ", i " << i << ": " << at;
            }
        }
    }
}

TEST(MergeBlockPartitions, PartsOfDifferentStructuresAreLeftAsTheyAre) {
    const Stmt s = partitioned_tiles(false, false);
    EXPECT_TRUE(sw::merge_block_partitions(s).same_as(s));
}

TEST(MergeBlockPartitions, LetsBeforeABlockLoopMoveIntoItsBody) {
    const Stmt inner = loop("o_o", 0, 8, store("tile", var("t", Float(32)), 0), ForType::GPUBlock);
    const Stmt s = LetStmt::make("t", cast<float>(var("n_o")), inner);
    const Stmt moved = sw::merge_block_partitions(s);
    const For *o_o = moved.as<For>();
    ASSERT_NE(o_o, nullptr) << ir(moved);
    ASSERT_NE(o_o->body.as<LetStmt>(), nullptr) << ir(moved);
    // A block loop whose bounds use the let keeps it outside.
    const Stmt uses =
        LetStmt::make("e", var("n_o") + 1,
                      loop("o_o", 0, var("e"), store("tile", Expr(1.0f), 0), ForType::GPUBlock));
    EXPECT_TRUE(sw::merge_block_partitions(uses).same_as(uses));
}

// ---------------------------------------------------------------------------------------
// HoistPaddingFill

/** A chunk loop over c of \p extent: the window P's transfer into slot \p slot, the marked
 * fill (P[\p fill_index] = 0), then a read of P. */
Stmt chunk_loop(const Expr &extent, const Expr &slot, const Expr &fill_index) {
    const Stmt fill = sw::ir::make_padding_fill("P", store("P", Expr(0.0f), fill_index));
    return loop("c", 0, extent,
                block({transfer(0, false, "P", slot * 8 + 1, "main", var("c") * 6, 6), fill,
                       store("O", load("P", slot * 8 + 1), var("c"))}));
}

/** The trace with the fill's slot variables named "slot". */
std::string fill_trace(const Stmt &s) {
    return std::regex_replace(trace(s), std::regex("let:sw_fill_slot[^{]*\\{"), "let:slot{");
}

/** Whether any padding-fill mark is left. */
class Marks : public IRVisitor {
public:
    bool found = false;

private:
    using IRVisitor::visit;
    void visit(const ProducerConsumer *op) override {
        found = found || sw::ir::as_padding_fill(Stmt(op)).has_value();
        IRVisitor::visit(op);
    }
};
bool marked(const Stmt &s) {
    Marks m;
    s.accept(&m);
    return m.found;
}

/** The constant indices of the stores a LetStmt of the fill's slot wraps directly. */
class SlotStores : public IRVisitor {
public:
    std::vector<int64_t> at;

private:
    using IRVisitor::visit;
    void visit(const LetStmt *op) override {
        if (const Store *st = op->body.as<Store>()) {
            const Expr i = simplify(substitute(op->name, op->value, st->index));
            at.push_back(as_const_int(i) ? *as_const_int(i) : -1);
        }
        IRVisitor::visit(op);
    }
};

TEST(HoistPaddingFill, AFillOfADoubleBufferedSlotIsWrittenOncePerSlotBeforeTheLoop) {
    // The fill's element of slot c % 2: written for slots 0 and 1 before the loop, not in it.
    const Expr slot = var("c") % 2;
    sw::CpeKernel k = kernel(alloc("P", 16, chunk_loop(4, slot, slot * 8)), {"P"});
    sw::hoist_padding_fill(k);
    EXPECT_EQ(fill_trace(k.body), "alloc:P{ let:slot{ st:P } let:slot{ st:P } for:c{ begin0 get0 "
                                  "wait0 ld:P st:O } }")
        << ir(k.body);
    SlotStores stores;
    k.body.accept(&stores);
    EXPECT_EQ(stores.at, (std::vector<int64_t>{0, 8})) << ir(k.body);
    EXPECT_FALSE(marked(k.body)) << ir(k.body);
}

TEST(HoistPaddingFill, TheSecondSlotIsFilledOnlyWhenTheLoopRunsTwice) {
    const Expr slot = var("c") % 2;
    sw::CpeKernel k = kernel(alloc("P", 16, chunk_loop(var("n"), slot, slot * 8)), {"P"});
    sw::hoist_padding_fill(k);
    EXPECT_EQ(fill_trace(k.body), "alloc:P{ let:slot{ st:P } if{ let:slot{ st:P } } for:c{ begin0 "
                                  "get0 wait0 ld:P st:O } }")
        << ir(k.body);
}

TEST(HoistPaddingFill, AFillThatDoesNotUseTheLoopIsWrittenOnce) {
    sw::CpeKernel k = kernel(alloc("P", 16, chunk_loop(4, 0, 0)), {"P"});
    sw::hoist_padding_fill(k);
    EXPECT_EQ(fill_trace(k.body), "alloc:P{ st:P for:c{ begin0 get0 wait0 ld:P st:O } }")
        << ir(k.body);
}

TEST(HoistPaddingFill, AFillThatMovesWithTheLoopOrReadsWhatItDefinesStaysAndLosesItsMark) {
    // Its element moves with c (not only its slot).
    sw::CpeKernel moves = kernel(alloc("P", 16, chunk_loop(4, 0, var("c"))), {"P"});
    sw::hoist_padding_fill(moves);
    EXPECT_EQ(fill_trace(moves.body), "alloc:P{ for:c{ begin0 get0 wait0 st:P ld:P st:O } }")
        << ir(moves.body);
    EXPECT_FALSE(marked(moves.body)) << ir(moves.body);
    // Its element is a let of the loop body.
    const Stmt fill = sw::ir::make_padding_fill("P", store("P", Expr(0.0f), var("e")));
    const Stmt body =
        loop("c", 0, 4,
             LetStmt::make("e", var("c") % 2, block({fill, store("O", load("P", 1), var("c"))})));
    sw::CpeKernel let = kernel(alloc("P", 16, body), {"P"});
    sw::hoist_padding_fill(let);
    EXPECT_EQ(fill_trace(let.body), "alloc:P{ for:c{ let:e{ st:P ld:P st:O } } }") << ir(let.body);
    // Its buffer is allocated in the loop.
    sw::CpeKernel inside = kernel(
        loop("c", 0, 4, alloc("P", 16, sw::ir::make_padding_fill("P", store("P", Expr(0.0f), 0)))),
        {"P"});
    sw::hoist_padding_fill(inside);
    EXPECT_EQ(fill_trace(inside.body), "for:c{ alloc:P{ st:P } }") << ir(inside.body);
    EXPECT_FALSE(marked(inside.body)) << ir(inside.body);
}

} // namespace
