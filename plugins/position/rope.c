/* RoPE (Su et al. 2021): rotate each pair of q and k coordinates of every head
 * by angle t * theta_i, theta_i = base^(-2i/D), i = 0 .. D/2-1. The score of a
 * query at m and a key at n then depends only on n - m.
 *
 * Two layouts of the pairs, one kernel (as ggml's "normal" and "neox"):
 *   style 'interleaved': pairs (2i, 2i+1), as in the RoFormer paper;
 *   style 'half':        pairs (i, i + D/2), rotate_half of HF / LLaMA.
 *
 * Context extension, positionOptions.scaling:
 *   {type: 'linear', factor}  position interpolation: angle = (t / factor) theta_i
 *   {type: 'ntk', factor}     NTK-aware: base' = base * factor^(D / (D - 2))
 *   {type: 'fixed-ntk', factor}
 *       fixed NTK (kexue.fm/archives/9706; GTE's NTKScalingRotaryEmbedding,
 *       rope_scaling {type: 'ntk'}): base' = base * factor, and every
 *       frequency divided by factor^(2 / D) as well, at every length
 *   {type: 'yarn', factor, originalMaxLen, betaFast = 32, betaSlow = 1}
 *       YaRN (Peng et al. 2023): dimensions that turn fewer than betaSlow times
 *       over originalMaxLen positions are interpolated (theta / factor), those
 *       turning more than betaFast times are kept, a linear ramp in between;
 *       and cos, sin are scaled by 0.1 ln(factor) + 1 (attention temperature).
 *   {type: 'dynamic', factor, originalMaxLen}
 *       dynamic NTK (nomic-embed's rotary_scaling_factor): a sequence of L >
 *       originalMaxLen tokens uses base' = base ((factor L / originalMaxLen) -
 *       (factor - 1))^(D / (D - 2)); shorter ones the plain base. L is the
 *       sequence's own length (HF uses the padded batch length: the same for
 *       a single sequence, but swapformer's batches never depend on padding).
 *
 * positionOptions.localBase (default: base): the base on the config's local
 * (sliding-window) layers; ModernBERT uses 160000 globally, 10000 locally.
 * The cos/sin tables are built once per capacity, in double precision. */
#include <math.h>

#include "../../core/config.h"
#include "../../core/sfmath.h"

enum { SCALE_NONE, SCALE_LINEAR, SCALE_NTK, SCALE_YARN, SCALE_DYNAMIC, SCALE_FIXED_NTK };

typedef struct {
    double base, local_base, factor, beta_fast, beta_slow;
    int half, scaling, original_max_len;
} rope_opts;
SF_OPTIONS_FIT(rope_opts);

static const rope_opts *opts(const sf_config *c) { return (const rope_opts *)c->position_options.bytes; }

static int rope_parse(sf_options *o, const sf_json *j, int node, sf_error *err) {
    static const char *const keys[] = {"base", "localBase", "style", "scaling", NULL};
    static const char *const styles[] = {"interleaved", "half", NULL};
    static const char *const types[] = {"none", "linear", "ntk", "yarn", "dynamic", "fixed-ntk", NULL};
    static const char *const scaling_keys[] = {"type", "factor", "originalMaxLen", "betaFast", "betaSlow", NULL};
    rope_opts *r = (rope_opts *)o->bytes;
    int rc;
    if ((rc = sf_opt_only(j, node, "positionOptions", keys, err)) ||
        (rc = sf_opt_number(j, node, "positionOptions", "base", 10000.0, 1.0000001, 1e12, &r->base, err)) ||
        (rc = sf_opt_number(j, node, "positionOptions", "localBase", r->base, 1.0000001, 1e12, &r->local_base, err)) ||
        (rc = sf_opt_enum(j, node, "positionOptions", "style", styles, 0, &r->half, err)))
        return rc;
    int sc = sf_json_member(j, node, "scaling");
    r->scaling = SCALE_NONE;
    r->factor = 1;
    if (sc < 0) return SF_OK;
    if (j->nodes[sc].type != SF_JOBJECT)
        return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.scaling must be an object, got %s", sf_json_type_name(j->nodes[sc].type));
    const char *path = "positionOptions.scaling";
    if ((rc = sf_opt_only(j, sc, path, scaling_keys, err))) return rc;
    if (sf_json_member(j, sc, "type") < 0)
        return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.scaling.type is required (linear, ntk, yarn, dynamic, fixed-ntk)");
    if ((rc = sf_opt_enum(j, sc, path, "type", types, 0, &r->scaling, err))) return rc;
    if (r->scaling == SCALE_NONE) { /* no parameter may be given and then ignored */
        for (int k = 1; scaling_keys[k]; k++)
            if (sf_json_member(j, sc, scaling_keys[k]) >= 0)
                return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.scaling.%s does not apply to type 'none'", scaling_keys[k]);
        return SF_OK;
    }
    if (sf_json_member(j, sc, "factor") < 0) return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.scaling.factor is required");
    double lo = r->scaling == SCALE_LINEAR ? 1e-6 : 1.0, olen;
    if ((rc = sf_opt_number(j, sc, path, "factor", 1, lo, 1e6, &r->factor, err))) return rc;
    if (r->scaling == SCALE_DYNAMIC) {
        if (sf_json_member(j, sc, "originalMaxLen") < 0)
            return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.scaling.originalMaxLen is required for dynamic");
        for (int k = 3; scaling_keys[k]; k++)
            if (sf_json_member(j, sc, scaling_keys[k]) >= 0)
                return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.scaling.%s applies to type 'yarn' only", scaling_keys[k]);
        if ((rc = sf_opt_number(j, sc, path, "originalMaxLen", 0, 1, SF_MAX_LEN, &olen, err))) return rc;
        if (olen != floor(olen)) return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.scaling.originalMaxLen must be an integer, got %g", olen);
        r->original_max_len = (int)olen;
        return SF_OK;
    }
    if (r->scaling != SCALE_YARN) {
        for (int k = 2; scaling_keys[k]; k++)
            if (sf_json_member(j, sc, scaling_keys[k]) >= 0)
                return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.scaling.%s applies to type 'yarn' only", scaling_keys[k]);
        return SF_OK;
    }
    if (sf_json_member(j, sc, "originalMaxLen") < 0)
        return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.scaling.originalMaxLen is required for yarn");
    if ((rc = sf_opt_number(j, sc, path, "originalMaxLen", 0, 1, SF_MAX_LEN, &olen, err)) ||
        (rc = sf_opt_number(j, sc, path, "betaFast", 32, 1e-6, 1e6, &r->beta_fast, err)) ||
        (rc = sf_opt_number(j, sc, path, "betaSlow", 1, 1e-6, 1e6, &r->beta_slow, err)))
        return rc;
    if (olen != floor(olen)) return sf_fail(err, SF_BAD_CONFIG, "config.positionOptions.scaling.originalMaxLen must be an integer, got %g", olen);
    r->original_max_len = (int)olen;
    return SF_OK;
}

static void rope_write(const sf_options *o, sf_buf *b) {
    static const char *const types[] = {"none", "linear", "ntk", "yarn", "dynamic", "fixed-ntk"};
    const rope_opts *r = (const rope_opts *)o->bytes;
    sf_buf_str(b, "{\"base\":");
    sf_buf_json_number(b, r->base);
    if (r->local_base != r->base) {
        sf_buf_str(b, ",\"localBase\":");
        sf_buf_json_number(b, r->local_base);
    }
    sf_buf_str(b, r->half ? ",\"style\":\"half\"" : ",\"style\":\"interleaved\"");
    if (r->scaling != SCALE_NONE) {
        sf_buf_str(b, ",\"scaling\":{\"type\":\"");
        sf_buf_str(b, types[r->scaling]);
        sf_buf_str(b, "\",\"factor\":");
        sf_buf_json_number(b, r->factor);
        if (r->scaling == SCALE_YARN || r->scaling == SCALE_DYNAMIC) {
            sf_buf_str(b, ",\"originalMaxLen\":");
            sf_buf_json_number(b, r->original_max_len);
        }
        if (r->scaling == SCALE_YARN) {
            sf_buf_str(b, ",\"betaFast\":");
            sf_buf_json_number(b, r->beta_fast);
            sf_buf_str(b, ",\"betaSlow\":");
            sf_buf_json_number(b, r->beta_slow);
        }
        sf_buf_str(b, "}");
    }
    sf_buf_str(b, "}");
}

static int rope_check(const sf_config *c, sf_error *err) {
    int D = sf_head_dim(c);
    if (D % 2) return sf_fail(err, SF_BAD_CONFIG, "config: RoPE needs an even head size, headDim = %d", D);
    if ((opts(c)->scaling == SCALE_NTK || opts(c)->scaling == SCALE_DYNAMIC) && D < 4)
        return sf_fail(err, SF_BAD_CONFIG, "config: NTK-aware scaling needs a head size of at least 4, got %d", D);
    return SF_OK;
}

/* A second table, for the local layers, when their base differs. */
static int two_tables(const sf_config *c) { return sf_has_local(c) && opts(c)->local_base != opts(c)->base; }

static size_t rope_table_size(const sf_config *c, int T) {
    size_t n;
    return SF_SIZE(&n, T, sf_head_dim(c), two_tables(c) ? 2 : 1) ? n : (size_t)-1;
}

/* The frequency of pair i after scaling (dynamic: the plain base; rotate
 * handles long sequences). */
static double rope_inv_freq(const rope_opts *r, double base, int i, int D) {
    double b = base;
    if (r->scaling == SCALE_NTK) b *= sf_pow(r->factor, (double)D / (D - 2));
    if (r->scaling == SCALE_FIXED_NTK) b *= r->factor;
    double theta = sf_pow(b, -2.0 * i / D);
    if (r->scaling == SCALE_LINEAR) return theta / r->factor;
    if (r->scaling == SCALE_FIXED_NTK) return theta / sf_pow(r->factor, 2.0 / D);
    if (r->scaling != SCALE_YARN) return theta;
    /* the pair index that turns n times over originalMaxLen positions */
    double two_pi = 6.283185307179586, lnb = sf_log(base);
    double lo = floor(D * sf_log(r->original_max_len / (r->beta_fast * two_pi)) / (2 * lnb));
    double hi = ceil(D * sf_log(r->original_max_len / (r->beta_slow * two_pi)) / (2 * lnb));
    if (lo < 0) lo = 0;
    if (hi > D - 1) hi = D - 1;
    if (lo == hi) hi += 0.001;
    double ramp = (i - lo) / (hi - lo);
    ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
    double keep = 1 - ramp; /* 1: extrapolate (keep theta), 0: interpolate (theta / factor) */
    return theta / r->factor * (1 - keep) + theta * keep;
}

/* cos and sin of t x theta_i for t = 0..T-1: table (T, D), [cos (D/2) | sin (D/2)] per t. */
static void fill_table(float *table, const rope_opts *r, double base, int D, int T) {
    int P = D / 2;
    double mscale = r->scaling == SCALE_YARN ? 0.1 * sf_log(r->factor) + 1 : 1;
    for (int i = 0; i < P; i++) {
        double theta = rope_inv_freq(r, base, i, D);
        for (int t = 0; t < T; t++) {
            double s, co;
            sf_sincos(t * theta, &s, &co);
            table[(size_t)t * D + i] = (float)(co * mscale);
            table[(size_t)t * D + P + i] = (float)(s * mscale);
        }
    }
}

static void rope_table_init(float *table, const sf_config *c, int T) { /* (T, D) global [+ (T, D) local] */
    const rope_opts *r = opts(c);
    fill_table(table, r, r->base, sf_head_dim(c), T);
    if (two_tables(c)) fill_table(table + (size_t)T * sf_head_dim(c), r, r->local_base, sf_head_dim(c), T);
}

/* Rotates pair i of every head of row t by (cs[i], sn[i]). */
static void rotate_row(float *v0, const float *cs, const float *sn, int H, int D, int half) {
    int P = D / 2, stride = half ? 1 : 2, second = half ? P : 1; /* pair i is (i*stride, i*stride + second) */
    for (int h = 0; h < H; h++) {
        float *v = v0 + (size_t)h * D; /* (D) */
        for (int i = 0; i < P; i++) {
            float a = v[i * stride], b = v[i * stride + second];
            v[i * stride] = a * cs[i] - b * sn[i];
            v[i * stride + second] = a * sn[i] + b * cs[i];
        }
    }
}

static void rope_rotate(float *x, size_t ld, const sf_pos_ctx *ctx, int p0, int n) {
    const sf_config *c = ctx->cfg;
    const rope_opts *r = opts(c);
    int H = c->heads, D = sf_head_dim(c), P = D / 2;
    int local = ctx->local && two_tables(c);
    if (r->scaling == SCALE_DYNAMIC && ctx->len > r->original_max_len) {
        /* dynamic NTK: this sequence's own base, cos and sin computed here (pairs of at most 2^19) */
        double L = ctx->len, f = r->factor;
        double base = (local ? r->local_base : r->base) * sf_pow(f * L / r->original_max_len - (f - 1), (double)D / (D - 2));
        for (int i = 0; i < P; i++) {
            double theta = sf_pow(base, -2.0 * i / D);
            for (int t = 0; t < n; t++) {
                double s, co;
                sf_sincos((p0 + t) * theta, &s, &co);
                float cs = (float)co, sn = (float)s;
                for (int h = 0; h < H; h++) {
                    float *v = x + (size_t)t * ld + (size_t)h * D;
                    int a = r->half ? i : 2 * i, b = r->half ? i + P : 2 * i + 1;
                    float va = v[a], vb = v[b];
                    v[a] = va * cs - vb * sn;
                    v[b] = va * sn + vb * cs;
                }
            }
        }
        return;
    }
    const float *table = ctx->table + (local ? (size_t)ctx->table_len * D : 0); /* (table_len, D) */
    for (int t = 0; t < n; t++) {
        const float *cs = table + (size_t)(p0 + t) * D; /* cos (D/2), then sin (D/2) */
        rotate_row(x + (size_t)t * ld, cs, cs + P, H, D, r->half);
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
