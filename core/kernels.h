/* Op kernels: flat functions over float buffers, no allocation, no state.
 * C = dModel, F = ffDim, D = head size, H = heads, M = rows (tokens). */
#ifndef SF_KERNELS_H
#define SF_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Linear weights are packed once at load into panels of SF_NR output columns:
 * panel p holds W[p*NR .. p*NR+NR-1][k] for k = 0..K-1, contiguous per k, the
 * last panel zero-padded. */
#define SF_NR 8
size_t sf_packed_floats(int N, int K); /* 0 on overflow */
/* dst (packed) <- w (N, K), reading element (n, k) with load(src, n*K + k). */
typedef float (*sf_load_fn)(const void *src, size_t i);
void pack_linear(float *dst, const void *src, sf_load_fn load, int N, int K);
void unpack_linear(float *w, const float *packed, int N, int K);

/* out (M, ldo), columns 0..N-1 = inp (M, ldi), columns 0..K-1 @ W^T + bias.
 * bias (N) may be NULL. */
void matmul_forward(float *out, size_t ldo, const float *inp, size_t ldi, const float *wpacked, const float *bias, int M,
                    int K, int N);

/* x (N, C) = tokens[ids[n]] (* scale). */
void embed_forward(float *x, const int32_t *ids, const float *tokens, float scale, int N, int C);

/* x (n) += y (n) */
void residual_forward(float *x, const float *y, size_t n);

/* h (M, F): non-gated h = act(h); gated h = act(g) * h with act silu or gelu. */
void activation_forward(float *h, const float *g, int activation, size_t n);

/* In-place softmax of x (n). */
void softmax_forward(float *x, int n);

/* Multi-head attention for one sequence of T tokens.
 * qkv (T, 3C): rows [q | k | v]; the output of head h for token i replaces
 * q[i, h] (the query is no longer needed once its scores exist).
 * scores (T) scratch. att (H, ldatt, ldatt) receives the probabilities when not
 * NULL, row and column perm[i] for token i when perm is not NULL (rows computed
 * in a canonical order, see encoder.c). The position plugin's score_bias, when
 * it has one, is added to the scores. */
struct sf_config;
struct sf_position_plugin;
/* scores (T) = q[i, h] . k[j, h] / sqrt(D) + the plugin's bias, j = 0..T-1. */
void attention_scores(float *scores, const float *qkv, const struct sf_position_plugin *pos, const float *table,
                      const struct sf_config *cfg, int h, int i, int T);
void attention_forward(float *qkv, float *scores, float *att, size_t ldatt, const int32_t *perm, const struct sf_position_plugin *pos,
                       const float *table, const struct sf_config *cfg, int T);

#endif
