/* Op kernels: flat functions over float buffers, no allocation, no state.
 * C = dModel, F = ffDim, D = head size, H = heads, M = rows (tokens). */
#ifndef SF_KERNELS_H
#define SF_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* The kernels' width, SF_VW float lanes: 4 in the wasm builds; natively 4, 8
 * or 16 by the instruction set core/isa.c picks at load (a kernel file built
 * for one instruction set sees its own, core/variant.h). */
#ifndef SF_VW
#define SF_VW 4
#endif
/* Linear weights are packed once at load into panels of SF_NR output columns:
 * panel p holds W[p*NR .. p*NR+NR-1][k] for k = 0..K-1, contiguous per k, the
 * last panel zero-padded. NR is two vectors: 8 in wasm; natively 8, 16 or 32,
 * read at run time outside the kernel files. */
#if defined(SF_MULTI_ISA) && !defined(SF_VARIANT)
extern int sf_nr; /* core/isa.c: the panel width of the kernels in use */
#define SF_NR sf_nr
#else
#define SF_NR (2 * SF_VW)
#endif
size_t sf_packed_floats(int N, int K); /* 0 on overflow */
/* dst (packed) <- w (N, K), reading element (n, k) with load(src, n*K + k). */
typedef float (*sf_load_fn)(const void *src, size_t i);
void pack_linear(float *dst, const void *src, sf_load_fn load, int N, int K);
void pack_linear_f32(float *dst, const void *src, int N, int K); /* the same from float32 values */
void unpack_linear(float *w, const float *packed, int N, int K);

/* The one GEMM: out (M, ldo), columns 0..N-1 = a (M, K) @ B (+ bias, or +=
 * out when acc), rows of a of stride lda. B is read in column
 * panels of SF_NR: panel p starts at b + p*bstep and its row k at + k*ldb.
 * Packed weights: ldb = NR, bstep = NR*K. Rows of a plain matrix: ldb = its
 * row stride, bstep = NR (it then reads up to NR-1 columns past N: pad the
 * buffer). bias (N) may be NULL. */
void gemm_forward(float *out, size_t ldo, const float *a, size_t lda, const float *b, size_t ldb, size_t bstep, const float *bias, int acc, int M,
                  int K, int N);

/* out (M, ldo) = inp (M, ldi) @ W^T + bias, W packed (N, K). */
void matmul_forward(float *out, size_t ldo, const float *inp, size_t ldi, const float *wpacked, const float *bias, int M, int K, int N);

/* x (N, C) = tokens[ids[n]] (* scale). */
void embed_forward(float *x, const int32_t *ids, const float *tokens, float scale, int N, int C);
/* x (N, C) += table[ids[n]]: token-type embeddings. */
void embed_add_forward(float *x, const int32_t *ids, const float *table, int N, int C);

/* x (n) += y (n) */
void residual_forward(float *x, const float *y, size_t n);
/* x (n) = a x + y: the residual with the stream up-weighted (DeepNorm); a = 1 is residual_forward. */
void residual_scaled_forward(float *x, const float *y, float a, size_t n);

/* x (n) *= s */
void scale_forward(float *x, float s, size_t n);

/* h (M, F): non-gated h = act(h); gated h = act(g) * h with act silu, gelu or gelu_tanh. */
void activation_forward(float *h, const float *g, int activation, size_t n);

/* Multi-head attention of R query rows at positions i0.. of one sequence of T
 * tokens, tiled over keys with an online softmax: O(T) extra memory. The
 * kernel knows heads, head size, a window and a bias callback, not the
 * config or the plugins.
 *   o (R, ld) = softmax(q kᵀ + bias) v, per head, columns h*D .. h*D+D-1
 *   q (R, ld) queries, rotated and scaled already; kv (T, kv_ld) rows [k | v]
 *   of kv_ld / 2 each (k rotated), with SF_NR floats readable past its end;
 *   query head h reads kv head h / group (grouped-query attention; group 1:
 *   one kv head per query head, kv_ld = 2 ld)
 *   scratch: sf_attention_scratch(R, D) floats
 *   att (H, ldatt, ldatt): when not NULL, receives the probabilities of these
 *   rows, at row/column perm[t] for token t when perm is not NULL. */
#ifndef SF_ATT_BK
#define SF_ATT_BK 64 /* keys per tile: p (CHUNK, 64) and 64 rows of v stay in L1 */
#endif
static inline size_t sf_attention_scratch(int R, int D) {
    size_t RN = ((size_t)R + SF_NR - 1) / SF_NR * SF_NR, RW = (size_t)R + 15; /* rounded up to a panel, and to any vector */
    return RN * D + 2 * (size_t)SF_ATT_BK * R + 3 * RW;
}
/* Adds bias(head h, query i, key j) to scores s[(j - j0)*ld + (i - i0)]; scratch:
 * the calling thread's bias_scratch floats (past its attention scratch). */
typedef void (*sf_bias_fn)(float *s, size_t ld, const void *ctx, float *scratch, int h, int i0, int ni, int j0, int nj);
typedef struct sf_attn {
    int heads, head_dim; /* H, D */
    size_t ld;           /* row stride of q and o */
    int window;          /* > 0: query i sees keys j with |i - j| <= window only */
    sf_bias_fn bias;     /* NULL: no bias */
    const void *bias_ctx;
    size_t kv_ld; /* row stride of kv: [k | v], kv_ld / 2 each */
    int group;    /* query heads per kv head */
} sf_attn;
/* The attention scratch is sf_attention_scratch(R, D) floats; a bias that
 * needs its own gets the floats after it (the caller sizes them). */
/* Heads h0 .. h1-1 only: a thread's share (each head's arithmetic is the same whoever runs it). */
void attention_forward(float *o, const float *q, const float *kv, float *scratch, float *att, size_t ldatt, const int32_t *perm, const sf_attn *a,
                       int h0, int h1, int i0, int R, int T);

#endif
