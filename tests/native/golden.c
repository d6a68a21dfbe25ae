/* The golden fixtures through the C core built natively, for the sanitizer
 * run (./build.sh sanitize: AddressSanitizer + UndefinedBehaviorSanitizer).
 *
 *   golden <fixtures dir>
 *
 * For every case of golden.json: load the model file, run the batch (with its
 * typeIds and skipLayers when the case has them), compare with PyTorch's numbers (relative
 * max error <= 1e-4), attentions too, then
 * save -> load -> forward must give the same bits. Then every prefix of a
 * model file, and corrupted headers, must be refused with an error code and
 * leave nothing behind (LeakSanitizer checks at exit). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/encoder.h"
#include "../../core/modelfile.h"
#ifdef SF_MULTI_ISA
#include "../../core/isa.h"
#include "../../core/pool.h"
#include "../../core/qgemm.h"
#endif

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(n > 0 ? (size_t)n : 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return p;
}

static int failures;
#define CHECK(cond, ...)                                                                                                                             \
    do {                                                                                                                                             \
        if (!(cond)) {                                                                                                                               \
            failures++;                                                                                                                              \
            printf("FAIL: ");                                                                                                                        \
            printf(__VA_ARGS__);                                                                                                                     \
            printf("\n");                                                                                                                            \
        }                                                                                                                                            \
    } while (0)

static double rel_err(const float *got, const sf_json *j, int arr, size_t n, size_t *count) {
    double diff = 0, scale = 0;
    size_t k = 0;
    for (int c = j->nodes[arr].first; c >= 0; c = j->nodes[c].next, k++) {
        double want = j->nodes[c].num;
        if (k < n) diff = fmax(diff, fabs(got[k] - want));
        scale = fmax(scale, fabs(want));
    }
    *count = k;
    return diff / (scale > 0 ? scale : 1);
}

/* Runs the batch of ids (an array of arrays) on e, with the token types of
 * types (the same shape) when types >= 0 and the layers of skip (an array of
 * layer indices) left out when skip >= 0; returns T, or -1. */
static int threads = 1; /* every encoder's (the native build runs each case with 1 and 3) */

static int run(sf_encoder *e, const sf_json *j, int ids, int types, int skip, int flags, sf_error *err) {
    e->threads = threads;
    int B = j->nodes[ids].count, T = 0, N = 0;
    for (int s = j->nodes[ids].first; s >= 0; s = j->nodes[s].next) {
        T = j->nodes[s].count > T ? j->nodes[s].count : T;
        N += j->nodes[s].count;
    }
    if (sf_encoder_reserve(e, B, T, N, flags, err)) return -1;
    int b = 0, k = 0;
    for (int s = j->nodes[ids].first; s >= 0; s = j->nodes[s].next, b++) {
        e->lens[b] = j->nodes[s].count;
        for (int t = j->nodes[s].first; t >= 0; t = j->nodes[t].next) e->ids[k++] = (int32_t)j->nodes[t].num;
    }
    if (types >= 0) { /* after sf_encoder_reserve, which zeroes them */
        if (j->nodes[types].count != B) return snprintf(err->msg, sizeof err->msg, "typeIds: %d sequences, ids %d", j->nodes[types].count, B), -1;
        k = 0;
        for (int s = j->nodes[types].first, i = j->nodes[ids].first; s >= 0; s = j->nodes[s].next, i = j->nodes[i].next) {
            if (j->nodes[s].count != j->nodes[i].count)
                return snprintf(err->msg, sizeof err->msg, "typeIds: a sequence's length differs from ids"), -1;
            for (int t = j->nodes[s].first; t >= 0; t = j->nodes[t].next) e->type_ids[k++] = (int32_t)j->nodes[t].num;
        }
    }
    if (skip >= 0) /* 1 in e->skip[l] for the forward, as the binding's skipLayers does */
        for (int s = j->nodes[skip].first; s >= 0; s = j->nodes[s].next) {
            int l = (int)j->nodes[s].num;
            if (l < 0 || l >= e->cfg.layers) return snprintf(err->msg, sizeof err->msg, "skipLayers: %d is not a layer", l), -1;
            e->skip[l] = 1;
        }
    int rc = sf_encoder_forward(e, B, flags, err);
    memset(e->skip, 0, e->cfg.layers ? (size_t)e->cfg.layers : 1);
    return rc ? -1 : T;
}

static int golden_run(const char *dir);

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "tests/fixtures";
#if defined(SF_MULTI_ISA) && defined(SF_ISA_TESTING) && defined(SF_THREADS)
    /* the native build under the sanitizers: every variant this CPU runs (or SWAPFORMER_ISA's) with 3
     * threads, the first (the best) with 1 as well */
    const char *only = getenv("SWAPFORMER_ISA");
    int rc = 0, variants = 0;
    sf_pool_grow(3);
    for (int i = 0; i < sf_isa_count(); i++) {
        if (!sf_isa_supported(i) || (only && strcmp(only, sf_isa_name(i)))) continue;
        sf_isa_select(sf_isa_name(i));
        for (threads = variants ? 3 : 1; threads <= 3; threads += 2) {
            printf("kernels: %s, q8 %s, %d thread%s\n", sf_isa_current_name(), q8_kernel_name(), threads, threads > 1 ? "s" : "");
            rc |= golden_run(dir);
        }
        variants++;
    }
    sf_pool_stop();
    return rc || !variants;
#else
#ifdef SF_MULTI_ISA /* the native build: the variant SWAPFORMER_ISA names, else the best this CPU runs */
    if (sf_isa_select(getenv("SWAPFORMER_ISA"))) {
        printf("SWAPFORMER_ISA=%s: not a variant this CPU runs\n", getenv("SWAPFORMER_ISA"));
        return 2;
    }
    printf("kernels: %s, q8 %s\n", sf_isa_current_name(), q8_kernel_name());
#endif
    return golden_run(dir);
#endif
}

static int golden_run(const char *dir) {
    failures = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/golden.json", dir);
    size_t glen;
    unsigned char *gtext = read_file(path, &glen);
    if (!gtext) {
        printf("cannot read %s\n", path);
        return 2;
    }
    sf_json g;
    sf_error err;
    if (sf_json_parse(&g, (const char *)gtext, glen, "golden.json", SF_BAD_FILE, &err)) {
        printf("%s\n", err.msg);
        return 2;
    }
    int cases = sf_json_member(&g, 0, "cases"), ran = 0;
    double worst = 0;
    unsigned char *smallest = NULL;
    size_t smallest_len = (size_t)-1;
    for (int c = g.nodes[cases].first; c >= 0; c = g.nodes[c].next) {
        char name[160], file[200];
        sf_json_string(&g, sf_json_member(&g, c, "name"), name, sizeof name);
        sf_json_string(&g, sf_json_member(&g, c, "file"), file, sizeof file);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        size_t len;
        unsigned char *bytes = read_file(path, &len);
        CHECK(bytes, "%s: cannot read %s", name, path);
        if (!bytes) continue;
        sf_encoder *e = NULL;
        int rc = sf_model_load(bytes, len, &e, &err);
        CHECK(!rc, "%s: load: %s", name, err.msg);
        if (rc) {
            free(bytes);
            continue;
        }
        int ids = sf_json_member(&g, c, "ids"), types = sf_json_member(&g, c, "typeIds"), att = sf_json_member(&g, c, "attentions");
        int skip = sf_json_member(&g, c, "skipLayers");
        int T = run(e, &g, ids, types, skip, att >= 0 ? SF_OUT_ATTENTIONS : 0, &err);
        CHECK(T > 0, "%s: forward: %s", name, err.msg);
        if (T > 0) {
            size_t n = (size_t)g.nodes[ids].count * T * e->cfg.d_model, count;
            double r = rel_err(e->out, &g, sf_json_member(&g, c, "expected"), n, &count);
            CHECK(count == n && r <= 1e-4, "%s: relative error %g (%zu values, want %zu)", name, r, count, n);
            worst = fmax(worst, r);
            int lg = sf_json_member(&g, c, "logits");
            if (lg >= 0) {
                size_t nl = (size_t)g.nodes[ids].count * T * e->cfg.vocab_size;
                double rl = rel_err(e->logits, &g, sf_json_member(&g, lg, "data"), nl, &count);
                CHECK(e->logits && count == nl && rl <= 1e-4, "%s: logits relative error %g", name, rl);
            }
            if (att >= 0) {
                size_t na = (size_t)e->cfg.layers * g.nodes[ids].count * e->cfg.heads * T * T;
                double ra = rel_err(e->att, &g, sf_json_member(&g, att, "data"), na, &count);
                CHECK(count == na && ra <= 1e-4, "%s: attention relative error %g", name, ra);
            }
            /* save -> load -> the same bits */
            unsigned char *saved;
            size_t saved_len;
            float *first = malloc(n * sizeof(float));
            memcpy(first, e->out, n * sizeof(float));
            sf_encoder *back = NULL;
            CHECK(!sf_model_save(e, &saved, &saved_len, &err) && !sf_model_load(saved, saved_len, &back, &err), "%s: round trip: %s", name, err.msg);
            if (back) {
                CHECK(run(back, &g, ids, types, skip, 0, &err) == T && !memcmp(back->out, first, n * sizeof(float)),
                      "%s: round trip changed the output", name);
                sf_encoder_free(back);
                free(saved);
            }
            free(first);
        }
        if (len < smallest_len) {
            free(smallest);
            smallest = malloc(len);
            memcpy(smallest, bytes, len);
            smallest_len = len;
        }
        sf_encoder_free(e);
        free(bytes);
        ran++;
    }
    /* every prefix of the smallest model is refused, never a crash */
    int refused = 0;
    for (size_t cut = 0; smallest && cut < smallest_len; cut += cut < 2048 ? 1 : 97) {
        unsigned char *p = malloc(cut ? cut : 1);
        memcpy(p, smallest, cut);
        sf_encoder *e = NULL;
        int rc = sf_model_load(p, cut, &e, &err);
        CHECK(rc == SF_BAD_FILE, "prefix of %zu bytes: code %d (%s)", cut, rc, err.msg);
        refused += rc != 0;
        sf_encoder_free(e);
        free(p);
    }
    /* single-byte corruptions of the header: any answer but a crash or a leak */
    size_t hlen = smallest ? (size_t)smallest[0] | (size_t)smallest[1] << 8 : 0;
    for (size_t at = 0; smallest && at < 8 + hlen && at < smallest_len; at++) {
        unsigned char *p = malloc(smallest_len);
        memcpy(p, smallest, smallest_len);
        p[at] ^= (unsigned char)(0x55 + at);
        sf_encoder *e = NULL;
        if (!sf_model_load(p, smallest_len, &e, &err)) {
            if (!sf_encoder_reserve(e, 1, 3, 3, 0, &err)) {
                e->lens[0] = 3;
                e->ids[0] = e->ids[1] = e->ids[2] = 0;
                sf_encoder_forward(e, 1, 0, &err);
            }
            sf_encoder_free(e);
        }
        free(p);
    }
    free(smallest);
    sf_json_free(&g);
    free(gtext);
    printf("native golden: %d cases, worst relative error %.3g; %d truncated files refused; %d failures\n", ran, worst, refused, failures);
    return failures || !ran ? 1 : 0;
}
