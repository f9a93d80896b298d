/** \file
 * gather: an embedding lookup (ONNX Gather, axis 0, on a constant table).
 *   rows   N, the number of indices
 *   vocab  V, the table's rows
 *   size   D, the elements of a row
 * Inputs "table" float (D, V) (Halide dims, d fastest: a row-major [V][D] table) and
 * "indices" int64 (N); output "output" float (D, N):
 *   output(d, n) = table(d, i),  i = indices(n) (+ V where negative), clamped to [0, V - 1]
 * The clamp is for memory safety only (the caller checks the ranges beforehand). Pure data
 * movement (no arithmetic on the values).
 */
#include "generators/LayerGenerator.h"
#include "schedules/transpose_schedule.h"

namespace {

using namespace Halide;

class Gather : public layers::LayerGenerator<Gather> {
public:
    GeneratorParam<int> rows{"rows", 4};
    GeneratorParam<int> vocab{"vocab", 16};
    GeneratorParam<int> size{"size", 8};

    Input<Buffer<float>> table{"table", 2};       // d, v
    Input<Buffer<int64_t>> indices{"indices", 1}; // n
    Output<Buffer<float>> output{"output", 2};    // d, n

    void generate() {
        sw::check_param(rows >= 1 && vocab >= 1 && size >= 1,
                        "gather: rows, vocab and size must be >= 1");
        /* THE ALGORITHM */
        Expr i = indices(n);
        i = select(i < 0, i + cast<int64_t>(int(vocab)), i);
        Expr row = cast<int>(clamp(i, cast<int64_t>(0), cast<int64_t>(int(vocab) - 1)));
        fetched(d, n) = table(d, row); // per index: the row's elements, by one DMA get
        result(d, n) = fetched(d, n);
        output(d, n) = result(d, n);

        sw::set_dense_shape(table, {size, vocab}, {"size", "vocab"});
        sw::set_dense_shape(indices, {rows}, {"rows"});
        sw::set_dense_shape(output, {size, rows}, {"size", "rows"});
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::GatherStages st{output, result, fetched, indices, d, n};
        const schedules::GatherShape s{rows, vocab, size};
        apply_schedule([&] { schedules::schedule_gather_sunway(st, s, target_machine()); },
                       [&] { schedules::schedule_gather_baseline(st, s, target_machine()); },
                       [&] { schedules::schedule_gather_cpu(st); });
    }

private:
    Var d{"d"}, n{"n"};
    Func result{"result"}, fetched{"fetched"};
};

} // namespace

HALIDE_REGISTER_GENERATOR(Gather, gather)
