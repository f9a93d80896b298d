/** \file
 * JobModel: see JobModel.h.
 */
#include "dist/JobModel.h"

#include <algorithm>

namespace sw_dist {

double message_seconds(const sw::Machine &m, int a, int b, int64_t bytes) {
    if (a == b)
        return 0;
    const sw::Interconnect &ic = m.interconnect;
    const int per_node = std::max(1, m.core_groups_per_chip);
    const bool same_node = a / per_node == b / per_node;
    const double lat = (same_node ? ic.cg_latency_us : ic.node_latency_us) * 1e-6;
    const double gbps = same_node ? ic.cg_gbps : ic.node_gbps;
    return lat + (gbps > 0 ? double(bytes) / (gbps * 1e9) : 0.0);
}

JobFigures data_parallel(const std::vector<RankFigures> &ranks, const sw::Machine &m) {
    JobFigures j;
    j.ranks = int(ranks.size());
    const int per_node = std::max(1, m.core_groups_per_chip);
    j.nodes = (j.ranks + per_node - 1) / per_node;
    double sum = 0, bytes = 0;
    for (size_t r = 0; r < ranks.size(); r++) {
        j.images += ranks[r].images;
        j.compute_seconds = std::max(j.compute_seconds, ranks[r].modelled_seconds);
        sum += ranks[r].modelled_seconds;
        bytes += double(ranks[r].result_bytes);
    }
    // The gather to rank 0 as a binomial tree (as MPI libraries gather small messages): in
    // round k every rank whose index is an odd multiple of 2^k sends what it has gathered so
    // far (2^k ranks' results, the average taken) to the rank 2^k below it; the rounds run one
    // after another, each as long as one such message (within a node while 2^k < its core
    // groups, between nodes after).
    const double per_rank = ranks.empty() ? 0 : bytes / double(ranks.size());
    for (int64_t step = 1; step < j.ranks; step *= 2) {
        j.comm_seconds += message_seconds(m, int(step), 0, int64_t(per_rank * double(step)));
    }
    j.seconds = j.compute_seconds + j.comm_seconds;
    if (j.seconds > 0) {
        j.images_per_second = double(j.images) / j.seconds;
        j.efficiency = sum / (double(j.ranks) * j.seconds);
    }
    return j;
}

double allgather_seconds(const sw::Machine &m, int ranks, int64_t total_bytes) {
    if (ranks <= 1)
        return 0;
    const int64_t share = (total_bytes + ranks - 1) / ranks;
    double step = 0; // the slowest neighbour link of the ring
    for (int r = 0; r < ranks; r++)
        step = std::max(step, message_seconds(m, r, (r + 1) % ranks, share));
    return double(ranks - 1) * step;
}

void print_job(const std::vector<RankFigures> &ranks, const JobFigures &job, const sw::Machine &m,
               std::FILE *out) {
    std::fprintf(out, "\nrank  core group  images  modelled ms  ms/image\n");
    const int per_node = std::max(1, m.core_groups_per_chip);
    for (size_t r = 0; r < ranks.size(); r++) {
        const RankFigures &f = ranks[r];
        std::fprintf(out, "%4zu  node %d cg %d  %6lld  %11.3f  %8.3f%s\n", r, int(r) / per_node,
                     int(r) % per_node, (long long)f.images, f.modelled_seconds * 1e3,
                     f.images ? f.modelled_seconds * 1e3 / double(f.images) : 0.0,
                     f.images ? "" : "  (idle)");
    }
    std::fprintf(out,
                 "job: %d rank(s) on %d node(s), %lld image(s): modelled %.3f ms (slowest rank "
                 "%.3f ms + results "
                 "to rank 0 %.3f ms), %.1f images/s, scaling efficiency %.3f\n",
                 job.ranks, job.nodes, (long long)job.images, job.seconds * 1e3,
                 job.compute_seconds * 1e3, job.comm_seconds * 1e3, job.images_per_second,
                 job.efficiency);
}

} // namespace sw_dist
