/* int8 matrix products: the scheme of onnxruntime's dynamic quantization.
 *
 *   weights      per output channel, symmetric int8: s_w[n] = max_k |w[n][k]| / 127,
 *                w_q = round(w / s_w) in [-127, 127], packed once at load
 *   activations  per row, asymmetric unsigned, quantized at every call:
 *                x ~ s_a (x_q - zp), x_q in [0, SF_Q8_AMAX]
 *   product      out[m][n] = s_a[m] s_w[n] (sum_k x_q w_q - zp[m] sum_k w_q[n][k]) + bias[n],
 *                int32 accumulation, exact (K <= SF_Q8_MAX_K), the f32 epilogue unfused
 *
 * Two kernels, chosen at compile time (core/qgemm.c says why and what was measured):
 *   relaxed SIMD (__wasm_relaxed_simd__): i32x4.relaxed_dot_i8x16_i7x16_add_s with the
 *       weights (signed) in the first operand and 7-bit activations [0, 127] in the
 *       second: every engine then computes the same exact integers (relaxed-simd
 *       Overview: a second operand with its high bit clear is read the same signed
 *       or unsigned, and a pair of products, |.| <= 2 * 127 * 128, never saturates i16)
 *   SIMD128 (and native, in plain C with the same integers): i32x4.dot_i16x8_s on
 *       8-bit activations [0, 255] and the weights, both widened to i16.
 * The relaxed build so gives up one bit of activation precision (see SF_Q8_AMAX):
 * its quantization step is twice u8's. Measured on whole forwards
 * (bench/q8_accuracy.py, the benchmark's MiniLM-L6 / BERT-base weights, T = 128,
 * against f32): relative RMS error of the hidden states, u8 per row 5.6e-3 /
 * 8.6e-3, u7 per row 1.0e-2 / 1.6e-2 (onnxruntime's u8 per tensor: 7.4e-3 /
 * 1.1e-2); smallest per-token cosine u8 0.99998 / 0.99995, u7 0.99993 / 0.99984
 * (ORT 0.99996 / 0.99993); with two outlier features x10 (as trained BERTs have)
 * u7 per row 0.99988 where ORT's per tensor drops to 0.99143 (BERT-base).
 * Natively, -DSF_Q8_EMULATE_RELAXED builds the relaxed variant's layout and
 * rounding in plain C (tests/native/qgemm.c runs both).
 *
 * The relaxed form is chosen by a probe at the first call (core/qgemm.c): call
 * q8_kernel_name() once before threads share the kernels.
 *
 * Every output element is computed by the same integer and float operations
 * whatever panel range or row block it is computed in, and each row's
 * quantization is a function of that row alone: threads may split N by panels
 * and M by rows freely and get bit-identical results.
 *
 * A q8 tensor in a model file (suggested): `name` I8 [N, K] (w_q, row-major as
 * PyTorch's Linear weight) + `name.scale` F32 [N] (s_w); dequantized w = w_q * s_w.
 * q8_pack_linear_i8 packs it without requantizing; q8_pack_linear quantizes
 * F32 / F16 / BF16 sources on load. */
#ifndef SF_QGEMM_H
#define SF_QGEMM_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h" /* sf_load_fn, SF_NR */

/* Three schemes, by the instruction that multiplies (core/variant.h lists the native ones):
 *   bytes, u7 (relaxed SIMD; natively vpmaddubsw, whose pairs of products saturate
 *             i16 past 127 x 128 x 2, and sdot, signed on both sides): x_q in [0, 127]
 *   bytes, u8 (natively vpdpbusd, AVX-VNNI or AVX512-VNNI: u8 x s8 in four-product
 *             groups, no intermediate saturation; usmmla, arm64 i8mm, in eight-product
 *             groups): x_q in [0, 255]
 *   i16       (SIMD128; natively pmaddwd on SSE2 and NEON): x_q - zp stored as i16 */
#if defined(SF_VARIANT) && defined(__ARM_FEATURE_MATMUL_INT8)
#define SF_Q8_BYTES 1
#define SF_Q8_AMAX  255 /* activations u8 */
#elif defined(__wasm_relaxed_simd__) || defined(SF_Q8_EMULATE_RELAXED) ||                                                                            \
    (defined(SF_VARIANT) && !defined(__AVX512VNNI__) && !defined(__AVXVNNI__) && (defined(__AVX2__) || defined(__ARM_FEATURE_DOTPROD)))
#define SF_Q8_BYTES 1
#define SF_Q8_AMAX  127 /* activations u7: deterministic relaxed dot, 1 bit less precision */
#elif defined(SF_VARIANT) && (defined(__AVX512VNNI__) || defined(__AVXVNNI__))
#define SF_Q8_BYTES 1
#define SF_Q8_AMAX  255 /* activations u8 */
#else
#define SF_Q8_BYTES 0
#define SF_Q8_AMAX  255 /* activations u8 */
#endif
#if SF_Q8_BYTES && defined(SF_VARIANT) && defined(__ARM_FEATURE_MATMUL_INT8)
#define SF_Q8_KR     8 /* k interleave: usmmla multiplies 8 consecutive k of two rows by two columns */
#define SF_Q8_AESIZE 1
#elif SF_Q8_BYTES
#define SF_Q8_KR     4 /* k interleave: one dot lane sums 4 consecutive k */
#define SF_Q8_AESIZE 1 /* bytes per quantized activation: x_q */
#else
#define SF_Q8_KR     2 /* k interleave: one i32x4.dot_i16x8_s lane sums 2 consecutive k */
#define SF_Q8_AESIZE 2 /* stored widened to i16 as x_q - zp, in [-255, 255] */
#endif
#define SF_Q8_NR SF_NR /* output columns per panel: the f32 kernels' (threads split both alike) */
/* The largest K: |sum_k (x_q - zp) w_q| <= K * 255 * 128 must fit int32,
 * 65536 * 32640 = 2139095040 < 2^31 - 1 (and so every partial sum and zp * colsum). */
#define SF_Q8_MAX_K 65536

/* ---------------------------------------------------------------- weights
 * Packed layout (bytes), panel after panel, each self-contained so that a
 * panel pointer and a column count are all a kernel needs:
 *   panel p, columns n = 8p .. 8p+7 (past N: zero weights, scale 0):
 *     w_q   Kp * 8 int8, Kp = K rounded up to SF_Q8_KR (k >= K: 0),
 *           byte ((g * 8 + c) * KR + j) = w_q[8p + c][g * KR + j]: for each group
 *           of KR consecutive k, the 8 columns' KR values one after the other
 *           (KR = 4: the two 16-byte vectors a relaxed dot takes, columns 0-3 and
 *           4-7; KR = 2: two 8-byte halves that i16x8.load8x8_s widens)
 *     scale 8 float   s_w
 *     csum  8 int32   sum_k w_q[n][k], for the zero point
 *   the panel size, sf_q8_panel_bytes(K), is a multiple of 16. */
size_t sf_q8_panel_bytes(int K);
size_t sf_q8_packed_bytes(int N, int K); /* 0 on overflow, K < 1, N < 1 or K > SF_Q8_MAX_K */
/* The panel holding columns n0.. (n0 a multiple of SF_Q8_NR): where a thread's
 * column range starts. */
static inline const void *q8_panel(const void *wq, int K, int n0) {
    return (const unsigned char *)wq + (size_t)(n0 / SF_Q8_NR) * sf_q8_panel_bytes(K);
}
/* dst <- w (N, K) quantized, reading element (n, k) with load(src, n*K + k)
 * (F32, F16, BF16 sources; weights must be finite: a non-finite row gets a NaN
 * scale, so its outputs are NaN). An all-zero row (or one below 127 * 2^-149)
 * gets scale 0 and zero weights. Only the panels of these N rows are written:
 * a tensor streamed in chunks of whole panels packs chunk by chunk,
 *   q8_pack_linear((char *)wq + (n0 / SF_Q8_NR) * sf_q8_panel_bytes(K), rows n0.., load, n, K)
 * with n0 a multiple of SF_Q8_NR (the last chunk may end anywhere). */
void q8_pack_linear(void *dst, const void *src, sf_load_fn load, int N, int K);
void q8_pack_linear_f32(void *dst, const float *w, int N, int K); /* the same from float rows */
/* dst <- already quantized w_q (N, K) and scales (N little-endian floats, may
 * be unaligned), as a q8 model file stores them. */
void q8_pack_linear_i8(void *dst, const int8_t *q, const void *scales, int N, int K);
/* w (N, K) = w_q * s_w, the dequantized weights (getWeights). */
void q8_unpack_linear(float *w, const void *packed, int N, int K);
/* q (N, K), scales (N): what q8_pack_linear_i8 takes back (writing a q8 file). */
void q8_unpack_linear_i8(int8_t *q, float *scales, const void *packed, int N, int K);

/* ---------------------------------------------------------------- activations
 * Quantized rows, sf_q8_act_row_bytes(K) bytes each (a multiple of 16):
 *   float s_a, int32 zp, 8 bytes unused, then the values (SF_Q8_AESIZE bytes
 *   each) up to the row size, those at k >= K quantized from x = 0 (x_q = zp).
 * Per row: lo = min(0, min_k x), hi = max(0, max_k x), s_a = hi/AMAX - lo/AMAX,
 * zp = round(-lo / s_a), x_q = clamp(round(x / s_a + zp), 0, AMAX), with
 * x / s_a computed as x * (1 / s_a) (one rounding), the sum with zp exact, and
 * rounding half to even (ties go to an even x_q, where onnxruntime rounds
 * x / s_a to even before adding zp: the two differ on exact ties only). A row whose
 * range is under AMAX * FLT_MIN (all zero, or tiny) gets s_a = 0 and x_q = zp
 * = 0; a row with a NaN or an infinity gets s_a = NaN, so its outputs are NaN. */
size_t sf_q8_act_row_bytes(int K);
size_t sf_q8_act_bytes(int M, int K); /* 0 on overflow, K < 1, M < 0 or K > SF_Q8_MAX_K */
/* xq (M rows) <- x (M, K), rows of stride ldx. Rows are independent: any row
 * range can be quantized separately (xq + m * sf_q8_act_row_bytes(K)). */
void q8_quantize_rows(void *xq, const float *x, size_t ldx, int M, int K);

/* ---------------------------------------------------------------- the product
 * out (M, ldo), columns 0..N-1 = dequant(xq @ w_q^T) + bias: M quantized rows
 * (from q8_quantize_rows, same K), wq the packed weights from the panel of
 * column 0 on (q8_panel for a sub-range), bias (N) may be NULL. The shape of
 * matmul_forward; a column range n0..n1 of a bigger product:
 *   q8_matmul_forward(out + n0, ldo, xq, q8_panel(wq, K, n0), bias ? bias + n0 : NULL, M, K, n1 - n0). */
void q8_matmul_forward(float *out, size_t ldo, const void *xq, const void *wq, const float *bias, int M, int K, int N);
/* The same, quantizing inp (M, ldi) into scratch (sf_q8_act_bytes(M, K) bytes) first. */
void q8_matmul_forward_f32(float *out, size_t ldo, const float *inp, size_t ldi, void *scratch, const void *wq, const float *bias, int M, int K,
                           int N);
/* The kernel in use, for runtimeInfo: "simd128 i32x4.dot_i16x8", "relaxed
 * i32x4.dot_i8x16_i7x16_add" or, where the engine gets that one wrong,
 * "relaxed i16x8.dot_i8x16_i7x16 + extadd" (core/qgemm.c says when), or "c (...)". */
const char *q8_kernel_name(void);
/* For tests: the int32 results before the epilogue, sum_k x_q w_q - zp sum_k w_q
 * (acc (M, lda), columns 0..N-1), by the same kernels. */
void q8_matmul_i32(int32_t *acc, size_t lda, const void *xq, const void *wq, int M, int K, int N);

#endif
