/** \file
 * GoogleTest tests of the athread emulator (target_sw/emulator): DMA semantics (strided
 * get/put, reply counting), CPE ids, barriers, LDM budget / alignment / free rules,
 * __thread_local per-CPE copies and accounting, counters, and the error paths (death
 * tests). The CPE kernels are plain C99 in emulator_kernels.c.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <athread.h>
#include <athread_emu.h>
#include <slave.h> // only for the host-misuse death test

#include "emulator_kernels.h"

extern "C" {
extern void SLAVE_FUN(strided_get_kernel)(void *);
extern void SLAVE_FUN(strided_put_kernel)(void *);
extern void SLAVE_FUN(reply_kernel)(void *);
extern void SLAVE_FUN(id_kernel)(void *);
extern void SLAVE_FUN(syn_kernel)(void *);
extern void SLAVE_FUN(get_once_kernel)(void *);
extern void SLAVE_FUN(put_once_kernel)(void *);
extern void SLAVE_FUN(ldm_alloc_kernel)(void *);
extern void SLAVE_FUN(ldm_free_kernel)(void *);
extern void SLAVE_FUN(tls_kernel)(void *);
extern void SLAVE_FUN(tls_dma_kernel)(void *);
extern void SLAVE_FUN(main_as_ldm_kernel)(void *);
extern void SLAVE_FUN(syn_skip_kernel)(void *);
extern void SLAVE_FUN(leak_kernel)(void *);
extern void SLAVE_FUN(align_kernel)(void *);
extern void SLAVE_FUN(tls_small_kernel)(void *);
extern void SLAVE_FUN(local_array_kernel)(void *);
extern void SLAVE_FUN(regcomm_ring_kernel)(void *);
extern void SLAVE_FUN(regcomm_stream_kernel)(void *);
extern void SLAVE_FUN(regcomm_bcast_kernel)(void *);
extern void SLAVE_FUN(regcomm_deadlock_kernel)(void *);
extern void SLAVE_FUN(regcomm_put_kernel)(void *);
extern void SLAVE_FUN(regcomm_mismatch_kernel)(void *);
extern void SLAVE_FUN(regcomm_timing_kernel)(void *);
extern void SLAVE_FUN(bcast_get_kernel)(void *);
extern void SLAVE_FUN(bcast_put_kernel)(void *);
// Not declared by the real slave.h (athread-api.md): declared here for the host-misuse test.
void *ldm_malloc(size_t size);
void ldm_free(void *p, size_t size);
}

namespace {

const long long kBudget = 64 * 1024 - 8 * 1024; // sw26010 data budget (Machine.h)

class Emulator : public ::testing::Test {
protected:
    void SetUp() override {
        GTEST_FLAG_SET(death_test_style, "threadsafe");
        athread_emu_set_machine("sw26010");
        athread_emu_stats_reset();
        athread_init();
    }
    const athread_emu_kernel_stats &last() {
        int n = athread_emu_stats_count();
        EXPECT_GT(n, 0);
        return *athread_emu_stats_get(n - 1);
    }
};

misc_args misc(unsigned char *buf, int only_cpe = -1) {
    misc_args a;
    std::memset(&a, 0, sizeof a);
    a.buf = buf;
    a.only_cpe = only_cpe;
    return a;
}

/** Main-memory offsets the real API reads for the LDM bytes 0..len-1, found by walking
 *  main memory (a byte belongs to a block iff its position in the pitch is < bsize). */
std::vector<size_t> main_positions(int len, int stride, int bsize) {
    std::vector<size_t> v;
    if (bsize == 0) {
        for (int i = 0; i < len; i++)
            v.push_back(i);
        return v;
    }
    for (size_t pos = 0; v.size() < static_cast<size_t>(len); pos++)
        if (pos % (bsize + stride) < static_cast<size_t>(bsize))
            v.push_back(pos);
    return v;
}

struct DmaShape {
    int len, stride, bsize;
};

class StridedDma : public Emulator, public ::testing::WithParamInterface<DmaShape> {};

TEST_P(StridedDma, GetMovesExactlyTheBlocks) {
    DmaShape s = GetParam();
    std::vector<size_t> pos = main_positions(s.len, s.stride, s.bsize);
    size_t extent = pos.empty() ? 0 : pos.back() + 1;
    std::vector<unsigned char> src(extent);
    for (size_t i = 0; i < extent; i++)
        src[i] = static_cast<unsigned char>(i * 7 + i / 253);
    std::vector<unsigned char> out(64 * static_cast<size_t>(s.len), 0);
    strided_get_args a;
    std::memset(&a, 0, sizeof a);
    a.src = src.data();
    a.out = out.data();
    a.len = s.len;
    a.stride = s.stride;
    a.bsize = s.bsize;
    athread_emu_register_buffer("src", src.data(), src.size()); // exact extent
    athread_emu_register_buffer("out", out.data(), out.size());
    athread_emu_set_kernel_name("strided_get");
    athread_spawn(strided_get_kernel, &a);
    athread_join();
    for (int cpe = 0; cpe < 64; cpe++) {
        EXPECT_TRUE(a.guard_ok[cpe]) << "CPE " << cpe << " LDM written outside [0, len)";
        for (int i = 0; i < s.len; i++)
            ASSERT_EQ(out[cpe * s.len + i], src[pos[i]]) << "CPE " << cpe << " byte " << i;
    }
    const athread_emu_kernel_stats &st = last();
    EXPECT_STREQ(st.kernel, "strided_get");
    long long blocks = s.bsize ? (s.len + s.bsize - 1) / s.bsize : 1;
    EXPECT_EQ(st.cpe[5].get_blocks, blocks);
    EXPECT_EQ(st.cpe[5].get_bytes, s.len);
}

TEST_P(StridedDma, PutWritesExactlyTheBlocks) {
    DmaShape s = GetParam();
    std::vector<size_t> pos = main_positions(s.len, s.stride, s.bsize);
    int span = static_cast<int>(pos.back() + 1) + 37; // leave untouched bytes between CPEs
    std::vector<unsigned char> dst(64 * static_cast<size_t>(span), 0xEE);
    strided_put_args a{dst.data(), s.len, s.stride, s.bsize, span};
    athread_emu_register_buffer("dst", dst.data(), dst.size());
    athread_spawn(strided_put_kernel, &a);
    athread_join();
    for (int cpe = 0; cpe < 64; cpe++) {
        for (int p = 0; p < span; p++) {
            // Independent of the emulator's walk: map a main-memory byte to its LDM index.
            int expected = 0xEE;
            if (s.bsize == 0) {
                if (p < s.len)
                    expected = (cpe * 31 + p) & 0xff;
            } else {
                int pitch = s.bsize + s.stride, in = p % pitch, idx = p / pitch * s.bsize + in;
                if (in < s.bsize && idx < s.len)
                    expected = (cpe * 31 + idx) & 0xff;
            }
            ASSERT_EQ(dst[static_cast<size_t>(cpe) * span + p], expected)
                << "CPE " << cpe << " offset " << p;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, StridedDma,
                         ::testing::Values(DmaShape{1000, 40, 24}, // len % bsize != 0
                                           DmaShape{1000, 0, 0},   // contiguous
                                           DmaShape{100, 1, 7},
                                           DmaShape{96, 32, 32}, // exact multiple
                                           DmaShape{50, 10, 64}, // bsize > len
                                           DmaShape{257, 300, 128}),
                         [](const ::testing::TestParamInfo<DmaShape> &i) {
                             return "len" + std::to_string(i.param.len) + "_stride" +
                                    std::to_string(i.param.stride) + "_bsize" +
                                    std::to_string(i.param.bsize);
                         });

TEST_F(Emulator, ReplyCountsEveryRequest) {
    std::vector<int> src(5 * 16), dst(64 * 48, -1);
    for (size_t i = 0; i < src.size(); i++)
        src[i] = static_cast<int>(i * 3 + 1);
    reply_args a;
    std::memset(&a, 0, sizeof a);
    a.src = src.data();
    a.dst = dst.data();
    athread_spawn(reply_kernel, &a);
    athread_join();
    for (int cpe = 0; cpe < 64; cpe++) {
        EXPECT_EQ(a.get_reply[cpe], 5);
        EXPECT_EQ(a.put_reply[cpe], 3);
        EXPECT_TRUE(a.data_ok[cpe]);
        for (int i = 0; i < 48; i++)
            ASSERT_EQ(dst[cpe * 48 + i], cpe * 1000 + i);
    }
    EXPECT_EQ(last().cpe[9].get_requests, 5);
    EXPECT_EQ(last().cpe[9].put_requests, 3);
}

TEST_F(Emulator, GetIdCoversEveryCpeOnce) {
    EXPECT_EQ(athread_get_max_threads(), 64);
    id_args a;
    std::memset(&a, 0, sizeof a);
    athread_spawn(id_kernel, &a);
    athread_join();
    for (int i = 0; i < 64; i++) {
        EXPECT_EQ(a.seen[i], 1) << "id " << i;
        EXPECT_EQ(a.id_of_core[i], i);
    }
    EXPECT_EQ(a.bad_core, -1);
}

TEST_F(Emulator, SynIsABarrierOverArrayRowsAndColumns) {
    syn_args a;
    std::memset(&a, 0, sizeof a);
    athread_spawn(syn_kernel, &a);
    athread_join();
    EXPECT_EQ(a.errors, 0);
    for (int p = 0; p < EMU_TEST_PHASES; p++) {
        EXPECT_EQ(a.array_count[p], 64);
        for (int r = 0; r < 8; r++)
            EXPECT_EQ(a.row_count[r][p], 8);
        for (int c = 0; c < 8; c++)
            EXPECT_EQ(a.col_count[c][p], 8);
    }
}

TEST_F(Emulator, CountsLineBytesOfUnalignedBlocks) {
    auto *buf = static_cast<unsigned char *>(std::aligned_alloc(128, 4096));
    struct Case {
        long long offset;
        int len, stride, bsize;
    } cases[] = {
        {5, 300, 28, 100}, {120, 16, 0, 0}, {0, 256, 0, 0}, {127, 2, 0, 0}, {64, 1000, 200, 128}};
    for (const Case &c : cases) {
        misc_args a = misc(buf, 3);
        a.offset = c.offset;
        a.len = c.len;
        a.stride = c.stride;
        a.bsize = c.bsize;
        a.ldm_bytes = static_cast<size_t>(c.len);
        // Expected from an explicit list of blocks.
        long long lines = 0, blocks = 0;
        int block = c.bsize ? c.bsize : c.len;
        for (int done = 0, k = 0; done < c.len; k++) {
            long long start =
                c.offset + static_cast<long long>(k) * (block + (c.bsize ? c.stride : 0));
            long long end = start + std::min(block, c.len - done);
            lines += (end + 127) / 128 * 128 - start / 128 * 128;
            blocks++;
            done += block;
        }
        athread_spawn(get_once_kernel, &a);
        athread_join();
        const athread_emu_cpe_stats &g = last().cpe[3];
        EXPECT_EQ(g.get_requests, 1);
        EXPECT_EQ(g.get_bytes, c.len);
        EXPECT_EQ(g.get_blocks, blocks) << "offset " << c.offset;
        EXPECT_EQ(g.get_line_bytes, lines) << "offset " << c.offset;
        EXPECT_EQ(last().cpe[4].get_requests, 0);
        EXPECT_EQ(g.ldm_peak_bytes, last().ldm_static_bytes + c.len);

        athread_spawn(put_once_kernel, &a);
        athread_join();
        const athread_emu_cpe_stats &p = last().cpe[3];
        EXPECT_EQ(p.put_requests, 1);
        EXPECT_EQ(p.put_bytes, c.len);
        EXPECT_EQ(p.put_blocks, blocks);
        EXPECT_EQ(p.put_line_bytes, lines);
        EXPECT_EQ(p.get_requests, 0);
    }
    std::free(buf);
}

TEST_F(Emulator, ObserverSeesEveryRequest) {
    struct Seen {
        std::atomic<int> gets{0}, puts{0};
        std::atomic<long long> bytes{0};
    } seen;
    athread_emu_set_dma_observer(
        [](void *u, int, int is_put, const void *, long long len, int, int) {
            auto *s = static_cast<Seen *>(u);
            (is_put ? s->puts : s->gets)++;
            s->bytes += len;
        },
        &seen);
    std::vector<int> src(5 * 16, 1), dst(64 * 48);
    reply_args a;
    std::memset(&a, 0, sizeof a);
    a.src = src.data();
    a.dst = dst.data();
    athread_spawn(reply_kernel, &a);
    athread_join();
    athread_emu_set_dma_observer(nullptr, nullptr);
    EXPECT_EQ(seen.gets, 64 * 5);
    EXPECT_EQ(seen.puts, 64 * 3);
    EXPECT_EQ(seen.bytes, 64 * 8 * 16 * 4);
}

TEST_F(Emulator, LdmBlocksAreAligned) {
    misc_args a = misc(nullptr);
    athread_spawn(align_kernel, &a);
    athread_join();
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(a.out[i] % 128, 0) << "block " << i;
    EXPECT_NE(a.out[0], a.out[1]);
    EXPECT_EQ(last().cpe[0].ldm_peak_bytes, last().ldm_static_bytes + 3 + 100 + 129);
    EXPECT_EQ(last().cpe[0].ldm_leaked_bytes, 0);
}

TEST_F(Emulator, ThreadLocalIsPerCpeAndCounted) {
    misc_args a = misc(nullptr);
    athread_spawn(tls_kernel, &a);
    athread_join();
    for (int i = 0; i < 64; i++)
        EXPECT_EQ(a.out[i], 7 + i);
    // tl_counter + tl_big + bcast_tls (aligned(128)) are all the __thread_local data of this
    // test program.
    long long stat = last().ldm_static_bytes;
    EXPECT_GE(stat, 16384 + 4 + EMU_TEST_BCAST_MAX);
    EXPECT_LT(stat, 16384 + 4 + EMU_TEST_BCAST_MAX + 64 + 128);
    EXPECT_EQ(last().ldm_budget_bytes, kBudget);
    // A second spawn starts from fresh copies.
    athread_spawn(tls_kernel, &a);
    athread_join();
    EXPECT_EQ(a.out[10], 17);
    // ldm_malloc gets the budget minus the __thread_local bytes, exactly.
    a.ldm_bytes = static_cast<size_t>(kBudget - stat);
    a.len = 1;
    athread_spawn(ldm_alloc_kernel, &a);
    athread_join();
    EXPECT_EQ(last().cpe[63].ldm_peak_bytes, kBudget);
    a.ldm_bytes += 1;
    a.only_cpe = 17;
    EXPECT_DEATH(
        {
            athread_spawn(ldm_alloc_kernel, &a);
            athread_join();
        },
        "athread emulator: error: kernel 'kernel@0x[0-9a-f]+' CPE 17: ldm_malloc\\([0-9]+\\) "
        "exceeds the LDM budget");
}

TEST_F(Emulator, DmaToThreadLocalArray) {
    const int len = 256;
    std::vector<unsigned char> buf(65 * len);
    for (int i = 0; i < len; i++)
        buf[i] = static_cast<unsigned char>(i + 1);
    misc_args a = misc(buf.data());
    a.len = len;
    athread_emu_register_buffer("buf", buf.data(), buf.size());
    athread_spawn(tls_dma_kernel, &a);
    athread_join();
    for (int cpe = 0; cpe < 64; cpe++) {
        EXPECT_EQ(buf[(cpe + 1) * len], cpe);
        for (int i = 1; i < len; i++)
            ASSERT_EQ(buf[(cpe + 1) * len + i], static_cast<unsigned char>(i + 1));
    }
}

TEST_F(Emulator, LeakIsReportedAndCounted) {
    misc_args a = misc(nullptr, 2);
    a.ldm_bytes = 1000;
    testing::internal::CaptureStderr();
    athread_emu_set_kernel_name("leaky");
    athread_spawn(leak_kernel, &a);
    athread_join();
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("athread emulator: warning: kernel 'leaky': 1 CPEs returned with LDM "
                       "still allocated"),
              std::string::npos)
        << err;
    EXPECT_EQ(last().cpe[2].ldm_leaked_bytes, 1000);
    EXPECT_EQ(last().cpe[1].ldm_leaked_bytes, 0);
}

TEST_F(Emulator, ProMachineHasALargerLdm) {
    athread_emu_set_machine("sw26010-pro");
    EXPECT_STREQ(athread_emu_machine_name(), "sw26010-pro");
    misc_args a = misc(nullptr, 0);
    a.ldm_bytes = 200 * 1024;
    a.len = 1;
    athread_spawn(ldm_alloc_kernel, &a);
    athread_join();
    EXPECT_EQ(last().cpe[0].ldm_peak_bytes, last().ldm_static_bytes + 200 * 1024);
    EXPECT_EQ(last().ldm_budget_bytes, 224 * 1024);
    athread_emu_set_machine("sw26010");
}

// ---------------------------------------------------------------- errors

TEST_F(Emulator, DmaOutsideRegisteredBufferDies) {
    std::vector<unsigned char> in(1024), other(64);
    misc_args a = misc(in.data(), 42);
    a.offset = 1000;
    a.len = 64;
    a.ldm_bytes = 64;
    athread_emu_register_buffer("other", other.data(), other.size());
    athread_emu_register_buffer("in", in.data(), in.size());
    athread_emu_set_kernel_name("oob_kernel");
    EXPECT_DEATH(
        {
            athread_spawn(get_once_kernel, &a);
            athread_join();
        },
        "athread emulator: error: kernel 'oob_kernel' CPE 42: athread_get main memory "
        "\\[0x[0-9a-f]+, 0x[0-9a-f]+\\) \\(64 bytes, block 0 of 1\\) is outside every registered "
        "buffer; nearest buffer 'in' \\[0x[0-9a-f]+, 0x[0-9a-f]+\\) \\(1024 bytes\\)");
}

TEST_F(Emulator, StridedPutPastRegisteredBufferDies) {
    std::vector<unsigned char> out(1000);
    misc_args a = misc(out.data(), 7);
    a.len = 400; // 4 blocks of 100 bytes,
    a.bsize = 100;
    a.stride = 201; // pitch 301: block 3 is [903, 1003), past the 1000-byte buffer
    a.ldm_bytes = 400;
    athread_emu_register_buffer("out", out.data(), out.size());
    athread_emu_set_kernel_name("put_kernel");
    EXPECT_DEATH(
        {
            athread_spawn(put_once_kernel, &a);
            athread_join();
        },
        "kernel 'put_kernel' CPE 7: athread_put main memory .* block 3 of 4.* nearest buffer "
        "'out'");
}

TEST_F(Emulator, LdmOverBudgetDies) {
    misc_args a = misc(nullptr, 5);
    a.ldm_bytes = 24 * 1024;
    a.len = 2; // two blocks: 48 KB + 16 KB of __thread_local > 56 KB
    athread_emu_set_kernel_name("big_kernel");
    EXPECT_DEATH(
        {
            athread_spawn(ldm_alloc_kernel, &a);
            athread_join();
        },
        "athread emulator: error: kernel 'big_kernel' CPE 5: ldm_malloc\\(24576\\) exceeds the "
        "LDM budget: in use [0-9]+ bytes \\(ldm_malloc 24576 \\+ __thread_local [0-9]+\\), "
        "budget 57344 bytes");
}

TEST_F(Emulator, LdmFreeSizeMismatchDies) {
    misc_args a = misc(nullptr, 9);
    a.ldm_bytes = 4096;
    a.free_bytes = 4000;
    EXPECT_DEATH(
        {
            athread_spawn(ldm_free_kernel, &a);
            athread_join();
        },
        "CPE 9: ldm_free\\(0x[0-9a-f]+, 4000\\): the block was allocated with "
        "ldm_malloc\\(4096\\)");
}

TEST_F(Emulator, MainMemoryAsLdmSideDies) {
    std::vector<unsigned char> buf(64);
    misc_args a = misc(buf.data(), 0);
    EXPECT_DEATH(
        {
            athread_spawn(main_as_ldm_kernel, &a);
            athread_join();
        },
        "CPE 0: athread_get LDM side .* is not LDM of this CPE");
}

TEST_F(Emulator, LdmOverrunDies) {
    std::vector<unsigned char> buf(4096);
    misc_args a = misc(buf.data(), 1);
    a.len = 200;
    a.ldm_bytes = 100; // LDM block smaller than the transfer
    EXPECT_DEATH(
        {
            athread_spawn(get_once_kernel, &a);
            athread_join();
        },
        "CPE 1: athread_get LDM side .* \\(200 bytes\\) overruns the LDM block .* of "
        "ldm_malloc\\(100\\)");
}

// ---------------------------------------------------------------- LDM-side bounds

TEST_F(Emulator, DmaIntoLocalArrayThatFitsWorks) {
    std::vector<unsigned char> buf(64);
    float one = 3.0f;
    std::memcpy(buf.data(), &one, sizeof one);
    misc_args a = misc(buf.data());
    a.len = 64; // exactly the float[16]
    athread_emu_register_buffer("buf", buf.data(), buf.size());
    athread_spawn(local_array_kernel, &a);
    athread_join();
    for (int cpe = 0; cpe < 64; cpe++)
        EXPECT_EQ(a.out[cpe], 3);
}

TEST_F(Emulator, DmaIntoTooSmallLocalArrayDies) {
    // 4096 bytes into a float[16] on the CPE stack: on the real machine this smashes the
    // LDM stack; the emulator used to accept it (the whole thread stack counted as LDM).
    std::vector<unsigned char> buf(4096);
    misc_args a = misc(buf.data(), 6);
    a.len = 4096;
    athread_emu_register_buffer("buf", buf.data(), buf.size());
    athread_emu_set_kernel_name("local_kernel");
    EXPECT_DEATH(
        {
            athread_spawn(local_array_kernel, &a);
            athread_join();
        },
        "athread emulator: error: kernel 'local_kernel' CPE 6: athread_get LDM side "
        "\\[0x[0-9a-f]+, 0x[0-9a-f]+\\) \\(4096 bytes\\) overruns .*the CPE stack \\[0x[0-9a-f]+, "
        "0x[0-9a-f]+\\) \\(local variables of the kernel: the 8192 bytes of LDM kept for the stack "
        "on sw26010[^)]*\\): [0-9]+ bytes past the kernel's entry frame");
}

TEST_F(Emulator, DmaPastLdmMallocBlockNamesKernelCpeAndBlock) {
    std::vector<unsigned char> buf(4096);
    misc_args a = misc(buf.data(), 12);
    a.len = 129;
    a.ldm_bytes = 128;
    athread_emu_register_buffer("buf", buf.data(), buf.size());
    athread_emu_set_kernel_name("block_kernel");
    EXPECT_DEATH(
        {
            athread_spawn(get_once_kernel, &a);
            athread_join();
        },
        "athread emulator: error: kernel 'block_kernel' CPE 12: athread_get LDM side "
        "\\[0x[0-9a-f]+, 0x[0-9a-f]+\\) \\(129 bytes\\) overruns the LDM block \\[0x[0-9a-f]+, "
        "0x[0-9a-f]+\\) of ldm_malloc\\(128\\): 1 bytes past its end");
}

TEST_F(Emulator, DmaIntoThreadLocalArrayThatFitsWorks) {
    std::vector<unsigned char> buf(32, 0);
    buf[0] = 9;
    misc_args a = misc(buf.data(), 4);
    a.len = 32; // exactly the int[8]
    athread_emu_register_buffer("buf", buf.data(), buf.size());
    athread_spawn(tls_small_kernel, &a);
    athread_join();
    EXPECT_EQ(a.out[4], 9);
}

TEST_F(Emulator, DmaPastThreadLocalArrayDies) {
    // 36 bytes into an int[8] stays inside .tdata_local (tl_big follows): only the
    // variable's own extent, from the symbol table, catches it.
    std::vector<unsigned char> buf(64);
    misc_args a = misc(buf.data(), 33);
    a.len = 36;
    athread_emu_register_buffer("buf", buf.data(), buf.size());
    athread_emu_set_kernel_name("tls_kernel");
    EXPECT_DEATH(
        {
            athread_spawn(tls_small_kernel, &a);
            athread_join();
        },
        "athread emulator: error: kernel 'tls_kernel' CPE 33: athread_get LDM side "
        "\\[0x[0-9a-f]+, 0x[0-9a-f]+\\) \\(36 bytes\\) overruns the __thread_local variable "
        "'tl_small' \\[0x[0-9a-f]+, 0x[0-9a-f]+\\) \\(32 bytes\\): 4 bytes past its end");
}

TEST_F(Emulator, LdmMallocOfHugeSizeDies) {
    misc_args a = misc(nullptr, 21);
    a.ldm_bytes = static_cast<size_t>(-1); // passed the budget check by overflow before
    a.len = 1;
    athread_emu_set_kernel_name("huge_kernel");
    EXPECT_DEATH(
        {
            athread_spawn(ldm_alloc_kernel, &a);
            athread_join();
        },
        "athread emulator: error: kernel 'huge_kernel' CPE 21: "
        "ldm_malloc\\(18446744073709551615\\) "
        "is larger than the whole LDM of a CPE \\(sw26010: 65536 bytes");
    a.ldm_bytes = 65537;
    EXPECT_DEATH(
        {
            athread_spawn(ldm_alloc_kernel, &a);
            athread_join();
        },
        "kernel 'huge_kernel' CPE 21: ldm_malloc\\(65537\\) is larger than the whole LDM");
}

TEST_F(Emulator, NegativeDmaLengthDies) {
    std::vector<unsigned char> in(256);
    misc_args a = misc(in.data(), 3);
    a.len = -8;
    a.ldm_bytes = 64;
    athread_emu_register_buffer("in", in.data(), in.size());
    athread_emu_set_kernel_name("neg_kernel");
    EXPECT_DEATH(
        {
            athread_spawn(get_once_kernel, &a);
            athread_join();
        },
        "athread emulator: error: kernel 'neg_kernel' CPE 3: athread_get with negative len "
        "\\(len -8, stride 0, bsize 0\\): LDM side 0x[0-9a-f]+ in the LDM block \\[0x[0-9a-f]+, "
        "0x[0-9a-f]+\\) of ldm_malloc\\(64\\), main memory 0x[0-9a-f]+ in buffer 'in'");
    a.len = 8;
    a.stride = -1;
    a.bsize = 4;
    EXPECT_DEATH(
        {
            athread_spawn(get_once_kernel, &a);
            athread_join();
        },
        "kernel 'neg_kernel' CPE 3: athread_get with negative stride \\(len 8, stride -1, bsize "
        "4\\)");
}

TEST_F(Emulator, SkippedBarrierIsADeadlock) {
    misc_args a = misc(nullptr, 13);
    EXPECT_DEATH(
        {
            athread_spawn(syn_skip_kernel, &a);
            athread_join();
        },
        "deadlock in athread_syn");
}

TEST_F(Emulator, SpawnAfterHaltDies) {
    athread_halt();
    misc_args a = misc(nullptr);
    EXPECT_DEATH(athread_spawn(id_kernel, &a), "athread emulator: error: athread_spawn without "
                                               "athread_init");
}

TEST_F(Emulator, CpeCallFromHostDies) {
    EXPECT_DEATH(ldm_malloc(16), "ldm_malloc called outside a CPE function");
}

// ---------------------------------------------------------------- register communication

regcomm_args reg(int bus) {
    regcomm_args a;
    std::memset(&a, 0, sizeof a);
    a.bus = bus;
    a.only_cpe = -1;
    return a;
}

/** The id of the CPE at position pos of the row (bus 0) or column (bus 1) of CPE id. */
int along(int bus, int id, int pos) {
    return bus == 0 ? (id & ~7) + pos : pos * 8 + (id & 7);
}

class Regcomm : public Emulator, public ::testing::WithParamInterface<int> {};

TEST_P(Regcomm, RingPassesToTheNextPosition) {
    const int bus = GetParam();
    regcomm_args a = reg(bus);
    athread_spawn(regcomm_ring_kernel, &a);
    athread_join();
    for (int id = 0; id < 64; id++) {
        const int pos = bus == 0 ? id & 7 : id >> 3;
        const int prev = along(bus, id, (pos + 7) & 7);
        EXPECT_EQ(a.received[id][0], prev * 1000) << "CPE " << id;
        EXPECT_EQ(a.lanes_ok[id], 1) << "CPE " << id;
        EXPECT_EQ(last().cpe[id].regcomm_puts, 1);
        EXPECT_EQ(last().cpe[id].regcomm_gets, 1);
    }
}

TEST_P(Regcomm, StreamArrivesInOrderPastTheBufferDepth) {
    const int bus = GetParam();
    regcomm_args a = reg(bus);
    a.src = 2;
    a.dst = 5;
    a.count = EMU_TEST_REG_VALUES; // more than the receive buffer holds: the sender waits
    athread_spawn(regcomm_stream_kernel, &a);
    athread_join();
    for (int line = 0; line < 8; line++) {
        const int first = bus == 0 ? line * 8 : line; // position 0 of this row / column
        const int src = along(bus, first, 2), dst = along(bus, first, 5);
        for (int k = 0; k < a.count; k++)
            EXPECT_EQ(a.received[dst][k], src * 1000 + k * 10) << dst;
        EXPECT_EQ(a.lanes_ok[dst], 1);
        EXPECT_EQ(a.received[along(bus, first, 4)][0], 0); // nobody else received
    }
}

TEST_P(Regcomm, BroadcastReachesEveryOtherCpeOfTheLine) {
    const int bus = GetParam();
    regcomm_args a = reg(bus);
    a.src = 3;
    a.count = 3;
    athread_spawn(regcomm_bcast_kernel, &a);
    athread_join();
    for (int id = 0; id < 64; id++) {
        const int src = along(bus, id, 3);
        if (id == src) {
            EXPECT_EQ(last().cpe[id].regcomm_puts, 3); // a broadcast counts once
            continue;
        }
        for (int k = 0; k < 3; k++)
            EXPECT_EQ(a.received[id][k], src * 1000 + k * 10) << id;
        EXPECT_EQ(a.lanes_ok[id], 1);
    }
}

INSTANTIATE_TEST_SUITE_P(EmulatorRowAndColumn, Regcomm, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int> &i) {
                             return std::string(i.param == 0 ? "Row" : "Column");
                         });

TEST_F(Emulator, RegcommGetWaitIsCounted) {
    regcomm_args a = reg(0);
    a.delay = 10000;
    athread_spawn(regcomm_timing_kernel, &a);
    athread_join();
    EXPECT_EQ(a.received[1][0], 0);
    const athread_emu_cpe_stats &r = last().cpe[1];
    // The receiver waits for the sender's 10000 cycles + put + latency (Machine::regcomm).
    EXPECT_GE(r.regcomm_wait_cycles, 10000);
    EXPECT_LE(r.regcomm_wait_cycles, 10000 + 100);
    EXPECT_EQ(last().cpe[0].regcomm_wait_cycles, 0);
    EXPECT_GE(r.cycles, 10000);
    // Only slow cycles reported, nothing that pairs: the no-pairing time is the modelled one.
    EXPECT_EQ(last().cpe[0].unpaired_extra_cycles, 0);
    EXPECT_EQ(last().cycles_max_unpaired, last().cycles_max);
    EXPECT_EQ(last().modelled_unpaired_seconds, last().modelled_seconds);
}

TEST_F(Emulator, RegcommTimingIsDeterministic) {
    long long first[64];
    for (int run = 0; run < 3; run++) {
        regcomm_args a = reg(1);
        a.src = 0;
        a.dst = 7;
        a.count = EMU_TEST_REG_VALUES;
        athread_spawn(regcomm_stream_kernel, &a);
        athread_join();
        for (int id = 0; id < 64; id++) {
            if (run == 0)
                first[id] = last().cpe[id].cycles;
            else
                EXPECT_EQ(last().cpe[id].cycles, first[id]) << "CPE " << id;
        }
    }
}

TEST_F(Emulator, RegcommDeadlockNamesBothCpes) {
    regcomm_args a = reg(0);
    athread_emu_set_kernel_name("two_receivers");
    EXPECT_DEATH(
        {
            athread_spawn(regcomm_deadlock_kernel, &a);
            athread_join();
        },
        "athread emulator: error: kernel 'two_receivers': deadlock in register communication "
        "after CPE [0-9]+ [a-z_ ]+: every CPE still running waits for another: CPE 0 in "
        "simd_getr \\(its row receive buffer is empty\\); CPE 1 in simd_getr");
}

TEST_F(Emulator, RegcommBadDestinationDies) {
    regcomm_args a = reg(0);
    a.only_cpe = 9;
    a.dst = 16;
    athread_emu_set_kernel_name("bad_dest");
    EXPECT_DEATH(
        {
            athread_spawn(regcomm_put_kernel, &a);
            athread_join();
        },
        "kernel 'bad_dest' CPE 9: simd_putr to destination 16: only its low 4 bits are read");
    a.dst = 1; // CPE 9 is column 1 of row 1
    athread_emu_set_kernel_name("to_self");
    EXPECT_DEATH(
        {
            athread_spawn(regcomm_put_kernel, &a);
            athread_join();
        },
        "kernel 'to_self' CPE 9: simd_putr to itself");
}

TEST_F(Emulator, RegcommUnreceivedValueDies) {
    regcomm_args a = reg(1);
    a.only_cpe = 9;
    a.dst = 3; // CPE 9 (row 1, column 1) to row 3 of its column: CPE 25
    athread_emu_set_kernel_name("unreceived");
    EXPECT_DEATH(
        {
            athread_spawn(regcomm_put_kernel, &a);
            athread_join();
        },
        "kernel 'unreceived' CPE 25: 1 value\\(s\\) sent to it by simd_putc were never received "
        "\\(column receive buffer not empty when the kernel returned; the first from CPE 9");
}

TEST_F(Emulator, RegcommTypeMismatchDies) {
    regcomm_args a = reg(0);
    athread_emu_set_kernel_name("mismatch");
    EXPECT_DEATH(
        {
            athread_spawn(regcomm_mismatch_kernel, &a);
            athread_join();
        },
        "kernel 'mismatch' CPE 1: simd_getr into a doublev4 received a floatv4 \\(sent by CPE 0");
}

TEST_F(Emulator, RegcommOnProMachineDies) {
    athread_emu_set_machine("sw26010-pro");
    regcomm_args a = reg(0);
    athread_emu_set_kernel_name("pro_ring");
    EXPECT_DEATH(
        {
            athread_spawn(regcomm_ring_kernel, &a);
            athread_join();
        },
        "kernel 'pro_ring' CPE [0-9]+: simd_putr: sw26010-pro has no register communication");
}

// ---------------------------------------------------------------- broadcast DMA

struct BcastRun {
    std::vector<unsigned char> src, out;
    bcast_args a;
    explicit BcastRun(int len) : src(len), out(64 * (size_t)len) {
        for (int i = 0; i < len; i++)
            src[i] = static_cast<unsigned char>(i * 7 + 1);
        std::memset(&a, 0, sizeof a);
        a.src = src.data();
        a.out = out.data();
        a.len = len;
    }
    bool received(int id) const {
        return std::memcmp(&out[(size_t)id * a.len], src.data(), a.len) == 0;
    }
    bool untouched(int id) const {
        for (int i = 0; i < a.len; i++)
            if (out[(size_t)id * a.len + i] != 0xEE)
                return false;
        return true;
    }
};

class BcastDma : public Emulator, public ::testing::WithParamInterface<int> {};

TEST_P(BcastDma, EveryCpeOfTheMaskedRowsReceives) {
    for (int mask : {0xff, 0x05, 0x80}) {
        BcastRun r(256);
        r.a.where = GetParam();
        r.a.mask = mask;
        r.a.issuer = 9; // row 1: a receiver only with bit 1
        r.a.ldm_bytes = r.a.issuer_ldm_bytes = 512;
        athread_spawn(bcast_get_kernel, &r.a);
        athread_join();
        for (int id = 0; id < 64; id++) {
            if (mask >> (id >> 3) & 1)
                EXPECT_TRUE(r.received(id)) << "mask " << mask << " CPE " << id;
            else
                EXPECT_TRUE(r.untouched(id)) << "mask " << mask << " CPE " << id;
            // Only the issuer's reply word counts the request.
            EXPECT_EQ(r.a.reply_seen[id], id == 9 ? 1 : 0) << id;
            EXPECT_EQ(last().cpe[id].get_requests, id == 9 ? 1 : 0);
        }
        // The request's 128-byte lines, counted once (not once per receiver).
        const uintptr_t lo = reinterpret_cast<uintptr_t>(r.src.data()), hi = lo + 256;
        EXPECT_EQ(last().cpe[9].get_line_bytes,
                  (long long)((hi + 127) / 128 * 128 - lo / 128 * 128));
    }
}

INSTANTIATE_TEST_SUITE_P(EmulatorLdmObjects, BcastDma, ::testing::Values(0, 1, 2),
                         [](const ::testing::TestParamInfo<int> &i) {
                             return std::string(i.param == 0
                                                    ? "ThreadLocal"
                                                    : (i.param == 1 ? "LdmMalloc" : "Local"));
                         });

TEST_F(Emulator, BcastCostsAboutOneGetNotSixtyFour) {
    const int n = 4096;
    long long cycles[3];
    for (int pe = 0; pe < 3; pe++) {
        BcastRun r(n);
        r.a.out = nullptr;
        r.a.mask = 0xff;
        r.a.where = 1; // an ldm_malloc block of n bytes on every CPE
        r.a.ldm_bytes = r.a.issuer_ldm_bytes = n;
        r.a.pe = pe; // 0: broadcast, 1: one PE_MODE get, 2: 64 PE_MODE gets
        athread_spawn(bcast_get_kernel, &r.a);
        athread_join();
        cycles[pe] = last().cycles_max;
    }
    EXPECT_NEAR(static_cast<double>(cycles[0]), static_cast<double>(cycles[1]), 0.02 * cycles[1]);
    // 64 gets of n bytes move 64 times the bytes: several times the broadcast's time (not 64
    // times: a single get is latency bound).
    EXPECT_GT(cycles[2], 5 * cycles[0]);
}

TEST_F(Emulator, BcastOnPutDies) {
    BcastRun r(64);
    r.a.issuer = 5;
    athread_emu_set_kernel_name("bcast_put");
    EXPECT_DEATH(
        {
            athread_spawn(bcast_put_kernel, &r.a);
            athread_join();
        },
        "kernel 'bcast_put' CPE 5: athread_put in BCAST_MODE: puts have no broadcast modes");
}

TEST_F(Emulator, BcastWithEmptyMaskDies) {
    BcastRun r(64);
    r.a.mask = 0;
    athread_emu_set_kernel_name("bcast_mask");
    EXPECT_DEATH(
        {
            athread_spawn(bcast_get_kernel, &r.a);
            athread_join();
        },
        "kernel 'bcast_mask' CPE 0: athread_get in BCAST_MODE with mask 0: the mask has one bit "
        "per mesh row");
}

TEST_F(Emulator, BcastIntoTooSmallReceiverBlockDies) {
    BcastRun r(256);
    r.a.mask = 0xff;
    r.a.where = 1;
    r.a.issuer_ldm_bytes = 512; // the issuer's block is large enough, the others' are not
    r.a.ldm_bytes = 128;
    athread_emu_set_kernel_name("bcast_small");
    EXPECT_DEATH(
        {
            athread_spawn(bcast_get_kernel, &r.a);
            athread_join();
        },
        "kernel 'bcast_small' CPE 1: athread_get in BCAST_MODE \\(issued by another CPE\\) LDM "
        "side on this receiver \\[0x[0-9a-f]+, 0x[0-9a-f]+\\) \\(256 bytes\\) overruns the LDM "
        "block");
}

} // namespace
