/** \file
 * attention: fused scaled dot-product attention of a transformer's heads, one layer for
 * batch_matmul (Q.K^T), the mask's eltwise, softmax and batch_matmul (P.V) and the heads'
 * transposes. For each batch b and head h:
 *   scores[m][n] = alpha * sum_d q[b][m][h][d] * k[b][n][h][d]
 *   mask=add:    scores[m][n] += mask[b'][h'][m'][n]     (b' = b or 0, h' = h or 0, m' = m or 0)
 *   mask=select: scores[m][n] = mask[b'][h'][m'][n] != 0 ? scores[m][n] : fill
 *   p[m][n] = exp(scores[m][n] - max_n scores[m][.]) / sum_n exp(...)  (softmax_generator's form;
 *             exp by layers::exp_nonpositive, a polynomial within 7.4e-6, and a reciprocal)
 *   out[b][m][h][d] = sum_n p[m][n] * v[b][n][h][d]
 * Inputs (Halide dims, x fastest) q (D, H, M, B), k (D, H, N, B), v (D, H, N, B): row-major
 * (B, S, H, D), a projection's output after Reshape(B, S, H, D), no transposes; mask
 * `attn_mask` (N, mask_rows, mask_heads, mask_batch), a 1x1x1x1 dummy (not read) with
 * mask=none (named so because Halide refuses an input named like the parameter `mask`). Output
 * (D, H, M, B): row-major (B, M, H, D), so Reshape(B, M, H*D) is free.
 * Schedules: schedules/attention_schedule.h (the score rows stay in LDM).
 */
#include "generators/ActivationMath.h"
#include "generators/LayerGenerator.h"
#include "schedules/attention_schedule.h"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace {

using namespace Halide;

class Attention : public layers::LayerGenerator<Attention> {
public:
    GeneratorParam<int> batch{"batch", 1};        ///< B
    GeneratorParam<int> heads{"heads", 1};        ///< H
    GeneratorParam<int> seq_q{"seq_q", 64};       ///< M, query rows
    GeneratorParam<int> seq_k{"seq_k", 64};       ///< N, key / value rows
    GeneratorParam<int> head_dim{"head_dim", 64}; ///< D
    GeneratorParam<float> alpha{"alpha", 1.0f};
    /** none | add (scores += mask) | select (mask != 0 ? scores : fill). */
    GeneratorParam<std::string> mask_kind{"mask", "none"};
    /** mask=select: the value of masked scores; a number, inf or -inf. */
    GeneratorParam<std::string> fill{"fill", "0"};
    /** The mask's extents: each 1 (broadcast) or the scores' (B, H, M). */
    GeneratorParam<int> mask_batch{"mask_batch", 1};
    GeneratorParam<int> mask_heads{"mask_heads", 1};
    GeneratorParam<int> mask_rows{"mask_rows", 1};

    Input<Buffer<float>> q{"q", 4}; // d, h, m, b
    Input<Buffer<float>> k{"k", 4}; // d, h, n, b
    Input<Buffer<float>> v{"v", 4}; // d, h, n, b
    /** Named attn_mask: Halide refuses an input named like the GeneratorParam `mask`. */
    Input<Buffer<float>> mask{"attn_mask", 4}; // n, m', h', b'
    Output<Buffer<float>> output{"output", 4}; // d, h, m, b

    void generate() {
        const schedules::AttentionShape s = shape();
        sw::check_param(s.batch >= 1 && s.heads >= 1 && s.m >= 1 && s.n >= 1 && s.d >= 1,
                        "attention: batch, heads, seq_q, seq_k and head_dim must be >= 1");
        const std::string kind = mask_kind;
        sw::check_param(kind == "none" || kind == "add" || kind == "select",
                        "attention: mask must be none, add or select, not '" + kind + "'");
        auto check_extent = [](int v, int full, const std::string &name, const std::string &of) {
            sw::check_param(v == 1 || v == full, "attention: " + name + "=" + std::to_string(v) +
                                                     " must be 1 or " + of + "=" +
                                                     std::to_string(full));
        };
        check_extent(mask_batch, s.batch, "mask_batch", "batch");
        check_extent(mask_heads, s.heads, "mask_heads", "heads");
        check_extent(mask_rows, s.m, "mask_rows", "seq_q");
        const std::string fill_text = fill;
        char *end = nullptr;
        const float fill_value = std::strtof(fill_text.c_str(), &end);
        sw::check_param(!fill_text.empty() && end && *end == '\0' && !std::isnan(fill_value),
                        "attention: fill must be a number, inf or -inf, not '" + fill_text + "'");

        /* THE ALGORITHM */
        rd = RDom(0, s.d, "rd");
        rn = RDom(0, s.n, "rn");
        // The hand schedule transposes K's chunk in LDM (kt) to run the product on floatv4
        // along n; otherwise kt is inlined.
        // Clamped for the hand schedule, whose last chunk of keys may run past N on floatv4
        // (those scores are never read).
        kt(n, d, h, b) = k(d, h, autoscheduled() ? Expr(n) : min(n, s.n - 1), b);
        dot(n, m, h, b) = 0.f;
        dot(n, m, h, b) += q(rd, h, m, b) * kt(n, rd, h, b);
        // The scores (inlined into the max and the exponentials).
        Expr score = dot(n, m, h, b);
        if (float(alpha) != 1.0f)
            score = score * alpha;
        const Expr mb = mask_batch == 1 ? Expr(0) : Expr(b),
                   mh = mask_heads == 1 ? Expr(0) : Expr(h),
                   mm = mask_rows == 1 ? Expr(0) : Expr(m);
        if (kind == "add")
            score = score + mask(n, mm, mh, mb);
        else if (kind == "select")
            score = select(mask(n, mm, mh, mb) != 0.f, score, fill_value);
        scores(n, m, h, b) = score;
        // softmax_generator's numerically stable form.
        maxv(m, h, b) = -std::numeric_limits<float>::infinity();
        maxv(m, h, b) = max(maxv(m, h, b), scores(rn, m, h, b));
        // exp of a non-positive value by multiply-adds (on floatv4: ActivationMath.h); the
        // row's sum turned into its reciprocal once, each probability a multiplication.
        exps(n, m, h, b) = layers::exp_nonpositive(scores(n, m, h, b) - maxv(m, h, b));
        sum(m, h, b) = 0.f;
        sum(m, h, b) += exps(rn, m, h, b);
        sum(m, h, b) = 1.f / sum(m, h, b);
        p(n, m, h, b) = exps(n, m, h, b) * sum(m, h, b);
        acc(d, h, m, b) = 0.f;
        acc(d, h, m, b) += p(rn, m, h, b) * v(d, h, rn, b);
        output(d, h, m, b) = acc(d, h, m, b);

        sw::set_dense_shape(q, {s.d, s.heads, s.m, s.batch},
                            {"head_dim", "heads", "seq_q", "batch"});
        sw::set_dense_shape(k, {s.d, s.heads, s.n, s.batch},
                            {"head_dim", "heads", "seq_k", "batch"});
        sw::set_dense_shape(v, {s.d, s.heads, s.n, s.batch},
                            {"head_dim", "heads", "seq_k", "batch"});
        if (kind == "none")
            sw::set_dense_shape(mask, {1, 1, 1, 1});
        else
            sw::set_dense_shape(mask, {s.n, int(mask_rows), int(mask_heads), int(mask_batch)},
                                {"seq_k", "mask_rows", "mask_heads", "mask_batch"});
        sw::set_dense_shape(output, {s.d, s.heads, s.m, s.batch},
                            {"head_dim", "heads", "seq_q", "batch"});
    }

    void schedule() {
        /* THE SCHEDULE */
        const bool masked = std::string(mask_kind) != "none";
        schedules::AttentionStages st{output, acc,  p, sum, exps, maxv, scores, dot, kt, q,     k,
                                      v,      mask, d, h,   m,    n,    b,      rd,  rn, masked};
        st.select_mask = std::string(mask_kind) == "select";
        apply_schedule(
            [&] { schedules::schedule_attention_sunway(st, shape(), target_machine()); },
            [&] { schedules::schedule_attention_baseline(st, shape(), target_machine()); },
            [&] { schedules::schedule_attention_cpu(st); });
    }

private:
    Var d{"d"}, h{"h"}, m{"m"}, n{"n"}, b{"b"};
    Func kt{"kt"}, dot{"dot"}, scores{"scores"}, maxv{"maxv"}, exps{"exps"}, sum{"sum"}, p{"p"},
        acc{"acc"};
    RDom rd, rn;

    schedules::AttentionShape shape() const {
        return {batch, heads, seq_q, seq_k, head_dim, int(mask_rows)};
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Attention, attention)
