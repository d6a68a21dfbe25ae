/* RoPE (Su et al. 2021): rotate each pair of q and k coordinates of every head
 * by angle t * theta_i, theta_i = base^(-2i/D), i = 0 .. D/2-1. The score of a
 * query at m and a key at n then depends only on n - m.
 *
 * Two layouts of the pairs, one kernel (as ggml's "normal" and "neox"):
 *   style 'interleaved': pairs (2i, 2i+1), as in the RoFormer paper;
 *   style 'half':        pairs (i, i + D/2), rotate_half of HF / LLaMA.
 * The cos/sin table is built once per capacity, in double precision. */
#include <math.h>

#include "../../core/config.h"
#include "../../core/sfmath.h"

typedef struct {
    double base;
    int half;
} rope_opts;
SF_OPTIONS_FIT(rope_opts);

static const rope_opts *opts(const sf_config *c) { return (const rope_opts *)c->position_options.bytes; }

static int rope_parse(sf_options *o, const sf_json *j, int node, sf_error *err) {
    static const char *const keys[] = {"base", "style", NULL};
    static const char *const styles[] = {"interleaved", "half", NULL};
    rope_opts *r = (rope_opts *)o->bytes;
    int rc;
    if ((rc = sf_opt_only(j, node, keys, err)) || (rc = sf_opt_number(j, node, "base", 10000.0, 1.0000001, 1e12, &r->base, err)))
        return rc;
    return sf_opt_enum(j, node, "style", styles, 0, &r->half, err);
}

static void rope_write(const sf_options *o, sf_buf *b) {
    const rope_opts *r = (const rope_opts *)o->bytes;
    sf_buf_str(b, "{\"base\":");
    sf_buf_json_number(b, r->base);
    sf_buf_str(b, r->half ? ",\"style\":\"half\"}" : ",\"style\":\"interleaved\"}");
}

static int rope_check(const sf_config *c, sf_error *err) {
    int D = sf_head_dim(c);
    if (D % 2) return sf_fail(err, SF_BAD_CONFIG, "config: RoPE needs an even head size, dModel/heads = %d", D);
    return SF_OK;
}

static size_t rope_table_size(const sf_config *c, int T) { return (size_t)T * sf_head_dim(c); }

static void rope_table_init(float *table, const sf_config *c, int T) { /* table (T, D): [cos (D/2) | sin (D/2)] per t */
    int D = sf_head_dim(c), P = D / 2;
    for (int i = 0; i < P; i++) {
        double theta = sf_pow(opts(c)->base, -2.0 * i / D);
        for (int t = 0; t < T; t++) {
            double s, co;
            sf_sincos(t * theta, &s, &co);
            table[(size_t)t * D + i] = (float)co;
            table[(size_t)t * D + P + i] = (float)s;
        }
    }
}

static void rope_rotate(float *x, size_t ld, const float *table, const sf_config *c, int p0, int n) {
    int C = c->d_model, H = c->heads, D = C / H, P = D / 2;
    int stride = opts(c)->half ? 1 : 2; /* pair i is (i*stride, i*stride + second) */
    int second = opts(c)->half ? P : 1;
    for (int t = 0; t < n; t++) {
        const float *cs = table + (size_t)(p0 + t) * D, *sn = cs + P; /* (D/2) each */
        for (int h = 0; h < H; h++) {
            float *v = x + (size_t)t * ld + (size_t)h * D; /* (D) */
            for (int i = 0; i < P; i++) {
                float a = v[i * stride], b = v[i * stride + second];
                v[i * stride] = a * cs[i] - b * sn[i];
                v[i * stride + second] = a * sn[i] + b * cs[i];
            }
        }
    }
}

const sf_position_plugin sf_position_rope = {
    .api_version = SF_PLUGIN_API_VERSION,
    .name = "rope",
    .parse_options = rope_parse,
    .write_options = rope_write,
    .check = rope_check,
    .table_size = rope_table_size,
    .table_init = rope_table_init,
    .rotate = rope_rotate,
};
