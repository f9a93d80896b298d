/** \file
 * mpi_projection: the modelled throughput of a data-parallel job projected from one core
 * group's measured (emulated) time per image to 1-1024 nodes of 4 core groups, with the same
 * job model sw_net uses under mpirun (JobModel.h): every rank runs the same number of
 * images, then the results are gathered on rank 0. A projection, not a run: it assumes
 * identical ranks, no input traffic (each rank reads its own images), no contention beyond
 * the Interconnect parameters (all [U], Machine.h) and one supernode's latency everywhere.
 */
#include "dist/JobModel.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
    double per_image_ms = 0;
    double result_bytes = 4000;
    int images_per_rank = 1, max_nodes = 1024;
    std::string machine = "sw26010";
    CLI::App app{
        "mpi_projection: a data-parallel job's modelled throughput projected to 1-1024 nodes "
        "(4 core groups each) from one core group's time per image"};
    app.add_option("--per-image-ms", per_image_ms,
                   "modelled ms per image on one core group (sw_net's table)")
        ->required()
        ->check(CLI::PositiveNumber);
    app.add_option("--result-bytes", result_bytes,
                   "bytes each image's result sends to rank 0 (default 4000)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--images-per-rank", images_per_rank, "images each rank runs (default 1)")
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--max-nodes", max_nodes, "largest node count (default 1024)")
        ->check(CLI::Range(1, 40960));
    app.add_option("--machine", machine, "sw26010 (default) or sw26010-pro")
        ->check(CLI::IsMember({"sw26010", "sw26010-pro"}));
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    const sw::Machine &m = *sw::machine_by_name(machine);
    const int per_node = m.core_groups_per_chip;
    std::printf(
        "PROJECTION (not a run): %.3f ms per image per core group, %d image(s) per rank, %.0f "
        "result bytes "
        "per image, %d core groups per node, gather to rank 0 by a binomial tree over Machine.h's "
        "interconnect ([U] figures)\n",
        per_image_ms, images_per_rank, result_bytes, per_node);
    std::printf("%6s %6s %8s %10s %12s %10s %10s\n", "nodes", "ranks", "images", "job ms",
                "images/s", "speedup", "efficiency");
    const double one_cg = 1e3 / per_image_ms; // images/s of one core group
    for (int nodes = 1; nodes <= max_nodes; nodes *= 2) {
        const std::vector<sw_dist::RankFigures> ranks(
            size_t(nodes * per_node), {images_per_rank, images_per_rank * per_image_ms * 1e-3,
                                       int64_t(images_per_rank * result_bytes)});
        const sw_dist::JobFigures j = sw_dist::data_parallel(ranks, m);
        std::printf("%6d %6d %8lld %10.3f %12.1f %10.1f %10.3f\n", nodes, j.ranks,
                    (long long)j.images, j.seconds * 1e3, j.images_per_second,
                    j.images_per_second / one_cg, j.efficiency);
    }
    return 0;
}
