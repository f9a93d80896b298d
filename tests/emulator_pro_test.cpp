/** \file
 * The athread emulator on the SW26010-Pro (include/sw26010-pro headers, machine
 * "sw26010-pro"): CRTS DMA with reply counters and gap strides, column-broadcast DMA, RMA row
 * broadcasts and gets between LDMs, floatv8 arithmetic, the timing model's RMA waits, and the
 * errors of misused RMA, of waits that can never end and of the CRTS API on SW26010. Host code
 * with the Pro's athread.h (built with -D__sw_host__; in C++ athread_spawn takes the
 * slave_ function itself).
 * References: plain loops on the host.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "athread.h"
#include "athread_emu.h"
#include "emulator_pro_kernels.h"

extern "C" {
void SLAVE_FUN(pro_axpy_kernel)(void *);
void SLAVE_FUN(pro_rma_kernel)(void *);
void SLAVE_FUN(pro_colcast_kernel)(void *);
void SLAVE_FUN(pro_misuse_kernel)(void *);
}

namespace {

class EmulatorPro : public ::testing::Test {
protected:
    void SetUp() override {
        GTEST_FLAG_SET(death_test_style, "threadsafe");
        athread_emu_set_machine("sw26010-pro");
        athread_emu_stats_reset();
        athread_init();
    }
    void TearDown() override { athread_emu_set_machine("sw26010"); }
    const athread_emu_kernel_stats &last() {
        const int n = athread_emu_stats_count();
        EXPECT_GT(n, 0);
        return *athread_emu_stats_get(n - 1);
    }
};

TEST_F(EmulatorPro, StridedDmaAndFloatV8MultiplyAdd) {
    // Rows that do not fill the pitch: the gaps must stay untouched.
    for (const int cols : {8, 24, 64}) {
        const int rows = 256, pitch = cols + 5;
        std::vector<float> x(static_cast<size_t>(rows) * pitch), y(x.size()), want(x.size());
        for (size_t i = 0; i < x.size(); i++) {
            x[i] = static_cast<float>(i % 97) * 0.25f;
            y[i] = static_cast<float>(i % 31) - 7.0f;
        }
        pro_axpy_args a{x.data(), y.data(), 1.5f, rows, cols, pitch};
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < pitch; c++) {
                const size_t i = static_cast<size_t>(r) * pitch + c;
                want[i] = c < cols ? y[i] + a.alpha * x[i] : y[i];
            }
        athread_emu_register_buffer("x", x.data(), x.size() * sizeof(float));
        athread_emu_register_buffer("y", y.data(), y.size() * sizeof(float));
        athread_emu_register_buffer("args", &a, sizeof a);
        athread_spawn(SLAVE_FUN(pro_axpy_kernel), &a);
        athread_join();
        for (size_t i = 0; i < y.size(); i++)
            ASSERT_FLOAT_EQ(y[i], want[i]) << "cols " << cols << " element " << i;
        const athread_emu_kernel_stats &s = last();
        EXPECT_STREQ(s.machine, "sw26010-pro");
        // CPE 0: its argument, then per row pair two strided gets of 2 blocks and one put.
        EXPECT_EQ(s.cpe[0].get_requests, 1 + 2 * (rows / 128));
        EXPECT_EQ(s.cpe[0].get_blocks, 1 + 4 * (rows / 128));
        EXPECT_EQ(s.cpe[0].put_bytes, (rows / 128) * 2 * cols * 4);
        EXPECT_GT(s.modelled_seconds, 0);
    }
}

TEST_F(EmulatorPro, RmaRowBroadcastAndGet) {
    for (const int root : {0, 5}) {
        std::vector<float> out(64 * 32, -1.0f);
        pro_rma_args a;
        std::memset(&a, 0, sizeof a);
        a.out = out.data();
        a.root = root;
        athread_spawn(SLAVE_FUN(pro_rma_kernel), &a);
        athread_join();
        for (int t = 0; t < 64; t++) {
            for (int i = 0; i < 16; i++) {
                ASSERT_EQ(out[t * 32 + i], static_cast<float>((t / 8) * 100 + i)) << "CPE " << t;
                ASSERT_EQ(out[t * 32 + 16 + i], static_cast<float>((t ^ 1) * 1000 + i))
                    << "CPE " << t;
            }
            // The broadcast counted once on every CPE of the row (the issuer included), the
            // neighbour's read once more.
            EXPECT_EQ(a.bcast_reply[t], 2) << "CPE " << t;
        }
        // Timing: the receivers wait for the broadcast's data (Machine.h Rma, [U]).
        const athread_emu_kernel_stats &s = last();
        const int receiver = root == 0 ? 1 : 0;
        EXPECT_GT(s.cpe[receiver].regcomm_wait_cycles, 0);
    }
}

TEST_F(EmulatorPro, ColumnBroadcastDma) {
    std::vector<float> in(8 * 16), out(64 * 16, -1.0f);
    for (size_t i = 0; i < in.size(); i++)
        in[i] = static_cast<float>(i) + 0.5f;
    pro_colcast_args a{in.data(), out.data()};
    athread_spawn(SLAVE_FUN(pro_colcast_kernel), &a);
    athread_join();
    for (int t = 0; t < 64; t++)
        for (int i = 0; i < 16; i++)
            ASSERT_EQ(out[t * 16 + i], in[(t % 8) * 16 + i]) << "CPE " << t;
    // One request per column, by its row-0 CPE: the bytes cross the channel once per column.
    const athread_emu_kernel_stats &s = last();
    EXPECT_EQ(s.cpe[3].get_bytes, static_cast<long long>(sizeof a + 16 * sizeof(float)));
    EXPECT_EQ(s.cpe[11].get_bytes, static_cast<long long>(sizeof a));
}

TEST_F(EmulatorPro, MisusedRmaAndEndlessWaitsStop) {
    pro_misuse_args a{9, 1};
    EXPECT_DEATH(
        {
            athread_spawn(SLAVE_FUN(pro_misuse_kernel), &a);
            athread_join();
        },
        "athread emulator: error: kernel '.*' CPE 9: CRTS_rma_iput: local LDM address .* is not "
        "4-byte aligned");
    a.what = 2;
    EXPECT_DEATH(
        {
            athread_spawn(SLAVE_FUN(pro_misuse_kernel), &a);
            athread_join();
        },
        "CPE 9: CRTS_rma_iput of 6 bytes: the length must be a positive multiple of 4");
    a.what = 3;
    EXPECT_DEATH(
        {
            athread_spawn(SLAVE_FUN(pro_misuse_kernel), &a);
            athread_join();
        },
        "deadlock in reply-word waits .*CPE 9 in CRTS_\\*_wait_value \\(its reply word .* is 1, "
        "it waits for 2\\)");
}

TEST_F(EmulatorPro, CrtsApiOnSw26010Stops) {
    athread_emu_set_machine("sw26010");
    pro_colcast_args a{nullptr, nullptr};
    EXPECT_DEATH(
        {
            athread_spawn(SLAVE_FUN(pro_colcast_kernel), &a);
            athread_join();
        },
        "on sw26010: the CRTS DMA / RMA API is the SW26010-Pro's");
}

TEST_F(EmulatorPro, HaltIsANoOp) {
    athread_halt(); // the Pro's is a macro doing nothing
    std::vector<float> in(8 * 16, 1.0f), out(64 * 16);
    pro_colcast_args a{in.data(), out.data()};
    athread_spawn(SLAVE_FUN(pro_colcast_kernel), &a); // still initialised
    athread_join();
    EXPECT_EQ(out[63 * 16], 1.0f);
}

} // namespace
