/** \file
 * batch_matmul: C[b] = alpha * A[b] x B[b] for a batch of float32 row-major matrices (ONNX
 * MatMul of rank-3 tensors, attention's Q.K^T and scores.V). A is m x k, B is k x n, or with
 * transpose_b n x k (B^T stored row-major); C is m x n. Halide dims: a(kk, i, ba) with extents
 * (k, m, a_batch); b(j, kk, bb) with extents (n, k, b_batch), or with transpose_b b(kk, j, bb)
 * with extents (k, n, b_batch); output(j, i, bb) with extents (n, m, batch). a_batch and
 * b_batch are 0 (= batch), 1 (that operand shared by every batch: numpy broadcasting) or
 * batch. Schedules: schedules/batch_matmul_schedule.h.
 */
#include "generators/LayerGenerator.h"
#include "schedules/batch_matmul_schedule.h"

namespace {

using namespace Halide;

class BatchMatMul : public layers::LayerGenerator<BatchMatMul> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> m{"m", 64};
    GeneratorParam<int> n{"n", 64};
    GeneratorParam<int> k{"k", 64};
    /** The batch extent of A and of B: 0 = batch, 1 = shared by every batch, or batch. */
    GeneratorParam<int> a_batch{"a_batch", 0};
    GeneratorParam<int> b_batch{"b_batch", 0};
    GeneratorParam<bool> transpose_b{"transpose_b", false};
    GeneratorParam<float> alpha{"alpha", 1.0f};
    /** Hand schedule only: the C tile (rows, columns) and the reduction chunk; 0: chosen from
     * the machine (schedules/batch_matmul_schedule.h). */
    GeneratorParam<int> tile_m{"tile_m", 0};
    GeneratorParam<int> tile_n{"tile_n", 0};
    GeneratorParam<int> tile_k{"tile_k", 0};

    Input<Buffer<float>> a{"a", 3};            // kk, i, ba
    Input<Buffer<float>> b{"b", 3};            // j, kk, bb (transpose_b: kk, j, bb)
    Output<Buffer<float>> output{"output", 3}; // j, i, bb

    void generate() {
        const schedules::BatchMatMulShape s = shape();
        sw::check_param(s.batch >= 1 && s.m >= 1 && s.n >= 1 && s.k >= 1,
                        "batch_matmul: batch, m, n and k must be >= 1");
        sw::check_param(tile_m >= 0 && tile_n >= 0 && tile_k >= 0,
                        "batch_matmul: tile_m, tile_n and tile_k must be >= 0");
        const int ab = operand_batch(a_batch, "a_batch"), bbt = operand_batch(b_batch, "b_batch");
        /* THE ALGORITHM */
        r = RDom(0, s.k, "r");
        // An operand with a batch extent of 1 is shared by every batch.
        const Expr ai = ab == 1 ? Expr(0) : Expr(bb), bi = bbt == 1 ? Expr(0) : Expr(bb);
        acc(j, i, bb) = 0.f;
        if (s.transpose_b && !autoscheduled()) {
            // B^T seen as B (j, kk): inlined, or transposed in LDM by the hand schedule. (The
            // autoscheduler reads B^T directly: its plans vectorise the dot products along
            // the reduction instead.)
            bt(j, kk, bb) = b(kk, j, bi);
            acc(j, i, bb) += a(r, i, ai) * bt(j, r, bb);
        } else if (s.transpose_b) {
            acc(j, i, bb) += a(r, i, ai) * b(r, j, bi);
        } else {
            acc(j, i, bb) += a(r, i, ai) * b(j, r, bi);
        }
        if (float(alpha) != 1.0f)
            acc(j, i, bb) = acc(j, i, bb) * alpha;
        output(j, i, bb) = acc(j, i, bb);

        sw::set_dense_shape(a, {s.k, s.m, ab}, {"k", "m", "a_batch"});
        if (s.transpose_b)
            sw::set_dense_shape(b, {s.k, s.n, bbt}, {"k", "n", "b_batch"});
        else
            sw::set_dense_shape(b, {s.n, s.k, bbt}, {"n", "k", "b_batch"});
        sw::set_dense_shape(output, {s.n, s.m, s.batch}, {"n", "m", "batch"});
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::BatchMatMulStages st{output, acc, a, b, bt, j, i, bb, r};
        apply_schedule(
            [&] {
                schedules::schedule_batch_matmul_sunway(st, shape(), target_machine(),
                                                        {tile_m, tile_n, tile_k});
            },
            [&] { schedules::schedule_batch_matmul_baseline(st, shape(), target_machine()); },
            [&] { schedules::schedule_batch_matmul_cpu(st); });
    }

private:
    Var j{"j"}, i{"i"}, bb{"bb"}, kk{"kk"};
    Func acc{"acc"}, bt{"bt"};
    RDom r;

    schedules::BatchMatMulShape shape() const { return {batch, m, n, k, transpose_b}; }

    /** The batch extent of an operand: \p v, 0 meaning batch; must be 1 or batch. */
    int operand_batch(int v, const std::string &name) const {
        const int e = v == 0 ? int(batch) : v;
        sw::check_param(e == 1 || e == int(batch),
                        "batch_matmul: " + name + "=" + std::to_string(v) +
                            " must be 0 (= batch), 1 or batch=" + std::to_string(int(batch)));
        return e;
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(BatchMatMul, batch_matmul)
