/** \file
 * matmul: C = A x B for float32 matrices, A of m x k, B of k x n, C of m x n, all row-major
 * (Halide dims: a(kk, i), b(j, kk), output(j, i)). The hand Sunway schedule is the
 * register-communication GEMM of schedules/matmul_schedule.h (sharing=regcomm), the same with
 * A broadcast to each mesh row by DMA (sharing=dmarow), or the same tiles without sharing
 * (sharing=none).
 */
#include "generators/LayerGenerator.h"
#include "schedules/matmul_schedule.h"

namespace {

using namespace Halide;

class MatMul : public layers::LayerGenerator<MatMul> {
public:
    GeneratorParam<int> m{"m", 64};
    GeneratorParam<int> n{"n", 64};
    GeneratorParam<int> k{"k", 64};
    /** Hand schedule only: regcomm (A along the mesh rows, B down the mesh columns by register
     * communication; SW26010 only) or none (each CPE fetches its own chunks). */
    GeneratorParam<std::string> sharing{"sharing", "regcomm"};
    /** Hand schedule only: the C tile (rows, columns) and the reduction chunk; 0: chosen from
     * the LDM budget. */
    GeneratorParam<int> tile_m{"tile_m", 0};
    GeneratorParam<int> tile_n{"tile_n", 0};
    GeneratorParam<int> tile_k{"tile_k", 0};

    Input<Buffer<float>> a{"a", 2};            // kk, i
    Input<Buffer<float>> b{"b", 2};            // j, kk
    Output<Buffer<float>> output{"output", 2}; // j, i

    void generate() {
        sw::check_param(m >= 1 && n >= 1 && k >= 1, "matmul: m, n and k must be >= 1");
        const std::string how = sharing;
        sw::check_param(how == "regcomm" || how == "dmarow" || how == "none",
                        "matmul: sharing must be regcomm, dmarow or none");
        sw::check_param(tile_m >= 0 && tile_n >= 0 && tile_k >= 0,
                        "matmul: tile_m, tile_n and tile_k must be >= 0");
        /* THE ALGORITHM */
        r = RDom(0, int(k), "r");
        acc(j, i) = 0.f;
        acc(j, i) += a(r, i) * b(j, r);
        output(j, i) = acc(j, i);

        sw::set_dense_shape(a, {int(k), int(m)}, {"k", "m"});
        sw::set_dense_shape(b, {int(n), int(k)}, {"n", "k"});
        sw::set_dense_shape(output, {int(n), int(m)}, {"n", "m"});
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::MatMulStages st{output, acc, a, b, j, i, r};
        const schedules::MatMulShape s{m, n, k};
        const std::string how = sharing;
        const schedules::MatMulTiles given{tile_m, tile_n, tile_k, how != "none", how == "dmarow"};
        apply_schedule([&] { schedules::schedule_matmul_sunway(st, s, target_machine(), given); },
                       [&] {
                           schedules::MatMulTiles plain = given;
                           plain.regcomm = false;
                           schedules::schedule_matmul_sunway(st, s, target_machine(), plain);
                       },
                       [&] { schedules::schedule_matmul_cpu(st); });
    }

private:
    Var j{"j"}, i{"i"};
    Func acc{"acc"};
    RDom r;
};

} // namespace

HALIDE_REGISTER_GENERATOR(MatMul, matmul)
