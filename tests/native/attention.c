/* The attention kernel alone (core/kernels.c attention_forward), against a
 * naive double-precision softmax(q k^T + bias) v written here: many shapes
 * (heads, head sizes, query chunks at any offset, key counts across the
 * 64-key tiles), with and without a window, a bias callback, probabilities
 * out, a permutation, grouped-query attention (G query heads per kv head,
 * kv rows narrower than q's). Run by ./build.sh sanitize (64- and 32-bit, ASan + UBSan).
 *
 *   attention            prints one line per failure and a summary; exit 1 on failure */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/encoder.h" /* SF_CHUNK */
#include "../../core/kernels.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float uniform(void) { /* in [-1, 1) */
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 4503599627370496.0 - 1.0);
}

/* bias(h, i, j) = 0.3 sin(h + 0.7 i - 1.3 j): asymmetric, per head */
static double bias_value(int h, int i, int j) { return 0.3 * sin(h + 0.7 * i - 1.3 * j); }
static void test_bias(float *s, size_t ld, const void *ctx, float *scratch, int h, int i0, int ni, int j0, int nj) {
    (void)ctx, (void)scratch;
    for (int j = 0; j < nj; j++)
        for (int i = 0; i < ni; i++) s[(size_t)j * ld + i] += (float)bias_value(h, i0 + i, j0 + j);
}

static int failures, cases;

static void check_group(int H, int G, int D, int T, int i0, int R, int window, int with_bias, int with_att, int with_perm, float scale) {
    size_t A = (size_t)H * D, K = (size_t)(H / G) * D; /* q's width, a kv row's half */
    float *q = malloc(sizeof(float) * R * A), *kv = malloc(sizeof(float) * ((size_t)T * 2 * K + SF_NR));
    float *o = malloc(sizeof(float) * R * A), *scratch = malloc(sizeof(float) * sf_attention_scratch(R, D));
    float *att = with_att ? calloc((size_t)H * T * T, sizeof(float)) : NULL;
    int32_t *perm = with_perm ? malloc(sizeof(int32_t) * T) : NULL;
    double *want = malloc(sizeof(double) * T);
    for (size_t k = 0; k < (size_t)R * A; k++) q[k] = uniform() * scale;
    for (size_t k = 0; k < (size_t)T * 2 * K + SF_NR; k++) kv[k] = uniform() * scale;
    if (perm)
        for (int t = 0; t < T; t++) perm[t] = (t * 7 + 3) % T == t ? t : T - 1 - t; /* an involution */
    sf_attn spec = {H, D, A, window, with_bias ? test_bias : NULL, NULL, 2 * K, G};
    /* in two head ranges, as two threads would run it */
    attention_forward(o, q, kv, scratch, att, (size_t)T, perm, &spec, 0, H / 2, i0, R, T);
    attention_forward(o, q, kv, scratch, att, (size_t)T, perm, &spec, H / 2, H, i0, R, T);
    cases++;
    double worst = 0, worst_p = 0;
    for (int h = 0; h < H; h++)
        for (int r = 0; r < R; r++) {
            int i = i0 + r;
            double m = -INFINITY, l = 0;
            for (int j = 0; j < T; j++) {
                if (window && abs(i - j) > window) {
                    want[j] = -INFINITY;
                    continue;
                }
                double s = 0;
                for (int d = 0; d < D; d++) s += (double)q[(size_t)r * A + h * D + d] * kv[(size_t)j * 2 * K + (h / G) * D + d];
                want[j] = s + (with_bias ? bias_value(h, i, j) : 0);
                if (want[j] > m) m = want[j];
            }
            for (int j = 0; j < T; j++) l += want[j] == -INFINITY ? 0 : exp(want[j] - m);
            for (int d = 0; d < D; d++) {
                double acc = 0, mag = 0;
                for (int j = 0; j < T; j++) {
                    if (want[j] == -INFINITY) continue;
                    double p = exp(want[j] - m) / l, v = kv[(size_t)j * 2 * K + K + (h / G) * D + d];
                    acc += p * v;
                    mag += p * fabs(v);
                }
                double err = fabs(o[(size_t)r * A + h * D + d] - acc) / (mag + 1e-30);
                if (err > worst) worst = err;
            }
            if (att)
                for (int j = 0; j < T; j++) {
                    double p = want[j] == -INFINITY ? 0 : exp(want[j] - m) / l;
                    int ri = perm ? perm[i] : i, cj = perm ? perm[j] : j;
                    float got = att[((size_t)h * T + ri) * T + cj];
                    if (want[j] == -INFINITY && got != 0)
                        worst_p = INFINITY; /* masked keys are exactly 0 */
                    else if (fabs(got - p) > worst_p)
                        worst_p = fabs(got - p);
                }
        }
    /* float32 scores carry a rounding error proportional to their size (scale^2 sqrt(D)) */
    double grow = scale * scale > 1 ? scale * scale : 1;
    if (!(worst <= 2e-5 * grow / 16 + 2e-5) || !(worst_p <= 2e-6 * grow)) {
        failures++;
        printf("FAIL: H=%d G=%d D=%d T=%d i0=%d R=%d window=%d bias=%d att=%d perm=%d scale=%g: output error %g, probability error %g\n", H, G, D, T,
               i0, R, window, with_bias, with_att, with_perm, scale, worst, worst_p);
    }
    free(q), free(kv), free(o), free(scratch), free(att), free(perm), free(want);
}

static void check(int H, int D, int T, int i0, int R, int window, int with_bias, int with_att, int with_perm, float scale) {
    check_group(H, 1, D, T, i0, R, window, with_bias, with_att, with_perm, scale);
}

int main(void) {
    static const int shapes[][2] = {{1, 1}, {1, 8}, {2, 4}, {4, 12}, {3, 16}, {12, 32}, {6, 3}};
    static const int lengths[] = {1, 2, 7, 63, 64, 65, 128, 129, 200};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t t = 0; t < sizeof lengths / sizeof *lengths; t++) {
            int H = shapes[s][0], D = shapes[s][1], T = lengths[t];
            for (int i0 = 0; i0 < T; i0 += SF_CHUNK) {
                int R = T - i0 < SF_CHUNK ? T - i0 : SF_CHUNK;
                int k = (int)(s * 9 + t) + i0;
                check(H, D, T, i0, R, 0, k % 2, k % 3 == 0, k % 5 == 0, 1.0f);
                for (int window = 1; window <= 70; window = window * 3 + 1) check(H, D, T, i0, R, window, k % 2, 1, 0, 1.0f);
                if (R > 3) check(H, D, T, i0 + 1, R - 3, 5, 1, 1, 0, 1.0f); /* a chunk that starts off the grid */
            }
        }
    /* grouped-query attention: 2, 3, 4 and all query heads on one kv head */
    static const int groups[][3] = {{4, 2, 8}, {6, 3, 4}, {8, 4, 16}, {12, 12, 8}, {6, 2, 3}};
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
        for (size_t t = 0; t < sizeof lengths / sizeof *lengths; t++) {
            int T = lengths[t], R = T < SF_CHUNK ? T : SF_CHUNK;
            check_group(groups[g][0], groups[g][1], groups[g][2], T, 0, R, 0, (int)t % 2, 1, (int)t % 3 == 0, 1.0f);
            check_group(groups[g][0], groups[g][1], groups[g][2], T, 0, R, 9, 1, 1, 0, 1.0f);
        }
    /* scores far beyond exp's range: the online max subtraction keeps them finite */
    check(2, 8, 150, 64, 64, 0, 1, 1, 0, 12.0f);
    check(2, 8, 150, 64, 64, 3, 0, 1, 0, 12.0f);
    printf("attention kernel: %d cases, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}
