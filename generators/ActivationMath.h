/** \file
 * The transformer activations as Halide expressions, shared by `activation`, `dense` and
 * `attention`: erf, GELU (erf form, PyTorch's default), GELU (tanh form), and the exp of a
 * softmax.
 *
 * The generated CPE code may call only what the Sunway slave libm has (expf, tanhf, ...;
 * -lm_slave), and Halide 14's own Halide::erf expands into its bit-level exp (reinterpret
 * casts) that the CPE code generator does not print. erf is a rational function here, with
 * no exp at all (exp is a software routine on the CPE, far dearer than the few multiply-adds
 * it replaces): for |x| <= c = 3.92 (erf(c) is 1 - 8e-9, 1 in float),
 *     erf(x) ~ x P(x^2) / Q(x^2),  P of degree 5, Q of degree 5 with Q(0) = 1,
 * and erf(x) = erf(c) sign(x) beyond (x clamped to [-c, c] first, so no select). The
 * coefficients were fitted for this project by iteratively reweighted linear least squares on
 * the relative error over [0, c] (Q has no root there: Q >= 1); max |error| 2.1e-8 in
 * exact arithmetic; in float32 as the CPE computes it, measured against std::erf at 2e6 points
 * of [-10, 10]: 3.6e-7 (the layers test checks 1e-6, relative beyond 1, for erf and GELU).
 * One division, twelve multiplications and ten additions; on floatv4 too (simd_vdivs).
 *
 * exp(x) for x <= 0 (a softmax's scores less their maximum): exp(x) = exp(x / 32)^32, with
 * exp(x / 32) by its Taylor polynomial of degree 9 (Estrin's scheme) on [-0.75, 0] and five
 * squarings; x is clamped to [-24, 0] first (exp(-24) = 3.8e-11 stands for anything smaller,
 * -inf included: nothing a sum of terms up to 1 can see). Only multiply-adds, so it runs on
 * floatv4 (the CPE's expf is a scalar software routine: ~92 cycles a value on the model,
 * against ~5 for this on vectors). Max relative error in float32 over [-24, 0], measured
 * against double exp at 2e6 points: 7.4e-6 (the squarings multiply the rounding by 32).
 */
#ifndef GENERATORS_ACTIVATION_MATH_H
#define GENERATORS_ACTIVATION_MATH_H

#include "Halide.h"

#include <string>

namespace layers {

/** erf(x) (see the file comment). */
inline Halide::Expr erf_approx(const Halide::Expr &x) {
    const float c = 3.92f;
    const float p0 = 1.1283791611311615f, p1 = 0.1887087792811218f, p2 = 0.0525301227363669f,
                p3 = 0.0036950068498107233f, p4 = 0.0002836795270115544f,
                p5 = 2.067801331856467e-06f;
    const float q1 = 0.5005718064248333f, q2 = 0.11341289366331098f, q3 = 0.014826774134084383f,
                q4 = 0.0011461764898912626f, q5 = 3.8213172835852016e-05f;
    Halide::Expr xc = Halide::clamp(x, -c, c);
    Halide::Expr t = xc * xc;
    // Estrin's scheme (pairs in t, then t^2 and t^4): a dependent chain of 5 operations per
    // polynomial instead of Horner's 10, the rest independent (the CPE's in-order pipeline
    // overlaps them; the timing model bounds a region by its longest chain).
    Halide::Expr t2 = t * t, t4 = t2 * t2;
    Halide::Expr num = (p0 + p1 * t) + t2 * (p2 + p3 * t) + t4 * (p4 + p5 * t);
    Halide::Expr den = (1.f + q1 * t) + t2 * (q2 + q3 * t) + t4 * (q4 + q5 * t);
    return xc * num / den;
}

/** exp(x) for x <= 0 (see the file comment; x > 0 gives 1). */
inline Halide::Expr exp_nonpositive(const Halide::Expr &x) {
    Halide::Expr y = Halide::clamp(x, -24.f, 0.f) * (1.f / 32);
    Halide::Expr y2 = y * y, y4 = y2 * y2, y8 = y4 * y4;
    Halide::Expr p = ((1.f + y) + y2 * (1.f / 2 + y * (1.f / 6))) +
                     y4 * ((1.f / 24 + y * (1.f / 120)) + y2 * (1.f / 720 + y * (1.f / 5040))) +
                     y8 * (1.f / 40320 + y * (1.f / 362880));
    for (int i = 0; i < 5; i++)
        p = p * p;
    return p;
}

/** GELU, erf form: 0.5 x (1 + erf(x / sqrt 2)). */
inline Halide::Expr gelu_erf(const Halide::Expr &x) {
    return 0.5f * x * (1.f + erf_approx(x * 0.70710678118654752f));
}

/** GELU, tanh form: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (tanhf on the CPE). */
inline Halide::Expr gelu_tanh(const Halide::Expr &x) {
    return 0.5f * x * (1.f + Halide::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

/** Applies a named activation: none, relu, gelu, gelu_tanh, tanh or erf; false if unknown. */
inline bool apply_named_activation(const std::string &name, Halide::Expr &v) {
    if (name == "none")
        return true;
    if (name == "relu")
        v = Halide::max(v, 0.f);
    else if (name == "gelu")
        v = gelu_erf(v);
    else if (name == "gelu_tanh")
        v = gelu_tanh(v);
    else if (name == "tanh")
        v = Halide::tanh(v);
    else if (name == "erf")
        v = erf_approx(v);
    else
        return false;
    return true;
}

} // namespace layers

#endif
