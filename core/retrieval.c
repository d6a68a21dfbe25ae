/* Sparse and multi-vector retrieval in the core (SPLADE, bge-m3's lexical
 * weights, ColBERT), beside search.c's dense search, built -Oz with the cold
 * files (its heavy part, MaxSim's products, runs in the kernels' GEMM):
 *
 *   sf_sparse_rows_forward:   dense rows -> (index, value) lists, all non-zeros or the top k
 *   sf_sparse_search_forward: dot products of sparse rows (CSR), all or the k best
 *   sf_maxsim_forward:        ColBERT's MaxSim of a query's vectors against
 *                             documents' (the query packed once as a Linear
 *                             weight), a document's rows 64 at a time; each
 *                             document's score from its own rows only, so it
 *                             does not depend on the other documents */
#include "kernels.h"
#include "search.h"

#include <math.h>
#include <stdint.h>

/* ------------------------------------------------------------ sparse vectors */

void sf_sparse_rows_forward(int32_t *idx, float *val, int32_t *counts, const float *x, int M, int V, int k) {
    int top = k > 0 && k < V;
    size_t cap = top ? (size_t)k : (size_t)V;
    for (int m = 0; m < M; m++) {
        const float *r = x + (size_t)m * V;
        int32_t *ix = idx + (size_t)m * cap;
        float *vs = val + (size_t)m * cap, worst = 0;
        int n = 0, last = V;
        if (top) { /* the k best by (|value|, then the lower index): the heap's root is the worst kept */
            for (int v = 0; v < V; v++)
                if (r[v] != 0) sf_heap_offer(vs, ix, &n, k, fabsf(r[v]), v);
            if (n == k) worst = vs[0], last = ix[0];
            n = 0;
        }
        for (int v = 0; v < V; v++) /* then in index order: those at least as good as the worst kept */
            if (r[v] != 0 && (fabsf(r[v]) > worst || (fabsf(r[v]) == worst && v <= last))) ix[n] = v, vs[n++] = r[v];
        counts[m] = n;
    }
}

void sf_sparse_search_forward(int32_t *ids, float *out, const int32_t *qoff, const int32_t *qidx, const float *qval, int M, const int32_t *coff,
                              const int32_t *cidx, const float *cval, int N, float *dense, int k) {
    for (int m = 0; m < M; m++) {
        for (int j = qoff[m]; j < qoff[m + 1]; j++) dense[qidx[j]] += qval[j];
        float *s = out + (size_t)m * (k > 0 ? (size_t)k : (size_t)N);
        int32_t *ix = k > 0 ? ids + (size_t)m * k : NULL;
        int n = 0;
        for (int c = 0; c < N; c++) {
            float sum = 0;
            for (int j = coff[c]; j < coff[c + 1]; j++) sum += cval[j] * dense[cidx[j]];
            if (k > 0)
                sf_heap_offer(s, ix, &n, k, sum, c);
            else
                s[c] = sum;
        }
        if (k > 0) sf_heap_sort_desc(s, ix, n);
        for (int j = qoff[m]; j < qoff[m + 1]; j++) dense[qidx[j]] = 0;
    }
}

/* ------------------------------------------------------------ late interaction */

#define MAXSIM_ROWS 64 /* a document's rows a GEMM at a time */

size_t sf_maxsim_scratch_floats(int nq, int D) { return sf_packed_floats(nq, D) + (size_t)MAXSIM_ROWS * nq + (size_t)nq; }

void sf_maxsim_forward(int32_t *ids, float *out, const float *q, int nq, const float *docs, const int32_t *doff, int N, int D, int k,
                       float *scratch) {
    float *qp = scratch, *s = qp + sf_packed_floats(nq, D), *best = s + (size_t)MAXSIM_ROWS * nq;
    pack_linear_f32(qp, q, nq, D); /* the query as a Linear weight: s (rows, nq) = doc rows . q^T */
    int n = 0;
    for (int c = 0; c < N; c++) {
        for (int i = 0; i < nq; i++) best[i] = -INFINITY;
        for (int r = doff[c]; r < doff[c + 1]; r += MAXSIM_ROWS) {
            int R = doff[c + 1] - r < MAXSIM_ROWS ? doff[c + 1] - r : MAXSIM_ROWS;
            matmul_forward(s, (size_t)nq, docs + (size_t)r * D, (size_t)D, qp, NULL, R, D, nq);
            for (int j = 0; j < R; j++)
                for (int i = 0; i < nq; i++) best[i] = s[(size_t)j * nq + i] > best[i] ? s[(size_t)j * nq + i] : best[i];
        }
        double sum = 0;
        for (int i = 0; i < nq; i++) sum += best[i];
        if (k > 0)
            sf_heap_offer(out, ids, &n, k, (float)sum, c);
        else
            out[c] = (float)sum;
    }
    if (k > 0) sf_heap_sort_desc(out, ids, n);
}
