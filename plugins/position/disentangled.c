/* DeBERTa's disentangled attention (He et al. 2021; transformers
 * models/deberta_v2/modeling_deberta_v2.py, DisentangledSelfAttention): no
 * position vector; a relative table embed.rel_table [rows, C] of offsets,
 * projected in every layer by that layer's key and query projections (biases
 * included; the core computes them once, core/encoder.c rel_project), adds to
 * the score of query i and key j
 *
 *   c2p: q_i . PK[c(i - j)]      (content to position)
 *   p2c: k_j . PQ[c(i - j)]      (position to content)
 *
 * with every term, q.k included, divided by sqrt(headDim x (1 + terms))
 * (attnScale's default with this scheme). The row of offset d = i - j:
 *
 *   mid = buckets / 2
 *   b(d) = d                                        |d| <= mid (or no buckets)
 *        = sign(d) (ceil(ln(|d|/mid) / ln((maxDistance-1)/mid) x (mid-1)) + mid)   otherwise
 *   c(d) = clamp(b(d) + span, 0, 2 span - 1),  span = buckets (or maxDistance), rows = 2 span
 *
 * in float32 as PyTorch computes make_log_bucket_position (the logarithms
 * rounded to float32; tests/deberta.test.js checks every offset against
 * PyTorch). The row of every offset -(T-1) .. T-1 is built once per capacity.
 *
 * A tile of queries i0.. and keys j0.. spans the rows c(i0 - j0 - nj + 1) ..
 * c(i0 + ni - 1 - j0), at most ni + nj - 1 of them: two small products per
 * tile (the queries and the keys against the rows they reach, from the
 * per-head transposed tables), then a gather. Never an (L, L) or (L, rows)
 * matrix. */
#include "../../core/config.h"
#include "../../core/kernels.h"
#include "../../core/sfmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

SF_OPTIONS_FIT(sf_disentangled_opts);

static const sf_disentangled_opts *opts(const sf_config *c) { return (const sf_disentangled_opts *)(const void *)c->position_options.bytes; }

/* A boolean member of positionOptions (node -1: absent). */
static int opt_bool(const sf_json *j, int node, const char *key, int def, int *out, sf_error *err) {
    int m = node < 0 ? -1 : sf_json_member(j, node, key);
    *out = def;
    if (m < 0) return SF_OK;
    int t = j->nodes[m].type;
    if (t != SF_JTRUE && t != SF_JFALSE)
        return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.%s must be true or false, got %s", key, sf_json_type_name(t));
    *out = t == SF_JTRUE;
    return SF_OK;
}

static int dis_parse(sf_options *o, const sf_json *j, int node, sf_error *err) {
    static const char *const keys[] = {"buckets", "maxDistance", "terms", "shareKey", "normTable", NULL};
    sf_disentangled_opts *d = (sf_disentangled_opts *)(void *)o->bytes;
    double b, m;
    int rc;
    if ((rc = sf_opt_only(j, node, "positionOptions", keys, err)) ||
        (rc = sf_opt_number(j, node, "positionOptions", "buckets", 256, 0, 1 << 16, &b, err)) ||
        (rc = sf_opt_number(j, node, "positionOptions", "maxDistance", 512, 1, 1 << 16, &m, err)) ||
        (rc = opt_bool(j, node, "shareKey", 1, &d->share_key, err)) || (rc = opt_bool(j, node, "normTable", 1, &d->norm_table, err)))
        return rc;
    if (b != (double)(int)b || m != (double)(int)m)
        return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.buckets and maxDistance must be integers, got %g and %g", b, m);
    d->buckets = (int)b;
    d->max_distance = (int)m;
    if (d->buckets == 1) return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.buckets must be 0 (none) or at least 2, got 1");
    /* ln((maxDistance - 1) / mid) divides: it must be positive */
    if (d->buckets && d->max_distance - 1 <= d->buckets / 2)
        return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.maxDistance (%d) must exceed buckets / 2 + 1 (%d)", d->max_distance,
                       d->buckets / 2 + 1);
    d->rows = 2 * (d->buckets ? d->buckets : d->max_distance);
    int t = node < 0 ? -1 : sf_json_member(j, node, "terms");
    d->c2p = d->p2c = t < 0;
    if (t >= 0) {
        if (j->nodes[t].type != SF_JARRAY || !j->nodes[t].count)
            return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.terms must be a non-empty array of 'c2p', 'p2c'");
        for (int k = j->nodes[t].first, n = 0; k >= 0; k = j->nodes[k].next, n++) {
            int *term = sf_json_string_is(j, k, "c2p") ? &d->c2p : sf_json_string_is(j, k, "p2c") ? &d->p2c : NULL;
            if (!term || *term) return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.terms[%d] must be 'c2p' or 'p2c', each once", n);
            *term = 1;
        }
    }
    return SF_OK;
}

static void dis_write(const sf_options *o, sf_buf *b) {
    const sf_disentangled_opts *d = (const sf_disentangled_opts *)(const void *)o->bytes;
    sf_buf_str(b, "{\"buckets\":");
    sf_buf_json_number(b, d->buckets);
    sf_buf_str(b, ",\"maxDistance\":");
    sf_buf_json_number(b, d->max_distance);
    sf_buf_str(b, d->c2p && d->p2c ? ",\"terms\":[\"c2p\",\"p2c\"]" : d->c2p ? ",\"terms\":[\"c2p\"]" : ",\"terms\":[\"p2c\"]");
    sf_buf_str(b, d->share_key ? ",\"shareKey\":true" : ",\"shareKey\":false");
    sf_buf_str(b, d->norm_table ? ",\"normTable\":true}" : ",\"normTable\":false}");
}

static int dis_params(const sf_config *c, sf_param_spec out[SF_MAX_PLUGIN_PARAMS]) {
    out[0] = (sf_param_spec){"embed.rel_table", opts(c)->rows, c->d_model, 1.0f};
    return 1;
}

static size_t dis_table_size(const sf_config *c, int T) {
    (void)c;
    return 2 * (size_t)T; /* T <= 2^24: fits */
}

/* table (2T - 1) int32: the row c(d) of offset d = i - j at d + T - 1 */
static void dis_table_init(float *table, const sf_config *c, int T) {
    const sf_disentangled_opts *o = opts(c);
    int32_t *rows = (int32_t *)(void *)table;
    int span = o->rows / 2, mid = o->buckets / 2;
    float den = o->buckets ? (float)sf_log((double)(float)((double)(o->max_distance - 1) / mid)) : 1; /* torch.log(tensor(float)) */
    for (int d = -(T - 1); d <= T - 1; d++) {
        int a = d < 0 ? -d : d, b = d;
        if (o->buckets && a > mid) {
            float r = (float)sf_log((double)((float)a / (float)mid)) / den * (float)(mid - 1);
            float lp = ceilf(r) + (float)mid;
            int v = lp < (float)(2 * span) ? (int)lp : 2 * span; /* past the table: the last row either way */
            b = d < 0 ? -v : v;
        }
        b += span;
        rows[d + T - 1] = b < 0 ? 0 : b > 2 * span - 1 ? 2 * span - 1 : b;
    }
}

static void dis_score_bias(float *s, size_t ld, const sf_pos_ctx *ctx, int h, int i0, int ni, int j0, int nj) {
    const sf_config *c = ctx->cfg;
    const sf_disentangled_opts *o = opts(c);
    const int32_t *row = (const int32_t *)(const void *)ctx->table + ctx->table_len - 1; /* row[d], d = i - j */
    int D = c->head_dim, R = o->rows, lo = row[i0 - (j0 + nj - 1)], n = row[i0 + ni - 1 - j0] - lo + 1;
    size_t ldq = ctx->ldq;
    float *cq = ctx->scratch, *ck = cq + (size_t)ni * n;  /* (ni, n) queries x rows; (nj, n) keys x rows */
    const float *rel = ctx->rel + (size_t)h * D * R + lo; /* head h's table, transposed: (D, R) */
    if (o->c2p) {
        gemm_forward(cq, (size_t)n, ctx->q + (size_t)h * D, ldq, rel, (size_t)R, SF_NR, NULL, 0, ni, D, n);
        rel += (size_t)c->heads * D * R;
    }
    if (o->p2c) gemm_forward(ck, (size_t)n, ctx->kv + (size_t)j0 * 2 * ldq + (size_t)h * D, 2 * ldq, rel, (size_t)R, SF_NR, NULL, 0, nj, D, n);
    for (int j = 0; j < nj; j++) {
        float *sj = s + (size_t)j * ld;          /* key j0 + j against queries i0 .. */
        const int32_t *rj = row + (i0 - j0 - j); /* rj[r]: the row of offset i0 + r - (j0 + j) */
        const float *kj = ck + (size_t)j * n;
        if (!o->p2c)
            for (int r = 0; r < ni; r++) sj[r] += cq[(size_t)r * n + (rj[r] - lo)];
        else if (!o->c2p)
            for (int r = 0; r < ni; r++) sj[r] += kj[rj[r] - lo];
        else
            for (int r = 0; r < ni; r++) {
                int k = rj[r] - lo;
                sj[r] += cq[(size_t)r * n + k] + kj[k];
            }
    }
}

const sf_position_plugin sf_position_disentangled = {
    .api_version = SF_PLUGIN_API_VERSION,
    .name = "disentangled",
    .parse_options = dis_parse,
    .write_options = dis_write,
    .params = dis_params,
    .table_size = dis_table_size,
    .table_init = dis_table_init,
    .score_bias = dis_score_bias,
};
