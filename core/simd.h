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

#endif
