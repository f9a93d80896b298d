/** \file
 * Ranks: see Ranks.h.
 */
#include "dist/Ranks.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#ifdef SW_HAVE_MPI
#include <mpi.h>
#endif

namespace sw_dist {

namespace {

bool launched_by_mpi() {
    for (const char *v :
         {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK", "MPI_LOCALNRANKS"}) {
        if (std::getenv(v))
            return true;
    }
    return false;
}

#ifdef SW_HAVE_MPI
template <typename T> MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<double>() {
    return MPI_DOUBLE;
}
template <> MPI_Datatype mpi_type<float>() {
    return MPI_FLOAT;
}
template <> MPI_Datatype mpi_type<int64_t>() {
    return MPI_INT64_T;
}
#endif

/** Every rank's \p mine in rank order, on rank 0 (MPI_Gatherv) or, \p everywhere, on every
 * rank (MPI_Allgatherv); the ranks that receive nothing get an empty vector. */
template <typename T>
std::vector<std::vector<T>> gather_any(const Job &job, const std::vector<T> &mine,
                                       bool everywhere) {
    std::vector<std::vector<T>> all;
    if (!job.mpi || job.size == 1) {
        all.push_back(mine);
        return all;
    }
#ifdef SW_HAVE_MPI
    const int count = int(mine.size());
    std::vector<int> counts(size_t(job.size)), displs(size_t(job.size));
    if (everywhere) {
        MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    } else {
        MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    const bool receives = everywhere || job.rank == 0;
    std::vector<T> flat;
    if (receives) {
        int at = 0;
        for (int r = 0; r < job.size; r++)
            displs[size_t(r)] = at, at += counts[size_t(r)];
        flat.resize(static_cast<size_t>(at));
    }
    if (everywhere) {
        MPI_Allgatherv(mine.data(), count, mpi_type<T>(), flat.data(), counts.data(), displs.data(),
                       mpi_type<T>(), MPI_COMM_WORLD);
    } else {
        MPI_Gatherv(mine.data(), count, mpi_type<T>(), flat.data(), counts.data(), displs.data(),
                    mpi_type<T>(), 0, MPI_COMM_WORLD);
    }
    if (receives) {
        for (int r = 0; r < job.size; r++) {
            all.emplace_back(flat.begin() + displs[size_t(r)],
                             flat.begin() + displs[size_t(r)] + counts[size_t(r)]);
        }
    }
#endif
    return all;
}

} // namespace

Job start(int *argc, char ***argv) {
    Job job;
#ifdef SW_HAVE_MPI
    if (launched_by_mpi()) {
        MPI_Init(argc, argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &job.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &job.size);
        job.mpi = true;
    }
#else
    (void)argc, (void)argv;
    if (launched_by_mpi()) {
        std::fprintf(stderr,
                     "note: started by an MPI launcher, but this build has no MPI (SW_MPI=OFF): "
                     "every process runs the whole job alone\n");
    }
#endif
    return job;
}

void finish(const Job &job) {
#ifdef SW_HAVE_MPI
    if (job.mpi)
        MPI_Finalize();
#else
    (void)job;
#endif
}

void abort_job(const Job &job, const std::string &what) {
    const std::string msg = what.rfind("error: ", 0) == 0 ? what.substr(7) : what;
    if (job.multi()) {
        std::fprintf(stderr, "error: rank %d of %d: %s\n", job.rank, job.size, msg.c_str());
    } else {
        std::fprintf(stderr, "error: %s\n", msg.c_str());
    }
    std::fflush(stderr);
#ifdef SW_HAVE_MPI
    if (job.mpi)
        MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    std::exit(1);
}

std::pair<int64_t, int64_t> share(int64_t n, int rank, int size) {
    const int64_t base = n / size, extra = n % size;
    const int64_t first = rank * base + std::min<int64_t>(rank, extra);
    return {first, first + base + (rank < extra ? 1 : 0)};
}

std::vector<std::vector<double>> gather(const Job &job, const std::vector<double> &mine) {
    return gather_any(job, mine, false);
}
std::vector<std::vector<float>> gather(const Job &job, const std::vector<float> &mine) {
    return gather_any(job, mine, false);
}
std::vector<std::vector<int64_t>> gather(const Job &job, const std::vector<int64_t> &mine) {
    return gather_any(job, mine, false);
}

std::vector<std::vector<float>> allgather(const Job &job, const std::vector<float> &mine) {
    return gather_any(job, mine, true);
}

void barrier(const Job &job) {
#ifdef SW_HAVE_MPI
    if (job.mpi)
        MPI_Barrier(MPI_COMM_WORLD);
#else
    (void)job;
#endif
}

} // namespace sw_dist
