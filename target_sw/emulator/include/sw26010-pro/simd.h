/** \file
 * The SW26010-Pro SIMD intrinsics for the athread emulator, on GCC vector extensions.
 *
 * Mirrors the Pro SDK's <simd.h> (swgcc, -msimd; public copies of it exist) for what the
 * project uses: the names, the parameter types and the return types below are those of the
 * real header, so code that compiles against this header uses the intrinsics as swgcc types
 * them. The real header has one part for the MPE (host) and one for the CPEs (slave); here
 * the side is chosen the way the real compiler chooses it:
 *   -D__sw_slave__ (the real -mslave defines it): the CPE types and intrinsics only; the
 *                  MPE types floatv4 / doublev4 / intv8 do not exist (`floatv4 x;` does not
 *                  compile), nor does simd_loade (see below);
 *   -D__sw_host__  (the real -mhost defines it): the MPE types and a minimal set on them;
 *   neither (or both): a compile error.
 *
 * CPE side (SW26010-Pro.md, "Chip" and "CPE side": 512-bit vectors, floatv8 has 8 lanes):
 *   types        floatv8 (8 x float, 32 bytes), doublev8 (8 x double, 64 bytes), intv16
 *                (16 x int, 64 bytes); the C operators + - * / work on them (GCC vectors,
 *                as with swgcc)
 *   set / splat  simd_set_floatv8(8 floats), simd_set_doublev8(8 doubles),
 *                simd_set_intv16(16 ints); simd_vcpyfs(float) -> floatv8,
 *                simd_vcpyfd(double) -> doublev8, simd_vcpyw(int) -> intv16
 *   arithmetic   simd_vadds / vsubs / vmuls / vdivs (floatv8, floatv8) -> floatv8,
 *                simd_vaddd / vsubd / vmuld / vdivd (doublev8, doublev8) -> doublev8,
 *                simd_vaddw / vsubw (intv16, intv16) -> intv16
 *   multiply-add typed by element type, as on the real machine (a floatv8 given to
 *                simd_vmad, or a doublev8 to simd_vmas, is a compile error):
 *                  simd_vmas / vmss / vnmas / vnmss  floatv8 only   a*b+c, a*b-c, -a*b+c, -a*b-c
 *                  simd_vmad / vmsd / vnmad / vnmsd  doublev8 only  the same for double
 *                computed as a*b+c in C (the real header writes the same expression; whether
 *                the product is rounded before the add follows the compiler's -ffp-contract)
 *   select       simd_vfsellts(a, b, c) (floatv8), simd_vfselltd (doublev8): per lane
 *                a < 0 ? b : c. The Pro names it vfsellts (SW26010: simd_vsellts); the lane
 *                rule is SW26010's vsellt, taken as the Pro's [U] (a NaN or -0 in a picks c)
 *   max / min    simd_smaxs / simd_smins (floatv8), simd_smaxd / simd_smind (doublev8): per
 *                lane a > b ? a : b and a < b ? a : b (NaN and signed-zero handling of the
 *                real instructions not established [U]; here a NaN lane gives b)
 *   load/store   simd_load(x, p), simd_store(x, p): aligned; simd_loadu(x, p),
 *                simd_storeu(x, p): any alignment. As in the real header these are macros
 *                on any vector x: simd_load / simd_loadu assign the vector at p to x and give
 *                x; simd_store / simd_storeu store x at p (the real order: vector first, then
 *                the address). p points to x's element type (float, double, int). The Pro's
 *                alignment for vector loads is not published: the emulator requires the
 *                vector's size (floatv8 32 bytes, doublev8 and intv16 64) [U], and a
 *                misaligned simd_load / simd_store stops the run with
 *                "athread emulator: error: ..." (abort), as the hardware would fault.
 *   simd_loade   not usable: the real header maps it to an MPE-only builtin
 *                (__builtin_sw_host_loade) on both sides, so CPE code using it does not build
 *                with swgcc; here it is a compile error naming simd_vcpyfs, the CPE splat.
 * MPE side (minimal; the project's MPE code does not vectorise): the types floatv4 (4 x
 *   float, 16 bytes), doublev4 (4 x double, 32 bytes), intv8 (8 x int, 32 bytes);
 *   simd_set_floatv4, simd_set_doublev4, simd_set_intv8; simd_load / simd_store /
 *   simd_loadu / simd_storeu on the three (aligned to the vector's size [U]); simd_loade(x, p)
 *   (x = p[0] in every lane; floatv4, doublev4).
 * Lanes: lane i of a vector is element i in memory (GCC vectors; the real simd_print_* print
 * the highest lane first).
 *
 * Emulator detail: floatv8 (32 bytes) and doublev8 / intv16 (64 bytes) have no register on
 * x86 without AVX / AVX-512, and GCC warns (-Wpsabi) at every call passing or returning one
 * by value. So every intrinsic on them is a macro (statement expressions, a GNU extension:
 * Pro CPE code is GNU C, -std=gnu99): no function call takes a vector by value, and each
 * macro checks its argument types at compile time as the real prototypes do (an error names
 * the argument, e.g. argument_2_is_not_a_floatv8), evaluates each argument once, and converts
 * scalar arguments as a prototype would. They cannot be taken as function pointers. C only,
 * like the slave compiler.
 *
 * Left out (unused by the generated code): float16v32 and its intrinsics (simd_vmah, ...,
 * simd_vfcvtsh / simd_vfcvths), uintv16 / int512 / uint512, compares (simd_vfcmp*), the other
 * selects (simd_vfseleqs / vfselles / ...), the shuffles simd_vshfs / simd_vshfd / simd_vshfw
 * (their intv16 control encoding is not public [U]; SW26010's simd_vshff has no floatv8 form),
 * insert / extract (simd_vinsfs*, simd_vextfs*, ...), reductions (simd_reduc_*), sqrt /
 * reciprocal / rsqrt, copy-sign, abs, casts, logic and shifts, integer compare / multiply /
 * divide, simd_load_u / simd_store_u, simd_vcons / vcond / vconw, and simd_print_* /
 * simd_fprint_*. On the MPE side everything but the list above. Register communication
 * (simd_putr / getr ...) does not exist on the Pro (RMA replaces it; see crts.h).
 */
#ifndef ATHREAD_EMULATOR_PRO_SIMD_H
#define ATHREAD_EMULATOR_PRO_SIMD_H

#ifdef __cplusplus
#error "simd.h (SW26010-Pro) is C only (the SW26010-Pro slave compiler takes GNU C)"
#endif

#if !defined(__sw_slave__) && !defined(__sw_host__)
// clang-format off
#error "simd.h (SW26010-Pro): compile CPE code with -D__sw_slave__ (the real -mslave defines it) or MPE code with -D__sw_host__ (-mhost)"
// clang-format on
#endif
#if defined(__sw_slave__) && defined(__sw_host__)
#error "simd.h (SW26010-Pro): define only one of __sw_slave__ (CPE code) and __sw_host__ (MPE code)"
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compile-time checks. SIMD_EMU_PRO_IS: x has type T (qualifiers ignored; x is not
 * evaluated). SIMD_EMU_PRO_REQUIRE(ok, what): a compile error naming `what` unless ok. */
#define SIMD_EMU_PRO_IS(x, T) __builtin_types_compatible_p(__typeof__(x), T)
#define SIMD_EMU_PRO_REQUIRE(ok, what) ((void)sizeof(struct { int what : (ok) ? 1 : -1; }))

/* Stops the run unless p is a multiple of alignment (what: "simd_load", type: "a floatv8"). */
static inline void simd_emu_pro_check_aligned(const void *p, size_t alignment, const char *what,
                                              const char *type) {
    if ((uintptr_t)p % alignment != 0) {
        fprintf(stderr, "athread emulator: error: %s of %s at %p is not %u-byte aligned\n", what,
                type, p, (unsigned)alignment);
        fflush(stderr);
        abort();
    }
}

/* Loads and stores for the vector types of the side (SIMD_EMU_PRO_VECTOR(x): x is one of
 * them; SIMD_EMU_PRO_ELEMENT_OK(x, e): e has x's element type; SIMD_EMU_PRO_NAME(x): "a
 * floatv8" ...; defined below per side). x and p are each evaluated once. */
#define SIMD_EMU_PRO_LOAD(x, p, what, aligned)                                                     \
    ({                                                                                             \
        SIMD_EMU_PRO_REQUIRE(SIMD_EMU_PRO_VECTOR(x), SIMD_EMU_PRO_NOT_A_VECTOR);                   \
        SIMD_EMU_PRO_REQUIRE(SIMD_EMU_PRO_ELEMENT_OK(x, *(p)),                                     \
                             p_does_not_point_to_the_element_type_of_x);                           \
        const void *simd_emu_pro_src = (p);                                                        \
        __typeof__(x) simd_emu_pro_v;                                                              \
        if (aligned)                                                                               \
            simd_emu_pro_check_aligned(simd_emu_pro_src, sizeof simd_emu_pro_v, what,              \
                                       SIMD_EMU_PRO_NAME(x));                                      \
        memcpy(&simd_emu_pro_v, simd_emu_pro_src, sizeof simd_emu_pro_v);                          \
        (x) = simd_emu_pro_v;                                                                      \
    })
#define SIMD_EMU_PRO_STORE(x, p, what, aligned)                                                    \
    ({                                                                                             \
        SIMD_EMU_PRO_REQUIRE(SIMD_EMU_PRO_VECTOR(x), SIMD_EMU_PRO_NOT_A_VECTOR);                   \
        SIMD_EMU_PRO_REQUIRE(SIMD_EMU_PRO_ELEMENT_OK(x, *(p)),                                     \
                             p_does_not_point_to_the_element_type_of_x);                           \
        const __typeof__(x) simd_emu_pro_v = (x);                                                  \
        void *simd_emu_pro_dst = (p);                                                              \
        if (aligned)                                                                               \
            simd_emu_pro_check_aligned(simd_emu_pro_dst, sizeof simd_emu_pro_v, what,              \
                                       SIMD_EMU_PRO_NAME(x));                                      \
        memcpy(simd_emu_pro_dst, &simd_emu_pro_v, sizeof simd_emu_pro_v);                          \
    })

/** x = the vector at p (aligned to the vector's size [U]); gives x. */
#define simd_load(x, p) SIMD_EMU_PRO_LOAD(x, p, "simd_load", 1)
/** x = the vector at p, any alignment; gives x. */
#define simd_loadu(x, p) SIMD_EMU_PRO_LOAD(x, p, "simd_loadu", 0)
/** Stores the vector x at p (aligned as for simd_load). */
#define simd_store(x, p) SIMD_EMU_PRO_STORE(x, p, "simd_store", 1)
/** Stores the vector x at p, any alignment. */
#define simd_storeu(x, p) SIMD_EMU_PRO_STORE(x, p, "simd_storeu", 0)

#ifdef __sw_slave__
/* ======================= CPE (slave) side ======================= */

typedef float floatv8 __attribute__((vector_size(32)));
typedef double doublev8 __attribute__((vector_size(64)));
typedef int intv16 __attribute__((vector_size(64)));

#define SIMD_EMU_PRO_VECTOR(x)                                                                     \
    (SIMD_EMU_PRO_IS(x, floatv8) || SIMD_EMU_PRO_IS(x, doublev8) || SIMD_EMU_PRO_IS(x, intv16))
#define SIMD_EMU_PRO_NOT_A_VECTOR x_is_not_a_floatv8_doublev8_or_intv16
#define SIMD_EMU_PRO_ELEMENT_OK(x, e)                                                              \
    ((SIMD_EMU_PRO_IS(x, floatv8) && SIMD_EMU_PRO_IS(e, float)) ||                                 \
     (SIMD_EMU_PRO_IS(x, doublev8) && SIMD_EMU_PRO_IS(e, double)) ||                               \
     (SIMD_EMU_PRO_IS(x, intv16) && SIMD_EMU_PRO_IS(e, int)))
#define SIMD_EMU_PRO_NAME(x)                                                                       \
    (SIMD_EMU_PRO_IS(x, floatv8)    ? "a floatv8"                                                  \
     : SIMD_EMU_PRO_IS(x, doublev8) ? "a doublev8"                                                 \
                                    : "an intv16")

/* Argument checks: a compile error naming the argument unless it has type T. */
#define SIMD_EMU_PRO_ARGS2(a, b, T, not_T)                                                         \
    (SIMD_EMU_PRO_REQUIRE(SIMD_EMU_PRO_IS(a, T), argument_1_##not_T),                              \
     SIMD_EMU_PRO_REQUIRE(SIMD_EMU_PRO_IS(b, T), argument_2_##not_T))
#define SIMD_EMU_PRO_ARGS3(a, b, c, T, not_T)                                                      \
    (SIMD_EMU_PRO_ARGS2(a, b, T, not_T),                                                           \
     SIMD_EMU_PRO_REQUIRE(SIMD_EMU_PRO_IS(c, T), argument_3_##not_T))
#define SIMD_EMU_PRO_F2(a, b) SIMD_EMU_PRO_ARGS2(a, b, floatv8, is_not_a_floatv8)
#define SIMD_EMU_PRO_F3(a, b, c) SIMD_EMU_PRO_ARGS3(a, b, c, floatv8, is_not_a_floatv8)
#define SIMD_EMU_PRO_D2(a, b) SIMD_EMU_PRO_ARGS2(a, b, doublev8, is_not_a_doublev8)
#define SIMD_EMU_PRO_D3(a, b, c) SIMD_EMU_PRO_ARGS3(a, b, c, doublev8, is_not_a_doublev8)
#define SIMD_EMU_PRO_I2(a, b) SIMD_EMU_PRO_ARGS2(a, b, intv16, is_not_an_intv16)

/* ---- set / splat ---- */
/** floatv8 simd_set_floatv8(float a0, ..., float a7): lane i = ai. */
#define simd_set_floatv8(a0, a1, a2, a3, a4, a5, a6, a7)                                           \
    ((floatv8){(float)(a0), (float)(a1), (float)(a2), (float)(a3), (float)(a4), (float)(a5),       \
               (float)(a6), (float)(a7)})
/** doublev8 simd_set_doublev8(double a0, ..., double a7). */
#define simd_set_doublev8(a0, a1, a2, a3, a4, a5, a6, a7)                                          \
    ((doublev8){(double)(a0), (double)(a1), (double)(a2), (double)(a3), (double)(a4),              \
                (double)(a5), (double)(a6), (double)(a7)})
/** intv16 simd_set_intv16(int a0, ..., int a15). */
#define simd_set_intv16(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15)      \
    ((intv16){(int)(a0), (int)(a1), (int)(a2), (int)(a3), (int)(a4), (int)(a5), (int)(a6),         \
              (int)(a7), (int)(a8), (int)(a9), (int)(a10), (int)(a11), (int)(a12), (int)(a13),     \
              (int)(a14), (int)(a15)})
/** floatv8 simd_vcpyfs(float s): s in every lane. */
#define simd_vcpyfs(s)                                                                             \
    ({                                                                                             \
        const float simd_emu_pro_s = (s);                                                          \
        (floatv8){simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s,                  \
                  simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s};                 \
    })
/** doublev8 simd_vcpyfd(double s). */
#define simd_vcpyfd(s)                                                                             \
    ({                                                                                             \
        const double simd_emu_pro_s = (s);                                                         \
        (doublev8){simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s,                 \
                   simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s};                \
    })
/** intv16 simd_vcpyw(int s). */
#define simd_vcpyw(s)                                                                              \
    ({                                                                                             \
        const int simd_emu_pro_s = (s);                                                            \
        (intv16){simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s,                   \
                 simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s,                   \
                 simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s,                   \
                 simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s, simd_emu_pro_s};                  \
    })

/* ---- arithmetic: floatv8 simd_vadds(floatv8, floatv8) etc. ---- */
#define simd_vadds(a, b) (SIMD_EMU_PRO_F2(a, b), (a) + (b))
#define simd_vsubs(a, b) (SIMD_EMU_PRO_F2(a, b), (a) - (b))
#define simd_vmuls(a, b) (SIMD_EMU_PRO_F2(a, b), (a) * (b))
#define simd_vdivs(a, b) (SIMD_EMU_PRO_F2(a, b), (a) / (b))
#define simd_vaddd(a, b) (SIMD_EMU_PRO_D2(a, b), (a) + (b))
#define simd_vsubd(a, b) (SIMD_EMU_PRO_D2(a, b), (a) - (b))
#define simd_vmuld(a, b) (SIMD_EMU_PRO_D2(a, b), (a) * (b))
#define simd_vdivd(a, b) (SIMD_EMU_PRO_D2(a, b), (a) / (b))
#define simd_vaddw(a, b) (SIMD_EMU_PRO_I2(a, b), (a) + (b))
#define simd_vsubw(a, b) (SIMD_EMU_PRO_I2(a, b), (a) - (b))

/* ---- multiply-add: floatv8 simd_vmas(floatv8 a, floatv8 b, floatv8 c) = a*b+c, ...;
 * doublev8 simd_vmad(doublev8, doublev8, doublev8), ... ---- */
#define simd_vmas(a, b, c) (SIMD_EMU_PRO_F3(a, b, c), (a) * (b) + (c))
#define simd_vmss(a, b, c) (SIMD_EMU_PRO_F3(a, b, c), (a) * (b) - (c))
#define simd_vnmas(a, b, c) (SIMD_EMU_PRO_F3(a, b, c), -((a) * (b)) + (c))
#define simd_vnmss(a, b, c) (SIMD_EMU_PRO_F3(a, b, c), -((a) * (b)) - (c))
#define simd_vmad(a, b, c) (SIMD_EMU_PRO_D3(a, b, c), (a) * (b) + (c))
#define simd_vmsd(a, b, c) (SIMD_EMU_PRO_D3(a, b, c), (a) * (b) - (c))
#define simd_vnmad(a, b, c) (SIMD_EMU_PRO_D3(a, b, c), -((a) * (b)) + (c))
#define simd_vnmsd(a, b, c) (SIMD_EMU_PRO_D3(a, b, c), -((a) * (b)) - (c))

/* Per lane m ? x : y, m the all-ones / all-zeros lanes of a GCC vector compare (C has no
 * vector ?:). T is the vector type; M the compare's integer vector type. */
#define SIMD_EMU_PRO_BLEND(T, m, x, y)                                                             \
    ((T)(((__typeof__(m))(x) & (m)) | ((__typeof__(m))(y) & ~(m))))

/* ---- select: floatv8 simd_vfsellts(floatv8 a, floatv8 b, floatv8 c): a < 0 ? b : c ---- */
#define SIMD_EMU_PRO_SELLT(T, a, b, c)                                                             \
    ({                                                                                             \
        const __typeof__((T){0} < (T){0}) simd_emu_pro_m = (a) < (T){0};                           \
        const T simd_emu_pro_b = (b);                                                              \
        const T simd_emu_pro_c = (c);                                                              \
        SIMD_EMU_PRO_BLEND(T, simd_emu_pro_m, simd_emu_pro_b, simd_emu_pro_c);                     \
    })
#define simd_vfsellts(a, b, c) (SIMD_EMU_PRO_F3(a, b, c), SIMD_EMU_PRO_SELLT(floatv8, a, b, c))
#define simd_vfselltd(a, b, c) (SIMD_EMU_PRO_D3(a, b, c), SIMD_EMU_PRO_SELLT(doublev8, a, b, c))

/* ---- max / min: floatv8 simd_smaxs(floatv8 a, floatv8 b) = a > b ? a : b, ... ---- */
#define SIMD_EMU_PRO_PICK(T, a, b, op)                                                             \
    ({                                                                                             \
        const T simd_emu_pro_a = (a);                                                              \
        const T simd_emu_pro_b = (b);                                                              \
        const __typeof__(simd_emu_pro_a < simd_emu_pro_b) simd_emu_pro_m =                         \
            simd_emu_pro_a op simd_emu_pro_b;                                                      \
        SIMD_EMU_PRO_BLEND(T, simd_emu_pro_m, simd_emu_pro_a, simd_emu_pro_b);                     \
    })
#define simd_smaxs(a, b) (SIMD_EMU_PRO_F2(a, b), SIMD_EMU_PRO_PICK(floatv8, a, b, >))
#define simd_smins(a, b) (SIMD_EMU_PRO_F2(a, b), SIMD_EMU_PRO_PICK(floatv8, a, b, <))
#define simd_smaxd(a, b) (SIMD_EMU_PRO_D2(a, b), SIMD_EMU_PRO_PICK(doublev8, a, b, >))
#define simd_smind(a, b) (SIMD_EMU_PRO_D2(a, b), SIMD_EMU_PRO_PICK(doublev8, a, b, <))

/* ---- simd_loade: MPE only ---- */
#define simd_loade(x, p)                                                                           \
    SIMD_EMU_PRO_REQUIRE(0, simd_loade_is_MPE_only_on_the_SW26010_Pro_use_simd_vcpyfs_on_the_CPE)

#endif /* __sw_slave__ */

#ifdef __sw_host__
/* ======================= MPE (host) side: minimal ======================= */

typedef float floatv4 __attribute__((vector_size(16)));
typedef double doublev4 __attribute__((vector_size(32)));
typedef int intv8 __attribute__((vector_size(32)));

#define SIMD_EMU_PRO_VECTOR(x)                                                                     \
    (SIMD_EMU_PRO_IS(x, floatv4) || SIMD_EMU_PRO_IS(x, doublev4) || SIMD_EMU_PRO_IS(x, intv8))
#define SIMD_EMU_PRO_NOT_A_VECTOR x_is_not_a_floatv4_doublev4_or_intv8
#define SIMD_EMU_PRO_ELEMENT_OK(x, e)                                                              \
    ((SIMD_EMU_PRO_IS(x, floatv4) && SIMD_EMU_PRO_IS(e, float)) ||                                 \
     (SIMD_EMU_PRO_IS(x, doublev4) && SIMD_EMU_PRO_IS(e, double)) ||                               \
     (SIMD_EMU_PRO_IS(x, intv8) && SIMD_EMU_PRO_IS(e, int)))
#define SIMD_EMU_PRO_NAME(x)                                                                       \
    (SIMD_EMU_PRO_IS(x, floatv4)    ? "a floatv4"                                                  \
     : SIMD_EMU_PRO_IS(x, doublev4) ? "a doublev4"                                                 \
                                    : "an intv8")

/** floatv4 simd_set_floatv4(float a, float b, float c, float d) (16 bytes: a function). */
static inline floatv4 simd_set_floatv4(float a, float b, float c, float d) {
    floatv4 v = {a, b, c, d};
    return v;
}
/** doublev4 simd_set_doublev4(double a, ..., double d). */
#define simd_set_doublev4(a, b, c, d)                                                              \
    ((doublev4){(double)(a), (double)(b), (double)(c), (double)(d)})
/** intv8 simd_set_intv8(int a0, ..., int a7). */
#define simd_set_intv8(a0, a1, a2, a3, a4, a5, a6, a7)                                             \
    ((intv8){(int)(a0), (int)(a1), (int)(a2), (int)(a3), (int)(a4), (int)(a5), (int)(a6),          \
             (int)(a7)})
/** x = p[0] in every lane (floatv4, doublev4); gives x. */
#define simd_loade(x, p)                                                                           \
    ({                                                                                             \
        SIMD_EMU_PRO_REQUIRE(SIMD_EMU_PRO_IS(x, floatv4) || SIMD_EMU_PRO_IS(x, doublev4),          \
                             x_is_not_a_floatv4_or_doublev4);                                      \
        SIMD_EMU_PRO_REQUIRE(SIMD_EMU_PRO_ELEMENT_OK(x, *(p)),                                     \
                             p_does_not_point_to_the_element_type_of_x);                           \
        const __typeof__(*(p)) simd_emu_pro_e = *(p);                                              \
        (x) = (__typeof__(x)){simd_emu_pro_e, simd_emu_pro_e, simd_emu_pro_e, simd_emu_pro_e};     \
    })

#endif /* __sw_host__ */

#endif /* ATHREAD_EMULATOR_PRO_SIMD_H */
