/** \file
 * The transformer activations as Halide expressions, shared by `activation` and `dense`:
 * erf, GELU (erf form, PyTorch's default) and GELU (tanh form).
 *
 * The generated CPE code may call only what the Sunway slave libm has (expf, tanhf, ...;
 * -lm_slave), and Halide 14's own Halide::erf expands into its bit-level exp
 * (reinterpret casts) that the CPE code generator does not print. So erf is built here from
 * expf: Abramowitz & Stegun 7.1.26, for a = |x|,
 *     erfc(a) ~ q(a) = t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) exp(-a^2),  t = 1 / (1 + p a)
 *     erf(x) = sign(x) (1 - q(|x|))
 * (|error| <= 1.5e-7 in exact arithmetic; in float32 as the CPE computes it, measured against
 * std::erf at 2e7 points of [-10, 10]: max |error| 6.3e-7 for erf (near 0, where 1 - q
 * cancels), 4.2e-7 for GELU). GELU uses q directly where x < 0, 0.5 x q(|x| / sqrt 2),
 * so that its left tail is not 1 - erf cancelling (relative accuracy where GELU is tiny).
 * A NaN in gives NaN out. Scalar only (the CPE code generator has no vector select/divide;
 * the schedules that use these do not vectorise them).
 */
#ifndef GENERATORS_ACTIVATION_MATH_H
#define GENERATORS_ACTIVATION_MATH_H

#include "Halide.h"

#include <string>

namespace layers {

/** erfc(a) for a >= 0 (A&S 7.1.26), with one division: t (a1 + t (a2 + ...)) =
 * P(u) / u^5, u = 1 + p a, P(u) = (((a1 u + a2) u + a3) u + a4) u + a5 (Halide's CSE does not
 * share 1 / u, so the Horner form in t divided five times). u is taken at min(a, 10) (u^5
 * stays finite; exp(-a^2) is below float's range there anyway). */
inline Halide::Expr erfc_nonnegative(const Halide::Expr &a) {
    const float p = 0.3275911f, a1 = 0.254829592f, a2 = -0.284496736f, a3 = 1.421413741f,
                a4 = -1.453152027f, a5 = 1.061405429f;
    Halide::Expr u = 1.f + p * Halide::min(a, 10.f);
    Halide::Expr poly = (((a1 * u + a2) * u + a3) * u + a4) * u + a5;
    return Halide::exp(-(a * a)) * poly / (u * u * u * u * u);
}

/** erf(x) (see the file comment). */
inline Halide::Expr erf_approx(const Halide::Expr &x) {
    Halide::Expr y = 1.f - erfc_nonnegative(Halide::abs(x));
    return Halide::select(x < 0.f, -y, y);
}

/** GELU, erf form: 0.5 x (1 + erf(x / sqrt 2)). */
inline Halide::Expr gelu_erf(const Halide::Expr &x) {
    Halide::Expr q = erfc_nonnegative(Halide::abs(x) * 0.70710678118654752f);
    return 0.5f * x * Halide::select(x < 0.f, q, 2.f - q);
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
