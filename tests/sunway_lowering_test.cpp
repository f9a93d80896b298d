/** \file
 * The Sunway passes on small Pipelines: what becomes one strided DMA, what falls back to
 * one request per element, what stays a direct main-memory access, how LDM buffers are
 * bounded, the LDM overflow error, and how the timing model counts address arithmetic.
 */
#include "Halide.h"
#include "target_sw/BroadcastDma.h"
#include "target_sw/CodeGen_CPE.h"
#include "target_sw/CodeGen_MPE.h"
#include "target_sw/DoubleBuffer.h"
#include "target_sw/Errors.h"
#include "target_sw/PlaceLdmBuffers.h"
#include "target_sw/ShareOperands.h"
#include "target_sw/SplitPhases.h"
#include "target_sw/StageOutput.h"
#include "target_sw/SunwayIR.h"
#include "target_sw/SunwayLowering.h"
#include "target_sw/WorkCount.h"

#include <gtest/gtest.h>

#include <regex>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <stdexcept>

namespace {

using namespace Halide;

struct Scaled {
    ImageParam in{Float(32), 2, "in"};
    Func f{"f"}, out{"out"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, b{"b"};

    Scaled() {
        f(x, y) = in(x, y) * 2.f;
        out(x, y) = f(x, y);
        in.dim(0).set_bounds(0, 64).set_stride(1);
        in.dim(1).set_bounds(0, 32).set_stride(64);
        out.output_buffer().dim(0).set_bounds(0, 64).set_stride(1);
        out.output_buffer().dim(1).set_bounds(0, 32).set_stride(64);
    }
    void tile(int tx, int ty) {
        out.tile(x, y, xo, yo, xi, yi, tx, ty).fuse(xo, yo, b).gpu_blocks(b, DeviceAPI::Host);
    }
    sw::SwFunction lower(std::ostream *log = nullptr) {
        return sw::lower_pipeline_to_sunway(out, {in}, "scaled", sw::sw26010(), log);
    }
};

TEST(SunwayLowering, StagedTileBecomesOneStridedRequestAndWriteBackOne) {
    Scaled p;
    p.tile(16, 8);
    p.f.compute_at(p.out, p.b).store_in(sw::LDM);
    p.in.in().compute_at(p.out, p.b).store_in(sw::LDM);
    std::ostringstream log;
    sw::SwFunction f = p.lower(&log);
    ASSERT_EQ(f.kernels.size(), 1u);
    const sw::CpeKernel &k = f.kernels[0];
    ASSERT_EQ(k.dma.size(), 2u);
    EXPECT_FALSE(k.dma[0].is_put);
    EXPECT_EQ(k.dma[0].shape, "1 request(s) of 8 block(s) x 64 B, main-memory pitch 256 B");
    EXPECT_TRUE(k.dma[1].is_put);
    EXPECT_EQ(k.dma[1].shape, "1 request(s) of 8 block(s) x 64 B, main-memory pitch 256 B");
    EXPECT_TRUE(k.direct_accesses.empty());
    // 16x8 floats each, aligned to 128 bytes.
    EXPECT_EQ(k.ldm_peak_bytes, 2 * 512);
    EXPECT_NE(log.str().find("after inject_dma"), std::string::npos);
    const std::string cpe = sw::generate_cpe_source(f, "scaled.sw_args.h");
    EXPECT_NE(cpe.find("athread_get(PE_MODE"), std::string::npos);
    // 8 rows of 16 floats: len 512, gap (64 - 16) * 4 = 192 bytes, block 64 bytes.
    EXPECT_NE(cpe.find(", 512, (void *)&sw_reply_0, 0, 192, 64);"), std::string::npos) << cpe;
}

TEST(SunwayLowering, UnstagedAccessesStayDirectAndAreReported) {
    Scaled p;
    p.tile(16, 8);
    sw::SwFunction f = p.lower();
    ASSERT_EQ(f.kernels.size(), 1u);
    EXPECT_TRUE(f.kernels[0].dma.empty());
    // Halide makes names unique per process ("out$1"), so compare the stems.
    const std::vector<std::string> &direct = f.kernels[0].direct_accesses;
    ASSERT_EQ(direct.size(), 2u);
    EXPECT_EQ(direct[0].substr(0, 2), "in");
    EXPECT_EQ(direct[1].substr(0, 3), "out");
    EXPECT_NE(sw::describe(f).find("direct main-memory access"), std::string::npos);
}

TEST(SunwayLowering, TransposedCopyFallsBackToOneRequestPerElement) {
    Scaled p;
    p.tile(16, 8);
    p.f.compute_at(p.out, p.b).store_in(sw::LDM);
    Func staged = p.in.in();
    staged.compute_at(p.out, p.b).store_in(sw::LDM).reorder(Var("_1"), Var("_0"));
    sw::SwFunction f = p.lower();
    const sw::CpeKernel &k = f.kernels[0];
    ASSERT_GE(k.dma.size(), 1u);
    EXPECT_NE(k.dma[0].shape.find("1 request per element"), std::string::npos) << k.dma[0].shape;
}

TEST(SunwayLowering, EdgeTilesOfAClampedWindowAreBoundedExactly) {
    // A 3x3 blur with clamped edges: the staged window is (16+2) x (8+2) at most, even
    // though its extent is an expression of the tile's position.
    ImageParam in(Float(32), 2, "in");
    Func clamped = BoundaryConditions::repeat_edge(in), blur("blur"), out("out");
    Var x("x"), y("y"), xo, yo, xi, yi, b;
    blur(x, y) = clamped(x - 1, y) + clamped(x + 1, y) + clamped(x, y - 1) + clamped(x, y + 1);
    out(x, y) = blur(x, y);
    in.dim(0).set_bounds(0, 70).set_stride(1);
    in.dim(1).set_bounds(0, 30).set_stride(70);
    out.output_buffer().dim(0).set_bounds(0, 70).set_stride(1);
    out.output_buffer().dim(1).set_bounds(0, 30).set_stride(70);
    out.tile(x, y, xo, yo, xi, yi, 16, 8).fuse(xo, yo, b).gpu_blocks(b, DeviceAPI::Host);
    blur.compute_at(out, b).store_in(sw::LDM);
    in.in().compute_at(out, b).store_in(sw::LDM);
    sw::SwFunction f = sw::lower_pipeline_to_sunway(out, {in}, "blur", sw::sw26010());
    const sw::CpeKernel &k = f.kernels[0];
    int64_t window = -1;
    for (const sw::LdmBuffer &l : k.ldm) {
        if (l.name.find("in_im") == 0)
            window = l.bytes;
    }
    EXPECT_EQ(window, 18 * 10 * 4);
}

TEST(SunwayLowering, OverflowingTheLdmNamesEachBufferAndTheLimit) {
    Scaled p;
    p.in.dim(0).set_bounds(0, 256).set_stride(1);
    p.in.dim(1).set_bounds(0, 64).set_stride(256);
    p.out.output_buffer().dim(0).set_bounds(0, 256).set_stride(1);
    p.out.output_buffer().dim(1).set_bounds(0, 64).set_stride(256);
    p.tile(128, 64);
    p.f.compute_at(p.out, p.b).store_in(sw::LDM);
    p.in.in().compute_at(p.out, p.b).store_in(sw::LDM);
    try {
        p.lower();
        FAIL() << "expected an LDM overflow error";
    } catch (const sw::UserError &e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("does not fit the LDM of a sw26010 CPE"), std::string::npos) << m;
        // Both 128x64-float buffers, under their (process-unique) Halide names.
        EXPECT_NE(m.find("\n  f"), std::string::npos) << m;
        EXPECT_NE(m.find("\n  in_im"), std::string::npos) << m;
        EXPECT_NE(m.find("_global_wrapper$0: 32768 bytes"), std::string::npos) << m;
        EXPECT_NE(m.find("the limit is 57344 bytes"), std::string::npos) << m;
    }
    // The same schedule fits the 256 KB LDM of SW26010-Pro.
    EXPECT_NO_THROW(sw::lower_pipeline_to_sunway(p.out, {p.in}, "scaled", sw::sw26010_pro()));
}

/** Address arithmetic in a loop body, as an optimising compiler computes it: constants are
 * displacements, loop-invariant terms are summed once outside the loop, the variable part
 * is computed once per iteration however the simplifier nested the sum. */
/** An output that computes its values itself, out(x, y) = in(x, y) * 2 + 1, on 60 x 30
 * (tiles of 16 x 8 do not divide it: the edge tiles are shifted inwards), its input staged. */
struct Computes {
    ImageParam in{Float(32), 2, "in"};
    Func out{"out"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, b{"b"};
    Computes() {
        out(x, y) = in(x, y) * 2.f + 1.f;
        in.dim(0).set_bounds(0, 60).set_stride(1);
        in.dim(1).set_bounds(0, 30).set_stride(60);
        out.output_buffer().dim(0).set_bounds(0, 60).set_stride(1);
        out.output_buffer().dim(1).set_bounds(0, 30).set_stride(60);
        in.in().compute_at(out, b).store_in(sw::LDM);
    }
    sw::SwFunction lower(std::ostream *log = nullptr) {
        sw::stage_output(out);
        return sw::lower_pipeline_to_sunway(out, {in}, "computes", sw::sw26010(), log);
    }
};

TEST(SunwayLowering, StageOutput_VectorisedOutputWithClampedEdgeTilesIsPutByDma) {
    Computes p;
    p.out.tile(p.x, p.y, p.xo, p.yo, p.xi, p.yi, 16, 8)
        .fuse(p.xo, p.yo, p.b)
        .gpu_blocks(p.b, DeviceAPI::Host);
    p.out.vectorize(p.xi, 4);
    std::ostringstream log;
    sw::SwFunction f = p.lower(&log);
    ASSERT_EQ(f.kernels.size(), 1u);
    const sw::CpeKernel &k = f.kernels[0];
    EXPECT_TRUE(k.direct_accesses.empty()) << sw::describe(f);
    EXPECT_TRUE(k.notes.empty()) << sw::describe(f);
    // The staged tile: 16 x 8 floats, one LDM buffer per loop nest Halide made.
    int staged = 0, puts = 0;
    for (const sw::LdmBuffer &b : k.ldm) {
        if (b.name.find("$ldm") == std::string::npos)
            continue;
        staged++;
        EXPECT_EQ(b.bytes, 16 * 8 * 4) << b.name;
    }
    EXPECT_GE(staged, 1);
    for (const sw::DmaSite &d : k.dma) {
        if (!d.is_put)
            continue;
        puts++;
        EXPECT_NE(d.ldm_buffer.find("$ldm"), std::string::npos);
        // The 4-lane vectors and the 4 vectors of a row merge into rows of 64 B, one strided
        // request.
        EXPECT_EQ(d.shape, "1 request(s) of 8 block(s) x 64 B, main-memory pitch 240 B");
    }
    EXPECT_EQ(puts, staged);
    EXPECT_NE(log.str().find("after stage_outputs"), std::string::npos);
    // The edge tiles are clamped (shifted inwards): the tile's base is a min() of the block index.
    EXPECT_NE(log.str().find("min("), std::string::npos);
    const std::string cpe = sw::generate_cpe_source(f, "computes.sw_args.h");
    EXPECT_NE(cpe.find("athread_put(PE_MODE"), std::string::npos) << cpe;
}

TEST(SunwayLowering, StageOutput_GuardedTailsGiveSymbolicExtentsBoundedPerBlock) {
    Computes p;
    p.out.split(p.x, p.xo, p.xi, 16, TailStrategy::GuardWithIf)
        .split(p.y, p.yo, p.yi, 8, TailStrategy::GuardWithIf)
        .reorder(p.xi, p.yi, p.xo, p.yo)
        .fuse(p.xo, p.yo, p.b)
        .gpu_blocks(p.b, DeviceAPI::Host);
    sw::SwFunction f = p.lower();
    ASSERT_EQ(f.kernels.size(), 1u);
    const sw::CpeKernel &k = f.kernels[0];
    EXPECT_TRUE(k.direct_accesses.empty()) << sw::describe(f);
    EXPECT_TRUE(k.notes.empty()) << sw::describe(f);
    int64_t most = 0;
    for (const sw::LdmBuffer &b : k.ldm) {
        if (b.name.find("$ldm") != std::string::npos)
            most = std::max(most, b.bytes);
    }
    EXPECT_EQ(most, 16 * 8 * 4) << sw::describe(f); // the largest tile, bounded over the blocks
}

TEST(SunwayLowering, StageOutput_AnUpdateThatReadsTheOutputStaysDirectAndTheReportSaysWhy) {
    Computes p;
    p.out(p.x, p.y) += 1.f;
    p.out.tile(p.x, p.y, p.xo, p.yo, p.xi, p.yi, 16, 8)
        .fuse(p.xo, p.yo, p.b)
        .gpu_blocks(p.b, DeviceAPI::Host);
    p.out.update()
        .tile(p.x, p.y, p.xo, p.yo, p.xi, p.yi, 16, 8)
        .fuse(p.xo, p.yo, p.b)
        .gpu_blocks(p.b, DeviceAPI::Host);
    sw::SwFunction f = p.lower();
    ASSERT_EQ(f.kernels.size(), 2u) << sw::describe(f);
    // The pure definition is staged; the update reads what it writes: not applied, and said.
    EXPECT_TRUE(f.kernels[0].notes.empty()) << sw::describe(f);
    EXPECT_TRUE(f.kernels[0].direct_accesses.empty()) << sw::describe(f);
    const sw::CpeKernel &k = f.kernels[1];
    ASSERT_FALSE(k.notes.empty()) << sw::describe(f);
    EXPECT_NE(k.notes[0].find("not applied"), std::string::npos) << k.notes[0];
    EXPECT_NE(k.notes[0].find("reads the output back"), std::string::npos) << k.notes[0];
    ASSERT_EQ(k.direct_accesses.size(), 1u);
    EXPECT_EQ(k.direct_accesses[0].substr(0, 3), "out");
    EXPECT_NE(sw::describe(f).find("note: stage_output("), std::string::npos);
}

TEST(WorkCount, AddressesAreReassociatedAroundLoopInvariantAndConstantTerms) {
    using namespace Halide::Internal;
    const Expr i = Variable::make(Int(32), "i"), o = Variable::make(Int(32), "o"),
               t = Variable::make(Int(32), "t");
    const std::set<std::string> ldm = {"a", "b"};
    auto load = [](const std::string &buf, const Expr &index) {
        return Load::make(Float(32), buf, index, Buffer<>(), Parameter(), const_true(),
                          ModulusRemainder());
    };
    auto body_work = [&](const std::vector<Expr> &indices) {
        Expr sum = load("a", indices[0]);
        for (size_t k = 1; k < indices.size(); k++)
            sum = sum + load("a", indices[k]);
        const Stmt s = Store::make("b", sum, i, Parameter(), const_true(), ModulusRemainder());
        return sw::count_straight_line(s, true, ldm, sw::sw26010(), "i");
    };
    // ((i*232 + t) + k) + (o % 2)*928 for k = 0..3: the constant nested inside the sum and the
    // invariant term outside it. Per iteration: i*232, + the invariant base (t and the
    // slot), shared by the four loads; the store's index i is free; the loop's increment.
    std::vector<Expr> nested;
    for (int k = 0; k < 4; k++)
        nested.push_back(((i * 232 + t) + k) + (o % 2) * 928);
    const sw::Work w = body_work(nested);
    EXPECT_EQ(w.p1, 4 + 1 + 1);     // four loads, the store, the loop's branch
    EXPECT_EQ(w.either, 1 + 1 + 1); // i*232, + the base, the increment
    const sw::Work flat = body_work({i * 232 + (t + (o % 2) * 928)});
    // The same addresses written flat cost the same integer work as one of them.
    EXPECT_EQ(w.either, flat.either);
    // Two different variable parts cost their own work.
    const sw::Work two = body_work({i * 232 + t, i * 9 + t});
    EXPECT_EQ(two.either, flat.either + 2); // i*9 and its add of the base
}

} // namespace

namespace {

/** out(x, y) = in(x, y) * v(x % 16) in 16x8 tiles (16 blocks: not a multiple of 64); the
 * staged v is the same 16 floats for every block. */
struct Scaled16 {
    ImageParam in{Float(32), 2, "bin"}, v{Float(32), 1, "bvec"};
    Func out{"bout"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, b{"b"};

    Scaled16() {
        out(x, y) = in(x, y) * v(x % 16);
        in.dim(0).set_bounds(0, 64).set_stride(1);
        in.dim(1).set_bounds(0, 32).set_stride(64);
        v.dim(0).set_bounds(0, 16).set_stride(1);
        out.output_buffer().dim(0).set_bounds(0, 64).set_stride(1);
        out.output_buffer().dim(1).set_bounds(0, 32).set_stride(64);
        out.tile(x, y, xo, yo, xi, yi, 16, 8).fuse(xo, yo, b).gpu_blocks(b, DeviceAPI::Host);
        in.in().compute_at(out, b).store_in(sw::LDM);
        v.in().compute_at(out, b).store_in(sw::LDM);
    }
    sw::SwFunction lower() {
        return sw::lower_pipeline_to_sunway(out, {in, v}, "scaled16", sw::sw26010());
    }
};

} // namespace

TEST(BroadcastDma, BlockIndependentStagingIsOneBcastGetBetweenBarriersInAUniformBlockLoop) {
    Scaled16 p;
    sw::broadcast(p.v.in());
    sw::SwFunction f = p.lower();
    ASSERT_EQ(f.kernels.size(), 1u);
    const sw::CpeKernel &k = f.kernels[0];
    bool bcast_site = false;
    for (const sw::DmaSite &d : k.dma) {
        if (d.main_buffer == "bvec") {
            EXPECT_NE(d.shape.find("broadcast"), std::string::npos) << d.shape;
            bcast_site = true;
        } else {
            EXPECT_EQ(d.shape.find("broadcast"), std::string::npos) << d.shape;
        }
    }
    EXPECT_TRUE(bcast_site);
    const std::string cpe = sw::generate_cpe_source(f, "scaled16.sw_args.h");
    // CPE 0 issues, every row of the mesh (mask 255) receives; barriers before and after.
    EXPECT_NE(cpe.find("athread_get(BCAST_MODE, (void *)(bvec + "), std::string::npos) << cpe;
    EXPECT_NE(cpe.find(", 64, (void *)&sw_reply_"), std::string::npos) << cpe;
    EXPECT_NE(cpe.find("if ((athread_get_id(-1) == 0))"), std::string::npos) << cpe;
    EXPECT_NE(cpe.find("athread_syn(ARRAY_SCOPE, 0xffff);"), std::string::npos) << cpe;
    // 16 blocks: every CPE runs one round; CPEs 16..63 skip the work but not the barriers.
    EXPECT_NE(cpe.find("const int32_t sw_rounds = (sw_blocks + 63) / 64;"), std::string::npos)
        << cpe;
    EXPECT_NE(cpe.find("if (h_sw_active) {"), std::string::npos) << cpe;
    EXPECT_EQ(cpe.find("sw_block += 64"), std::string::npos) << cpe;
}

TEST(BroadcastDma, RequestsAreCutAmongEightIssuersByRowsOrWholeLines) {
    // Contiguous: whole 128-byte lines per piece (32 floats), at most 8 pieces.
    sw::BroadcastSplit c = sw::split_broadcast(1, 50176, true, 4);
    EXPECT_EQ(c.pieces, 8);
    EXPECT_EQ(c.per, 6272);
    EXPECT_FALSE(c.by_rows);
    c = sw::split_broadcast(1, 2000, true, 4); // 250 floats a piece: raised to 1 KB
    EXPECT_EQ(c.pieces, 8);
    EXPECT_EQ(c.per, 256);
    c = sw::split_broadcast(1, 1100, true, 4); // 1 KB pieces: 5 of them
    EXPECT_EQ(c.pieces, 5);
    EXPECT_EQ(c.per, 256);
    c = sw::split_broadcast(3, 37, true, 4); // 111 floats, less than 1 KB: not cut
    EXPECT_EQ(c.pieces, 1);
    // Strided: by rows, ceil(rows / 8) a piece.
    c = sw::split_broadcast(20, 77, false, 4);
    EXPECT_TRUE(c.by_rows);
    EXPECT_EQ(c.per, 3);
    EXPECT_EQ(c.pieces, 7);
    c = sw::split_broadcast(3, 77, false, 4);
    EXPECT_EQ(c.per, 1);
    EXPECT_EQ(c.pieces, 3);
    EXPECT_EQ(sw::split_broadcast(0, 77, false, 4).pieces, 1);
}

TEST(BroadcastDma, AStridedStagingIsBroadcastByOneCpePerRowPiece) {
    // The staged box of w: 16 x 5 floats of rows 100 apart, the same for every block.
    ImageParam in{Float(32), 2, "rin"}, w{Float(32), 2, "rw"};
    Func out{"rout"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, b{"b"};
    out(x, y) = in(x, y) * w(x % 16, 3 + y % 5);
    in.dim(0).set_bounds(0, 64).set_stride(1);
    in.dim(1).set_bounds(0, 40).set_stride(64);
    w.dim(0).set_bounds(0, 100).set_stride(1);
    w.dim(1).set_bounds(0, 20).set_stride(100);
    out.output_buffer().dim(0).set_bounds(0, 64).set_stride(1);
    out.output_buffer().dim(1).set_bounds(0, 40).set_stride(64);
    out.tile(x, y, xo, yo, xi, yi, 16, 8).fuse(xo, yo, b).gpu_blocks(b, DeviceAPI::Host);
    in.in().compute_at(out, b).store_in(sw::LDM);
    w.in().compute_at(out, b).store_in(sw::LDM);
    sw::broadcast(w.in());
    const sw::SwFunction f = sw::lower_pipeline_to_sunway(out, {in, w}, "rows", sw::sw26010());
    ASSERT_EQ(f.kernels.size(), 1u);
    bool site = false;
    for (const sw::DmaSite &d : f.kernels[0].dma) {
        if (d.main_buffer == "rw") {
            EXPECT_NE(d.shape.find("issued by CPEs 0-4, a piece each"), std::string::npos)
                << d.shape;
            site = true;
        }
    }
    EXPECT_TRUE(site);
    const std::string cpe = sw::generate_cpe_source(f, "rows.sw_args.h");
    // Five rows: CPEs 0-4 issue one row each, each waits for its own; barriers around.
    EXPECT_NE(cpe.find("if ((athread_get_id(-1) < 5))"), std::string::npos) << cpe;
    EXPECT_NE(cpe.find("athread_get(BCAST_MODE, (void *)(rw + "), std::string::npos) << cpe;
    EXPECT_NE(cpe.find("athread_get_id(-1)"), std::string::npos) << cpe;
    EXPECT_NE(cpe.find("athread_syn(ARRAY_SCOPE, 0xffff);"), std::string::npos) << cpe;
}

TEST(BroadcastDma, StagingThatDependsOnTheBlockIsAClearError) {
    Scaled16 p;
    sw::broadcast(p.in.in());
    try {
        p.lower();
        FAIL() << "expected a UserError";
    } catch (const sw::UserError &e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.rfind("error: sw::broadcast(" + p.in.in().name() + ")", 0), 0u) << msg;
        EXPECT_NE(msg.find("depends on the CPE's block"), std::string::npos) << msg;
    }
}

TEST(BroadcastDma, DoubleBufferedIsBroadcastOneChunkAheadWithOneBarrierPerChunk) {
    // A dot product per output, its input vector staged per chunk of 16 in a serial loop.
    ImageParam a{Float(32), 1, "da"}, w{Float(32), 2, "dw"};
    Func acc{"dacc"}, out{"dout"};
    Var x{"x"}, xo{"xo"}, xi{"xi"};
    RDom r(0, 64, "dr");
    acc(x) = 0.f;
    acc(x) += a(r) * w(r, x);
    out(x) = acc(x);
    a.dim(0).set_bounds(0, 64).set_stride(1);
    w.dim(0).set_bounds(0, 64).set_stride(1);
    w.dim(1).set_bounds(0, 32).set_stride(64);
    out.output_buffer().dim(0).set_bounds(0, 32).set_stride(1);
    out.split(x, xo, xi, 4).gpu_blocks(xo, DeviceAPI::Host);
    acc.compute_at(out, xo).store_in(sw::LDM);
    RVar ro{"ro"}, ri{"ri"};
    acc.update().split(r.x, ro, ri, 16).reorder(ri, x, ro);
    a.in().compute_at(acc, ro).store_in(sw::LDM);
    w.in().compute_at(acc, ro).store_in(sw::LDM);
    sw::broadcast(a.in());
    sw::double_buffer(a.in());
    sw::double_buffer(w.in());
    const sw::SwFunction f = sw::lower_pipeline_to_sunway(out, {a, w}, "ahead", sw::sw26010());
    ASSERT_EQ(f.kernels.size(), 1u);
    int shared_sites = 0;
    for (const sw::DmaSite &d : f.kernels[0].dma) {
        if (d.main_buffer == "da") {
            EXPECT_NE(d.shape.find("broadcast"), std::string::npos) << d.shape;
            shared_sites++;
        }
    }
    EXPECT_EQ(shared_sites, 2) << "one site per slot";
    const std::string cpe = sw::generate_cpe_source(f, "ahead.sw_args.h");
    auto count = [&](const std::string &what) {
        int n = 0;
        for (size_t p = cpe.find(what); p != std::string::npos; p = cpe.find(what, p + 1))
            n++;
        return n;
    };
    // One barrier before the first chunk's broadcast, one per chunk in the loop (not two).
    EXPECT_EQ(count("athread_syn(ARRAY_SCOPE, 0xffff);"), 2) << cpe;
    // Slot 0 or 1, for the first chunk and for the next one.
    EXPECT_EQ(count("athread_get(BCAST_MODE, (void *)(da + "), 4) << cpe;
    // In the loop: the issuer waits for this chunk's slot, the barrier, then the next chunk.
    const size_t loop = cpe.find("for (int32_t dacc_s1_dr");
    ASSERT_NE(loop, std::string::npos) << cpe;
    const size_t wait = cpe.find("while (sw_reply_", loop), barrier = cpe.find("athread_syn", loop),
                 next = cpe.find("BCAST_MODE", loop);
    EXPECT_LT(wait, barrier) << cpe;
    EXPECT_LT(barrier, next) << cpe;
}

TEST(BroadcastDma, RegCommIsOneGetByCpe0ThenTheSharingInAUniformBlockLoop) {
    Scaled16 p;
    sw::broadcast(p.v.in(), sw::Sharing::RegComm);
    sw::SwFunction f = p.lower();
    ASSERT_EQ(f.kernels.size(), 1u);
    bool shared_site = false;
    for (const sw::DmaSite &d : f.kernels[0].dma) {
        if (d.main_buffer == "bvec") {
            EXPECT_NE(d.shape.find("register communication"), std::string::npos) << d.shape;
            shared_site = true;
        }
    }
    EXPECT_TRUE(shared_site);
    const std::string cpe = sw::generate_cpe_source(f, "scaled16.sw_args.h");
    // CPE 0 gets the 16 floats alone (PE_MODE), every CPE then takes part in the sharing.
    EXPECT_NE(cpe.find("athread_get(PE_MODE, (void *)(bvec + "), std::string::npos) << cpe;
    EXPECT_NE(cpe.find("if ((athread_get_id(-1) == 0))"), std::string::npos) << cpe;
    // 16 floats (64 bytes), the helper's loads, stores and loops counted after it.
    EXPECT_TRUE(
        std::regex_search(cpe, std::regex("\n +sw_regcomm_share\\(\\w+, 64\\);\n +SW_WORK\\(")))
        << cpe;
    // The helper, once, with the mesh's 8 columns from the Machine.
    const size_t helper = cpe.find("static void sw_regcomm_share(void *p, int bytes) {");
    ASSERT_NE(helper, std::string::npos) << cpe;
    EXPECT_EQ(cpe.find("static void sw_regcomm_share(", helper + 1), std::string::npos) << cpe;
    EXPECT_NE(cpe.find("row = id / 8, col = id % 8;"), std::string::npos) << cpe;
    for (const char *api :
         {"simd_putr(v, 8);", "simd_putc(v, 8);", "v = simd_getr(v);", "v = simd_getc(v);"}) {
        EXPECT_NE(cpe.find(api), std::string::npos) << api;
    }
    EXPECT_EQ(cpe.find("BCAST_MODE"), std::string::npos) << cpe;
    EXPECT_EQ(cpe.find("athread_syn"), std::string::npos) << cpe;
    // A collective: every CPE runs the same number of rounds.
    EXPECT_NE(cpe.find("const int32_t sw_rounds = (sw_blocks + 63) / 64;"), std::string::npos)
        << cpe;
    EXPECT_EQ(cpe.find("sw_block += 64"), std::string::npos) << cpe;
}

TEST(BroadcastDma, SharingsAreRmaOnSW26010Pro) {
    // The Pro has no register communication and no BCAST_MODE: the same sharings are printed
    // with RMA (CodeGen_CPE; run on the emulator by broadcast_test's ProDense).
    const std::pair<sw::Sharing, const char *> forms[] = {
        {sw::Sharing::RegComm, "CRTS_rma_col_imcast_other(p, p, bytes, &sent, 0xff, "},
        {sw::Sharing::Dma, "CRTS_rma_row_imcast_other(ldm, ldm, len, &sent, rows, "}};
    for (const auto &[how, rma] : forms) {
        Scaled16 p;
        sw::broadcast(p.v.in(), how);
        const sw::SwFunction f =
            sw::lower_pipeline_to_sunway(p.out, {p.in, p.v}, "scaled16", sw::sw26010_pro());
        const std::string cpe = sw::generate_cpe_source(f, "scaled16.sw_args.h");
        EXPECT_NE(cpe.find(rma), std::string::npos) << sw::sharing_name(how) << "\n" << cpe;
        EXPECT_NE(cpe.find("CRTS_ssync_array();"), std::string::npos) << cpe;
        for (const char *sw26010 : {"simd_putr", "simd_getr", "BCAST_MODE", "athread_syn"})
            EXPECT_EQ(cpe.find(sw26010), std::string::npos) << sw26010 << "\n" << cpe;
    }
}

TEST(BroadcastDma, RegCommRefusalsNameTheFunc) {
    {
        Scaled16 p;
        sw::broadcast(p.in.in(), sw::Sharing::RegComm); // its box depends on the block
        try {
            p.lower();
            FAIL() << "expected a UserError";
        } catch (const sw::UserError &e) {
            const std::string msg = e.what();
            EXPECT_EQ(msg.rfind("error: sw::broadcast(" + p.in.in().name() + ")", 0), 0u) << msg;
            EXPECT_NE(msg.find("depends on the CPE's block"), std::string::npos) << msg;
        }
    }
    // Row sharing, by register communication or by DMA to each row, where the blocks are not
    // dealt to the mesh by columns.
    for (const sw::Sharing how : {sw::Sharing::RegCommRow, sw::Sharing::DmaRow}) {
        Scaled16 p;
        sw::broadcast(p.v.in(), how);
        try {
            p.lower();
            FAIL() << "expected a UserError";
        } catch (const sw::UserError &e) {
            const std::string msg = e.what();
            EXPECT_EQ(msg.rfind("error: sw::broadcast(" + p.v.in().name() + ", " +
                                    sw::sharing_name(how) + "): the innermost block loop",
                                0),
                      0u)
                << msg;
            EXPECT_NE(msg.find("one per mesh column"), std::string::npos) << msg;
        }
    }
}

TEST(Directives, MarksTravelWithTheFuncsWithTheirMode) {
    Scaled16 p;
    EXPECT_TRUE(sw::directives_of(Pipeline(p.out)).empty());
    sw::broadcast(p.v.in(), sw::Sharing::RegComm);
    sw::broadcast(p.in.in());
    sw::double_buffer(p.in.in());
    sw::stage_output(p.out);
    sw::split_phases(p.in.in());
    sw::place_rows(p.in.in());
    const sw::Directives d = sw::directives_of(Pipeline(p.out));
    EXPECT_EQ(d.shared.at(p.v.in().name()), sw::Sharing::RegComm);
    EXPECT_EQ(d.shared.at(p.in.in().name()), sw::Sharing::Dma);
    EXPECT_EQ(d.double_buffered, std::set<std::string>{p.in.in().name()});
    EXPECT_EQ(d.phase_split, std::set<std::string>{p.in.in().name()});
    EXPECT_EQ(d.rows_placed, std::set<std::string>{p.in.in().name()});
    EXPECT_EQ(d.staged_outputs, std::set<std::string>{p.out.name()});
    sw::broadcast(p.v.in(), sw::Sharing::Dma); // marking again replaces the mode
    EXPECT_EQ(sw::directives_of(Pipeline(p.out)).shared.at(p.v.in().name()), sw::Sharing::Dma);
    sw::broadcast(p.v.in(), sw::Sharing::DmaRow);
    EXPECT_EQ(sw::directives_of(Pipeline(p.out)).shared.at(p.v.in().name()), sw::Sharing::DmaRow);
    // Another pipeline of the same shape, built apart, has none of them.
    Scaled16 q;
    EXPECT_TRUE(sw::directives_of(Pipeline(q.out)).empty());
    // A deep copy (the autoscheduler's trials: a pipeline without wrappers yet) carries the
    // marks; marks on the copy stay there.
    Var x("x");
    Func g("g"), h("h");
    g(x) = x;
    h(x) = g(x) * 2;
    sw::double_buffer(g);
    const std::map<std::string, Internal::Function> env =
        Internal::find_transitive_calls(h.function());
    auto copy = Internal::deep_copy({h.function()}, env);
    EXPECT_EQ(sw::directives_of(copy.first).double_buffered, std::set<std::string>{"g"});
    sw::stage_output(Func(copy.first[0]));
    EXPECT_EQ(sw::directives_of(copy.first).staged_outputs, std::set<std::string>{"h"});
    EXPECT_TRUE(sw::directives_of(Pipeline(h)).staged_outputs.empty());
}

TEST(WorkCount, RegCommSharingCountsOneLoadOrStorePerVectorAndTheTailBytes) {
    const sw::Machine &m = sw::sw26010();
    // Set-up: 7 integer ops, splat_p1 + 3 P1 -> 8 cycles; per vector a load or store and the
    // loop's compare-and-branch (2 P1) with its increment and address (2 either) -> 2 cycles.
    const sw::ShareWork v = sw::regcomm_share_work(64, m);
    EXPECT_EQ(v.cycles, 8 + 4 * 2);
    EXPECT_EQ(v.ldm_accesses, 4);
    // 540 bytes: 33 vectors, then 12 bytes through the local (its two unaligned accesses, 4
    // cycles; per byte a load, a store and the loop: 3).
    const sw::ShareWork t = sw::regcomm_share_work(540, m);
    EXPECT_EQ(t.cycles, 8 + 33 * 2 + 4 + 12 * 3);
    EXPECT_EQ(t.ldm_accesses, 33 + 2 + 2 * 12);
    // The puts and gets are not in it (the emulator times them): linear in the vectors.
    EXPECT_EQ(sw::regcomm_share_work(16 * 1000, m).cycles -
                  sw::regcomm_share_work(16 * 500, m).cycles,
              500 * 2);
}

TEST(WorkCount, UnpairedCyclesAreTheOtherEndOfTheBand) {
    const sw::Machine &m = sw::sw26010();
    auto work = [](int64_t p0, int64_t p1, int64_t either, int64_t chain, int64_t slow) {
        sw::Work w;
        w.p0 = p0, w.p1 = p1, w.either = either, w.chain = chain, w.slow_cycles = slow;
        return w;
    };
    // Never below the paired cycles; one instruction a cycle, or the chain, plus the slow ones.
    for (int64_t p0 : {0, 1, 7, 40, 100})
        for (int64_t p1 : {0, 1, 10, 40, 101})
            for (int64_t either : {0, 1, 5, 100})
                for (int64_t chain : {0, 3, 30})
                    for (int64_t slow : {0, 7}) {
                        const sw::Work w = work(p0, p1, either, chain, slow);
                        const int64_t paired = sw::region_cycles(w, m),
                                      unpaired = sw::region_unpaired_cycles(w, m);
                        EXPECT_GE(unpaired, paired) << p0 << " " << p1 << " " << either;
                        EXPECT_EQ(unpaired,
                                  std::max(p0 + p1 + either, chain * m.fp_latency_cycles) + slow);
                        if ((p0 == 0 || p1 == 0) && either == 0) {
                            // Only P0 or only P1 work: nothing to pair.
                            EXPECT_EQ(unpaired, paired) << p0 << " " << p1;
                        }
                    }
    // A P1-bound region (18 FMAs against 73 P1 and 27 integer instructions): unpaired, its P0
    // and integer instructions add to its P1 ones.
    const sw::Work conv = work(18, 73, 27, 9, 0);
    EXPECT_EQ(sw::region_cycles(conv, m), 73);
    EXPECT_EQ(sw::region_unpaired_cycles(conv, m), 18 + 73 + 27);
    // A chain long enough bounds both ends alike.
    const sw::Work chained = work(10, 10, 0, 20, 5);
    EXPECT_EQ(sw::region_cycles(chained, m), sw::region_unpaired_cycles(chained, m));
    // The register-communication helper's parts: P1 and integer work, so they pair too.
    const sw::ShareWork v = sw::regcomm_share_work(64, m);
    EXPECT_EQ(v.unpaired_cycles, (m.splat_p1 + 3 + 7) + 4 * (2 + 2));
    EXPECT_GE(sw::regcomm_share_work(540, m).unpaired_cycles,
              sw::regcomm_share_work(540, m).cycles);
}

TEST(WorkCount, GeneratedCodeReportsBothEndsOfEveryRegion) {
    Scaled16 p;
    const std::string cpe = sw::generate_cpe_source(p.lower(), "scaled16.sw_args.h");
    // SW_WORK(cycles, flops, LDM accesses, direct accesses, unpaired cycles), only under the
    // emulator's guard.
    const std::regex line("SW_WORK\\((\\d+), (\\d+), (\\d+), (\\d+), (\\d+)\\);");
    int regions = 0;
    bool pairs = false;
    for (auto it = std::sregex_iterator(cpe.begin(), cpe.end(), line); it != std::sregex_iterator();
         ++it) {
        const long long paired = std::stoll((*it)[1]), unpaired = std::stoll((*it)[5]);
        EXPECT_GE(unpaired, paired) << it->str();
        pairs |= unpaired > paired;
        regions++;
    }
    EXPECT_GT(regions, 0) << cpe;
    EXPECT_TRUE(pairs) << cpe; // the scaling loop has loads, stores and multiplies
    EXPECT_NE(cpe.find("#define SW_WORK(c, f, l, d, u) ((void)0)"), std::string::npos) << cpe;
    EXPECT_NE(cpe.find("sw_work.unpaired_extra_cycles += (u) - (c)"), std::string::npos) << cpe;
}

TEST(BroadcastDma, KernelsWithoutTheDirectiveKeepTheCyclicBlockLoop) {
    Scaled16 p;
    const std::string cpe = sw::generate_cpe_source(p.lower(), "scaled16.sw_args.h");
    EXPECT_EQ(cpe.find("BCAST_MODE"), std::string::npos);
    EXPECT_EQ(cpe.find("athread_syn"), std::string::npos);
    EXPECT_NE(cpe.find("sw_block += 64"), std::string::npos) << cpe;
}

namespace {

/** out(x, y) = in(4x, y) + 2 in(4x + 1, y) + in(4x + 3, y) in 16x8 tiles, vectorised along x:
 * every load of the staged input is a vector of stride 4 (gathered from 4 scalars). */
struct Stride4 {
    ImageParam in{Float(32), 2, "pin"};
    Func out{"pout"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, b{"b"};

    Stride4() {
        out(x, y) = in(4 * x, y) + 2.f * in(4 * x + 1, y) + in(4 * x + 3, y);
        in.dim(0).set_bounds(0, 256).set_stride(1);
        in.dim(1).set_bounds(0, 16).set_stride(256);
        out.output_buffer().dim(0).set_bounds(0, 64).set_stride(1);
        out.output_buffer().dim(1).set_bounds(0, 16).set_stride(64);
        out.tile(x, y, xo, yo, xi, yi, 16, 8)
            .fuse(xo, yo, b)
            .gpu_blocks(b, DeviceAPI::Host)
            .vectorize(xi, 4);
        in.in().compute_at(out, b).store_in(sw::LDM);
    }
    sw::SwFunction lower() {
        return sw::lower_pipeline_to_sunway(out, {in}, "stride4", sw::sw26010());
    }
};

} // namespace

TEST(SplitPhases, StrideFourVectorsReadUnitStrideVectorsOfThePhasePlanes) {
    {
        Stride4 plain;
        const std::string cpe = sw::generate_cpe_source(plain.lower(), "stride4.sw_args.h");
        EXPECT_NE(cpe.find("sw_gather4("), std::string::npos) << cpe;
    }
    Stride4 p;
    sw::split_phases(p.in.in());
    const sw::SwFunction f = p.lower();
    ASSERT_EQ(f.kernels.size(), 1u);
    const sw::CpeKernel &k = f.kernels[0];
    // The planes: one more LDM buffer; the window's 64 elements per row (4 x 15 + 4) in 4
    // planes of rows of 16 (whole vectors), 8 rows and a vector of slack: 4 x (8 x 16 + 4).
    bool planes = false;
    for (const sw::LdmBuffer &buf : k.ldm) {
        if (buf.name.size() > 7 && buf.name.compare(buf.name.size() - 7, 7, "$phases") == 0) {
            planes = true;
            EXPECT_EQ(buf.bytes, 4 * 4 * (8 * 16 + 4)) << buf.name;
        }
    }
    EXPECT_TRUE(planes);
    EXPECT_TRUE(k.notes.empty()) << k.notes.front();
    const std::string cpe = sw::generate_cpe_source(f, "stride4.sw_args.h");
    EXPECT_EQ(cpe.find("sw_gather4("), std::string::npos) << cpe;
    // The copy into the planes (4 stores per group of 4), then aligned vector loads: a
    // vector of 4 output pixels at tap t reads plane t at the pixels' own offset.
    EXPECT_NE(cpe.find("_phases_row < 8;"), std::string::npos) << cpe;
    const std::regex planes_load(
        R"(sw_load4a\(&pin_im_\w*_phases\[\(\(\(\(pout_\w*_y_yi \* 4\) \+ pout_\w*_xi_xi\) \* 4\) \+ 132\)\]\))");
    EXPECT_TRUE(std::regex_search(cpe, planes_load)) << cpe;
}

TEST(SplitPhases, StrideTwoPlanesAreFilledByDeinterleavingVectors) {
    // out(x) reads in(2x) and in(2x + 1): window rows of 36 elements, 5 groups of 8 (the last
    // one past the row: into the next row, or the 8 elements the buffer grows by).
    ImageParam in{Float(32), 2, "s2in"};
    Func out{"s2out"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, b{"b"};
    out(x, y) = in(2 * x, y) + 3.f * in(2 * x + 1, y);
    in.dim(0).set_bounds(0, 40).set_stride(1);
    in.dim(1).set_bounds(0, 8).set_stride(40);
    out.output_buffer().dim(0).set_bounds(0, 18).set_stride(1);
    out.output_buffer().dim(1).set_bounds(0, 8).set_stride(18);
    out.tile(x, y, xo, yo, xi, yi, 18, 4)
        .fuse(xo, yo, b)
        .gpu_blocks(b, DeviceAPI::Host)
        .vectorize(xi, 4);
    in.in().compute_at(out, b).store_in(sw::LDM);
    sw::split_phases(in.in());
    const sw::SwFunction f = sw::lower_pipeline_to_sunway(out, {in}, "s2", sw::sw26010());
    ASSERT_EQ(f.kernels.size(), 1u);
    EXPECT_TRUE(f.kernels[0].notes.empty()) << f.kernels[0].notes.front();
    const std::string cpe = sw::generate_cpe_source(f, "s2.sw_args.h");
    EXPECT_EQ(cpe.find("sw_gather4("), std::string::npos) << cpe;
    // Even lanes to plane 0, odd lanes to plane 1, per group of 8 of a row.
    EXPECT_NE(cpe.find(", 0x88)"), std::string::npos) << cpe;
    EXPECT_NE(cpe.find(", 0xDD)"), std::string::npos) << cpe;
    EXPECT_NE(cpe.find("simd_vshff("), std::string::npos) << cpe;
    EXPECT_NE(cpe.find("_phases_j < 5;"), std::string::npos) << cpe;
}

TEST(SplitPhases, AStagingWithoutStridedVectorsStaysAsItWasAndTheReportSaysWhy) {
    Scaled16 p;
    sw::split_phases(p.in.in());
    const sw::SwFunction f = p.lower();
    ASSERT_EQ(f.kernels.size(), 1u);
    const sw::CpeKernel &k = f.kernels[0];
    for (const sw::LdmBuffer &buf : k.ldm)
        EXPECT_EQ(buf.name.find("$phases"), std::string::npos) << buf.name;
    ASSERT_EQ(k.notes.size(), 1u);
    EXPECT_NE(k.notes[0].find("split_phases("), std::string::npos) << k.notes[0];
    EXPECT_NE(k.notes[0].find("no vector of a constant stride > 1"), std::string::npos)
        << k.notes[0];
}

namespace {

/** Occurrences of \p needle in \p s. */
int count_of(const std::string &s, const std::string &needle) {
    int n = 0;
    for (size_t at = s.find(needle); at != std::string::npos;
         at = s.find(needle, at + needle.size()))
        n++;
    return n;
}

} // namespace

// A register block of one vector x 3 channels as PromoteAccumulators leaves it: each update
// behind a LetStmt of the accumulator's former index, which no longer uses it. Those dead
// lets must not split the run of stores: the input vector is loaded once for the 3 channels
// (as with blocks of 2 or more vectors, whose lets the run already spanned).
TEST(ShareOperands, DeadLetsBetweenTheBlocksStoresDoNotSplitTheRun) {
    using namespace Halide::Internal;
    const Type v4 = Float(32, 4);
    const Expr vec = Load::make(v4, "win", Ramp::make(Variable::make(Int(32), "i"), 1, 4),
                                Buffer<>(), Parameter(), const_true(4), ModulusRemainder());
    Stmt body;
    for (int c = 2; c >= 0; c--) {
        const std::string acc = "acc" + std::to_string(c);
        const Expr w = Broadcast::make(Load::make(Float(32), "wt", c * 9, Buffer<>(), Parameter(),
                                                  const_true(), ModulusRemainder()),
                                       4);
        const Expr old = Load::make(v4, acc, Ramp::make(0, 1, 4), Buffer<>(), Parameter(),
                                    const_true(4), ModulusRemainder());
        Stmt st = Store::make(acc, old + vec * w, Ramp::make(0, 1, 4), Parameter(), const_true(4),
                              ModulusRemainder());
        body = body.defined() ? Block::make(st, body) : st;
        body =
            LetStmt::make("dead" + std::to_string(c), Variable::make(Int(32), "i") + 32 * c, body);
    }
    sw::CpeKernel k;
    k.ldm = {{"win", Float(32), 256}, {"wt", Float(32), 256}};
    k.body = body;
    sw::share_operands(k);
    std::ostringstream s;
    s << k.body;
    const std::string ir = s.str();
    EXPECT_EQ(count_of(ir, "win["), 1) << ir; // the vector bound once, used by the 3 stores
    EXPECT_EQ(count_of(ir, "let dead"), 0) << ir;
    EXPECT_EQ(count_of(ir, "acc0[") + count_of(ir, "acc1[") + count_of(ir, "acc2["), 6) << ir;
}

namespace {

/** The generated MPE and CPE sources of a layer. */
std::string generated_code(const sw::SwFunction &f) {
    return sw::generate_mpe_source(f, f.name + ".h", f.name + ".sw_args.h") +
           sw::generate_cpe_source(f, f.name + ".sw_args.h");
}

/** Two different layers with different directives: Scaled16 with its input double-buffered
 * and its vector broadcast, Stride4 with its window split into phases. */
std::string lower_scaled16() {
    Scaled16 p;
    sw::broadcast(p.v.in());
    sw::double_buffer(p.in.in());
    return generated_code(p.lower());
}
std::string lower_stride4() {
    Stride4 p;
    sw::split_phases(p.in.in());
    return generated_code(p.lower());
}

/** \p code with the temporaries Halide names from its process-wide counter (t6, t7, ...: the
 * numbers depend on what the process lowered before, and on the interleaving of two threads
 * lowering at once) renamed in the order they first appear: t#0, t#1, ... */
std::string canonical_temporaries(const std::string &code) {
    static const std::regex temp("\\bt([0-9]+)\\b");
    std::map<std::string, std::string> names;
    std::string out;
    auto at = code.cbegin();
    for (std::sregex_iterator it(code.begin(), code.end(), temp), end; it != end; ++it) {
        out.append(at, code.cbegin() + it->position());
        auto [name, added] = names.emplace(it->str(), "t#" + std::to_string(names.size()));
        out += name->second;
        at = code.cbegin() + it->position() + it->length();
    }
    out.append(at, code.cend());
    return out;
}

/** What \p work returns, computed in a child process forked from this one: every call starts
 * from the same state of Halide's process-wide name counters (a Func's output buffer is named
 * out, out$1, out$2, ... in the order such Funcs are made in a process), as a fresh generator
 * process would. */
std::vector<std::string> in_child(const std::function<std::vector<std::string>()> &work) {
    int fds[2];
    if (pipe(fds) != 0)
        throw std::runtime_error("pipe failed");
    const pid_t pid = fork();
    if (pid < 0)
        throw std::runtime_error("fork failed");
    if (pid == 0) {
        close(fds[0]);
        std::string out;
        int status = 0;
        try {
            for (const std::string &s : work())
                out += std::to_string(s.size()) + "\n" + s;
        } catch (...) {
            status = 1;
        }
        for (size_t done = 0; done < out.size();) {
            const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
            if (n <= 0)
                _exit(2);
            done += size_t(n);
        }
        close(fds[1]);
        _exit(status);
    }
    close(fds[1]);
    std::string all;
    char buf[65536];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
        all.append(buf, size_t(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error("the child process failed");
    std::vector<std::string> parts;
    for (size_t at = 0; at < all.size();) {
        const size_t nl = all.find('\n', at);
        const size_t len = std::stoul(all.substr(at, nl - at));
        parts.push_back(all.substr(nl + 1, len));
        at = nl + 1 + len;
    }
    return parts;
}

} // namespace

/* Each lowering in a child process forked from this one, so that Halide's name counters start
 * the same for the layer alone and for the two at once. */
TEST(Directives, TwoLayersLoweredOnTwoThreadsAtOnceGetTheCodeEachGetsAlone) {
    const std::string scaled_alone =
        in_child([] { return std::vector<std::string>{lower_scaled16()}; }).at(0);
    const std::string stride_alone =
        in_child([] { return std::vector<std::string>{lower_stride4()}; }).at(0);
    ASSERT_NE(scaled_alone.find("BCAST_MODE"), std::string::npos); // the directives took effect
    ASSERT_NE(stride_alone.find("phases"), std::string::npos);
    ASSERT_EQ(scaled_alone.find("phases"), std::string::npos); // and only where they were given
    ASSERT_EQ(stride_alone.find("BCAST_MODE"), std::string::npos);
    for (int round = 0; round < 3; round++) {
        const std::vector<std::string> both = in_child([] {
            std::string scaled, stride;
            std::thread a([&] { scaled = lower_scaled16(); });
            std::thread b([&] { stride = lower_stride4(); });
            a.join();
            b.join();
            return std::vector<std::string>{scaled, stride};
        });
        ASSERT_EQ(both.size(), 2u);
        // Identical but for the numbers of Halide's temporaries (their counter is Halide's
        // process-wide state; the Sunway passes keep none).
        EXPECT_EQ(canonical_temporaries(both[0]), canonical_temporaries(scaled_alone))
            << "round " << round;
        EXPECT_EQ(canonical_temporaries(both[1]), canonical_temporaries(stride_alone))
            << "round " << round;
    }
}

// The Sunway IR vocabulary (SunwayIR.h): each builder makes the call the passes have always
// made (name, type, call type, arguments in order and their types), and its matcher reads
// back what the builder was given.
TEST(SunwayIR, BuildersMakeTheDocumentedCallsAndMatchersReadThemBack) {
    using namespace Halide::Internal;
    namespace ir = sw::ir;
    auto call_of = [](const Stmt &s) {
        const Evaluate *e = s.as<Evaluate>();
        return e ? e->value.as<Call>() : nullptr;
    };
    auto expect_extern = [](const Call *c, const std::string &name, Type t, size_t args) {
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(c->name, name);
        EXPECT_EQ(c->type, t);
        EXPECT_EQ(c->call_type, Call::Extern);
        EXPECT_EQ(c->args.size(), args);
        EXPECT_TRUE(ir::is_sunway_intrinsic(c));
    };

    // (The nodes are kept alive by the Stmts and Exprs held here.)
    const Stmt launch_stmt = ir::make_launch(3);
    const Call *launch = call_of(launch_stmt);
    expect_extern(launch, "sw_launch", Int(32), 1);
    EXPECT_EQ(launch->args[0].type(), Int(32));
    EXPECT_EQ(ir::as_launch(launch), 3);

    for (bool begin : {true, false}) {
        const Stmt s = begin ? ir::make_dma_begin(5) : ir::make_dma_wait(5);
        const Call *c = call_of(s);
        expect_extern(c, begin ? "sw_dma_begin" : "sw_dma_wait", Int(32), 1);
        EXPECT_EQ(c->args[0].type(), Int(32));
        EXPECT_EQ(ir::dma_site(c), 5);
        EXPECT_TRUE(ir::is_dma_intrinsic(c));
        EXPECT_EQ(begin ? ir::as_dma_begin(s) : ir::as_dma_wait(s), 5);
        EXPECT_FALSE(begin ? ir::as_dma_wait(s) : ir::as_dma_begin(s));
        const Expr moved = ir::with_dma_site(c, 7);
        EXPECT_EQ(ir::dma_site(moved.as<Call>()), 7);
    }

    const Expr i = Variable::make(Int(32), "i");
    ir::DmaRequest r;
    r.is_put = true;
    r.ldm_buffer = "tile";
    r.ldm_index = i * 4;
    r.main_buffer = "out";
    r.main_index = i * 64 + 1;
    r.block_elems = 4;
    r.rows = 8;
    r.pitch_elems = 64;
    r.site = 2;
    const Expr req_expr = ir::dma_request(r);
    const Call *req = req_expr.as<Call>();
    expect_extern(req, "sw_dma_request", Int(32), 9);
    // is_put, "ldm", ldm_index, "main", main_index, block, rows, pitch, site
    EXPECT_TRUE(is_const_one(req->args[0]));
    EXPECT_EQ(req->args[0].type(), Int(32));
    EXPECT_EQ(req->args[1].as<StringImm>()->value, "tile");
    EXPECT_TRUE(equal(req->args[2], r.ldm_index));
    EXPECT_EQ(req->args[3].as<StringImm>()->value, "out");
    EXPECT_TRUE(equal(req->args[4], r.main_index));
    EXPECT_TRUE(equal(req->args[5], r.block_elems));
    EXPECT_TRUE(equal(req->args[6], r.rows));
    EXPECT_TRUE(equal(req->args[7], r.pitch_elems));
    EXPECT_EQ(*as_const_int(req->args[8]), 2);
    EXPECT_EQ(req->args[8].type(), Int(32));
    EXPECT_EQ(ir::dma_site(req), 2);
    std::optional<ir::DmaRequest> back = ir::as_dma_request(req);
    ASSERT_TRUE(back);
    EXPECT_TRUE(back->is_put);
    EXPECT_EQ(back->ldm_buffer, "tile");
    EXPECT_EQ(back->main_buffer, "out");
    EXPECT_TRUE(back->ldm_index.same_as(req->args[2]));
    EXPECT_EQ(back->site, 2);
    EXPECT_FALSE(back->bcast_mask.defined());
    EXPECT_TRUE(equal(ir::dma_request(*back), Expr(req)));
    back->bcast_mask = 255; // a BCAST_MODE get: the row mask comes last
    const Expr bcast_expr = ir::dma_request(*back);
    const Call *bcast = bcast_expr.as<Call>();
    ASSERT_EQ(bcast->args.size(), 10u);
    EXPECT_EQ(*as_const_int(bcast->args[9]), 255);
    EXPECT_EQ(*as_const_int(ir::as_dma_request(bcast)->bcast_mask), 255);
    EXPECT_FALSE(ir::as_dma_begin(req));

    const Stmt barrier_stmt = ir::make_bcast_barrier();
    const Call *barrier = call_of(barrier_stmt);
    expect_extern(barrier, "sw_bcast_barrier", Int(32), 0);
    EXPECT_TRUE(ir::is_bcast_barrier(barrier) && ir::is_collective(barrier));
    const Expr issuer_expr = ir::bcast_issuer(8);
    const Call *issuer = issuer_expr.as<Call>();
    expect_extern(issuer, "sw_bcast_issuer", Bool(), 1);
    EXPECT_TRUE(ir::is_bcast_issuer(issuer) && ir::is_collective(issuer));
    EXPECT_EQ(ir::bcast_issuers(issuer), 8);
    EXPECT_EQ(ir::bcast_issuers(ir::bcast_issuer().as<Call>()), 1);
    const Expr id_expr = ir::cpe_id();
    const Call *id = id_expr.as<Call>();
    expect_extern(id, "sw_cpe_id", Int(32), 0);
    EXPECT_TRUE(ir::is_cpe_id(id) && ir::is_sunway_intrinsic(id) && !ir::is_collective(id));
    const Stmt share = ir::make_regcomm_share({"input_im", 1234});
    const Call *sc = call_of(share);
    expect_extern(sc, "sw_regcomm_share", Int(32), 4);
    EXPECT_EQ(sc->args[0].as<StringImm>()->value, "input_im");
    EXPECT_EQ(sc->args[1].type(), Int(64));
    EXPECT_EQ(ir::as_regcomm_share(sc)->bytes, 1234);
    EXPECT_EQ(ir::as_regcomm_share(sc)->buffer, "input_im");
    EXPECT_EQ(ir::as_regcomm_share(sc)->how, sw::Sharing::RegComm);
    EXPECT_TRUE(is_const_zero(ir::as_regcomm_share(sc)->offset));
    // Along the mesh rows, at a slot's offset (a double-buffered staging).
    const Expr slot = Variable::make(Int(32), "slot");
    const Stmt row = ir::make_regcomm_share({"a_im", 444, sw::Sharing::RegCommRow, slot * 128});
    const std::optional<ir::RegcommShare> rs = ir::as_regcomm_share(call_of(row));
    ASSERT_TRUE(rs.has_value());
    EXPECT_EQ(rs->how, sw::Sharing::RegCommRow);
    EXPECT_EQ(rs->bytes, 444);
    EXPECT_TRUE(equal(rs->offset, slot * 128));
    EXPECT_TRUE(ir::has_collective(Block::make(ir::make_dma_begin(0), share)));
    EXPECT_FALSE(ir::has_collective(ir::make_dma_begin(0)));
    EXPECT_FALSE(ir::has_collective(Stmt()));

    const Expr active_expr = ir::block_active();
    const Variable *active = active_expr.as<Variable>();
    ASSERT_NE(active, nullptr);
    EXPECT_EQ(active->name, "sw_active");
    EXPECT_EQ(active->type, Bool());
    EXPECT_TRUE(ir::is_register(ir::new_register_name()));
    EXPECT_FALSE(ir::is_register("tile"));
    const Expr sqrt_call = Call::make(Float(32), "sqrt_f32", {Expr(1.f)}, Call::PureExtern);
    EXPECT_FALSE(ir::is_sunway_intrinsic(sqrt_call.as<Call>()));
}
