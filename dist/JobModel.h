/** \file
 * The modelled time of a job of several ranks, one per core group (Ranks.h): each rank's own
 * modelled time comes from its emulated core group, as for one; the communication between
 * them from the machine's Interconnect (target_sw/Machine.h: MPI latency and bandwidth
 * between the core groups of a chip and between nodes, each with its source or [U]). Rank r
 * runs on node r / core_groups_per_chip, as `bsub -n P -cgsp 64` places them.
 */
#ifndef SW_DIST_JOB_MODEL_H
#define SW_DIST_JOB_MODEL_H

#include "target_sw/Machine.h"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace sw_dist {

/** What one rank did. */
struct RankFigures {
    int64_t images = 0;
    double modelled_seconds = 0; ///< its core group's, from the emulator
    int64_t result_bytes = 0;    ///< what it sends to rank 0 at the end
};

/** The whole job. */
struct JobFigures {
    int ranks = 1, nodes = 1;
    int64_t images = 0;
    double compute_seconds = 0; ///< the slowest rank
    double comm_seconds = 0;    ///< the results gathered on rank 0
    double seconds = 0;         ///< compute + comm
    double images_per_second = 0;
    /** Throughput over P times one core group's (the images over the sum of the ranks'
     * modelled times): 1 when the work is even and communication free. */
    double efficiency = 1;
};

/** Seconds of one MPI message of \p bytes between ranks \p a and \p b. */
double message_seconds(const sw::Machine &m, int a, int b, int64_t bytes);

/** A data-parallel run: the ranks run their images at once, then their results are gathered
 * on rank 0 by a binomial tree (ceil(log2 P) rounds). */
JobFigures data_parallel(const std::vector<RankFigures> &ranks, const sw::Machine &m);

/** An allgather of \p total_bytes (every rank's share together) over ranks 0..P-1, as a
 * ring: P - 1 steps, each one message of a share between neighbours (the slowest link). */
double allgather_seconds(const sw::Machine &m, int ranks, int64_t total_bytes);

/** The per-rank table and the job's line. */
void print_job(const std::vector<RankFigures> &ranks, const JobFigures &job, const sw::Machine &m,
               std::FILE *out);

} // namespace sw_dist

#endif
