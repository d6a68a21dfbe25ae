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

/* Lane-wise max, and exp with a relative error under 2 ulp on [-87, 88]
 * (Cody-Waite reduction to r in [-ln2/2, ln2/2], degree-6 polynomial, 2^n
 * built in the exponent bits). exp(x) for x < -87.3 returns 0. */
typedef int v4i __attribute__((vector_size(16)));

static inline v4 v4_max(v4 a, v4 b) {
    v4i m = a > b;
    return (v4)((m & (v4i)a) | (~m & (v4i)b));
}

static inline v4 v4_exp(v4 x) {
    v4i under = x < v4_splat(-87.33654f);
    x = v4_max(x, v4_splat(-87.33654f));
    x = -v4_max(-x, v4_splat(-88.37626f)); /* min(x, 88.376) */
    v4 t = x * v4_splat(1.44269504088896341f) + v4_splat(0.5f);
    v4i n = __builtin_convertvector(t, v4i);
    n += (v4i)(__builtin_convertvector(n, v4) > t); /* floor: true lanes are -1 */
    v4 nf = __builtin_convertvector(n, v4);
    v4 r = x - nf * v4_splat(0.693359375f) + nf * v4_splat(2.12194440e-4f);
    v4 p = v4_splat(1.9875691500e-4f);
    p = v4_madd(p, r, v4_splat(1.3981999507e-3f));
    p = v4_madd(p, r, v4_splat(8.3334519073e-3f));
    p = v4_madd(p, r, v4_splat(4.1665795894e-2f));
    p = v4_madd(p, r, v4_splat(1.6666665459e-1f));
    p = v4_madd(p, r, v4_splat(5.0000001201e-1f));
    p = v4_madd(p, r * r, r + v4_splat(1.0f));
    v4 scale = (v4)((n + 127) << 23);
    return (v4)(~under & (v4i)(p * scale));
}

#endif
