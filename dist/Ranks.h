/** \file
 * One MPI rank per core group: who this process is in the job, and the few collective steps
 * a data-parallel run needs. Built on MPI (SW_HAVE_MPI) when CMake's SW_MPI option is on (the
 * default where Open MPI is found); without it, or when the program was not started by an MPI
 * launcher, the job is this one process (rank 0 of 1) and every call is local.
 */
#ifndef SW_DIST_RANKS_H
#define SW_DIST_RANKS_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sw_dist {

struct Job {
    int rank = 0, size = 1;
    bool mpi = false; ///< MPI was initialised (started by mpirun / an MPI launcher)
    bool multi() const { return size > 1; }
};

/** Starts MPI when the process was launched by an MPI launcher (Open MPI's, or PMI / PMIx
 * environments), else a job of one. Call once, first thing in main. */
Job start(int *argc, char ***argv);

/** Ends MPI (after every rank is done). */
void finish(const Job &job);

/** Ends the whole job at once with \p what ("error: rank R of P: what" on stderr when there
 * are several ranks): MPI_Abort, so no rank is left waiting in a collective step. Without
 * MPI, prints the error and exits 1. */
[[noreturn]] void abort_job(const Job &job, const std::string &what);

/** The contiguous share [first, last) of \p n items that rank \p rank of \p size takes: the
 * first n % size ranks take one more; a rank beyond n takes none. */
std::pair<int64_t, int64_t> share(int64_t n, int rank, int size);

/** Every rank's \p mine, on rank 0 in rank order (other ranks get an empty vector). */
std::vector<std::vector<double>> gather(const Job &job, const std::vector<double> &mine);
std::vector<std::vector<float>> gather(const Job &job, const std::vector<float> &mine);
std::vector<std::vector<int64_t>> gather(const Job &job, const std::vector<int64_t> &mine);

/** Every rank's \p mine on every rank, in rank order. */
std::vector<std::vector<float>> allgather(const Job &job, const std::vector<float> &mine);

/** Waits for every rank. */
void barrier(const Job &job);

} // namespace sw_dist

#endif
