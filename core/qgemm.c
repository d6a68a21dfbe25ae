/* int8 matrix products (core/qgemm.h): weight packing, per-row activation
 * quantization, and the int8 x int8 -> int32 micro-kernels with their f32 epilogue.
 *
 * Measured (bench/qgemm.mjs: MiniLM-L6 and BERT-base Linear shapes, T = 512 in
 * 64-row chunks, warm, best of 40 alternating rounds; one core of an AMD EPYC
 * Zen 5, family 26, which has AVX2, AVX-512 and AVX-VNNI; Node 20.20 = V8 11.3,
 * and headless Chromium 156). GFLOP/s-equivalent = 2 M K N / time, one layer's
 * six products, rows quantized once per distinct input:
 *
 *                      f32 matmul_forward   q8 (quantize + product)        speed-up
 *   SIMD128, Node        49.3 / 45.8          85.6 / 83.4                  1.74x / 1.82x   (MiniLM / BERT-base)
 *   SIMD128, Chromium    48.6 / 45.6          81.5 / 82.6                  1.68x / 1.81x
 *   relaxed, Node        47.7 / 44.9          95.6 / 95.3 (i16 form)       2.00x / 2.12x
 *   relaxed, Chromium    47.2 / 46.1          184 / 187 (add form)         3.90x / 4.06x
 *
 * What decides it:
 * - Tile: 4 rows x 8 columns, two i32x4 accumulators per row, panels outer and
 *   rows inner as in the f32 kernel (a panel, K x 8 bytes, stays in L1 while the
 *   rows pass). Per group of k: the panel's two weight vectors, one 32-bit splat
 *   load per row (V8: vbroadcastss from memory, no ALU uop), two dots per row.
 *   Rows per tile, layer GFLOP/s-eq (-DQ8_MR=n): SIMD128 Node 3: 74, 4: 78,
 *   5: 73, 6: 54 (V8 spills 12 accumulators); relaxed i16 form, Node 3: 81, 4: 87,
 *   5: 82, 6: 74; relaxed add form, Chromium 3: 141, 4: 182, 5: 165, 6: 175.
 * - SIMD128: i32x4.dot_i16x8_s (pmaddwd, 8 MACs) on activations stored already
 *   widened, as x_q - zp in i16 (the splat of a k pair is one load, and no
 *   zero-point correction is left), weights widened as they load
 *   (i16x8.load8x8_s: one pmovsxbw with a memory operand). V8's loop per 64 MACs:
 *   2 pmovsxbw + 4 vbroadcastss + 8 pmaddwd + 8 paddd; 18 vector ALU uops, 8 of
 *   them multiplies: ~1.8x f32 is close to what SIMD128 allows (f32: 8
 *   mul + 8 add per 32 MACs). Weights kept as i16 would save the 2 pmovsxbw but
 *   double the weights' memory (the issue wants q8 <= 0.35x the f32 weights).
 * - Relaxed: u7 activations (bytes) in the second operand of the relaxed dot,
 *   the signed weights in the first: exact on every engine (core/qgemm.h). Two
 *   forms, picked at run time by a probe (dot_add_works below):
 *     i32x4.relaxed_dot_i8x16_i7x16_add_s: one vpdpbusd where V8 uses AVX-VNNI
 *       (Chromium 156 here: ~4x f32) or SDOT (arm64); V8 11.3 lowers it to
 *       pmaddubsw + pmaddwd + paddd plus two uops rebuilding the ones vector
 *       each time (84 GFLOP/s-eq) and its baseline compiler gets it wrong;
 *     i16x8.relaxed_dot_i8x16_i7x16_s + i32x4.extadd_pairwise_i16x8_s + add:
 *       pmaddubsw + pmaddwd (ones from memory) + paddd, 16 MACs per 2
 *       multiplies (Node 20: 87-96; Chromium 156: ~99, the add form 182).
 *   clang 16 has both as builtins (its wasm_simd128.h has no relaxed wrappers
 *   yet); emcc 3.1.6's clang 14 has no relaxed SIMD (the SIMD128 kernel uses
 *   wasm_i32x4_dot_i16x8 and wasm_i16x8_load8x8, in both).
 * - Quantizing the activations: two passes over the row (min / max with two
 *   independent chains; then multiply, round by the 1.5 * 2^23 trick, clamp and
 *   narrow with i16x8.narrow_i32x4_s / u8x16.narrow_i16x8_u: no float -> int
 *   conversion, no scalar stores): 0.29 ns per value (a first version with
 *   scalar stores: 1.05), 1-3% of a layer.
 * - Optimisation level: -Os (what build.sh gives core files outside its HOT
 *   list) leaves the kernels as fast and the quantizer ~25% slower, under 1% of
 *   a forward: qgemm.c stays -Os, for size. Code added: SIMD128 4.6 KB at -Os / 7.6 KB at -O3,
 *   relaxed (both forms and the probe) 8.4 / 10.9 KB (gzip: 2.2-4.3 KB).
 * - Exactness: |sum_k (x_q - zp) w_q| <= K * 255 * 128 fits int32 for K <=
 *   SF_Q8_MAX_K = 65536, so every partial sum does too (x_q - zp is in [-255,
 *   255], weights in [-128, 127]), and the relaxed form's zp * csum as well. */
#include "variant.h"

#include "qgemm.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "error.h"
#include "simd.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

#ifndef Q8_MR
#define Q8_MR 4
#endif

/* ------------------------------------------------------------ weights */

static size_t kpad(int K) { return ((size_t)K + SF_Q8_KR - 1) / SF_Q8_KR * SF_Q8_KR; }

size_t sf_q8_panel_bytes(int K) { return kpad(K) * SF_Q8_NR + SF_Q8_NR * (sizeof(float) + sizeof(int32_t)); }

size_t sf_q8_packed_bytes(int N, int K) {
    size_t n;
    if (N < 1 || K < 1 || K > SF_Q8_MAX_K) return 0;
    if (!sf_mul_size(((size_t)N + SF_Q8_NR - 1) / SF_Q8_NR, sf_q8_panel_bytes(K), &n)) return 0;
    return n;
}

/* Where w_q[8p + c][k] lives in panel p. */
static size_t woff(int c, int k) { return ((size_t)(k / SF_Q8_KR) * SF_Q8_NR + (size_t)c) * SF_Q8_KR + (size_t)(k % SF_Q8_KR); }

/* The tail of a panel: scales, then column sums, after the Kp * 8 weights. */
static float *panel_scales(unsigned char *panel, int K) { return (float *)(panel + kpad(K) * SF_Q8_NR); }
static int32_t *panel_csums(unsigned char *panel, int K) { return (int32_t *)(panel + kpad(K) * SF_Q8_NR + SF_Q8_NR * sizeof(float)); }

static unsigned char *panel_of(void *wq, int K, int n) { return (unsigned char *)wq + (size_t)(n / SF_Q8_NR) * sf_q8_panel_bytes(K); }

/* Row n of w, read with load(src, n*K + k), quantized into its column of the
 * panel: s = amax / 127 in float, w_q = round(w / s) half to even, clamped to
 * [-127, 127] (what onnxruntime's quantization tool computes for symmetric
 * int8 weights, so bench/export_onnx.py reproduces these bytes). Two passes over
 * the source, no buffer. */
static void quantize_weight_row(void *wq, const void *src, sf_load_fn load, int n, int K) {
    unsigned char *panel = panel_of(wq, K, n);
    size_t base = (size_t)n * K;
    int c = n % SF_Q8_NR;
    float amax = 0;
    for (int k = 0; k < K; k++) {
        float a = fabsf(load(src, base + (size_t)k));
        if (!(a <= amax)) amax = a; /* a NaN sticks */
    }
    float s = amax / 127.0f;
    int32_t sum = 0;
    if (!(amax <= FLT_MAX))
        s = NAN;    /* a non-finite row: NaN outputs, as in the f32 path */
    else if (s > 0) /* else all zero, or below 127 * 2^-149: zero weights, scale 0 */
        for (int k = 0; k < K; k++) {
            float v = nearbyintf(load(src, base + (size_t)k) / s);
            int8_t q = (int8_t)(v > 127.0f ? 127 : v < -127.0f ? -127 : (int)v);
            panel[woff(c, k)] = (unsigned char)q;
            sum += q;
        }
    else
        s = 0;
    panel_scales(panel, K)[c] = s;
    panel_csums(panel, K)[c] = sum;
}

void q8_pack_linear(void *dst, const void *src, sf_load_fn load, int N, int K) {
    memset(dst, 0, sf_q8_packed_bytes(N, K)); /* padding columns and k >= K stay 0 */
    for (int n = 0; n < N; n++) quantize_weight_row(dst, src, load, n, K);
}

static float load_float(const void *src, size_t i) { return ((const float *)src)[i]; }

void q8_pack_linear_f32(void *dst, const float *w, int N, int K) { q8_pack_linear(dst, w, load_float, N, K); }

void q8_pack_linear_i8(void *dst, const int8_t *q, const void *scales, int N, int K) {
    memset(dst, 0, sf_q8_packed_bytes(N, K));
    for (int n = 0; n < N; n++) {
        unsigned char *panel = panel_of(dst, K, n);
        int c = n % SF_Q8_NR;
        int32_t sum = 0;
        for (int k = 0; k < K; k++) {
            int8_t v = q[(size_t)n * K + k];
            panel[woff(c, k)] = (unsigned char)v;
            sum += v;
        }
        memcpy(panel_scales(panel, K) + c, (const unsigned char *)scales + (size_t)n * 4, 4);
        panel_csums(panel, K)[c] = sum;
    }
}

void q8_unpack_linear(float *w, const void *packed, int N, int K) {
    for (int n = 0; n < N; n++) {
        unsigned char *panel = panel_of((void *)packed, K, n);
        float s = panel_scales(panel, K)[n % SF_Q8_NR];
        for (int k = 0; k < K; k++) w[(size_t)n * K + k] = (float)(int8_t)panel[woff(n % SF_Q8_NR, k)] * s;
    }
}

void q8_unpack_linear_i8(int8_t *q, float *scales, const void *packed, int N, int K) {
    for (int n = 0; n < N; n++) {
        unsigned char *panel = panel_of((void *)packed, K, n);
        scales[n] = panel_scales(panel, K)[n % SF_Q8_NR];
        for (int k = 0; k < K; k++) q[(size_t)n * K + k] = (int8_t)panel[woff(n % SF_Q8_NR, k)];
    }
}

/* ------------------------------------------------------------ activations */

#define Q8_ROW_HEAD 16 /* float s_a, int32 zp, 8 bytes unused: the values stay 16-byte aligned */

size_t sf_q8_act_row_bytes(int K) { return Q8_ROW_HEAD + (kpad(K) * SF_Q8_AESIZE + 15) / 16 * 16; }

size_t sf_q8_act_bytes(int M, int K) {
    size_t n;
    if (M < 0 || K < 1 || K > SF_Q8_MAX_K || !sf_mul_size((size_t)M, sf_q8_act_row_bytes(K), &n)) return 0;
    return n;
}

/* 1.5 * 2^23: x + MAGIC, for |x| < 2^22, is MAGIC + round(x) half to even, with
 * that integer in the low mantissa bits (no float -> int conversion: slow in wasm). */
#define MAGIC      12582912.0f
#define MAGIC_BITS 0x4B400000

/* Eight or sixteen quantized values (one 16-byte vector of the row) from four
 * vectors of x_q (or x_q - zp): already in range, so the saturating narrowing
 * is exact and plain C gives the same bytes. */
#define Q8_BLOCK (16 / SF_Q8_AESIZE)
static inline void store_block(unsigned char *dst, const v4i *q) {
#if defined(__wasm_simd128__)
    v128_t lo = wasm_i16x8_narrow_i32x4((v128_t)q[0], (v128_t)q[1]);
#if SF_Q8_BYTES
    lo = wasm_u8x16_narrow_i16x8(lo, wasm_i16x8_narrow_i32x4((v128_t)q[2], (v128_t)q[3]));
#endif
    wasm_v128_store(dst, lo);
#else /* natively: narrowed four at a time (packs) */
    for (int i = 0; i < Q8_BLOCK / 4; i++) {
#if SF_Q8_BYTES
        typedef unsigned char u8x4 __attribute__((vector_size(4)));
        u8x4 v = __builtin_convertvector(q[i], u8x4);
#else
        typedef short i16x4 __attribute__((vector_size(8)));
        i16x4 v = __builtin_convertvector(q[i], i16x4);
#endif
        memcpy(dst + sizeof v * (size_t)i, &v, sizeof v);
    }
#endif
}

/* x (K) -> row: the scale and zero point of qgemm.h, then the values. Vector
 * code through simd.h's v4 (wasm SIMD128, SSE natively): the same integers
 * on every target, as only exact operations (min, max, one rounding per
 * multiply and add) decide them. Two independent chains of min / max: their
 * latency, not their count, bounds the first pass. */
static void quantize_row(unsigned char *row, const float *x, int K) {
    v4 lo0 = v4_zero(), hi0 = lo0, bad0 = lo0, lo1 = lo0, hi1 = lo0, bad1 = lo0;
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        v4 a = v4_load(x + k), b = v4_load(x + k + 4);
        lo0 = v4_min(lo0, a), hi0 = v4_max(hi0, a), bad0 += a - a; /* 0, or NaN from a NaN or an infinity (min and max skip NaNs) */
        lo1 = v4_min(lo1, b), hi1 = v4_max(hi1, b), bad1 += b - b;
    }
    for (; k + 4 <= K; k += 4) {
        v4 a = v4_load(x + k);
        lo0 = v4_min(lo0, a), hi0 = v4_max(hi0, a), bad0 += a - a;
    }
    lo0 = v4_min(lo0, lo1), hi0 = v4_max(hi0, hi1), bad0 += bad1;
    lo0 = v4_min(lo0, __builtin_shufflevector(lo0, lo0, 2, 3, 0, 1)), hi0 = v4_max(hi0, __builtin_shufflevector(hi0, hi0, 2, 3, 0, 1));
    float lo = v4_min(lo0, __builtin_shufflevector(lo0, lo0, 1, 0, 3, 2))[0], hi = v4_max(hi0, __builtin_shufflevector(hi0, hi0, 1, 0, 3, 2))[0];
    float bad = v4_sum(bad0);
    for (; k < K; k++) {
        lo = x[k] < lo ? x[k] : lo, hi = x[k] > hi ? x[k] : hi;
        bad += x[k] - x[k];
    }
    /* hi/AMAX - lo/AMAX rather than (hi - lo)/AMAX: no overflow for |x| near FLT_MAX */
    float s = hi / (float)SF_Q8_AMAX - lo / (float)SF_Q8_AMAX, inv = 0;
    int32_t zp = 0;
    if (bad != 0)
        s = NAN;
    else if (!(s >= FLT_MIN))
        s = 0; /* all zero or tiny: x_q = zp = 0 */
    else {
        inv = 1.0f / s; /* <= 2^126: finite */
        float z = -lo * inv;
        z = z + MAGIC; /* separate statements: never contracted into a fused multiply-add */
        int32_t zb;
        memcpy(&zb, &z, 4);
        zp = zb - MAGIC_BITS;
        zp = zp > SF_Q8_AMAX ? SF_Q8_AMAX : zp; /* -lo * inv <= AMAX (1 + 2^-22): at most AMAX + 1 before */
    }
    memcpy(row, &s, 4);
    memcpy(row + 4, &zp, 4);
    memset(row + 8, 0, Q8_ROW_HEAD - 8);
    /* x_q = clamp(round(x inv + zp), 0, AMAX): x inv + (MAGIC + zp) rounds the exact
     * sum to an integer (ulp 1 in [2^23, 2^24)); clamped there, as floats, then read as bits */
    v4 inv4 = v4_splat(inv), base4 = v4_splat(MAGIC + (float)zp), lo_q = v4_splat(MAGIC), hi_q = v4_splat(MAGIC + SF_Q8_AMAX);
    v4i off4 = (v4i){MAGIC_BITS, MAGIC_BITS, MAGIC_BITS, MAGIC_BITS};
#if !SF_Q8_BYTES
    off4 += zp; /* stored: x_q - zp, i16 */
#endif
    unsigned char *q = row + Q8_ROW_HEAD;
    int n = (int)((sf_q8_act_row_bytes(K) - Q8_ROW_HEAD) / SF_Q8_AESIZE); /* values incl. padding: a multiple of Q8_BLOCK */
    for (k = 0; k < n; k += Q8_BLOCK) {
        float tail[Q8_BLOCK];
        const float *xs = x + k;
        if (k + Q8_BLOCK > K) { /* the last values and the padding, as x = 0 */
            memset(tail, 0, sizeof tail);
            if (k < K) memcpy(tail, x + k, sizeof(float) * (size_t)(K - k));
            xs = tail;
        }
        v4i qv[4];
        for (int i = 0; i < Q8_BLOCK / 4; i++) {
            v4 t = v4_load(xs + 4 * i) * inv4;
            t = t + base4;
            t = v4_min(v4_max(t, lo_q), hi_q);
            qv[i] = (v4i)t - off4;
        }
        store_block(q + (size_t)k * SF_Q8_AESIZE, qv);
    }
}

void q8_quantize_rows(void *xq, const float *x, size_t ldx, int M, int K) {
    size_t rb = sf_q8_act_row_bytes(K);
    for (int m = 0; m < M; m++) quantize_row((unsigned char *)xq + m * rb, x + m * ldx, K);
}

/* ------------------------------------------------------------ kernels */

#if defined(__wasm_simd128__)

/* Eight int32 results of one row (two i32x4) -> out (or iout). tail: the
 * panel's 8 scales then 8 column sums; row: the quantized row's head. */
static inline void store_row(float *out, int32_t *iout, const unsigned char *row, v128_t c0, v128_t c1, const unsigned char *tail, const float *bias8,
                             int ncols) {
    float sa;
    memcpy(&sa, row, 4);
#if SF_Q8_BYTES /* x_q - zp: sum x_q w_q - zp sum w_q */
    int32_t zp;
    memcpy(&zp, row + 4, 4);
    v128_t z = wasm_i32x4_splat(zp);
    c0 = wasm_i32x4_sub(c0, wasm_i32x4_mul(z, wasm_v128_load(tail + 32)));
    c1 = wasm_i32x4_sub(c1, wasm_i32x4_mul(z, wasm_v128_load(tail + 48)));
#endif
    if (iout) {
        int32_t t[8];
        wasm_v128_store(t, c0), wasm_v128_store(t + 4, c1);
        memcpy(iout, t, sizeof(int32_t) * (size_t)ncols);
        return;
    }
    v128_t s = wasm_f32x4_splat(sa);
    v128_t f0 = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(c0), wasm_f32x4_mul(s, wasm_v128_load(tail)));
    v128_t f1 = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(c1), wasm_f32x4_mul(s, wasm_v128_load(tail + 16)));
    f0 = wasm_f32x4_add(f0, wasm_v128_load(bias8));
    f1 = wasm_f32x4_add(f1, wasm_v128_load(bias8 + 4));
    if (ncols == 8) {
        wasm_v128_store(out, f0), wasm_v128_store(out + 4, f1);
        return;
    }
    float t[8];
    wasm_v128_store(t, f0), wasm_v128_store(t + 4, f1);
    memcpy(out, t, sizeof(float) * (size_t)ncols);
}

/* b: 16 weights, 4 consecutive k of 4 columns; x: a row's 4 values of those k, splat */
#define Q8_DOT_ADD(b, x, c) (v128_t) __builtin_wasm_relaxed_dot_i8x16_i7x16_add_s_i32x4((__i8x16)(b), (__i8x16)(x), (__i32x4)(c))
#define Q8_DOT_I16(b, x, c)                                                                                                                          \
    wasm_i32x4_add(c, wasm_i32x4_extadd_pairwise_i16x8((v128_t)__builtin_wasm_relaxed_dot_i8x16_i7x16_s_i16x8((__i8x16)(b), (__i8x16)(x))))
/* b: 8 weights widened to i16, 2 consecutive k of 4 columns; x: a row's 2 values, splat */
#define Q8_DOT_I32(b, x, c) wasm_i32x4_add(c, wasm_i32x4_dot_i16x8(x, b))
#if SF_Q8_BYTES
#define Q8_LOADB(w) v128_t b0 = wasm_v128_load(w), b1 = wasm_v128_load((w) + 16)
#else
#define Q8_LOADB(w) v128_t b0 = wasm_i16x8_load8x8(w), b1 = wasm_i16x8_load8x8((w) + 8)
#endif
#define Q8_GROUP_BYTES (SF_Q8_NR * SF_Q8_KR)

/* Rows r of the tile: named accumulators (clang leaves an array of them in memory). */
#define Q8_DECL(r)                                                                                                                                   \
    v128_t c##r##0 = wasm_i32x4_splat(0), c##r##1 = c##r##0;                                                                                         \
    const unsigned char *a##r = rows + (size_t)(r)*rb + Q8_ROW_HEAD;
#define Q8_STEP(r)                                                                                                                                   \
    {                                                                                                                                                \
        v128_t x = wasm_v128_load32_splat(a##r);                                                                                                     \
        a##r += 4;                                                                                                                                   \
        c##r##0 = Q8_DOT(b0, x, c##r##0);                                                                                                            \
        c##r##1 = Q8_DOT(b1, x, c##r##1);                                                                                                            \
    }
#define Q8_STORE(r)                                                                                                                                  \
    store_row(out ? out + (size_t)(r)*ldo : NULL, iout ? iout + (size_t)(r)*ldo : NULL, rows + (size_t)(r)*rb, c##r##0, c##r##1, tail, bias8, ncols);

#define Q8_KERNEL(name, ROWS)                                                                                                                        \
    static void name(float *out, int32_t *iout, size_t ldo, const unsigned char *rows, size_t rb, const unsigned char *w, int G,                     \
                     const unsigned char *tail, const float *bias8, int ncols) {                                                                     \
        ROWS(Q8_DECL)                                                                                                                                \
        for (int g = 0; g < G; g++, w += Q8_GROUP_BYTES) {                                                                                           \
            Q8_LOADB(w);                                                                                                                             \
            ROWS(Q8_STEP)                                                                                                                            \
        }                                                                                                                                            \
        ROWS(Q8_STORE)                                                                                                                               \
    }
#define Q8_R1(X)  X(0)
#define Q8_R2(X)  X(0) X(1)
#define Q8_R3(X)  X(0) X(1) X(2)
#define Q8_R4(X)  X(0) X(1) X(2) X(3)
#define Q8_R5(X)  X(0) X(1) X(2) X(3) X(4)
#define Q8_R6(X)  X(0) X(1) X(2) X(3) X(4) X(5)
#define Q8_RX(n)  Q8_RX_(n)
#define Q8_RX_(n) Q8_R##n

#if SF_Q8_BYTES
#define Q8_DOT Q8_DOT_ADD
Q8_KERNEL(kernel_mr_add, Q8_RX(Q8_MR))
Q8_KERNEL(kernel_1_add, Q8_R1)
#undef Q8_DOT
#define Q8_DOT Q8_DOT_I16
Q8_KERNEL(kernel_mr_i16, Q8_RX(Q8_MR))
Q8_KERNEL(kernel_1_i16, Q8_R1)

/* Whether this engine computes i32x4.relaxed_dot_i8x16_i7x16_add_s right. V8
 * 11.3 (Node 20 with --experimental-wasm-relaxed-simd) does not in its
 * baseline compiler, Liftoff, on x64 without AVX-VNNI: it returns twice the
 * dot product and drops the accumulator (its optimizing compiler is right;
 * measured here: bench/qgemm.c check() fails until the kernels tier up). Every
 * function runs in the baseline tier first, and so does this probe: where it
 * fails, the kernels take i16x8.relaxed_dot_i8x16_i7x16_s + extadd_pairwise
 * instead, right there (and as fast under V8 11.3, which lowers both to
 * pmaddubsw + pmaddwd), but with no fused form: where the engine lowers the
 * add form to one vpdpbusd (AVX-VNNI) or SDOT (arm64), twice as slow. */
__attribute__((noinline)) static int dot_add_works(int seed) {
    signed char a[16], b[16];
    int32_t c[4], want[4];
    for (int i = 0; i < 16; i++) a[i] = (signed char)((i * 37 + seed) % 255 - 127), b[i] = (signed char)((i * 53 + seed) & 127);
    for (int l = 0; l < 4; l++) {
        want[l] = c[l] = l * 1000 - seed;
        for (int j = 0; j < 4; j++) want[l] += a[4 * l + j] * b[4 * l + j];
    }
    wasm_v128_store(c, Q8_DOT_ADD(wasm_v128_load(a), wasm_v128_load(b), wasm_v128_load(c)));
    return memcmp(c, want, sizeof c) == 0;
}
static int use_dot_add; /* 0: not probed yet, 1: the add form, 2: the i16 form */

static void kernel_mr(float *out, int32_t *iout, size_t ldo, const unsigned char *rows, size_t rb, const unsigned char *w, int G,
                      const unsigned char *tail, const float *bias8, int ncols) {
    if (use_dot_add == 1)
        kernel_mr_add(out, iout, ldo, rows, rb, w, G, tail, bias8, ncols);
    else
        kernel_mr_i16(out, iout, ldo, rows, rb, w, G, tail, bias8, ncols);
}
static void kernel_1(float *out, int32_t *iout, size_t ldo, const unsigned char *rows, size_t rb, const unsigned char *w, int G,
                     const unsigned char *tail, const float *bias8, int ncols) {
    if (use_dot_add == 1)
        kernel_1_add(out, iout, ldo, rows, rb, w, G, tail, bias8, ncols);
    else
        kernel_1_i16(out, iout, ldo, rows, rb, w, G, tail, bias8, ncols);
}
#ifdef Q8_FORCE_I16 /* measurements: the i16 form where the add form works */
#define Q8_PROBE(seed) ((void)dot_add_works, (void)(seed), use_dot_add = 2)
#else
#define Q8_PROBE(seed) (use_dot_add = use_dot_add ? use_dot_add : dot_add_works(seed) ? 1 : 2)
#endif
const char *q8_kernel_name(void) {
    Q8_PROBE(1);
    return use_dot_add == 1 ? "relaxed i32x4.dot_i8x16_i7x16_add" : "relaxed i16x8.dot_i8x16_i7x16 + extadd";
}
#else
#define Q8_DOT         Q8_DOT_I32
Q8_KERNEL(kernel_mr, Q8_RX(Q8_MR))
Q8_KERNEL(kernel_1, Q8_R1)
#define Q8_PROBE(seed) ((void)(seed))
const char *q8_kernel_name(void) { return "simd128 i32x4.dot_i16x8"; }
#endif
#define Q8_TILE_ROWS Q8_MR

#elif defined(SF_VARIANT) /* native, one instruction set of core/isa.c: SF_VW i32 lanes, a column each */

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

typedef signed char vfb __attribute__((vector_size(SF_VW * 4))); /* the bytes of one vector */
typedef short vfs __attribute__((vector_size(SF_VW * 4)));       /* its i16 lanes */

/* c + the dot products of one vector: lane n gets the KR products of column n
 *   bytes: x (the row's 4 values of a k group, splat) . w (4 k of column n)
 *   i16:   x (the row's 2 values, splat) . w (2 k of column n, widened) */
__attribute__((unused)) static inline vfi q8_dot(vfi c, vfi x, vfi w) { /* unused by i8mm */
#if SF_Q8_BYTES && SF_VW == 16 && defined(__AVX512VNNI__)
    return (vfi)_mm512_dpbusd_epi32((__m512i)c, (__m512i)x, (__m512i)w);
#elif SF_Q8_BYTES && SF_VW == 8 && defined(__AVXVNNI__)
    return (vfi)_mm256_dpbusd_avx_epi32((__m256i)c, (__m256i)x, (__m256i)w);
#elif SF_Q8_BYTES && SF_VW == 16 /* u7: a pair of products never saturates i16 */
    return c + (vfi)_mm512_madd_epi16(_mm512_maddubs_epi16((__m512i)x, (__m512i)w), _mm512_set1_epi16(1));
#elif SF_Q8_BYTES && SF_VW == 8
    return c + (vfi)_mm256_madd_epi16(_mm256_maddubs_epi16((__m256i)x, (__m256i)w), _mm256_set1_epi16(1));
#elif SF_Q8_BYTES && defined(__ARM_FEATURE_DOTPROD) /* u7 activations are s8 too */
    return (vfi)vdotq_s32((int32x4_t)c, (int8x16_t)x, (int8x16_t)w);
#elif !SF_Q8_BYTES && defined(__SSE2__) && SF_VW == 4
    return c + (vfi)__builtin_ia32_pmaddwd128((vfs)x, (vfs)w);
#elif !SF_Q8_BYTES && defined(__aarch64__) && SF_VW == 4
    int16x8_t a = (int16x8_t)x, b = (int16x8_t)w;
    return c + (vfi)vpaddq_s32(vmull_s16(vget_low_s16(a), vget_low_s16(b)), vmull_high_s16(a, b));
#else
#error "no q8 dot product for this variant"
#endif
}

/* One group's half of a panel as the vector q8_dot takes: bytes as they are;
 * i16: SF_VW * 2 weights widened (the load8x8_s of SIMD128) */
__attribute__((unused)) static inline vfi q8_loadw(const unsigned char *w) {
#if SF_Q8_BYTES
    vfi v;
    memcpy(&v, w, sizeof v);
    return v;
#else
    typedef signed char half __attribute__((vector_size(SF_VW * 2)));
    half h;
    memcpy(&h, w, sizeof h);
    return (vfi) __builtin_convertvector(h, vfs);
#endif
}

/* The row's values of one k group, in every lane: four bytes, or two i16 */
__attribute__((unused)) static inline vfi q8_splat(const unsigned char *a) {
    int32_t v;
    memcpy(&v, a, 4);
    return (vfi){0} + v;
}

/* The NR int32 results of one row (two vectors) -> out (or iout). tail: the
 * panel's NR scales then NR column sums; row: the quantized row's head. */
static inline void store_row(float *out, int32_t *iout, const unsigned char *row, vfi c0, vfi c1, const unsigned char *tail, const float *bias,
                             int ncols) {
    float sa;
    memcpy(&sa, row, 4);
#if SF_Q8_BYTES /* x_q - zp: sum x_q w_q - zp sum w_q */
    int32_t zp;
    memcpy(&zp, row + 4, 4);
    vfi s0, s1;
    memcpy(&s0, tail + SF_Q8_NR * 4, sizeof s0), memcpy(&s1, tail + SF_Q8_NR * 4 + sizeof s0, sizeof s1);
    c0 -= zp * s0, c1 -= zp * s1;
#endif
    if (iout) {
        int32_t t[SF_Q8_NR];
        memcpy(t, &c0, sizeof c0), memcpy(t + SF_VW, &c1, sizeof c1);
        memcpy(iout, t, sizeof(int32_t) * (size_t)ncols);
        return;
    }
    vf s = vf_splat(sa);
    vf f0 = __builtin_convertvector(c0, vf) * (s * vf_load((const float *)tail));
    vf f1 = __builtin_convertvector(c1, vf) * (s * vf_load((const float *)tail + SF_VW));
    f0 = f0 + vf_load(bias), f1 = f1 + vf_load(bias + SF_VW);
    if (ncols == SF_Q8_NR) {
        vf_store(out, f0), vf_store(out + SF_VW, f1);
        return;
    }
    float t[SF_Q8_NR];
    vf_store(t, f0), vf_store(t + SF_VW, f1);
    memcpy(out, t, sizeof(float) * (size_t)ncols);
}

#if SF_Q8_KR == 8 /* arm64 i8mm: usmmla, (2 rows x 8 k) u8 times (8 k x 2 columns) s8 into a 2 x 2 block of i32 */

/* Up to four rows (two pairs; a single row is paired with itself) by the panel's 8
 * columns, four column pairs: per group of 8 k, a pair's two rows in one vector, the
 * panel's four 16-byte pairs of columns (8 k of column 2j, then of 2j + 1) */
static void kernel_i8mm(float *out, int32_t *iout, size_t ldo, const unsigned char *rows, size_t rb, const unsigned char *w, int G,
                        const unsigned char *tail, const float *bias8, int ncols, int nrows) {
    const unsigned char *a0 = rows + Q8_ROW_HEAD, *a1 = nrows > 1 ? a0 + rb : a0, *a2 = nrows > 2 ? a0 + 2 * rb : a0,
                        *a3 = nrows > 3 ? a0 + 3 * rb : a2;
    int32x4_t p0 = vdupq_n_s32(0), p1 = p0, p2 = p0, p3 = p0, q0 = p0, q1 = p0, q2 = p0, q3 = p0;
    for (int g = 0; g < G; g++, w += 64) {
        uint8x16_t x01 = vcombine_u8(vld1_u8(a0 + 8 * (size_t)g), vld1_u8(a1 + 8 * (size_t)g));
        uint8x16_t x23 = vcombine_u8(vld1_u8(a2 + 8 * (size_t)g), vld1_u8(a3 + 8 * (size_t)g));
        int8x16_t b0 = vld1q_s8((const int8_t *)w), b1 = vld1q_s8((const int8_t *)w + 16), b2 = vld1q_s8((const int8_t *)w + 32),
                  b3 = vld1q_s8((const int8_t *)w + 48);
        p0 = vusmmlaq_s32(p0, x01, b0), p1 = vusmmlaq_s32(p1, x01, b1), p2 = vusmmlaq_s32(p2, x01, b2), p3 = vusmmlaq_s32(p3, x01, b3);
        if (nrows > 2) q0 = vusmmlaq_s32(q0, x23, b0), q1 = vusmmlaq_s32(q1, x23, b1), q2 = vusmmlaq_s32(q2, x23, b2), q3 = vusmmlaq_s32(q3, x23, b3);
    }
    /* block j: [first row . column 2j, . column 2j + 1, second row . 2j, . 2j + 1] */
    const int32x4_t *blocks[2][4] = {{&p0, &p1, &p2, &p3}, {&q0, &q1, &q2, &q3}};
    for (int r = 0; r < nrows; r++) {
        const int32x4_t *const *b = blocks[r / 2];
        int32x4_t lo, hi;
        if (r % 2 == 0)
            lo = vcombine_s32(vget_low_s32(*b[0]), vget_low_s32(*b[1])), hi = vcombine_s32(vget_low_s32(*b[2]), vget_low_s32(*b[3]));
        else
            lo = vcombine_s32(vget_high_s32(*b[0]), vget_high_s32(*b[1])), hi = vcombine_s32(vget_high_s32(*b[2]), vget_high_s32(*b[3]));
        store_row(out ? out + (size_t)r * ldo : NULL, iout ? iout + (size_t)r * ldo : NULL, rows + (size_t)r * rb, (vfi)lo, (vfi)hi, tail, bias8,
                  ncols);
    }
}
#define Q8_I8MM(n)                                                                                                                                   \
    static void kernel_##n(float *out, int32_t *iout, size_t ldo, const unsigned char *rows, size_t rb, const unsigned char *w, int G,               \
                           const unsigned char *tail, const float *bias8, int ncols) {                                                               \
        kernel_i8mm(out, iout, ldo, rows, rb, w, G, tail, bias8, ncols, n);                                                                          \
    }
typedef void (*q8_kernel)(float *out, int32_t *iout, size_t ldo, const unsigned char *rows, size_t rb, const unsigned char *w, int G,
                          const unsigned char *tail, const float *bias8, int ncols);
Q8_I8MM(1)
Q8_I8MM(2)
Q8_I8MM(3)
Q8_I8MM(4)
#define Q8_NMR 4
static const q8_kernel q8_kernels[Q8_NMR + 1] = {NULL, kernel_1, kernel_2, kernel_3, kernel_4};

#else
/* Rows of the tile, each with two accumulators (named: clang leaves an array in memory) */
#define Q8_GROUP_BYTES (SF_Q8_NR * SF_Q8_KR)
#define Q8_DECL(r)                                                                                                                                   \
    vfi c##r##0 = {0}, c##r##1 = {0};                                                                                                                \
    const unsigned char *a##r = rows + (size_t)(r)*rb + Q8_ROW_HEAD;
#define Q8_STEP(r)                                                                                                                                   \
    {                                                                                                                                                \
        vfi x = q8_splat(a##r + 4 * (size_t)g);                                                                                                      \
        c##r##0 = q8_dot(c##r##0, x, b0);                                                                                                            \
        c##r##1 = q8_dot(c##r##1, x, b1);                                                                                                            \
    }
#define Q8_STORE(r)                                                                                                                                  \
    store_row(out ? out + (size_t)(r)*ldo : NULL, iout ? iout + (size_t)(r)*ldo : NULL, rows + (size_t)(r)*rb, c##r##0, c##r##1, tail, bias8, ncols);
#define Q8_KERNEL(name, ROWS)                                                                                                                        \
    static void name(float *out, int32_t *iout, size_t ldo, const unsigned char *rows, size_t rb, const unsigned char *w, int G,                     \
                     const unsigned char *tail, const float *bias8, int ncols) {                                                                     \
        ROWS(Q8_DECL)                                                                                                                                \
        for (int g = 0; g < G; g++, w += Q8_GROUP_BYTES) {                                                                                           \
            vfi b0 = q8_loadw(w), b1 = q8_loadw(w + Q8_GROUP_BYTES / 2);                                                                             \
            ROWS(Q8_STEP)                                                                                                                            \
        }                                                                                                                                            \
        ROWS(Q8_STORE)                                                                                                                               \
    }
#define Q8_R1(X) X(0)
#define Q8_R2(X) Q8_R1(X) X(1)
#define Q8_R3(X) Q8_R2(X) X(2)
#define Q8_R4(X) Q8_R3(X) X(3)
#define Q8_R5(X) Q8_R4(X) X(4)
#define Q8_R6(X) Q8_R5(X) X(5)
#define Q8_R7(X) Q8_R6(X) X(6)
#define Q8_R8(X) Q8_R7(X) X(7)
/* rows per tile: every accumulator, the two weight vectors, the splat (and
 * vpmaddubsw's temporaries) in registers: 16 ymm, 32 zmm */
#if SF_VW == 16
#define Q8_NMR 8
#elif SF_VW == 8 && SF_Q8_AMAX == 255
#define Q8_NMR 6
#else
#define Q8_NMR 4
#endif
typedef void (*q8_kernel)(float *out, int32_t *iout, size_t ldo, const unsigned char *rows, size_t rb, const unsigned char *w, int G,
                          const unsigned char *tail, const float *bias8, int ncols);
Q8_KERNEL(kernel_1, Q8_R1)
Q8_KERNEL(kernel_2, Q8_R2)
Q8_KERNEL(kernel_3, Q8_R3)
Q8_KERNEL(kernel_4, Q8_R4)
#if Q8_NMR > 4
Q8_KERNEL(kernel_5, Q8_R5)
Q8_KERNEL(kernel_6, Q8_R6)
#endif
#if Q8_NMR > 6
Q8_KERNEL(kernel_7, Q8_R7)
Q8_KERNEL(kernel_8, Q8_R8)
#endif
static const q8_kernel q8_kernels[Q8_NMR + 1] = {
    NULL,     kernel_1, kernel_2, kernel_3, kernel_4,
#if Q8_NMR > 4
    kernel_5, kernel_6,
#endif
#if Q8_NMR > 6
    kernel_7, kernel_8,
#endif
};
#endif /* i8mm */
#define Q8_TILE_ROWS    Q8_NMR
#define Q8_PROBE(seed)  ((void)(seed))
static void kernel_mr(float *out, int32_t *iout, size_t ldo, const unsigned char *rows, size_t rb, const unsigned char *w, int G,
                      const unsigned char *tail, const float *bias8, int ncols) {
    q8_kernels[Q8_NMR](out, iout, ldo, rows, rb, w, G, tail, bias8, ncols);
}
#define Q8_TAIL_KERNELS q8_kernels /* the last M % tile rows in one call */
const char *q8_kernel_name(void) {
#if SF_Q8_KR == 8
    return "neon i8mm usmmla (u8)";
#elif SF_Q8_BYTES && (defined(__AVX512VNNI__) || defined(__AVXVNNI__))
    return SF_VW == 16 ? "avx512-vnni vpdpbusd (u8)" : "avx-vnni vpdpbusd (u8)";
#elif SF_Q8_BYTES && SF_VW == 16
    return "avx512bw vpmaddubsw (u7)";
#elif SF_Q8_BYTES && SF_VW == 8
    return "avx2 vpmaddubsw (u7)";
#elif SF_Q8_BYTES
    return "neon sdot (u7)";
#elif defined(__aarch64__)
    return "neon smull (u8)";
#else
    return "sse2 pmaddwd (u8)";
#endif
}

#else /* native: plain C on the same layout, the same integers and floats */

/* The f32 epilogue, as the vector code computes it lane by lane:
 *   out = (float)acc * (s_a * s_w) + bias, three roundings, never fused. */
static float dequant(int32_t acc, float sa, float sw, float b) {
    float f = (float)acc * (sa * sw);
    return f + b;
}

static void kernel_rows(float *out, int32_t *iout, size_t ldo, const unsigned char *rows, size_t rb, const unsigned char *w, int G,
                        const unsigned char *tail, const float *bias8, int ncols, int nrows) {
    for (int r = 0; r < nrows; r++) {
        const unsigned char *row = rows + (size_t)r * rb;
        float sa, sw[8];
        int32_t zp, cs[8];
        memcpy(&sa, row, 4), memcpy(&zp, row + 4, 4), memcpy(sw, tail, 32), memcpy(cs, tail + 32, 32);
        for (int c = 0; c < ncols; c++) {
            int32_t acc = 0;
            for (int k = 0; k < G * SF_Q8_KR; k++) {
#if SF_Q8_BYTES
                int32_t a = row[Q8_ROW_HEAD + k];
#else
                int16_t a;
                memcpy(&a, row + Q8_ROW_HEAD + 2 * (size_t)k, 2);
#endif
                acc += a * (int8_t)w[woff(c, k)];
            }
#if SF_Q8_BYTES
            acc -= zp * cs[c];
#else
            (void)zp, (void)cs;
#endif
            if (iout)
                iout[(size_t)r * ldo + c] = acc;
            else
                out[(size_t)r * ldo + c] = dequant(acc, sa, sw[c], bias8[c]);
        }
    }
}
#define Q8_TILE_ROWS   4
#define Q8_PROBE(seed) ((void)(seed))
const char *q8_kernel_name(void) { return SF_Q8_BYTES ? "c (relaxed layout)" : "c (simd128 layout)"; }
static void kernel_mr(float *out, int32_t *iout, size_t ldo, const unsigned char *rows, size_t rb, const unsigned char *w, int G,
                      const unsigned char *tail, const float *bias8, int ncols) {
    kernel_rows(out, iout, ldo, rows, rb, w, G, tail, bias8, ncols, Q8_TILE_ROWS);
}
static void kernel_1(float *out, int32_t *iout, size_t ldo, const unsigned char *rows, size_t rb, const unsigned char *w, int G,
                     const unsigned char *tail, const float *bias8, int ncols) {
    kernel_rows(out, iout, ldo, rows, rb, w, G, tail, bias8, ncols, 1);
}
#endif

/* Panels outer, rows inner: a panel (K x 8 bytes) stays in L1 while the rows pass over it. */
__attribute__((noinline)) static void q8_gemm(float *out, int32_t *iout, size_t ldo, const void *xq, const void *wq, const float *bias, int M, int K,
                                              int N) {
    size_t rb = sf_q8_act_row_bytes(K), pb = sf_q8_panel_bytes(K);
    int G = (int)(kpad(K) / SF_Q8_KR);
    const unsigned char *rows = xq;
    Q8_PROBE(K);
    for (int p = 0; p < N; p += SF_Q8_NR) {
        int ncols = N - p < SF_Q8_NR ? N - p : SF_Q8_NR;
        float bias8[SF_Q8_NR] = {0};
        if (bias) memcpy(bias8, bias + p, sizeof(float) * (size_t)ncols);
        const unsigned char *w = (const unsigned char *)wq + (size_t)(p / SF_Q8_NR) * pb, *tail = w + kpad(K) * SF_Q8_NR;
        float *o = out ? out + p : NULL;
        int32_t *io = iout ? iout + p : NULL;
        int m = 0;
        for (; m + Q8_TILE_ROWS <= M; m += Q8_TILE_ROWS)
            kernel_mr(o ? o + m * ldo : NULL, io ? io + m * ldo : NULL, ldo, rows + m * rb, rb, w, G, tail, bias8, ncols);
#ifdef Q8_TAIL_KERNELS
        if (m < M) Q8_TAIL_KERNELS[M - m](o ? o + m * ldo : NULL, io ? io + m * ldo : NULL, ldo, rows + m * rb, rb, w, G, tail, bias8, ncols);
#else
        for (; m < M; m++) kernel_1(o ? o + m * ldo : NULL, io ? io + m * ldo : NULL, ldo, rows + m * rb, rb, w, G, tail, bias8, ncols);
#endif
    }
}

void q8_matmul_forward(float *out, size_t ldo, const void *xq, const void *wq, const float *bias, int M, int K, int N) {
    q8_gemm(out, NULL, ldo, xq, wq, bias, M, K, N);
}

void q8_matmul_forward_f32(float *out, size_t ldo, const float *inp, size_t ldi, void *scratch, const void *wq, const float *bias, int M, int K,
                           int N) {
    q8_quantize_rows(scratch, inp, ldi, M, K);
    q8_gemm(out, NULL, ldo, scratch, wq, bias, M, K, N);
}

void q8_matmul_i32(int32_t *acc, size_t lda, const void *xq, const void *wq, int M, int K, int N) { q8_gemm(NULL, acc, lda, xq, wq, NULL, M, K, N); }
