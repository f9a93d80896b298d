/** \file
 * dist/ without MPI: the shares of a batch over ranks (uneven, more ranks than items) and the
 * job model of a data-parallel run (dist/JobModel.h): its time, throughput and efficiency,
 * messages within a node and between nodes, the binomial-tree gather's rounds, the ring
 * allgather of --fc-split.
 */
#include "dist/JobModel.h"
#include "dist/Ranks.h"

#include <gtest/gtest.h>

namespace {

TEST(Dist, SharesCoverTheItemsInOrder) {
    for (int n : {0, 1, 3, 7, 64}) {
        for (int p : {1, 2, 3, 4, 9}) {
            int64_t next = 0;
            for (int r = 0; r < p; r++) {
                const auto [first, last] = sw_dist::share(n, r, p);
                EXPECT_EQ(first, next) << n << " over " << p;
                EXPECT_GE(last, first);
                EXPECT_LE(last - first, n / p + 1);
                EXPECT_GE(last - first, n / p);
                next = last;
            }
            EXPECT_EQ(next, n) << n << " over " << p;
        }
    }
    EXPECT_EQ(sw_dist::share(3, 0, 2),
              (std::pair<int64_t, int64_t>{0, 2})); // the first rank takes one more
    EXPECT_EQ(sw_dist::share(1, 1, 2), (std::pair<int64_t, int64_t>{1, 1})); // idle
}

TEST(Dist, DataParallelJob) {
    const sw::Machine &m = sw::sw26010();
    const sw::Interconnect &ic = m.interconnect;
    // Within a node and between nodes.
    EXPECT_DOUBLE_EQ(sw_dist::message_seconds(m, 1, 0, 0), ic.cg_latency_us * 1e-6);
    EXPECT_DOUBLE_EQ(sw_dist::message_seconds(m, 4, 0, 0), ic.node_latency_us * 1e-6);
    EXPECT_DOUBLE_EQ(sw_dist::message_seconds(m, 3, 3, 1000), 0.0);
    EXPECT_NEAR(sw_dist::message_seconds(m, 5, 4, 4000000),
                ic.cg_latency_us * 1e-6 + 4e6 / (ic.cg_gbps * 1e9), 1e-12);

    // One rank: no communication, efficiency 1.
    const sw_dist::JobFigures one = sw_dist::data_parallel({{4, 0.08, 400}}, m);
    EXPECT_DOUBLE_EQ(one.seconds, 0.08);
    EXPECT_DOUBLE_EQ(one.comm_seconds, 0.0);
    EXPECT_DOUBLE_EQ(one.images_per_second, 50.0);
    EXPECT_DOUBLE_EQ(one.efficiency, 1.0);

    // 3 images over 2 ranks (2 + 1): the slowest rank plus one gather round within the node.
    const sw_dist::JobFigures two = sw_dist::data_parallel({{2, 0.04, 200}, {1, 0.02, 100}}, m);
    EXPECT_EQ(two.ranks, 2);
    EXPECT_EQ(two.nodes, 1);
    EXPECT_DOUBLE_EQ(two.compute_seconds, 0.04);
    EXPECT_NEAR(two.comm_seconds, sw_dist::message_seconds(m, 1, 0, 150), 1e-15);
    EXPECT_NEAR(two.efficiency, 0.06 / (2 * two.seconds), 1e-12);
    EXPECT_LT(two.efficiency, 0.76);

    // 8 ranks on 2 nodes: rounds of 1 and 2 ranks within the node, then one between nodes.
    const std::vector<sw_dist::RankFigures> eight(8, {1, 0.02, 4000});
    const sw_dist::JobFigures j = sw_dist::data_parallel(eight, m);
    EXPECT_EQ(j.nodes, 2);
    const double rounds = sw_dist::message_seconds(m, 1, 0, 4000) +
                          sw_dist::message_seconds(m, 2, 0, 8000) +
                          sw_dist::message_seconds(m, 4, 0, 16000);
    EXPECT_NEAR(j.comm_seconds, rounds, 1e-15);
    EXPECT_NEAR(j.efficiency, 0.02 / (0.02 + rounds), 1e-12);

    // A ring allgather: P - 1 steps of one share; within a chip for 4 ranks.
    EXPECT_DOUBLE_EQ(sw_dist::allgather_seconds(m, 1, 16384), 0.0);
    EXPECT_NEAR(sw_dist::allgather_seconds(m, 4, 16384),
                3 * sw_dist::message_seconds(m, 1, 0, 4096), 1e-15);
    EXPECT_NEAR(sw_dist::allgather_seconds(m, 8, 16384),
                7 * sw_dist::message_seconds(m, 4, 3, 2048), 1e-15);
}

} // namespace
