/** \file
 * The emulator's headers against the real sw5cc ones they mirror: small C files compiled
 * with the C compiler against target_sw/emulator/include.
 *  - simd.h types its intrinsics as sw5cc does: a floatv4 passed to simd_vmad (doublev4
 *    only) or a doublev4 passed to simd_vmas (floatv4 only) does not compile; the right
 *    types compile under -std=gnu99 and -std=c99 -pedantic-errors -Wall -Wextra -Werror,
 *    and compute what the real instructions compute; a misaligned simd_load stops the run.
 *  - register communication (simd_putr / putc / getr / getc) takes the vector types of the
 *    real builtins (floatv4, doublev4, intv8): a scalar does not compile.
 *  - slave.h does not declare ldm_malloc / ldm_free (the installed one does not): code
 *    that calls them declares them itself.
 *  - athread.h, like the real one (which pulls intc.h and its POSIX signal types), needs
 *    -std=gnu99 on the host.
 *  - SW26010-Pro (include/sw26010-pro, first on the path): CPE code written against crts.h,
 *    slave.h and simd.h compiles with -std=gnu99 -D__sw_slave__; SW26010-only CPE code does
 *    not (floatv4 on a CPE, simd_loade, BCAST_MODE, register communication), and Pro code does
 *    not compile against the SW26010 headers. The old athread_get argument order DOES compile
 *    on the Pro: its crts.h keeps athread_get / athread_put as macros over the DMA builtin.
 */
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

/** Runs argv through the shell (each argument single-quoted); returns the exit status
 *  (128 + signal if killed), *out stdout and stderr. */
int run(const std::vector<std::string> &argv, std::string *out) {
    std::string cmd;
    for (const std::string &a : argv)
        cmd += "'" + a + "' ";
    out->clear();
    FILE *p = popen((cmd + "2>&1").c_str(), "r");
    if (!p)
        return -1;
    char buf[4096];
    while (fgets(buf, sizeof buf, p))
        *out += buf;
    const int status = pclose(p);
    if (status == -1)
        return -1;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}

const std::string kStrict = "-std=c99 -pedantic-errors -Wall -Wextra -Werror";
const std::string kGnu = "-std=gnu99 -Wall -Wextra -Werror";

class HeaderTest : public ::testing::Test {
protected:
    void SetUp() override {
        const char *tmp = std::getenv("TMPDIR");
        std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/sw_headers_XXXXXX";
        ASSERT_NE(mkdtemp(&templ[0]), nullptr);
        dir = templ;
    }
    void TearDown() override {
        std::string out;
        run({"rm", "-rf", dir}, &out);
    }
    /** Writes `source` to dir/name.c and compiles it (flags split on spaces); returns the
     *  exit status, *out the compiler's output. Links to dir/name unless -fsyntax-only. */
    int compile(const std::string &name, const std::string &source, const std::string &flags,
                std::string *out) {
        const std::string file = dir + "/" + name + ".c";
        std::ofstream(file) << source;
        std::vector<std::string> argv = {C_COMPILER};
        size_t start = 0;
        while (start < flags.size()) {
            size_t end = flags.find(' ', start);
            if (end == std::string::npos)
                end = flags.size();
            if (end > start)
                argv.push_back(flags.substr(start, end - start));
            start = end + 1;
        }
        argv.insert(argv.end(), {"-I" EMULATOR_INCLUDE, file});
        if (flags.find("-fsyntax-only") == std::string::npos) {
            argv.insert(argv.end(), {"-o", dir + "/" + name});
        }
        return run(argv, out);
    }
    std::string dir;
};

/** A CPE-style file that calls `call` on floatv4 f and doublev4 d. */
std::string simd_source(const std::string &call) {
    return "#include <simd.h>\n"
           "void kernel(float *pf, double *pd);\n"
           "void kernel(float *pf, double *pd) {\n"
           "    floatv4 f; doublev4 d;\n"
           "    simd_loadu(f, pf); simd_loadu(d, pd);\n"
           "    " +
           call +
           ";\n"
           "    simd_storeu(f, pf); simd_storeu(d, pd);\n"
           "}\n";
}

TEST_F(HeaderTest, FloatV4ToSimdVmadDoesNotCompile) {
    std::string out;
    for (const std::string &flags : {kStrict, kGnu, std::string("-std=gnu99")}) {
        EXPECT_NE(compile("vmad_float", simd_source("f = simd_vmad(f, f, f)"),
                          flags + " -fsyntax-only", &out),
                  0)
            << flags << ": a floatv4 passed to simd_vmad compiled";
        EXPECT_NE(compile("vmad_mixed", simd_source("d = simd_vmad(d, f, d)"),
                          flags + " -fsyntax-only", &out),
                  0)
            << flags;
        EXPECT_EQ(compile("vmas_float", simd_source("f = simd_vmas(f, f, f)"),
                          flags + " -fsyntax-only", &out),
                  0)
            << flags << ": " << out;
    }
}

TEST_F(HeaderTest, DoubleV4ToSimdVmasDoesNotCompile) {
    std::string out;
    for (const std::string &flags : {kStrict, kGnu, std::string("-std=gnu99")}) {
        EXPECT_NE(compile("vmas_double", simd_source("d = simd_vmas(d, d, d)"),
                          flags + " -fsyntax-only", &out),
                  0)
            << flags << ": a doublev4 passed to simd_vmas compiled";
        EXPECT_NE(compile("vmss_double", simd_source("d = simd_vmss(d, d, d)"),
                          flags + " -fsyntax-only", &out),
                  0)
            << flags;
        EXPECT_EQ(compile("vmad_double", simd_source("d = simd_vmad(d, d, d)"),
                          flags + " -fsyntax-only", &out),
                  0)
            << flags << ": " << out;
    }
}

TEST_F(HeaderTest, SimdLoadsOfTheWrongTypeDoNotCompile) {
    std::string out;
    // A scalar is not a vector; a double pointer is not a floatv4's element pointer.
    EXPECT_NE(compile("load_scalar", simd_source("float s; simd_load(s, pf); (void)s"),
                      kStrict + " -fsyntax-only", &out),
              0);
    EXPECT_NE(
        compile("load_ptr", simd_source("simd_loadu(f, pd)"), kStrict + " -fsyntax-only", &out), 0);
    EXPECT_NE(compile("vmad_scalar", simd_source("d = simd_vmad(d, 2.0, d)"),
                      "-std=gnu99 -fsyntax-only", &out),
              0);
}

TEST_F(HeaderTest, RegisterCommunicationIsTyped) {
    std::string out;
    // The real builtins take vector registers (dxhisboy/shenwei-doc: intv8, int256, doublev4,
    // floatv4); the emulator provides floatv4, doublev4 and intv8.
    const std::string ok = "intv8 i = simd_set_intv8(1, 2, 3, 4, 5, 6, 7, 8);\n"
                           "    simd_putr(f, 8); simd_putc(d, 3); simd_putr(i, 1);\n"
                           "    f = simd_getr(f); d = simd_getc(d); i = simd_getr(i); (void)i";
    for (const std::string &flags : {kStrict, kGnu}) {
        EXPECT_EQ(compile("regcomm_ok", simd_source(ok), flags + " -fsyntax-only", &out), 0)
            << flags << ": " << out;
        EXPECT_NE(compile("putr_scalar", simd_source("simd_putr(1.0, 8)"), flags + " -fsyntax-only",
                          &out),
                  0)
            << flags << ": a double passed to simd_putr compiled";
        EXPECT_NE(compile("getc_scalar", simd_source("double s = 0; s = simd_getc(s); (void)s"),
                          flags + " -fsyntax-only", &out),
                  0)
            << flags << ": simd_getc into a double compiled";
        EXPECT_NE(
            compile("getr_noarg", simd_source("f = simd_getr()"), flags + " -fsyntax-only", &out),
            0)
            << flags;
    }
}

TEST_F(HeaderTest, SimdIntrinsicsCompute) {
    const std::string source = R"(#include <simd.h>
float fa[8] __attribute__((aligned(32))) = {1, 2, 3, 4, 5, 6, 7, 8};
double da[8] __attribute__((aligned(32))) = {1, 2, 3, 4, 5, 6, 7, 8};
int ia[8] __attribute__((aligned(32))) = {1, 2, 3, 4, 5, 6, 7, 8};
float fo[8] __attribute__((aligned(32)));
float fs[4];
float fo2[8] __attribute__((aligned(32)));
double dout[8] __attribute__((aligned(32)));
int io[8] __attribute__((aligned(32)));
int main(void) {
    floatv4 a, b, c; doublev4 x, y, z; intv8 i;
    float s = 0.5f; double t = 3.0;
    simd_load(a, fa); simd_loadu(b, fa + 1); simd_loade(c, &s);
    simd_store(simd_vmas(a, b, c), fo);              /* a*b+c:   2.5 6.5 12.5 20.5 */
    simd_storeu(simd_vnmss(a, b, c), fo + 4);        /* -a*b-c: -2.5 */
    simd_load(x, da); simd_loadu(y, da + 1); simd_loade(z, &t);
    simd_store(simd_vmad(x, y, z), dout);           /* 5 9 15 23 */
    simd_storeu(simd_vmsd(x, y, z), dout + 4);      /* -1 */
    simd_load(i, ia); i = simd_vaddw(i, i); simd_store(i, io);
    /* per lane a < 0 ? b : c: the sign of (-1, 0, 2, -0.5) picks (10, 3, 4, 10) */
    c = simd_vsellts(simd_set_floatv4(-1, 0, 2, -0.5f), simd_set_floatv4(10, 10, 10, 10),
                     simd_set_floatv4(1, 3, 4, 5));
    simd_storeu(c, fs);
    /* de-interleave (0, 1, ..., 7): even lanes 0 2 4 6, odd lanes 1 3 5 7 */
    simd_store(simd_vshff(simd_set_floatv4(4, 5, 6, 7), simd_set_floatv4(0, 1, 2, 3), 0x88),
               fo2);
    simd_store(simd_vshff(simd_set_floatv4(4, 5, 6, 7), simd_set_floatv4(0, 1, 2, 3), 0xDD),
               fo2 + 4);
    a = simd_v4adds(simd_set_floatv4(1, 2, 3, 4), a * b);
    x = simd_v4muld(simd_set_doublev4(1, 2, 3, 4), x);
    return !(fo[0] == 2.5f && fo[1] == 6.5f && fo[2] == 12.5f && fo[3] == 20.5f && fo[4] == -2.5f &&
             fs[0] == 10 && fs[1] == 3 && fs[2] == 4 && fs[3] == 10 && fo2[0] == 0 &&
             fo2[1] == 2 && fo2[2] == 4 && fo2[3] == 6 && fo2[4] == 1 && fo2[5] == 3 &&
             fo2[6] == 5 && fo2[7] == 7 && dout[0] == 5 &&
             dout[1] == 9 && dout[2] == 15 && dout[3] == 23 && dout[4] == -1 && io[0] == 2 &&
             io[7] == 16 && a[1] == 8 && x[3] == 16);
}
)";
    for (const std::string &flags : {kStrict, kGnu}) {
        std::string out;
        ASSERT_EQ(compile("compute", source, flags, &out), 0) << flags << ": " << out;
        EXPECT_EQ(run({dir + "/compute"}, &out), 0) << flags << ": " << out;
    }
}

TEST_F(HeaderTest, MisalignedSimdLoadStops) {
    const std::string source = R"(#include <simd.h>
double da[12] __attribute__((aligned(32)));
int main(void) {
    doublev4 x;
    simd_loadu(x, da + 1);  /* fine */
    simd_load(x, da + 1);   /* 8 bytes past a 32-byte boundary */
    return (int)x[0];
}
)";
    std::string out;
    ASSERT_EQ(compile("misaligned", source, kStrict, &out), 0) << out;
    EXPECT_NE(run({dir + "/misaligned"}, &out), 0);
    EXPECT_NE(out.find("athread emulator: error: simd_load of a doublev4 at"), std::string::npos)
        << out;
    EXPECT_NE(out.find("is not 32-byte aligned"), std::string::npos) << out;
}

TEST_F(HeaderTest, SlaveHDoesNotDeclareLdmMalloc) {
    const std::string body = "void kernel(void *arg);\n"
                             "void kernel(void *arg) {\n"
                             "    float *p = (float *)ldm_malloc(256);\n"
                             "    (void)arg;\n"
                             "    ldm_free(p, 256);\n"
                             "}\n";
    std::string out;
    EXPECT_NE(
        compile("undeclared", "#include <slave.h>\n" + body, kStrict + " -fsyntax-only", &out), 0)
        << "slave.h declares ldm_malloc; the real one does not";
    EXPECT_EQ(compile("declared",
                      "#include <slave.h>\n#include <stddef.h>\n"
                      "void *ldm_malloc(size_t size);\nvoid ldm_free(void *p, size_t size);\n" +
                          body,
                      kStrict + " -fsyntax-only", &out),
              0)
        << out;
}

TEST_F(HeaderTest, AthreadHNeedsGnu99) {
    const std::string source = "#include <athread.h>\n"
                               "extern void SLAVE_FUN(kernel)(void *);\n"
                               "int run(void);\n"
                               "int run(void) {\n"
                               "    athread_init();\n"
                               "    athread_spawn(kernel, 0);\n"
                               "    athread_join();\n"
                               "    return athread_halt();\n"
                               "}\n";
    std::string out;
    EXPECT_EQ(compile("host", source, kGnu + " -fsyntax-only", &out), 0) << out;
    EXPECT_NE(compile("host_c99", source, "-std=c99 -fsyntax-only", &out), 0);
    EXPECT_NE(out.find("build host code with -std=gnu99"), std::string::npos) << out;
}

const std::string kPro = "-I" EMULATOR_INCLUDE "/sw26010-pro -std=gnu99 -Wall -Wextra -Werror";

/** A Pro CPE file whose kernel body is `body` (crts.h, simd.h; p: 64 floats in memory). */
std::string pro_source(const std::string &body) {
    return "#include <crts.h>\n#include <simd.h>\n"
           "__thread_local float buf[64] __attribute__((aligned(64)));\n"
           "void kernel(float *p);\n"
           "void kernel(float *p) {\n"
           "    crts_rply_t r = 0;\n"
           "    " +
           body +
           ";\n"
           "    (void)p; (void)r;\n"
           "}\n";
}

TEST_F(HeaderTest, ProCpeCodeCompiles) {
    const std::string body =
        "CRTS_dma_iget(buf, p + CRTS_tid, 64 * sizeof(float), &r);\n"
        "    CRTS_dma_wait_value(&r, 1);\n"
        "    floatv8 a; simd_load(a, buf);\n"
        "    a = simd_vmas(a, simd_vcpyfs(2.0f), a);\n"
        "    simd_store(a, buf);\n"
        "    CRTS_ssync_row();\n"
        "    crts_rply_t l = 0; CRTS_rma_row_ibcast(buf, buf, 32, &l, &r);\n"
        "    CRTS_rma_wait_value(&r, 2);\n"
        "    CRTS_dma_iput_stride(p, buf, 64, 16, 48, &r);\n"
        "    float *q = (float *)CRTS_pldm_malloc(256); CRTS_pldm_free(q, 256);\n"
        "    athread_get(PE_MODE, p, buf, 64, (void *)&r, 0, 0, 0)";
    std::string out;
    EXPECT_EQ(compile("pro_ok", pro_source(body), kPro + " -D__sw_slave__ -fsyntax-only", &out), 0)
        << out;
    // The side must be chosen, as -mslave / -mhost do.
    EXPECT_NE(compile("pro_noside", pro_source(body), kPro + " -fsyntax-only", &out), 0);
    EXPECT_NE(out.find("-D__sw_slave__"), std::string::npos) << out;
}

TEST_F(HeaderTest, Sw26010CpeCodeDoesNotCompileOnThePro) {
    const std::string flags = kPro + " -D__sw_slave__ -fsyntax-only";
    std::string out;
    for (const char *body : {
             "floatv4 v = simd_set_floatv4(1, 2, 3, 4); (void)v",           // MPE-only type
             "floatv8 v; simd_loade(v, p); (void)v",                        // MPE-only builtin
             "athread_get(BCAST_MODE, p, buf, 64, (void *)&r, 0xff, 0, 0)", // no BCAST_MODE
             "floatv8 v = simd_vcpyfs(1.0f); simd_putr(v, 8)",              // no register comm.
         }) {
        EXPECT_NE(compile("sw26010_on_pro", pro_source(body), flags, &out), 0)
            << body << " compiled against the Pro headers";
    }
}

TEST_F(HeaderTest, ProCpeCodeDoesNotCompileOnSw26010) {
    std::string out;
    // No crts.h on SW26010; and its simd.h has no floatv8.
    EXPECT_NE(compile("pro_on_sw26010", pro_source("CRTS_dma_iget(buf, p, 64, &r)"),
                      kGnu + " -D__sw_slave__ -fsyntax-only", &out),
              0);
    EXPECT_NE(out.find("crts.h"), std::string::npos) << out;
    EXPECT_NE(compile("floatv8_on_sw26010",
                      "#include <simd.h>\nvoid k(void);\nvoid k(void) { floatv8 v; (void)v; }\n",
                      kGnu + " -fsyntax-only", &out),
              0);
}

TEST_F(HeaderTest, ProHostCodeCompiles) {
    const std::string source = "#include <crts.h>\n"
                               "extern void SLAVE_FUN(kernel)(void *);\n"
                               "int run(void);\n"
                               "int run(void) {\n"
                               "    athread_init();\n"
                               "    unsigned long t0 = CRTS_time_cycle();\n"
                               "    athread_spawn(kernel, 0);\n"
                               "    athread_join();\n"
                               "    (void)t0;\n"
                               "    athread_halt();\n"
                               "    return 0;\n"
                               "}\n";
    std::string out;
    EXPECT_EQ(compile("pro_host", source, kPro + " -D__sw_host__ -fsyntax-only", &out), 0) << out;
}

} // namespace
