// Peak f32 throughput of wasm SIMD on this machine, the yardstick of the
// benchmark's "fraction of peak" column.
//
// peakN: N independent f32x4 accumulators through
//     acc = acc * a + b        (f32x4.mul + f32x4.add: 8 flops)
// or, in the relaxed build, acc = relaxed_madd(acc, a, b) (one fused op, 8 flops),
// fully unrolled, 4 steps per loop iteration, no memory traffic. The chain per
// accumulator is the latency of mul + add (or of one fma), so N has to cover
// latency x issue width; bench.js runs every N and keeps the best. This form
// needs only N + 2 vector registers (x64 has 16; acc += x_i * y with distinct
// x_i needs 2N + 1 and spills past N = 7, measured slower). acc * a + b can
// neither be hoisted nor reassociated by the compiler (no fast-math), and
// a < 1 keeps every value finite and normal.
//
//   clang-16 --target=wasm32 -O3 -msimd128 [-mrelaxed-simd -DRELAXED] -c peak.c -o peak.o
//   wasm-ld-16 --no-entry --export-dynamic peak.o -o peak.wasm
// (not clang -o x.wasm: the driver then runs the wasm-opt on PATH, whose
// Debian binaryen is too old for relaxed SIMD)
#include <wasm_simd128.h>

// acc += x * y
#ifdef RELAXED
// clang 16 has the builtin but not yet wasm_f32x4_relaxed_madd in wasm_simd128.h
#define MADD(acc, x, y) acc = (v128_t)__builtin_wasm_relaxed_madd_f32x4((__f32x4)(x), (__f32x4)(y), (__f32x4)(acc))
#define STEP(i) x##i = (v128_t)__builtin_wasm_relaxed_madd_f32x4((__f32x4)x##i, (__f32x4)a, (__f32x4)b);
#else
#define MADD(acc, x, y) acc = wasm_f32x4_add(acc, wasm_f32x4_mul(x, y))
#define STEP(i) x##i = wasm_f32x4_add(wasm_f32x4_mul(x##i, a), b);
#endif

#define DECL(i) v128_t x##i = wasm_f32x4_splat(1.0f + (float)(i) * 0.01f);
#define SUM(i) s = wasm_f32x4_add(s, x##i);

#define R4(M) M(0) M(1) M(2) M(3)
#define R6(M) R4(M) M(4) M(5)
#define R8(M) R6(M) M(6) M(7)
#define R10(M) R8(M) M(8) M(9)
#define R12(M) R10(M) M(10) M(11)
#define R14(M) R12(M) M(12) M(13)
#define R16(M) R14(M) M(14) M(15)

#define KERNEL(N)                                                             \
  __attribute__((export_name("peak" #N))) float peak##N(int iters, float av, \
                                                        float bv) {          \
    v128_t a = wasm_f32x4_splat(av), b = wasm_f32x4_splat(bv);                 \
    R##N(DECL)                                                                \
    for (int it = 0; it < iters; it++) {                                      \
      R##N(STEP) R##N(STEP) R##N(STEP) R##N(STEP)                             \
    }                                                                         \
    v128_t s = wasm_f32x4_splat(0.0f);                                        \
    R##N(SUM)                                                                 \
    return wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 3);     \
  }

KERNEL(4)
KERNEL(6)
KERNEL(8)
KERNEL(10)
KERNEL(12)
KERNEL(14)
KERNEL(16)

// flops of one call: iters * 4 steps * N accumulators * 4 lanes * 2 (mul + add)
__attribute__((export_name("flops_per_iter"))) int flops_per_iter(int n) { return 4 * n * 4 * 2; }

// ---------------------------------------------------------------- with loads
// A register-blocked matrix-product micro-kernel that reads its operands from
// L1, for context (a matrix product cannot keep everything in registers):
// C[MR x 4*NV] += A[MR x K] * B[K x 4*NV], A packed column-wise (one splat load
// per row), B packed row-wise (NV vector loads), MR*NV accumulators.
#define LBUF 4096
static float bufx[LBUF] __attribute__((aligned(16)));
static float bufy[LBUF] __attribute__((aligned(16)));

__attribute__((export_name("fill"))) void fill(void) {
  for (int i = 0; i < LBUF; i++) {
    bufx[i] = 1e-3f * (float)(i % 17);
    bufy[i] = 1e-3f * (float)(i % 13);
  }
}

// MR x (4*NV) micro-kernel over depth k (A: k*MR floats, B: k*4*NV floats,
// both <= LBUF); flops = reps * k * MR * 4*NV * 2
#define GEMM(MR, NV)                                                                        \
  __attribute__((export_name("gemm" #MR "x" #NV))) float gemm##MR##x##NV(int reps, int k) { \
    v128_t c[MR][NV];                                                                       \
    for (int i = 0; i < MR; i++)                                                            \
      for (int j = 0; j < NV; j++) c[i][j] = wasm_f32x4_splat(0);                          \
    for (int r = 0; r < reps; r++) {                                                        \
      const float *A = bufx, *B = bufy;                                                     \
      for (int p = 0; p < k; p++, A += MR, B += 4 * NV) {                                   \
        v128_t b[NV];                                                                       \
        for (int j = 0; j < NV; j++) b[j] = wasm_v128_load(B + 4 * j);                      \
        for (int i = 0; i < MR; i++) {                                                      \
          v128_t a = wasm_v128_load32_splat(A + i);                                         \
          for (int j = 0; j < NV; j++) MADD(c[i][j], a, b[j]);                              \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
    v128_t s = wasm_f32x4_splat(0);                                                         \
    for (int i = 0; i < MR; i++)                                                            \
      for (int j = 0; j < NV; j++) s = wasm_f32x4_add(s, c[i][j]);                         \
    return wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 3);                   \
  }

GEMM(4, 2)
GEMM(6, 2)
GEMM(4, 3)
