/* A 4-lane float vector that compiles to wasm SIMD128 under emcc -msimd128
 * and to SSE (or plain scalar code) natively, through GCC/Clang vector
 * extensions. Kernels are written once against this header.
 *
 *   v4 a = v4_load(p);  v4_store(p, a);  v4 s = v4_splat(x);
 *   acc = v4_madd(a, b, acc);   // acc + a*b; fused under -mrelaxed-simd
 */
#ifndef SF_SIMD_H
#define SF_SIMD_H

typedef float v4 __attribute__((vector_size(16)));
typedef float v4u __attribute__((vector_size(16), aligned(4), may_alias));

static inline v4 v4_load(const float *p) { return *(const v4u *)p; }
static inline void v4_store(float *p, v4 v) { *(v4u *)p = v; }
static inline v4 v4_splat(float x) { return (v4){x, x, x, x}; }
static inline v4 v4_zero(void) { return (v4){0, 0, 0, 0}; }
static inline float v4_sum(v4 v) { return (v[0] + v[2]) + (v[1] + v[3]); }

#if defined(__wasm_relaxed_simd__)
static inline v4 v4_madd(v4 a, v4 b, v4 c) { return __builtin_wasm_relaxed_madd_f32x4(a, b, c); }
#else
static inline v4 v4_madd(v4 a, v4 b, v4 c) { return c + a * b; }
#endif

/* Lane-wise max / min (no NaN handling: operands are never NaN here). */
#if defined(__wasm_simd128__)
static inline v4 v4_max(v4 a, v4 b) { return __builtin_wasm_pmax_f32x4(a, b); }
static inline v4 v4_min(v4 a, v4 b) { return __builtin_wasm_pmin_f32x4(a, b); }
#elif defined(__SSE__)
static inline v4 v4_max(v4 a, v4 b) { return __builtin_ia32_maxps(a, b); }
static inline v4 v4_min(v4 a, v4 b) { return __builtin_ia32_minps(a, b); }
#else
typedef int v4i_ __attribute__((vector_size(16)));
static inline v4 v4_max(v4 a, v4 b) {
    v4i_ m = a > b;
    return (v4)((m & (v4i_)a) | (~m & (v4i_)b));
}
static inline v4 v4_min(v4 a, v4 b) {
    v4i_ m = a < b;
    return (v4)((m & (v4i_)a) | (~m & (v4i_)b));
}
#endif

/* exp, relative error under 2 ulp for x in [-87, 88]; inputs are clamped
 * there (exp(-inf) gives 1.2e-38, not 0: harmless in a softmax or a sigmoid).
 * Cody-Waite reduction to r in [-ln2/2, ln2/2] with n = round(x / ln2) found
 * by the 1.5 * 2^23 trick (no float/int conversions, which are slow in wasm),
 * a degree-6 polynomial, and 2^n written straight into the exponent bits. */
typedef int v4i __attribute__((vector_size(16)));

static inline v4 v4_exp(v4 x) {
    x = v4_min(v4_max(x, v4_splat(-87.33654f)), v4_splat(88.37626f));
    v4 t = v4_madd(x, v4_splat(1.44269504088896341f), v4_splat(12582912.0f)); /* low bits of t: n */
    v4 n = t - v4_splat(12582912.0f);
    v4 r = v4_madd(n, v4_splat(2.12194440e-4f), v4_madd(n, v4_splat(-0.693359375f), x));
    v4 p = v4_splat(1.9875691500e-4f);
    p = v4_madd(p, r, v4_splat(1.3981999507e-3f));
    p = v4_madd(p, r, v4_splat(8.3334519073e-3f));
    p = v4_madd(p, r, v4_splat(4.1665795894e-2f));
    p = v4_madd(p, r, v4_splat(1.6666665459e-1f));
    p = v4_madd(p, r, v4_splat(5.0000001201e-1f));
    p = v4_madd(p, r * r, r + v4_splat(1.0f));
    v4 scale = (v4)(((v4i)t + (127 - 0x4B400000)) << 23); /* 2^n */
    return p * scale;
}

#endif
