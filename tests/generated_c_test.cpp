/** \file
 * The generated C of a representative set of layers builds as sw5cc would build it:
 * each layer is generated (-e mpe,cpe,h,example), then, with -fsyntax-only against the emulator's
 * headers (which mirror the real ones),
 *   the CPE file with -std=gnu99 (sw5cc -slave -msimd -std=gnu99) and with
 *   -std=c99 -pedantic-errors -Wall -Wextra -Werror, each without and with
 *   ATHREAD_EMULATOR (the real machine's and the emulator's code paths),
 *   the MPE file with -std=gnu99 (sw5cc -host -std=gnu99), and the export bundle's
 *   example call (.example.c) like the CPE file, strict C99 included.
 * The set: conv with floatv4 register blocking, conv with a fused residual add, dense with floatv4
 * on the reduction (rfactor), dense with its input broadcast (BCAST_MODE) and shared by register
 * communication, max pooling, LRN (powf), softmax (expf), batch_matmul (Q.K^T, B^T transposed in
 * LDM), layer_norm (sqrtf); the hand schedules of the reduced AlexNet
 * of network_test, and a baseline conv.
 */
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

int run(const std::string &cmd, std::string *out) {
    out->clear();
    FILE *p = popen((cmd + " 2>&1").c_str(), "r");
    if (!p)
        return -1;
    char buf[4096];
    while (fgets(buf, sizeof buf, p))
        *out += buf;
    const int status = pclose(p);
    if (status == -1)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string read_text(const std::string &path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

struct Layer {
    const char *name;      ///< test and function name
    const char *generator; ///< generator name
    const char *params;    ///< generator parameters
    const char *expect;    ///< a string the CPE file must contain
};

const Layer layers[] = {
    {"conv_floatv4", "conv2d",
     "batch=2 in_channels=12 out_channels=32 height=7 width=7 kernel=5 stride=1 pad=2 groups=2 "
     "relu=true schedule=sunway",
     "simd_vmas("},
    {"conv_residual", "conv2d",
     "batch=2 in_channels=8 out_channels=16 height=9 width=11 kernel=3 stride=1 pad=1 "
     "residual=true "
     "relu=true schedule=sunway",
     "residual_im_global_wrapper"},
    {"conv_baseline", "conv2d",
     "batch=1 in_channels=5 out_channels=7 height=13 width=11 kernel=3 stride=2 pad=1 relu=false "
     "schedule=baseline",
     "athread_get(PE_MODE"},
    {"dense_rfactor", "dense", "batch=2 in_features=32 out_features=512 relu=true schedule=sunway",
     "floatv4"},
    // The input chunk broadcast by CPE 0 (sw::broadcast), 19 blocks in a uniform block loop.
    {"dense_broadcast", "dense",
     "batch=3 in_features=37 out_features=19 tile_o=1 tile_n=3 tile_i=37 broadcast=true relu=true "
     "schedule=sunway",
     "athread_get(BCAST_MODE"},
    // The same input shared by register communication (sw::Sharing::RegComm): the helper
    // sw_regcomm_share with simd_putr / simd_getr / simd_putc / simd_getc; 444 bytes (a tail).
    {"dense_regcomm", "dense",
     "batch=3 in_features=37 out_features=19 tile_o=1 tile_n=3 tile_i=37 broadcast=true "
     "sharing=regcomm relu=true "
     "schedule=sunway",
     "v = simd_getc(v);"},
    {"pool_max", "pool",
     "batch=2 channels=12 height=15 width=15 kernel=3 stride=2 type=max schedule=sunway",
     "athread_get"},
    {"lrn", "lrn",
     "batch=2 channels=12 height=15 width=15 size=5 alpha=0.0001 beta=0.75 k=1 schedule=sunway",
     "powf("},
    {"softmax", "softmax", "batch=2 classes=10 schedule=sunway", "expf("},
    // Attention's Q.K^T: B^T's chunk transposed in LDM, then the floatv4 GEMM kernel.
    {"batch_matmul_qkt", "batch_matmul",
     "batch=2 m=16 n=16 k=8 transpose_b=true alpha=0.125 schedule=sunway", "simd_vmas("},
    {"layer_norm", "layer_norm", "rows=3 size=32 schedule=sunway", "sqrtf("},
    // The transformer layers: GELU (a rational erf, ActivationMath.h), tanhf, a dense + GELU, a
    // division, a transpose staged and permuted in LDM, and the gather's int64 indices with a
    // DMA get at an address computed from a staged index.
    // GELU's rational erf: no expf, clamped at 3.92 (generators/ActivationMath.h).
    {"activation_gelu", "activation", "op=gelu size=1001 schedule=sunway", "3.92000008f"},
    {"activation_gelu_tanh", "activation", "op=gelu_tanh size=1001 schedule=sunway", "tanhf("},
    {"dense_gelu", "dense",
     "batch=3 in_features=37 out_features=19 activation=gelu schedule=sunway", "3.92000008f"},
    {"eltwise_div", "eltwise",
     "op=div batch=2 channels=5 height=7 width=9 b_batch=1 b_height=1 b_width=1 schedule=sunway",
     " / "},
    {"transpose_0231", "transpose", "shape=2,17,4,64 perm=0,2,3,1 schedule=sunway", "athread_put"},
    {"gather_rows", "gather", "rows=300 vocab=1000 size=13 schedule=sunway", "int64_t"},
    // Issue 24 (FCN): the bilinear resize (double coordinates) and a nearest one, a transposed
    // convolution (exact divisions and a modulo in the spread input).
    {"resize_linear", "resize",
     "batch=1 channels=21 in_height=4 in_width=4 out_height=32 out_width=32 mode=linear "
     "schedule=sunway",
     "(double)"},
    {"resize_nearest", "resize",
     "batch=2 channels=3 in_height=5 in_width=6 out_height=11 out_width=13 mode=nearest "
     "coordinate=asymmetric nearest_mode=floor schedule=sunway",
     "athread_get"},
    {"conv_transpose", "conv_transpose",
     "batch=1 in_channels=5 out_channels=6 height=7 width=6 kernel=3 stride=2 pad_left=1 "
     "pad_right=1 pad_top=1 pad_bottom=1 output_padding=1 schedule=sunway",
     "athread_put"},
    // pad: the reflected index as max / min of the index and its mirror, the constant's select.
    {"pad_reflect", "pad", "shape=2,3,9,7 pads=0,0,2,3,0,0,3,1 mode=reflect schedule=sunway",
     "athread_get"},
    {"pad_constant", "pad", "shape=2,5,9,11 pads=0,0,1,1,0,0,1,1 value=1.5 schedule=sunway", "1.5"},
    // The fused attention: K and V broadcast to each mesh row by DMA (the mesh plan), and a
    // causal mask with fill=-inf (the max's start and the fill printed as -INFINITY).
    {"attention_mesh", "attention",
     "batch=1 heads=2 seq_q=16 seq_k=16 head_dim=8 alpha=0.125 mask=add schedule=sunway",
     "(char)(1 << sw_div_i32(athread_get_id(-1), 8))"},
    {"attention_causal", "attention",
     "batch=2 heads=3 seq_q=19 seq_k=23 head_dim=16 mask=select mask_rows=19 fill=-inf "
     "schedule=sunway",
     "-INFINITY"},
    // The softmax's exp as multiply-adds on floatv4 (its argument clamped to [-24, 0] on
    // vectors; no expf), with an additive mask and rows of 16 scores or more.
    {"attention_exp_on_vectors", "attention",
     "batch=1 heads=2 seq_q=8 seq_k=40 head_dim=8 alpha=0.125 mask=add schedule=sunway",
     "sw_splat4((-24.0f))"},
};

void PrintTo(const Layer &l, std::ostream *os) {
    *os << l.name;
}

class GeneratedC : public ::testing::TestWithParam<Layer> {};

TEST_P(GeneratedC, BuildsWithGnu99AndStrictC99) {
    const Layer &l = GetParam();
    const char *tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/sw_generated_c_XXXXXX";
    ASSERT_NE(mkdtemp(&templ[0]), nullptr);
    const std::string dir = templ;
    std::string out;
    ASSERT_EQ(run(std::string(GENERATOR) + " -g " + l.generator + " -f " + l.name + " -o " + dir +
                      " -e mpe,cpe,h,example target=sw26010 " + l.params,
                  &out),
              0)
        << out;
    const std::string cpe = dir + "/" + l.name + ".cpe.c", mpe = dir + "/" + l.name + ".mpe.c";
    const std::string text = read_text(cpe);
    EXPECT_NE(text.find(l.expect), std::string::npos) << text;
    // floatv4 multiply-add is simd_vmas; simd_vmad takes doublev4 only.
    EXPECT_EQ(text.find("simd_vmad"), std::string::npos) << text;
    // slave.h does not declare ldm_malloc / ldm_free: the file does, as the runtime has them.
    if (text.find("ldm_malloc(") != std::string::npos) {
        EXPECT_NE(
            text.find("void *ldm_malloc(size_t size);\nvoid ldm_free(void *p, size_t size);\n"),
            std::string::npos)
            << text;
    }
    const std::string inc = " -I" + dir + " -I" EMULATOR_INCLUDE " -I" HALIDE_INCLUDE " ";
    for (const std::string std :
         {"-std=gnu99 -Wall -Wextra -Werror", "-std=c99 -pedantic-errors -Wall -Wextra -Werror"}) {
        for (const std::string def : {"", "-DATHREAD_EMULATOR"}) {
            const std::string cmd =
                std::string(C_COMPILER) + " " + std + " " + def + " -fsyntax-only" + inc + cpe;
            EXPECT_EQ(run(cmd, &out), 0) << cmd << "\n" << out;
        }
    }
    const std::string cmd = std::string(C_COMPILER) + " -std=gnu99 -fsyntax-only" + inc + mpe;
    EXPECT_EQ(run(cmd, &out), 0) << cmd << "\n" << out;
    // The export bundle's example call (plain-float entry point, checksum) is MPE code too.
    const std::string example = dir + "/" + l.name + ".example.c";
    for (const std::string std :
         {"-std=gnu99 -Wall -Wextra -Werror", "-std=c99 -pedantic-errors -Wall -Wextra -Werror"}) {
        for (const std::string def : {"", "-DATHREAD_EMULATOR"}) {
            const std::string c =
                std::string(C_COMPILER) + " " + std + " " + def + " -fsyntax-only" + inc + example;
            EXPECT_EQ(run(c, &out), 0) << c << "\n" << out;
        }
    }
    if (!HasFailure())
        run("rm -rf " + dir, &out);
}

INSTANTIATE_TEST_SUITE_P(Layers, GeneratedC, ::testing::ValuesIn(layers),
                         [](const ::testing::TestParamInfo<Layer> &i) {
                             return std::string(i.param.name);
                         });

} // namespace
