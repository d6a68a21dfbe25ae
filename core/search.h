/* Similarity, semantic search and embedding quantization (core/search.c):
 * flat functions over float rows, no allocation. M, N rows of D values. */
#ifndef SF_SEARCH_H
#define SF_SEARCH_H

#include <stddef.h>
#include <stdint.h>

enum { SF_SCORE_COS, SF_SCORE_DOT, SF_SCORE_EUCLID, SF_SCORE_MANHATTAN };
enum { SF_PREC_INT8, SF_PREC_UINT8, SF_PREC_BINARY, SF_PREC_UBINARY };

/* inv (M) = 1 / max(|a_m|, 1e-12): what cosine scores divide by. */
void sf_inverse_norms_forward(float *inv, const float *a, int M, int D);
/* out (M, N) = score(a_m, b_n); inv_a, inv_b: sf_row_norms (cosine only, else may be NULL). */
void sf_similarity_forward(float *out, const float *a, const float *inv_a, int M, const float *b, const float *inv_b, int N, int D, int fn);
/* idx, out (M, k): each query's k best corpus rows by score, best first (ties: the lower row first); k <= N. */
void sf_search_forward(int32_t *idx, float *out, const float *q, const float *inv_q, int M, const float *corpus, const float *inv_c, int N, int D,
                       int k, int fn);
/* The same over rows of packed bits (bytes each): score = -(Hamming distance). */
void sf_hamming_search(int32_t *idx, float *out, const uint8_t *q, int M, const uint8_t *corpus, int N, int bytes, int k);
/* The index of x's (n) first value that is not finite (NaN, +-inf), or -1: the bindings refuse such rows. */
int sf_first_nonfinite(const float *x, int n);
/* lo, hi (D): each dimension's minimum and maximum over the M rows of x (D): int8 / uint8 calibration. */
void sf_column_ranges_forward(float *lo, float *hi, const float *x, int M, int D);
/* out: int8 / uint8 (M, D) from per-dimension starts and steps, or packed bits (M, ceil(D / 8)). */
void sf_quantize_forward(void *out, const float *x, int M, int D, int precision, const float *starts, const float *steps);

#endif
