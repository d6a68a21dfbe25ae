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

/* A min-heap of the k best (score, index) so far (ties: the lower index counts
 * as better), and its pop into descending order: the search functions' top k. */
void sf_heap_offer(float *s, int32_t *ix, int *n, int k, float v, int32_t i);
void sf_heap_sort_desc(float *s, int32_t *ix, int n);

/* core/retrieval.c. Sparse vectors (SPLADE, bge-m3's lexical weights) as (index, value) lists:
 * sf_sparse_rows_forward: each row of x (M, V) as its non-zero entries, index ascending,
 * at idx/val + m * cap (cap = k > 0 ? min(k, V) : V), counts[m] of them; with k >
 * 0, only the k largest by |value| (equal ones: the lower index), as
 * sentence-transformers' max_active_dims. */
void sf_sparse_rows_forward(int32_t *idx, float *val, int32_t *counts, const float *x, int M, int V, int k);
/* Dot products of sparse rows, CSR: row m's entries are [off[m], off[m+1]) of
 * idx/val (any order; repeated indices add up, as a COO tensor coalesced).
 * dense: V floats of scratch, zero on entry and on return (every index < V).
 * k > 0: out, ids (M, k) each query's k best corpus rows, best first (ties:
 * the lower row); k = 0: out (M, N) every score. */
void sf_sparse_search_forward(int32_t *ids, float *out, const int32_t *qoff, const int32_t *qidx, const float *qval, int M, const int32_t *coff,
                              const int32_t *cidx, const float *cval, int N, float *dense, int k);
/* ColBERT's late interaction over real tokens only: score(q, d) = sum over the
 * query's nq vectors of the max over the document's rows [doff[n], doff[n+1])
 * of q_i . d_j (each document at least one row). k > 0: ids, out (k) the k best
 * documents, best first (ties: the lower one); k = 0: out (N) every score.
 * scratch: sf_maxsim_scratch_floats(nq, D) floats. */
size_t sf_maxsim_scratch_floats(int nq, int D);
void sf_maxsim_forward(int32_t *ids, float *out, const float *q, int nq, const float *docs, const int32_t *doff, int N, int D, int k, float *scratch);

#endif
