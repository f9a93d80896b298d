/** \file
 * The register-communication GEMM (generators/matmul_generator.cpp, schedules/matmul_schedule.h)
 * on the emulated core group: A shared along the mesh rows and B down the mesh columns
 * (sw::Sharing::RegCommRow / RegCommColumn, target_sw/BroadcastDma.h) gives the naive product
 * and, bit for bit, the same tiles without sharing; every byte a source CPE fetches is passed to
 * the 7 others of its row or column, and the core group reads 8 times fewer bytes. Shapes with
 * one and several rounds of blocks, several column tiles per mesh column (a block variable that
 * is the same down a column within a round), chunked and odd reductions. The refusals: a shape
 * the hand schedule cannot tile, blocks that do not fill the rounds, SW26010-Pro.
 */
#include "HalideBuffer.h"
#include "jit/jit_layer.h"
#include "tests/support/random_data.h"

#include <algorithm>
#include <athread_emu.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using Buf = Halide::Runtime::Buffer<float>;
using Params = std::map<std::string, std::string>;

struct MatMulCase {
    const char *name;
    int m, n, k, tile_m, tile_n, tile_k; ///< tiles 0: chosen by the schedule
};

Params params_of(const MatMulCase &c, const char *sharing) {
    return {{"m", std::to_string(c.m)},
            {"n", std::to_string(c.n)},
            {"k", std::to_string(c.k)},
            {"tile_m", std::to_string(c.tile_m)},
            {"tile_n", std::to_string(c.tile_n)},
            {"tile_k", std::to_string(c.tile_k)},
            {"sharing", sharing},
            {"schedule", "sunway"}};
}

struct GemmRun {
    long long get_bytes = 0, puts = 0, gets = 0;
    double seconds = 0;                                    ///< modelled
    long long compute = 0, dma_wait = 0, regcomm_wait = 0; ///< CPE 0's cycles
    std::vector<float> out;
};

/** Runs \p layer on random A and B, checks C against a naive product in double. */
GemmRun run_and_check(const sw_jit::JitLayer &layer, const MatMulCase &c) {
    const std::vector<float> a = sw_test::random_values(size_t(c.m) * c.k, 21);
    const std::vector<float> b = sw_test::random_values(size_t(c.k) * c.n, 22);
    std::vector<float> out(size_t(c.m) * c.n, NAN);
    Buf ba(const_cast<float *>(a.data()), {c.k, c.m}),
        bb(const_cast<float *>(b.data()), {c.n, c.k});
    Buf bo(out.data(), {c.n, c.m});
    athread_emu_stats_reset();
    EXPECT_EQ(layer.call({ba.raw_buffer(), bb.raw_buffer(), bo.raw_buffer()}), 0);
    int bad = 0;
    for (int i = 0; i < c.m; i++) {
        for (int j = 0; j < c.n; j++) {
            double want = 0;
            for (int r = 0; r < c.k; r++)
                want += double(a[size_t(i) * c.k + r]) * double(b[size_t(r) * c.n + j]);
            const float got = out[size_t(i) * c.n + j];
            if (!(std::fabs(want - got) <= 1e-5 * c.k + 1e-5 * std::fabs(want)) && bad++ < 3)
                ADD_FAILURE() << c.name << " C(" << i << ", " << j << "): " << got << ", want "
                              << want;
        }
    }
    EXPECT_EQ(bad, 0);
    GemmRun r;
    EXPECT_EQ(athread_emu_stats_count(), 1);
    if (athread_emu_stats_count() < 1)
        return r;
    const athread_emu_kernel_stats *s = athread_emu_stats_get(0);
    for (int i = 0; i < s->ncpes; i++) {
        r.get_bytes += s->cpe[i].get_bytes;
        r.puts += s->cpe[i].regcomm_puts;
        r.gets += s->cpe[i].regcomm_gets;
    }
    r.seconds = s->modelled_seconds;
    r.compute = s->cpe[0].compute_cycles;
    r.dma_wait = s->cpe[0].dma_wait_cycles;
    r.regcomm_wait = s->cpe[0].regcomm_wait_cycles;
    r.out = out;
    return r;
}

std::string cpe_source(const sw_jit::JitLayer &layer) {
    std::ifstream f(layer.dir() + "/" + layer.function_name() + ".cpe.c");
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

class RegCommGemm : public testing::TestWithParam<MatMulCase> {};

TEST_P(RegCommGemm, MatchesTheNaiveProductAndTheUnsharedTilesAndReadsEightTimesFewerBytes) {
    const MatMulCase &c = GetParam();
    sw_jit::JitBuild shared =
        sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "matmul", params_of(c, "regcomm"));
    ASSERT_TRUE(shared.ok()) << shared.log; // includes the strict C99 check of the CPE file
    const std::string cpe = cpe_source(*shared.layer);
    for (const char *want :
         {"static void sw_regcomm_row(void *p, int bytes) {",
          "static void sw_regcomm_column(void *p, int bytes) {", "simd_putr(v, 8);",
          "simd_putc(v, 8);", "v = simd_getr(v);", "v = simd_getc(v);",
          "if ((sw_mod_i32(athread_get_id(-1), 8) == 0)) {", "if ((athread_get_id(-1) < 8)) {"}) {
        EXPECT_NE(cpe.find(want), std::string::npos) << want << "\n" << cpe;
    }
    EXPECT_EQ(cpe.find("BCAST_MODE"), std::string::npos);
    EXPECT_EQ(cpe.find("athread_syn"), std::string::npos);
    const GemmRun with = run_and_check(*shared.layer, c);

    sw_jit::JitBuild plain =
        sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "matmul", params_of(c, "none"));
    ASSERT_TRUE(plain.ok()) << plain.log;
    const GemmRun without = run_and_check(*plain.layer, c);
    ASSERT_EQ(with.out.size(), without.out.size());
    EXPECT_EQ(std::memcmp(with.out.data(), without.out.data(), with.out.size() * sizeof(float)), 0)
        << "same tiles, same order of the sums";
    EXPECT_EQ(without.puts + without.gets, 0);
    // Every A chunk is fetched by one CPE of its mesh row instead of by all 8, every B chunk
    // by one CPE of its column: 8 times fewer bytes when the blocks fill whole rounds; each
    // of them passed on once (a vector put to the whole row or column) and received by the 7
    // others. In a round the blocks do not fill, a mesh row past the last block fetches
    // nothing but still passes on and receives (its CPEs skip the work).
    // Each CPE also gets the kernel's arguments once: three pointers.
    const long long args = 64LL * 3 * sizeof(void *);
    const long long data = with.get_bytes - args;
    const long long blocks = c.tile_m > 0 ? (c.m / c.tile_m) * (c.n / c.tile_n) : 64;
    const long long rounds = (blocks + 63) / 64, rows = (blocks + 7) / 8;
    if (blocks % 64 == 0)
        EXPECT_EQ(8 * data, without.get_bytes - args);
    EXPECT_EQ(with.gets, 7 * with.puts);
    EXPECT_GE(16 * with.puts, data);
    if (c.tile_m > 0) {
        // A: one share per mesh row, round and chunk; B: one per mesh column, round and
        // chunk; each of ceil(bytes / 16) vectors. Fetched: A by the rows with blocks.
        const long long chunks = c.k / c.tile_k;
        const long long shares = rounds * 8 * chunks;
        const long long a_vectors = (4LL * c.tile_m * c.tile_k + 15) / 16;
        const long long b_vectors = (4LL * c.tile_k * c.tile_n + 15) / 16;
        EXPECT_EQ(with.puts, shares * (a_vectors + b_vectors));
        EXPECT_EQ(data, 4 * (rows * chunks * c.tile_m * c.tile_k + shares * c.tile_k * c.tile_n));
    }
}

/** sharing=dmarow: A's chunk broadcast to each mesh row by DMA (sw::Sharing::DmaRow): BCAST_MODE
 * gets with the row's mask issued in pieces by the row's CPEs, between barriers; B still passed
 * down the columns. The same results, bit for bit, as the unshared tiles, the same bytes read
 * as register communication, and only B's vectors passed on. */
TEST_P(RegCommGemm, RowBroadcastDmaMatchesTheUnsharedTiles) {
    const MatMulCase &c = GetParam();
    sw_jit::JitBuild row =
        sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "matmul", params_of(c, "dmarow"));
    ASSERT_TRUE(row.ok()) << row.log;
    const std::string cpe = cpe_source(*row.layer);
    for (const char *want : {"BCAST_MODE", "athread_syn(ARRAY_SCOPE, 0xffff);",
                             "(char)(1 << sw_div_i32(athread_get_id(-1), 8))",
                             "static void sw_regcomm_column(void *p, int bytes) {"}) {
        EXPECT_NE(cpe.find(want), std::string::npos) << want << "\n" << cpe;
    }
    EXPECT_EQ(cpe.find("sw_regcomm_row"), std::string::npos);
    const GemmRun with = run_and_check(*row.layer, c);
    sw_jit::JitBuild plain =
        sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "matmul", params_of(c, "none"));
    ASSERT_TRUE(plain.ok()) << plain.log;
    const GemmRun without = run_and_check(*plain.layer, c);
    ASSERT_EQ(with.out.size(), without.out.size());
    EXPECT_EQ(std::memcmp(with.out.data(), without.out.data(), with.out.size() * sizeof(float)), 0);
    if (c.tile_m > 0) {
        // B: one share per mesh column, round and chunk, as with register communication; A
        // crosses the channel once per mesh row with blocks, round and chunk (a row past the
        // last block still broadcasts the last block's A: counted by its issuers).
        const long long blocks = (c.m / c.tile_m) * (c.n / c.tile_n);
        const long long rounds = (blocks + 63) / 64, chunks = c.k / c.tile_k;
        const long long b_vectors = (4LL * c.tile_k * c.tile_n + 15) / 16;
        EXPECT_EQ(with.puts, rounds * 8 * chunks * b_vectors);
        EXPECT_EQ(with.gets, 7 * with.puts);
        const long long args = 64LL * 3 * sizeof(void *);
        EXPECT_EQ(with.get_bytes - args, 4 * (rounds * 8 * chunks * c.tile_m * c.tile_k +
                                              rounds * 8 * chunks * c.tile_k * c.tile_n));
    }
}

/** SW26010-Pro: the register-communication GEMM's sharings as RMA row and column broadcasts
 * (CodeGen_CPE), and A by the row broadcast get (an RMA multicast), on floatv8: bit for bit
 * the unshared tiles, which match the naive product; fewer bytes read. Shapes whose n is a
 * multiple of 64 (8 mesh columns of whole floatv8 vectors). */
TEST_P(RegCommGemm, RmaOnTheProMatchesTheUnsharedTiles) {
    const MatMulCase &c = GetParam();
    if (c.n % 64 != 0 || (c.tile_n > 0 && c.tile_n % 8 != 0))
        GTEST_SKIP() << "n or tile_n not whole floatv8 vectors per mesh column";
    sw_jit::JitOptions pro;
    pro.target = "sw26010-pro";
    sw_jit::JitBuild plain =
        sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "matmul", params_of(c, "none"), pro);
    ASSERT_TRUE(plain.ok()) << plain.log;
    const GemmRun without = run_and_check(*plain.layer, c);
    for (const char *sharing : {"regcomm", "dmarow"}) {
        sw_jit::JitBuild b =
            sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "matmul", params_of(c, sharing), pro);
        ASSERT_TRUE(b.ok()) << sharing << ": " << b.log;
        const std::string cpe = cpe_source(*b.layer);
        EXPECT_NE(cpe.find("static void sw_rma_column(void *p, int bytes) {"), std::string::npos)
            << cpe;
        EXPECT_NE(cpe.find(std::string(sharing) == "regcomm" ? "sw_rma_row(" : "sw_bcast_get("),
                  std::string::npos)
            << cpe;
        EXPECT_NE(cpe.find("floatv8"), std::string::npos);
        EXPECT_EQ(cpe.find("simd_putr"), std::string::npos);
        const GemmRun with = run_and_check(*b.layer, c);
        ASSERT_EQ(with.out.size(), without.out.size());
        EXPECT_EQ(std::memcmp(with.out.data(), without.out.data(), with.out.size() * sizeof(float)),
                  0)
            << sharing;
        EXPECT_LT(with.get_bytes, without.get_bytes) << sharing;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, RegCommGemm,
    testing::Values(
        // One round of 64 blocks, the whole reduction in one chunk (tiles chosen).
        MatMulCase{"one_round", 64, 128, 96, 0, 0, 0},
        // Four rounds (m / tile_m = 32 row tiles), odd reduction in 3 chunks of 37: an A
        // chunk of 3 x 37 floats ends in a 12-byte tail.
        MatMulCase{"rounds_odd_k", 96, 64, 111, 3, 8, 37},
        // Two column tiles per mesh column (n = 2 x 8 x 12): the outer column-tile block
        // variable is the same down a column within a round; chunks of 16.
        MatMulCase{"column_tiles", 16, 192, 64, 2, 12, 16},
        // 8 blocks, one mesh row (a round of 64 not filled): rows 1-7 past the last block
        // still take part in the column sharing; 3 row tiles (24 blocks) fill rows 0-2.
        MatMulCase{"one_mesh_row", 8, 32, 8, 8, 4, 8},
        MatMulCase{"three_mesh_rows", 24, 64, 40, 8, 8, 8}),
    [](const testing::TestParamInfo<MatMulCase> &i) { return std::string(i.param.name); });

TEST(RegCommGemm, RefusedWithAClearError) {
    struct Refusal {
        Params params;
        const char *target, *message;
    };
    const Refusal refusals[] = {
        // n / 8 not a multiple of 4.
        {params_of({"", 16, 40, 8, 0, 0, 0}, "regcomm"), "sw26010",
         "error: matmul: the hand schedule needs n a multiple of 32"},
        // A tile that does not divide.
        {params_of({"", 64, 64, 8, 0, 6, 0}, "regcomm"), "sw26010",
         "error: matmul: tile_n=6 must be a multiple of 4 dividing n / 8 = 8"},
        // SW26010-Pro: whole floatv8 vectors per mesh column.
        {params_of({"", 16, 32, 8, 0, 0, 0}, "regcomm"), "sw26010-pro",
         "error: matmul: the hand schedule needs n a multiple of 64"},
    };
    for (const Refusal &r : refusals) {
        sw_jit::JitOptions o;
        o.target = r.target;
        const sw_jit::JitBuild b =
            sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "matmul", r.params, o);
        ASSERT_EQ(b.status, sw_jit::JitBuild::GeneratorFailed) << b.log;
        EXPECT_NE(b.log.find(r.message), std::string::npos) << b.log;
    }
}

/** Not a test: the modelled time of a square GEMM (GEMM_N, default 512) with register
 * communication, with A broadcast to the mesh rows by DMA, and without sharing, printed
 * (docs/results.md):
 *   GEMM_N=1024 build/tests/matmul_test --gtest_also_run_disabled_tests \
 *       --gtest_filter='*DISABLED_Figures*' */
TEST(RegCommGemm, DISABLED_Figures) {
    const char *env = std::getenv("GEMM_N");
    const int n = env ? std::atoi(env) : 512;
    const MatMulCase c{"figures", n, n, n, 0, 0, 0};
    for (const char *sharing : {"regcomm", "dmarow", "none"}) {
        const sw_jit::JitBuild b =
            sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "matmul", params_of(c, sharing));
        ASSERT_TRUE(b.ok()) << b.log;
        const GemmRun r = run_and_check(*b.layer, c);
        const double gflops = 2.0 * n * n * n / r.seconds / 1e9;
        std::printf("GEMM %d^3 sharing=%s: %.3f ms modelled, %.1f GFLOPS, %.2f MB read; CPE 0: "
                    "compute %lld, DMA wait %lld, register-communication wait %lld cycles\n",
                    n, sharing, r.seconds * 1e3, gflops, double(r.get_bytes) / 1e6, r.compute,
                    r.dma_wait, r.regcomm_wait);
    }
}

} // namespace
