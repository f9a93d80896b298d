/** \file
 * sw::broadcast on the emulated core group (BroadcastDma.h): the dense layer with its input
 * chunk broadcast in BCAST_MODE, in pieces issued by several CPEs, equals the naive reference for
 * block counts that are not multiples of 64 (the uniform block loop: CPEs past the last block skip
 * the work, not the barriers), batch > 1 and odd in_features; the broadcast reads the input once
 * per round instead of once per block; and the directive on a staging that depends on the block is
 * a clear error. The same with the input shared by register communication (sw::Sharing::RegComm,
 * generator parameter sharing=regcomm): the same results, bit for bit, as the schedule without
 * sharing, in uniform block rounds, with no BCAST_MODE and no barrier; its refusals
 * (block-dependent region, double_buffer, SW26010-Pro). And a zero-padded staging (test.generator's
 * padded_share: padding and spreading written after the DMA) shared by either mode gives the bytes
 * of the plain staging. Layers are generated and compiled at run time (jit/jit_layer.h), their CPE
 * code also checked as strict C99
 * (-std=c99 -pedantic-errors).
 */
#include "HalideBuffer.h"
#include "jit/jit_layer.h"
#include "reference/naive_layers.h"
#include "tests/support/random_data.h"

#include <athread_emu.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace {

using Buf = Halide::Runtime::Buffer<float>;
using Params = std::map<std::string, std::string>;

using sw_test::random_values;

std::string read_text(const std::string &path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

struct DenseCase {
    const char *name;
    int batch, in_f, out_f, tile_o, tile_i; ///< tile_i 0: chosen from the LDM budget
};

Params params_of(const DenseCase &c, bool broadcast, const char *sharing = "dma") {
    return {{"batch", std::to_string(c.batch)},
            {"in_features", std::to_string(c.in_f)},
            {"out_features", std::to_string(c.out_f)},
            {"relu", "true"},
            {"tile_o", std::to_string(c.tile_o)},
            {"tile_n", std::to_string(c.batch)},
            {"tile_i", std::to_string(c.tile_i)},
            {"broadcast", broadcast ? "true" : "false"},
            {"sharing", sharing},
            {"schedule", "sunway"}};
}

struct LayerRun {
    long long get_bytes = 0, get_requests = 0, regcomm_puts = 0, regcomm_gets = 0;
    double seconds = 0;
    std::vector<float> out;
};

/** Runs the layer on random data, checks it against the reference, returns the DMA counts. */
LayerRun run_and_check(const sw_jit::JitLayer &layer, const DenseCase &c) {
    std::vector<float> in = random_values(size_t(c.batch) * c.in_f, 11);
    std::vector<float> wt = random_values(size_t(c.out_f) * c.in_f, 12);
    std::vector<float> b = random_values(c.out_f, 13);
    std::vector<float> out(size_t(c.batch) * c.out_f, NAN);
    Buf bi(in.data(), {c.in_f, c.batch}), bw(wt.data(), {c.in_f, c.out_f}), bb(b.data(), {c.out_f});
    Buf bo(out.data(), {c.out_f, c.batch});
    athread_emu_stats_reset();
    EXPECT_EQ(layer.call({bi.raw_buffer(), bw.raw_buffer(), bb.raw_buffer(), bo.raw_buffer()}), 0);
    const std::vector<float> want =
        reference::dense(c.batch, c.in_f, c.out_f, in, wt, b, true, 1.0, 1.0);
    // Float sums of in_features terms in another order: the absolute error grows with their count.
    const float abs_tol = 1e-4f * std::max(1.f, float(c.in_f) / 1000.f);
    int bad = 0;
    for (size_t i = 0; i < want.size(); i++) {
        if (!(std::fabs(want[i] - out[i]) <= abs_tol + 1e-4f * std::fabs(want[i])) && bad++ < 3) {
            ADD_FAILURE() << c.name << " element " << i << ": expected " << want[i] << ", got "
                          << out[i];
        }
    }
    EXPECT_EQ(bad, 0) << c.name;
    LayerRun r;
    EXPECT_EQ(athread_emu_stats_count(), 1);
    if (athread_emu_stats_count() < 1)
        return r;
    const athread_emu_kernel_stats *s = athread_emu_stats_get(0);
    for (int i = 0; i < s->ncpes; i++) {
        r.get_bytes += s->cpe[i].get_bytes;
        r.get_requests += s->cpe[i].get_requests;
        r.regcomm_puts += s->cpe[i].regcomm_puts;
        r.regcomm_gets += s->cpe[i].regcomm_gets;
    }
    r.seconds = s->modelled_seconds;
    r.out = out;
    return r;
}

class BroadcastDense : public testing::TestWithParam<DenseCase> {};

TEST_P(BroadcastDense, MatchesTheNaiveReferenceAndReadsTheInputOncePerRound) {
    const DenseCase &c = GetParam();
    sw_jit::JitBuild bcast =
        sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "dense", params_of(c, true));
    ASSERT_TRUE(bcast.ok()) << bcast.log; // includes the strict C99 check of the CPE file
    const std::string cpe =
        read_text(bcast.layer->dir() + "/" + bcast.layer->function_name() + ".cpe.c");
    EXPECT_NE(cpe.find("athread_get(BCAST_MODE, (void *)(input + "), std::string::npos) << cpe;
    EXPECT_NE(cpe.find("athread_syn(ARRAY_SCOPE, 0xffff);"), std::string::npos) << cpe;
    EXPECT_NE(cpe.find("sw_rounds"), std::string::npos) << cpe;
    // A chunk of several images' rows is cut among several issuers, one or more rows each
    // (a chunk of one contiguous run under 2 KB is not cut: pieces of at least 1 KB).
    if (c.batch > 1 && c.in_f > 64)
        EXPECT_NE(cpe.find("if ((athread_get_id(-1) < "), std::string::npos) << cpe;
    const LayerRun with = run_and_check(*bcast.layer, c);

    sw_jit::JitBuild plain =
        sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "dense", params_of(c, false));
    ASSERT_TRUE(plain.ok()) << plain.log;
    const LayerRun without = run_and_check(*plain.layer, c);

    // Same tiles: only the input's gets differ. Each of the `tiles` blocks read the input
    // (same bytes per block) without the broadcast, once per round of 64 blocks with it.
    const long long tiles = (c.out_f + c.tile_o - 1) / c.tile_o, rounds = (tiles + 63) / 64;
    ASSERT_GT(tiles, rounds);
    const long long saved = without.get_bytes - with.get_bytes;
    EXPECT_GT(saved, 0);
    EXPECT_EQ(saved % (tiles - rounds), 0) << saved;
    const long long input_per_block = saved / (tiles - rounds);
    EXPECT_GE(input_per_block, 4LL * c.batch * c.in_f) << "the whole input, every chunk";
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BroadcastDense,
    testing::Values(
        // 19 blocks: CPEs 19..63 only meet the barriers; in_features odd, one chunk.
        DenseCase{"odd_in_batch3", 3, 37, 19, 1, 37},
        // 67 blocks: two rounds, 3 blocks in the second; 13 chunks of 77 (odd) inputs.
        DenseCase{"two_rounds_batch2", 2, 1001, 201, 3, 77},
        // 700 blocks: 11 rounds, 60 in the last; one output per block, floatv4 chunks.
        DenseCase{"many_rounds_batch1", 1, 300, 700, 1, 0},
        // batch 16 as FC layers run it, 103 blocks (2 rounds).
        DenseCase{"batch16", 16, 512, 1030, 10, 0}),
    [](const testing::TestParamInfo<DenseCase> &i) { return std::string(i.param.name); });

class RegCommDense : public testing::TestWithParam<DenseCase> {};

TEST_P(RegCommDense, MatchesThePlainScheduleBitForBitAndReadsTheInputOncePerRound) {
    const DenseCase &c = GetParam();
    sw_jit::JitBuild shared =
        sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "dense", params_of(c, true, "regcomm"));
    ASSERT_TRUE(shared.ok()) << shared.log; // includes the strict C99 check of the CPE file
    const std::string cpe =
        read_text(shared.layer->dir() + "/" + shared.layer->function_name() + ".cpe.c");
    for (const char *want :
         {"static void sw_regcomm_share(void *p, int bytes) {", "simd_putr(v, 8);",
          "simd_putc(v, 8);", "v = simd_getr(v);", "v = simd_getc(v);",
          "athread_get(PE_MODE, (void *)(input + ", "sw_rounds"}) {
        EXPECT_NE(cpe.find(want), std::string::npos) << want << "\n" << cpe;
    }
    EXPECT_EQ(cpe.find("BCAST_MODE"), std::string::npos) << cpe;
    EXPECT_EQ(cpe.find("athread_syn"), std::string::npos) << cpe;
    const LayerRun with = run_and_check(*shared.layer, c);

    sw_jit::JitBuild plain =
        sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "dense", params_of(c, false));
    ASSERT_TRUE(plain.ok()) << plain.log;
    const LayerRun without = run_and_check(*plain.layer, c);
    // Same tiles, same order of the sums: the shared input gives the same bits.
    ASSERT_EQ(with.out.size(), without.out.size());
    int differ = 0;
    for (size_t i = 0; i < with.out.size(); i++) {
        if (std::memcmp(&with.out[i], &without.out[i], sizeof(float)) != 0 && differ++ < 3) {
            ADD_FAILURE() << c.name << " element " << i << ": " << with.out[i] << " shared, "
                          << without.out[i] << " without";
        }
    }
    EXPECT_EQ(differ, 0);

    // CPE 0 gets the input once per round (as the broadcast DMA); the 63 others receive it.
    const long long tiles = (c.out_f + c.tile_o - 1) / c.tile_o, rounds = (tiles + 63) / 64;
    const long long saved = without.get_bytes - with.get_bytes;
    EXPECT_GT(saved, 0);
    EXPECT_EQ(saved % (tiles - rounds), 0) << saved;
    const long long input_per_block = saved / (tiles - rounds);
    EXPECT_GE(input_per_block, 4LL * c.batch * c.in_f);
    // Each 16-byte vector (the last of a chunk partial): CPE 0 puts it twice (row and column),
    // the 7 others of row 0 once each (down their column), the 63 receivers get it once.
    EXPECT_EQ(with.regcomm_gets % 63, 0);
    const long long vectors = with.regcomm_gets / 63;
    EXPECT_EQ(with.regcomm_puts, (2 + 7) * vectors);
    EXPECT_EQ(vectors % rounds, 0); // the same chunks every round
    EXPECT_GE(16 * vectors, rounds * 4LL * c.batch * c.in_f);
    if (c.tile_i > 0) {
        const long long chunks = c.in_f / c.tile_i, chunk_bytes = 4LL * c.batch * c.tile_i;
        EXPECT_EQ(vectors, rounds * chunks * ((chunk_bytes + 15) / 16));
    }
}

/** The shapes of the register-communication sharing (and of its RMA form on the Pro). */
const DenseCase kSharedDenseCases[] = {
    // 19 blocks: CPEs 19..63 only take part in the sharing; 3 x 37 floats: a 12-byte tail.
    DenseCase{"odd_in_batch3", 3, 37, 19, 1, 37},
    // 67 blocks: two rounds, 3 blocks in the second; chunks of 2 x 77 floats (8-byte tail).
    DenseCase{"two_rounds_batch2", 2, 1001, 201, 3, 77},
    // batch 16 as FC layers run it, 103 blocks (2 rounds), double-buffered weights.
    DenseCase{"batch16", 16, 512, 1030, 10, 0}};

INSTANTIATE_TEST_SUITE_P(Shapes, RegCommDense, testing::ValuesIn(kSharedDenseCases),
                         [](const testing::TestParamInfo<DenseCase> &i) {
                             return std::string(i.param.name);
                         });

TEST(RegCommDense, RefusedWhereTheRegionDependsOnTheBlock) {
    // Two images per block of 4: each block needs other images' input.
    Params p = {{"batch", "4"},         {"in_features", "64"}, {"out_features", "32"},
                {"tile_o", "8"},        {"tile_n", "2"},       {"broadcast", "true"},
                {"sharing", "regcomm"}, {"schedule", "sunway"}};
    sw_jit::JitBuild b = sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "dense", p);
    ASSERT_EQ(b.status, sw_jit::JitBuild::GeneratorFailed) << b.log;
    EXPECT_NE(b.log.find("error: sw::broadcast(input_im_global_wrapper"), std::string::npos)
        << b.log;
    EXPECT_NE(b.log.find("depends on the CPE's block"), std::string::npos) << b.log;
    // An edge tile that Halide splits off in a branch on the block.
    p = {{"batch", "3"},        {"in_features", "37"},  {"out_features", "19"},
         {"tile_o", "2"},       {"tile_n", "3"},        {"tile_i", "37"},
         {"broadcast", "true"}, {"sharing", "regcomm"}, {"schedule", "sunway"}};
    b = sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "dense", p);
    ASSERT_EQ(b.status, sw_jit::JitBuild::GeneratorFailed) << b.log;
    EXPECT_NE(b.log.find("register-communication sharing the same number of times"),
              std::string::npos)
        << b.log;
}

/** SW26010-Pro: the same sharings in the Pro's forms (CodeGen_CPE): register communication
 * becomes an RMA broadcast from CPE 0 (sw_rma_share), a broadcast get the issuer's get and an
 * RMA multicast to the masked rows (sw_bcast_get). Both give, bit for bit, the plain schedule's
 * result (which the reference checks), and read the input once per round. */
class ProDense : public testing::TestWithParam<DenseCase> {};

TEST_P(ProDense, RmaSharingsMatchThePlainScheduleBitForBit) {
    const DenseCase &c = GetParam();
    sw_jit::JitOptions pro;
    pro.target = "sw26010-pro";
    sw_jit::JitBuild plain =
        sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "dense", params_of(c, false), pro);
    ASSERT_TRUE(plain.ok()) << plain.log; // includes the swgcc -mslave-style check of the CPE file
    const LayerRun without = run_and_check(*plain.layer, c);
    for (const char *sharing : {"regcomm", "dma"}) {
        sw_jit::JitBuild b =
            sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "dense", params_of(c, true, sharing), pro);
        ASSERT_TRUE(b.ok()) << sharing << ": " << b.log;
        const std::string cpe =
            read_text(b.layer->dir() + "/" + b.layer->function_name() + ".cpe.c");
        const std::string helper = std::string(sharing) == "regcomm"
                                       ? "static void sw_rma_share(void *p, int bytes) {"
                                       : "static void sw_bcast_get(void *ldm, void *mem, int len";
        EXPECT_NE(cpe.find(helper), std::string::npos) << sharing << "\n" << cpe;
        for (const char *sw26010 :
             {"athread_get(", "athread_put(", "athread_syn(", "simd_putr", "floatv4", "BCAST_MODE"})
            EXPECT_EQ(cpe.find(sw26010), std::string::npos) << sharing << ": " << sw26010;
        const LayerRun with = run_and_check(*b.layer, c);
        ASSERT_EQ(with.out.size(), without.out.size());
        EXPECT_EQ(std::memcmp(with.out.data(), without.out.data(), with.out.size() * sizeof(float)),
                  0)
            << sharing;
        EXPECT_LT(with.get_bytes, without.get_bytes) << sharing;
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ProDense, testing::ValuesIn(kSharedDenseCases),
                         [](const testing::TestParamInfo<DenseCase> &i) {
                             return std::string(i.param.name);
                         });

/** padded_share (tests/padded_share_generator.cpp): the zero-padded 15 x 9 window of a 13 x 7
 * image (135 floats: a 12-byte tail) staged per block of one output channel, 70 blocks (two
 * rounds). Shared by broadcast DMA or by register communication it gives, bit for bit, the
 * result of the plain staging (which the naive loop checks): the padding that InjectDma writes
 * after the DMA runs on every CPE after the sharing; the broadcast window's rows come one
 * request each to their padded place where the plain one (and the one shared by register
 * communication) comes compactly and is spread. */
TEST(PaddedShare, ZeroPaddedWindowSharedByEitherModeEqualsThePlainStaging) {
    const int w = 13, h = 7, channels = 70;
    std::vector<float> in = random_values(size_t(w) * h, 21),
                       wt = random_values(size_t(9) * channels, 22);
    std::vector<float> want(size_t(w) * h * channels, 0.f);
    for (int c = 0; c < channels; c++) {
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                float acc = 0.f;
                for (int j = 0; j < 3; j++) {
                    for (int i = 0; i < 3; i++) {
                        const int xx = x + i - 1, yy = y + j - 1;
                        const float v =
                            xx >= 0 && xx < w && yy >= 0 && yy < h ? in[size_t(yy) * w + xx] : 0.f;
                        acc += v * wt[(size_t(c) * 3 + j) * 3 + i];
                    }
                }
                want[(size_t(c) * h + y) * w + x] = acc;
            }
        }
    }
    std::vector<float> plain;
    for (const char *sharing : {"none", "dma", "regcomm"}) {
        SCOPED_TRACE(sharing);
        sw_jit::JitBuild b =
            sw_jit::jit_build_layer(SW_TEST_GENERATOR, "padded_share", {{"sharing", sharing}});
        ASSERT_TRUE(b.ok()) << b.log;
        const std::string cpe =
            read_text(b.layer->dir() + "/" + b.layer->function_name() + ".cpe.c");
        const std::string how = sharing;
        EXPECT_EQ(cpe.find("BCAST_MODE") != std::string::npos, how == "dma");
        EXPECT_EQ(cpe.find("sw_regcomm_share(") != std::string::npos, how == "regcomm");
        // The window's rows are whole source rows narrower than its LDM rows: a window each
        // CPE fetches comes compactly and is spread in the LDM; one broadcast by DMA comes one
        // request per row straight to its place (InjectDma.h), nothing spread on every CPE;
        // one shared by register communication comes compactly (one CPE's requests) and is
        // spread on every CPE after the sharing.
        EXPECT_EQ(cpe.find("spread") != std::string::npos, how != "dma") << cpe;
        if (how == "dma")
            EXPECT_NE(cpe.find("dma_row"), std::string::npos) << cpe;
        std::vector<float> out(want.size(), NAN);
        Buf bi(in.data(), {w, h}), bw(wt.data(), {3, 3, channels}),
            bo(out.data(), {w, h, channels});
        athread_emu_stats_reset();
        ASSERT_EQ(b.layer->call({bi.raw_buffer(), bw.raw_buffer(), bo.raw_buffer()}), 0);
        if (how == "regcomm") {
            ASSERT_EQ(athread_emu_stats_count(), 1);
            const athread_emu_kernel_stats *s = athread_emu_stats_get(0);
            long long gets = 0;
            for (int i = 0; i < s->ncpes; i++)
                gets += s->cpe[i].regcomm_gets;
            EXPECT_EQ(gets, 63LL * 34 * 2); // 540 bytes = 34 vectors (the last partial), 2 rounds
        }
        if (how == "none") {
            int bad = 0;
            for (size_t i = 0; i < want.size(); i++) {
                if (!(std::fabs(want[i] - out[i]) <= 1e-5f + 1e-5f * std::fabs(want[i])) &&
                    bad++ < 3) {
                    ADD_FAILURE() << "element " << i << ": expected " << want[i] << ", got "
                                  << out[i];
                }
            }
            EXPECT_EQ(bad, 0);
            plain = out;
        } else {
            ASSERT_EQ(plain.size(), out.size());
            EXPECT_EQ(std::memcmp(plain.data(), out.data(), out.size() * sizeof(float)), 0);
        }
    }
}

TEST(BroadcastDense, InputThatDependsOnTheBlockIsAClearError) {
    // Two images per block of 4: each block needs other images' input.
    Params p = {{"batch", "4"},  {"in_features", "64"}, {"out_features", "32"}, {"tile_o", "8"},
                {"tile_n", "2"}, {"broadcast", "true"}, {"schedule", "sunway"}};
    sw_jit::JitBuild b = sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "dense", p);
    ASSERT_EQ(b.status, sw_jit::JitBuild::GeneratorFailed) << b.log;
    EXPECT_NE(b.log.find("error: sw::broadcast(input_im_global_wrapper"), std::string::npos)
        << b.log;
    EXPECT_NE(b.log.find("depends on the CPE's block"), std::string::npos) << b.log;
    // An edge tile (19 outputs in tiles of 2) that Halide splits off in a branch on the block.
    p = {{"batch", "3"},  {"in_features", "37"}, {"out_features", "19"}, {"tile_o", "2"},
         {"tile_n", "3"}, {"tile_i", "37"},      {"broadcast", "true"},  {"schedule", "sunway"}};
    b = sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "dense", p);
    ASSERT_EQ(b.status, sw_jit::JitBuild::GeneratorFailed) << b.log;
    EXPECT_NE(b.log.find("error: sw::broadcast(input_im_global_wrapper"), std::string::npos)
        << b.log;
    EXPECT_NE(b.log.find("choose tiles that divide the extents"), std::string::npos) << b.log;
}

TEST(BroadcastDense, HandScheduleBroadcastsWhenOneBlockHoldsEveryImage) {
    Params p = {{"batch", "2"},
                {"in_features", "256"},
                {"out_features", "300"},
                {"relu", "true"},
                {"schedule", "sunway"}};
    sw_jit::JitBuild b = sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "dense", p);
    ASSERT_TRUE(b.ok()) << b.log;
    const std::string cpe = read_text(b.layer->dir() + "/" + b.layer->function_name() + ".cpe.c");
    EXPECT_NE(cpe.find("BCAST_MODE"), std::string::npos) << cpe;
    run_and_check(*b.layer, {"auto", 2, 256, 300, 1, 0});
}

} // namespace

namespace {

/** The FC layers of AlexNet and VGG-19 at batch 1 and 16 with the hand schedule: modelled
 * time and (weight + input bytes) / time against the emulator's read plateau. Not run by
 * default (minutes of emulation):
 *   broadcast_test --gtest_also_run_disabled_tests --gtest_filter='*FcLayerFigures*'
 * (environment: FC_BROADCAST=auto|true|false, FC_SHARING=dma|regcomm: the generator's
 * broadcast and sharing parameters; FC_LAYERS=fc7,fc8 and FC_BATCHES=1: only those). */
TEST(BroadcastDense, DISABLED_FcLayerFigures) {
    struct Fc {
        const char *name;
        int in_f, out_f;
    };
    const Fc layers[] = {{"vgg19_fc6", 25088, 4096},
                         {"alexnet_fc6", 9216, 4096},
                         {"fc7", 4096, 4096},
                         {"fc8", 4096, 1000}};
    const char *only = std::getenv("FC_LAYERS");     // e.g. "fc7,fc8": only these layers
    const char *batches = std::getenv("FC_BATCHES"); // e.g. "1": only these batches
    for (int batch : {1, 16}) {
        if (batches && std::string(",").append(batches).append(",").find(
                           "," + std::to_string(batch) + ",") == std::string::npos) {
            continue;
        }
        for (const Fc &l : layers) {
            if (only && std::string(",").append(only).append(",").find("," + std::string(l.name) +
                                                                       ",") == std::string::npos) {
                continue;
            }
            Params p = {{"batch", std::to_string(batch)},
                        {"in_features", std::to_string(l.in_f)},
                        {"out_features", std::to_string(l.out_f)},
                        {"relu", "true"},
                        {"schedule", "sunway"}};
            if (const char *b = std::getenv("FC_BROADCAST"))
                p["broadcast"] = b;
            if (const char *h = std::getenv("FC_SHARING"))
                p["sharing"] = h; // dma or regcomm
            sw_jit::JitBuild b = sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, "dense", p);
            ASSERT_TRUE(b.ok()) << b.log;
            const LayerRun r = run_and_check(*b.layer, {l.name, batch, l.in_f, l.out_f, 1, 0});
            const double bytes = 4.0 * (double(l.in_f) * l.out_f + double(l.in_f) * batch);
            const double gbps = bytes / r.seconds / 1e9;
            std::printf(
                "FC %-12s batch %2d: %8.3f ms, %6.2f GB/s = %5.1f%% of 26.56, gets %.1f MB\n",
                l.name, batch, r.seconds * 1e3, gbps, 100 * gbps / 26.56,
                double(r.get_bytes) / 1e6);
        }
    }
}

} // namespace
