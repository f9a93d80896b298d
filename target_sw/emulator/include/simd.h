/** \file
 * The SW26010 CPE SIMD intrinsics for the athread emulator, on GCC vector extensions.
 *
 * Mirrors sw5cc's <simd.h> for the SW26010 CPE (SW5; compile with -msimd): the names and
 * the parameter and return types below are those of the real header, so that code which
 * compiles against this header uses the intrinsics as sw5cc types them. In particular the
 * multiply-adds are typed by element type, as on the real machine:
 *   simd_vmas / simd_vmss / simd_vnmas / simd_vnmss   floatv4 only   a*b+c, a*b-c, -a*b+c, -a*b-c
 *   simd_vmad / simd_vmsd / simd_vnmad / simd_vnmsd   doublev4 only  the same for double
 * and a floatv4 passed to simd_vmad (or a doublev4 to simd_vmas) is a compile error here as
 * it is with sw5cc.
 *
 * Provided:
 *   types        floatv4 (4 x float, 16 bytes), doublev4 (4 x double, 32 bytes), intv8
 *                (8 x int, 32 bytes); the C operators + - * / work on them (GCC vectors,
 *                as with sw5cc)
 *   set          simd_set_floatv4, simd_set_doublev4, simd_set_intv8
 *   arithmetic   simd_v4adds / v4subs / v4muls (floatv4), simd_v4addd / v4subd / v4muld
 *                (doublev4), simd_vaddw / vsubw (intv8), the eight multiply-adds above
 *   select       simd_vsellts(a, b, c) (floatv4): per lane a < 0 ? b : c (vsellt)
 *   shuffle      simd_vshff(x, y, n) (floatv4): two lanes of y, then two of x, by n
 *                (vshff; the de-interleave of sw::split_phases)
 *   load/store   simd_load(x, p), simd_store(x, p): aligned (floatv4 16 bytes, doublev4 and
 *                intv8 32 bytes; a misaligned address stops the run with
 *                "athread emulator: error: ...", as the hardware would fault);
 *                simd_loadu / simd_storeu: any alignment; simd_loade(x, p): loads p[0] and
 *                broadcasts it to every lane (floatv4, doublev4).
 *                As in the real header these are type-generic macros on the vector x
 *                (simd_load, simd_loadu and simd_loade assign to x); x must be a floatv4, a
 *                doublev4 or an intv8, p a pointer to its element type. They are written
 *                with __builtin_choose_expr and __builtin_types_compatible_p, valid under
 *                gcc -std=c99 -pedantic-errors (the real header uses statement expressions,
 *                a GNU extension sw5cc accepts under -std=gnu99).
 * Emulator detail: the functions on 32-byte vectors are also reached through macros of
 * the same name that pass the vectors by address (x86 without AVX has no register for
 * them, and GCC warns, -Wpsabi, at every by-value call); the macros check the argument
 * types as the prototypes do. C only, like the slave compiler.
 * Left out (unused by the generated code): the SW1/SW2 types and intrinsics (floatv2,
 * doublev2, intv4, int128, ...), int256 / uint256 / uintv8, compares, the other selects, shifts,
 * logic, insert / extract, simd_vshff on other types, divide / sqrt, the other load / store
 * forms (simd_loadl / loadh / storel / storeh, simd_atov / vtoa), the loads that broadcast
 * along a row / column (simd_loadr / loadc / loader / loadec) and the simd_print_* /
 * simd_fprint_* functions. Register communication (simd_putr / putc / getr / getc) is
 * provided at the end of this file.
 */
#ifndef ATHREAD_EMULATOR_SIMD_H
#define ATHREAD_EMULATOR_SIMD_H

#ifdef __cplusplus
#error "simd.h is C only (the SW26010 slave compiler takes C)"
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef float floatv4 __attribute__((vector_size(16)));
typedef double doublev4 __attribute__((vector_size(32)));
typedef int intv8 __attribute__((vector_size(32)));

/* Compile-time checks. SIMD_EMU_IS: x has type T (qualifiers ignored).
 * SIMD_EMU_REQUIRE(ok, what): a compile error naming `what` unless ok. */
#define SIMD_EMU_IS(x, T) __builtin_types_compatible_p(__typeof__(x), T)
#define SIMD_EMU_REQUIRE(ok, what) ((void)sizeof(struct { int what : (ok) ? 1 : -1; }))

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

/* ---- floatv4 (16 bytes: passed in an SSE register, plain functions) ---- */
static inline floatv4 simd_set_floatv4(float a, float b, float c, float d) {
    floatv4 v = {a, b, c, d};
    return v;
}
static inline floatv4 simd_v4adds(floatv4 a, floatv4 b) {
    return a + b;
}
static inline floatv4 simd_v4subs(floatv4 a, floatv4 b) {
    return a - b;
}
static inline floatv4 simd_v4muls(floatv4 a, floatv4 b) {
    return a * b;
}
static inline floatv4 simd_vmas(floatv4 a, floatv4 b, floatv4 c) {
    return a * b + c;
}
static inline floatv4 simd_vmss(floatv4 a, floatv4 b, floatv4 c) {
    return a * b - c;
}
static inline floatv4 simd_vnmas(floatv4 a, floatv4 b, floatv4 c) {
    return -(a * b) + c;
}
static inline floatv4 simd_vnmss(floatv4 a, floatv4 b, floatv4 c) {
    return -(a * b) - c;
}
/* simd_vshff(x, y, n) (floatv4; vshff): lanes 0 and 1 of the result are lanes n & 3 and
 * (n >> 2) & 3 of y, lanes 2 and 3 are lanes (n >> 4) & 3 and (n >> 6) & 3 of x; n is a
 * constant. The lane order as public SW26010 code documents it (a 4x4 transpose:
 * shff([33 32 31 30], [23 22 21 20], 0xEE) is [33 32 23 22], lane 3 first; 0x88 picks lanes
 * 0 and 2 of each, 0xDD lanes 1 and 3). */
static inline floatv4 simd_emu_vshff_f4(floatv4 x, floatv4 y, int n) {
    float a[4], b[4], r[4];
    floatv4 v;
    memcpy(a, &x, sizeof a);
    memcpy(b, &y, sizeof b);
    r[0] = b[n & 3];
    r[1] = b[(n >> 2) & 3];
    r[2] = a[(n >> 4) & 3];
    r[3] = a[(n >> 6) & 3];
    memcpy(&v, r, sizeof r);
    return v;
}
#define simd_vshff(x, y, n) simd_emu_vshff_f4((x), (y), (n))

static inline floatv4 simd_vsellts(floatv4 a, floatv4 b, floatv4 c) {
    float x[4], y[4], z[4];
    floatv4 r;
    memcpy(x, &a, sizeof x);
    memcpy(y, &b, sizeof y);
    memcpy(z, &c, sizeof z);
    for (int i = 0; i < 4; i++)
        z[i] = x[i] < 0.f ? y[i] : z[i];
    memcpy(&r, z, sizeof z);
    return r;
}

/* ---- doublev4, intv8: the real prototypes (the names in parentheses are not macro
 * expanded), then the macros that the calls go through ---- */
static inline doublev4(simd_set_doublev4)(double a, double b, double c, double d) {
    doublev4 v = {a, b, c, d};
    return v;
}
static inline intv8(simd_set_intv8)(int a, int b, int c, int d, int e, int f, int g, int h) {
    intv8 v = {a, b, c, d, e, f, g, h};
    return v;
}
static inline doublev4(simd_v4addd)(doublev4 a, doublev4 b) {
    return a + b;
}
static inline doublev4(simd_v4subd)(doublev4 a, doublev4 b) {
    return a - b;
}
static inline doublev4(simd_v4muld)(doublev4 a, doublev4 b) {
    return a * b;
}
static inline doublev4(simd_vmad)(doublev4 a, doublev4 b, doublev4 c) {
    return a * b + c;
}
static inline doublev4(simd_vmsd)(doublev4 a, doublev4 b, doublev4 c) {
    return a * b - c;
}
static inline doublev4(simd_vnmad)(doublev4 a, doublev4 b, doublev4 c) {
    return -(a * b) + c;
}
static inline doublev4(simd_vnmsd)(doublev4 a, doublev4 b, doublev4 c) {
    return -(a * b) - c;
}
static inline intv8(simd_vaddw)(intv8 a, intv8 b) {
    return a + b;
}
static inline intv8(simd_vsubw)(intv8 a, intv8 b) {
    return a - b;
}

#pragma GCC diagnostic pop

/* By address: r[0] = r[0] op b[0] (op c[0]); returns r. */
static inline doublev4 *simd_emu_v4addd(doublev4 *r, const doublev4 *b) {
    *r = *r + *b;
    return r;
}
static inline doublev4 *simd_emu_v4subd(doublev4 *r, const doublev4 *b) {
    *r = *r - *b;
    return r;
}
static inline doublev4 *simd_emu_v4muld(doublev4 *r, const doublev4 *b) {
    *r = *r * *b;
    return r;
}
static inline doublev4 *simd_emu_vmad(doublev4 *r, const doublev4 *b, const doublev4 *c) {
    *r = *r * *b + *c;
    return r;
}
static inline doublev4 *simd_emu_vmsd(doublev4 *r, const doublev4 *b, const doublev4 *c) {
    *r = *r * *b - *c;
    return r;
}
static inline doublev4 *simd_emu_vnmad(doublev4 *r, const doublev4 *b, const doublev4 *c) {
    *r = -(*r * *b) + *c;
    return r;
}
static inline doublev4 *simd_emu_vnmsd(doublev4 *r, const doublev4 *b, const doublev4 *c) {
    *r = -(*r * *b) - *c;
    return r;
}
static inline intv8 *simd_emu_vaddw(intv8 *r, const intv8 *b) {
    *r = *r + *b;
    return r;
}
static inline intv8 *simd_emu_vsubw(intv8 *r, const intv8 *b) {
    *r = *r - *b;
    return r;
}

/* x as a one-element array of T: a compile error unless x is a T. */
#define SIMD_EMU_ARG(x, T, what) (SIMD_EMU_REQUIRE(SIMD_EMU_IS(x, T), what), (T[1]){(x)})
#define SIMD_EMU_D2(f, a, b)                                                                       \
    (*f(SIMD_EMU_ARG(a, doublev4, argument_1_is_not_a_doublev4),                                   \
        SIMD_EMU_ARG(b, doublev4, argument_2_is_not_a_doublev4)))
#define SIMD_EMU_D3(f, a, b, c)                                                                    \
    (*f(SIMD_EMU_ARG(a, doublev4, argument_1_is_not_a_doublev4),                                   \
        SIMD_EMU_ARG(b, doublev4, argument_2_is_not_a_doublev4),                                   \
        SIMD_EMU_ARG(c, doublev4, argument_3_is_not_a_doublev4)))
#define SIMD_EMU_I2(f, a, b)                                                                       \
    (*f(SIMD_EMU_ARG(a, intv8, argument_1_is_not_an_intv8),                                        \
        SIMD_EMU_ARG(b, intv8, argument_2_is_not_an_intv8)))

#define simd_set_doublev4(a, b, c, d)                                                              \
    ((doublev4){(double)(a), (double)(b), (double)(c), (double)(d)})
#define simd_set_intv8(a, b, c, d, e, f, g, h)                                                     \
    ((intv8){(int)(a), (int)(b), (int)(c), (int)(d), (int)(e), (int)(f), (int)(g), (int)(h)})
#define simd_v4addd(a, b) SIMD_EMU_D2(simd_emu_v4addd, a, b)
#define simd_v4subd(a, b) SIMD_EMU_D2(simd_emu_v4subd, a, b)
#define simd_v4muld(a, b) SIMD_EMU_D2(simd_emu_v4muld, a, b)
#define simd_vmad(a, b, c) SIMD_EMU_D3(simd_emu_vmad, a, b, c)
#define simd_vmsd(a, b, c) SIMD_EMU_D3(simd_emu_vmsd, a, b, c)
#define simd_vnmad(a, b, c) SIMD_EMU_D3(simd_emu_vnmad, a, b, c)
#define simd_vnmsd(a, b, c) SIMD_EMU_D3(simd_emu_vnmsd, a, b, c)
#define simd_vaddw(a, b) SIMD_EMU_I2(simd_emu_vaddw, a, b)
#define simd_vsubw(a, b) SIMD_EMU_I2(simd_emu_vsubw, a, b)

/* ---- load / store: one function per vector type, by address ---- */
static inline void simd_emu_check_aligned(const void *p, size_t alignment, const char *what) {
    if ((uintptr_t)p % alignment != 0) {
        fprintf(stderr, "athread emulator: error: %s at %p is not %u-byte aligned\n", what, p,
                (unsigned)alignment);
        fflush(stderr);
        abort();
    }
}

static inline floatv4 *simd_emu_loadu_f(floatv4 *x, const float *p) {
    memcpy(x, p, sizeof *x);
    return x;
}
static inline doublev4 *simd_emu_loadu_d(doublev4 *x, const double *p) {
    memcpy(x, p, sizeof *x);
    return x;
}
static inline intv8 *simd_emu_loadu_i(intv8 *x, const int *p) {
    memcpy(x, p, sizeof *x);
    return x;
}
static inline floatv4 *simd_emu_load_f(floatv4 *x, const float *p) {
    simd_emu_check_aligned(p, 16, "simd_load of a floatv4");
    return simd_emu_loadu_f(x, p);
}
static inline doublev4 *simd_emu_load_d(doublev4 *x, const double *p) {
    simd_emu_check_aligned(p, 32, "simd_load of a doublev4");
    return simd_emu_loadu_d(x, p);
}
static inline intv8 *simd_emu_load_i(intv8 *x, const int *p) {
    simd_emu_check_aligned(p, 32, "simd_load of an intv8");
    return simd_emu_loadu_i(x, p);
}
static inline floatv4 *simd_emu_loade_f(floatv4 *x, const float *p) {
    const float v = p[0];
    *x = simd_set_floatv4(v, v, v, v);
    return x;
}
static inline doublev4 *simd_emu_loade_d(doublev4 *x, const double *p) {
    const double v = p[0];
    *x = simd_set_doublev4(v, v, v, v);
    return x;
}
static inline void simd_emu_storeu_f(const floatv4 *x, float *p) {
    memcpy(p, x, sizeof *x);
}
static inline void simd_emu_storeu_d(const doublev4 *x, double *p) {
    memcpy(p, x, sizeof *x);
}
static inline void simd_emu_storeu_i(const intv8 *x, int *p) {
    memcpy(p, x, sizeof *x);
}
static inline void simd_emu_store_f(const floatv4 *x, float *p) {
    simd_emu_check_aligned(p, 16, "simd_store of a floatv4");
    simd_emu_storeu_f(x, p);
}
static inline void simd_emu_store_d(const doublev4 *x, double *p) {
    simd_emu_check_aligned(p, 32, "simd_store of a doublev4");
    simd_emu_storeu_d(x, p);
}
static inline void simd_emu_store_i(const intv8 *x, int *p) {
    simd_emu_check_aligned(p, 32, "simd_store of an intv8");
    simd_emu_storeu_i(x, p);
}

/* Only the chosen branch of __builtin_choose_expr is evaluated, but every branch must
 * type-check: SIMD_EMU_PICK(x, T, e, E) is e where x is a T, else a null E pointer;
 * SIMD_EMU_AS(x, T) is x where x is a T, else a zero T. */
#define SIMD_EMU_PICK(x, T, e, E) __builtin_choose_expr(SIMD_EMU_IS(x, T), (e), (E *)0)
#define SIMD_EMU_AS(x, T) __builtin_choose_expr(SIMD_EMU_IS(x, T), (x), (T){0})
#define SIMD_EMU_IS_VECTOR(x)                                                                      \
    (SIMD_EMU_IS(x, floatv4) || SIMD_EMU_IS(x, doublev4) || SIMD_EMU_IS(x, intv8))

#define SIMD_EMU_LOAD(x, p, f, d, i)                                                               \
    ((x) = (SIMD_EMU_REQUIRE(SIMD_EMU_IS_VECTOR(x), x_is_not_a_floatv4_doublev4_or_intv8),         \
            *__builtin_choose_expr(                                                                \
                SIMD_EMU_IS(x, floatv4),                                                           \
                f(SIMD_EMU_PICK(x, floatv4, &(x), floatv4),                                        \
                  SIMD_EMU_PICK(x, floatv4, p, const float)),                                      \
                __builtin_choose_expr(SIMD_EMU_IS(x, doublev4),                                    \
                                      d(SIMD_EMU_PICK(x, doublev4, &(x), doublev4),                \
                                        SIMD_EMU_PICK(x, doublev4, p, const double)),              \
                                      i(SIMD_EMU_PICK(x, intv8, &(x), intv8),                      \
                                        SIMD_EMU_PICK(x, intv8, p, const int))))))
#define SIMD_EMU_STORE(x, p, f, d, i)                                                              \
    (SIMD_EMU_REQUIRE(SIMD_EMU_IS_VECTOR(x), x_is_not_a_floatv4_doublev4_or_intv8),                \
     __builtin_choose_expr(                                                                        \
         SIMD_EMU_IS(x, floatv4),                                                                  \
         f(SIMD_EMU_PICK(x, floatv4, (const floatv4[1]){SIMD_EMU_AS(x, floatv4)}, const floatv4),  \
           SIMD_EMU_PICK(x, floatv4, p, float)),                                                   \
         __builtin_choose_expr(                                                                    \
             SIMD_EMU_IS(x, doublev4),                                                             \
             d(SIMD_EMU_PICK(x, doublev4, (const doublev4[1]){SIMD_EMU_AS(x, doublev4)},           \
                             const doublev4),                                                      \
               SIMD_EMU_PICK(x, doublev4, p, double)),                                             \
             i(SIMD_EMU_PICK(x, intv8, (const intv8[1]){SIMD_EMU_AS(x, intv8)}, const intv8),      \
               SIMD_EMU_PICK(x, intv8, p, int)))))

/** x = the vector at p (aligned: 16 bytes for floatv4, 32 for doublev4 and intv8). */
#define simd_load(x, p) SIMD_EMU_LOAD(x, p, simd_emu_load_f, simd_emu_load_d, simd_emu_load_i)
/** x = the vector at p, any alignment (two instructions on the real machine). */
#define simd_loadu(x, p) SIMD_EMU_LOAD(x, p, simd_emu_loadu_f, simd_emu_loadu_d, simd_emu_loadu_i)
/** x = p[0] in every lane (floatv4, doublev4). */
#define simd_loade(x, p)                                                                           \
    ((x) =                                                                                         \
         (SIMD_EMU_REQUIRE(SIMD_EMU_IS(x, floatv4) || SIMD_EMU_IS(x, doublev4),                    \
                           x_is_not_a_floatv4_or_doublev4),                                        \
          *__builtin_choose_expr(SIMD_EMU_IS(x, floatv4),                                          \
                                 simd_emu_loade_f(SIMD_EMU_PICK(x, floatv4, &(x), floatv4),        \
                                                  SIMD_EMU_PICK(x, floatv4, p, const float)),      \
                                 simd_emu_loade_d(SIMD_EMU_PICK(x, doublev4, &(x), doublev4),      \
                                                  SIMD_EMU_PICK(x, doublev4, p, const double)))))
/** Stores x at p (aligned as for simd_load). */
#define simd_store(x, p) SIMD_EMU_STORE(x, p, simd_emu_store_f, simd_emu_store_d, simd_emu_store_i)
/** Stores x at p, any alignment. */
#define simd_storeu(x, p)                                                                          \
    SIMD_EMU_STORE(x, p, simd_emu_storeu_f, simd_emu_storeu_d, simd_emu_storeu_i)

/* ---- register communication (SW26010 only) ----
 * As in the real header (SW5 block: simd_putr(x, y), simd_putc(x, y), x = simd_getr(x),
 * x = simd_getc(x), on compiler builtins typed for floatv4, doublev4, intv8 and int256;
 * dxhisboy/shenwei-doc lists those four types), here for floatv4, doublev4 and intv8:
 *   simd_putr(v, dest)  sends v to the CPE of this row at column dest (0..7), or with
 *                       dest = 8 (bit 3 set) to every other CPE of the row;
 *   simd_putc(v, dest)  the same along this CPE's column (dest: the receiver's row);
 *   v = simd_getr(v)    the oldest value in this CPE's row receive buffer, waiting for one;
 *   v = simd_getc(v)    the same for the column buffer.
 * A put waits while a receiver's buffer is full. simd_getr / simd_getc do not read their
 * argument (it only gives the type). Another type than a vector is a compile error; a value
 * received as another vector type than it was sent stops the run, as do the other misuses
 * listed in target_sw/emulator/README.md (deadlock, bad destination, values never received). */
void athread_emu_regcomm_put(int bus, int type, const void *value, int dest);
const void *athread_emu_regcomm_get(int bus, int type);
#define SIMD_EMU_VTYPE(x) (SIMD_EMU_IS(x, floatv4) ? 1 : (SIMD_EMU_IS(x, doublev4) ? 2 : 3))
#define SIMD_EMU_PUT(bus, x, dest)                                                                 \
    (SIMD_EMU_REQUIRE(SIMD_EMU_IS_VECTOR(x), x_is_not_a_floatv4_doublev4_or_intv8),                \
     athread_emu_regcomm_put(bus, SIMD_EMU_VTYPE(x), (const __typeof__(x)[1]){(x)}, (dest)))
#define SIMD_EMU_GET(bus, x)                                                                       \
    (SIMD_EMU_REQUIRE(SIMD_EMU_IS_VECTOR(x), x_is_not_a_floatv4_doublev4_or_intv8),                \
     *(const __typeof__(x) *)athread_emu_regcomm_get(bus, SIMD_EMU_VTYPE(x)))
#define simd_putr(x, y) SIMD_EMU_PUT(0, x, y)
#define simd_putc(x, y) SIMD_EMU_PUT(1, x, y)
#define simd_getr(x) SIMD_EMU_GET(0, x)
#define simd_getc(x) SIMD_EMU_GET(1, x)

#endif
