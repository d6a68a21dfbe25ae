/* Float vectors through GCC/Clang vector extensions: kernels are written once
 * against this header.
 *
 * v4: four lanes, wasm SIMD128 under emcc -msimd128, SSE or NEON natively (or
 * plain scalar code): the per-row code (norms, positions, heads, search).
 *
 * vf: SF_VW lanes (4, 8 or 16), the width a kernel file is compiled at: 4 in
 * the wasm builds; natively core/isa.c builds kernels.c and qgemm.c once per
 * instruction set, at 4 (SSE2, NEON), 8 (AVX2 + FMA) and 16 (AVX-512) lanes.
 * With SF_VW 4, vf is v4 and every vf_ function is its v4_ one.
 *
 *   v4 a = v4_load(p);  v4_store(p, a);  v4 s = v4_splat(x);
 *   acc = v4_madd(a, b, acc);   // acc + a*b; fused under -mrelaxed-simd and where
 *                               // the target has FMA (clang contracts a*b + c)
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

/* Lane-wise max / min with wasm's pseudo-min/max semantics on every target:
 * pmax(a, b) = a < b ? b : a, pmin(a, b) = b < a ? b : a, so a NaN in a passes
 * through (v4_exp(NaN) stays NaN, and the finiteness checks see it). */
#if defined(__wasm_simd128__)
static inline v4 v4_max(v4 a, v4 b) { return __builtin_wasm_pmax_f32x4(a, b); }
static inline v4 v4_min(v4 a, v4 b) { return __builtin_wasm_pmin_f32x4(a, b); }
#elif defined(__SSE__)
static inline v4 v4_max(v4 a, v4 b) { return __builtin_ia32_maxps(b, a); } /* maxps(x, y) = x > y ? x : y */
static inline v4 v4_min(v4 a, v4 b) { return __builtin_ia32_minps(b, a); }
#else
typedef int v4i_ __attribute__((vector_size(16)));
static inline v4 v4_max(v4 a, v4 b) {
    v4i_ m = a < b;
    return (v4)((m & (v4i_)b) | (~m & (v4i_)a));
}
static inline v4 v4_min(v4 a, v4 b) {
    v4i_ m = b < a;
    return (v4)((m & (v4i_)b) | (~m & (v4i_)a));
}
#endif

/* exp, relative error under 2 ulp for x in [-87, 88]; inputs are clamped
 * there (exp(-inf) gives 1.2e-38, not 0: harmless in a softmax or a sigmoid).
 * Cody-Waite reduction to r in [-ln2/2, ln2/2] with n = round(x / ln2) found
 * by the 1.5 * 2^23 trick (no float/int conversions, which are slow in wasm),
 * a degree-6 polynomial, and 2^n written straight into the exponent bits.
 * Written once for both widths: SF_EXP_FN(name, vector type, its int vector, prefix). */
typedef int v4i __attribute__((vector_size(16)));

#define SF_EXP_FN(name, V, VI, P)                                                                                                                    \
    static inline V name(V x) {                                                                                                                      \
        x = P##_min(P##_max(x, P##_splat(-87.33654f)), P##_splat(88.37626f));                                                                        \
        V t = P##_madd(x, P##_splat(1.44269504088896341f), P##_splat(12582912.0f)); /* low bits of t: n */                                           \
        V n = t - P##_splat(12582912.0f);                                                                                                            \
        V r = P##_madd(n, P##_splat(2.12194440e-4f), P##_madd(n, P##_splat(-0.693359375f), x));                                                      \
        V p = P##_splat(1.9875691500e-4f);                                                                                                           \
        p = P##_madd(p, r, P##_splat(1.3981999507e-3f));                                                                                             \
        p = P##_madd(p, r, P##_splat(8.3334519073e-3f));                                                                                             \
        p = P##_madd(p, r, P##_splat(4.1665795894e-2f));                                                                                             \
        p = P##_madd(p, r, P##_splat(1.6666665459e-1f));                                                                                             \
        p = P##_madd(p, r, P##_splat(5.0000001201e-1f));                                                                                             \
        p = P##_madd(p, r * r, r + P##_splat(1.0f));                                                                                                 \
        V scale = (V)(((VI)t + (127 - 0x4B400000)) << 23); /* 2^n */                                                                                 \
        return p * scale;                                                                                                                            \
    }
SF_EXP_FN(v4_exp, v4, v4i, v4)

/* ---------------------------------------------------------------- vf: SF_VW lanes */

#ifndef SF_VW
#define SF_VW 4
#endif

#if SF_VW == 4
typedef v4 vf;
typedef v4i vfi;
#define vf_load  v4_load
#define vf_store v4_store
#define vf_splat v4_splat
#define vf_zero  v4_zero
#define vf_sum   v4_sum
#define vf_madd  v4_madd
#define vf_max   v4_max
#define vf_min   v4_min
#define vf_exp   v4_exp
#else
typedef float vf __attribute__((vector_size(SF_VW * 4)));
typedef float vfu __attribute__((vector_size(SF_VW * 4), aligned(4), may_alias));
typedef int vfi __attribute__((vector_size(SF_VW * 4)));

static inline vf vf_load(const float *p) { return *(const vfu *)p; }
static inline void vf_store(float *p, vf v) { *(vfu *)p = v; }
static inline vf vf_splat(float x) { return (vf){0} + x; }
static inline vf vf_zero(void) { return (vf){0}; }
static inline float vf_sum(vf v) { /* halves, then v4_sum: a fixed order */
#if SF_VW == 16
    typedef float v8_ __attribute__((vector_size(32)));
    v8_ h = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) + __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    return v4_sum(__builtin_shufflevector(h, h, 0, 1, 2, 3) + __builtin_shufflevector(h, h, 4, 5, 6, 7));
#else
    return v4_sum(__builtin_shufflevector(v, v, 0, 1, 2, 3) + __builtin_shufflevector(v, v, 4, 5, 6, 7));
#endif
}
static inline vf vf_madd(vf a, vf b, vf c) { return c + a * b; } /* one expression: contracted to an FMA */
/* v4_max / v4_min's pseudo-min/max (a NaN in a passes): vmaxps / vminps under clang */
static inline vf vf_max(vf a, vf b) {
    vfi m = a < b;
    return (vf)((m & (vfi)b) | (~m & (vfi)a));
}
static inline vf vf_min(vf a, vf b) {
    vfi m = b < a;
    return (vf)((m & (vfi)b) | (~m & (vfi)a));
}
SF_EXP_FN(vf_exp, vf, vfi, vf) /* v4_exp at SF_VW lanes */
#endif

#endif
