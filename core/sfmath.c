/* Double-precision math for building tables and initialising weights, and a
 * correctly rounded decimal-to-double conversion for the JSON reader.
 *
 * These replace musl's pow/log/sin/cos and strtod: theirs carry ~25 KB of
 * code, tables and 128-bit float helpers into the wasm; these are a few KB,
 * accurate to a few ulp (the tables are stored as float anyway), and give
 * the same bits in every build (wasm, relaxed wasm, native). */
#include "sfmath.h"

#include <stdint.h>
#include <string.h>

static double from_bits(uint64_t b) {
    double d;
    memcpy(&d, &b, 8);
    return d;
}
static uint64_t to_bits(double d) {
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

static const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;

/* 2^k for integer k in [-1022, 1023] */
static double pow2i(int k) { return from_bits((uint64_t)(k + 1023) << 52); }

double sf_exp(double x) {
    if (x != x) return x;
    if (x > 709.78) return 1.0 / 0.0;
    if (x < -745.2) return 0.0;
    double kd = x * 1.4426950408889634 + (x < 0 ? -0.5 : 0.5);
    int k = (int)kd;                          /* round to nearest */
    double r = (x - k * LN2_HI) - k * LN2_LO; /* |r| <= 0.35 */
    static const double inv_fact[15] = {1,
                                        1,
                                        1.0 / 2,
                                        1.0 / 6,
                                        1.0 / 24,
                                        1.0 / 120,
                                        1.0 / 720,
                                        1.0 / 5040,
                                        1.0 / 40320,
                                        1.0 / 362880,
                                        1.0 / 3628800,
                                        1.0 / 39916800,
                                        1.0 / 479001600,
                                        1.0 / 6227020800.0,
                                        1.0 / 87178291200.0};
    double sum = inv_fact[14]; /* Taylor to r^14: 0.35^15/15! < 1e-19 */
    for (int n = 13; n >= 0; n--) sum = sum * r + inv_fact[n];
    if (k < -1021) return sum * pow2i(k + 60) * pow2i(-60); /* into the subnormals */
    if (k > 1023) return sum * pow2i(k - 1) * 2.0;
    return sum * pow2i(k);
}

double sf_log(double x) {
    if (!(x > 0)) return x == 0 ? -1.0 / 0.0 : (x - x) / 0.0;
    if (x == 1.0 / 0.0) return x;
    uint64_t b = to_bits(x);
    int e = (int)((b >> 52) & 0x7FF);
    if (!e) {                     /* subnormal: scale into the normals */
        x *= 18014398509481984.0; /* 2^54 */
        b = to_bits(x);
        e = (int)((b >> 52) & 0x7FF) - 54;
    }
    e -= 1023;
    double m = from_bits((b & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull); /* [1, 2) */
    if (m > 1.4142135623730951) m *= 0.5, e += 1;                              /* [sqrt(1/2), sqrt(2)) */
    double s = (m - 1) / (m + 1), s2 = s * s, sum = 1.0 / 29;                  /* log m = 2 atanh s = 2 sum s^(2n+1)/(2n+1), |s| < 0.172 */
    for (int n = 27; n >= 1; n -= 2) sum = sum * s2 + 1.0 / n;
    return 2 * s * sum + e * LN2_LO + e * LN2_HI;
}

/* Goldberg's correction: log(u) x / (u - 1) with u = 1 + x rounded cancels
 * the rounding of 1 + x (What Every Computer Scientist..., theorem 4). */
double sf_log1p(double x) {
    double u = 1.0 + x;
    if (u == 1.0 || x != x) return x;
    return sf_log(u) * (x / (u - 1.0));
}

double sf_pow(double base, double e) { return sf_exp(e * sf_log(base)); }

/* x - k pi/2 in three parts of 33 bits each (fdlibm's split): exact for |k| < 2^20 */
void sf_sincos(double x, double *s, double *c) {
    static const double PIO2_1 = 1.57079632673412561417e+00, PIO2_2 = 6.07710050630396597660e-11, PIO2_3 = 2.02226624879595063154e-21;
    double kd = x * 6.36619772367581382433e-01;
    kd = kd < 0 ? kd - 0.5 : kd + 0.5;
    long long k = (long long)kd;
    double r = ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3; /* |r| <= pi/4 */
    /* Taylor: (pi/4)^21 / 21! < 1e-20. sin: (-1)^n / (2n+1)!, cos: (-1)^n / (2n)! */
    static const double S[11] = {1,
                                 -1.0 / 6,
                                 1.0 / 120,
                                 -1.0 / 5040,
                                 1.0 / 362880,
                                 -1.0 / 39916800,
                                 1.0 / 6227020800.0,
                                 -1.0 / 1307674368000.0,
                                 1.0 / 355687428096000.0,
                                 -1.0 / 121645100408832000.0,
                                 1.0 / 51090942171709440000.0};
    static const double K[11] = {1,
                                 -1.0 / 2,
                                 1.0 / 24,
                                 -1.0 / 720,
                                 1.0 / 40320,
                                 -1.0 / 3628800,
                                 1.0 / 479001600,
                                 -1.0 / 87178291200.0,
                                 1.0 / 20922789888000.0,
                                 -1.0 / 6402373705728000.0,
                                 1.0 / 2432902008176640000.0};
    double r2 = r * r, sn = S[10], cs = K[10];
    for (int n = 9; n >= 0; n--) {
        sn = sn * r2 + S[n];
        cs = cs * r2 + K[n];
    }
    sn *= r;
    switch (k & 3) {
    case 0: *s = sn, *c = cs; break;
    case 1: *s = cs, *c = -sn; break;
    case 2: *s = -sn, *c = -cs; break;
    default: *s = -cs, *c = sn; break;
    }
}

/* ------------------------------------------------------- decimal to double */

/* Unsigned big integers in 32-bit limbs, least significant first. Enough for
 * 2^64 * 5^400 * 2^1200, the largest comparison sf_parse_double makes. */
#define BIG_LIMBS 96
typedef struct {
    uint32_t d[BIG_LIMBS];
    int n;
} big;

static void big_set(big *a, uint64_t v) {
    a->n = 0;
    while (v) a->d[a->n++] = (uint32_t)v, v >>= 32;
}
static void big_mul_small(big *a, uint32_t m) {
    uint64_t carry = 0;
    for (int i = 0; i < a->n; i++) {
        uint64_t t = (uint64_t)a->d[i] * m + carry;
        a->d[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry && a->n < BIG_LIMBS) a->d[a->n++] = (uint32_t)carry;
}
static void big_pow5(big *a, int e) {
    for (; e >= 13; e -= 13) big_mul_small(a, 1220703125u); /* 5^13 */
    static const uint32_t p5[13] = {1, 5, 25, 125, 625, 3125, 15625, 78125, 390625, 1953125, 9765625, 48828125, 244140625};
    if (e) big_mul_small(a, p5[e]);
}
static void big_shl(big *a, int s) {
    int w = s / 32, b = s % 32;
    if (!a->n) return;
    if (b) {
        uint32_t carry = 0;
        for (int i = 0; i < a->n; i++) {
            uint32_t t = a->d[i];
            a->d[i] = t << b | carry;
            carry = t >> (32 - b);
        }
        if (carry && a->n < BIG_LIMBS) a->d[a->n++] = carry;
    }
    if (w) {
        if (a->n + w > BIG_LIMBS) w = BIG_LIMBS - a->n;
        memmove(a->d + w, a->d, sizeof(uint32_t) * (size_t)a->n);
        memset(a->d, 0, sizeof(uint32_t) * (size_t)w);
        a->n += w;
    }
}
static int big_cmp(const big *a, const big *b) {
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    for (int i = a->n - 1; i >= 0; i--)
        if (a->d[i] != b->d[i]) return a->d[i] < b->d[i] ? -1 : 1;
    return 0;
}

/* Sign of m * 10^e - (2M + 1) * 2^(K-1), exactly: the value against the
 * midpoint between M * 2^K and (M + 1) * 2^K. */
static int cmp_midpoint(uint64_t m, int e, uint64_t M2p1, int Km1) {
    big a, b;
    big_set(&a, m);
    big_set(&b, M2p1);
    if (e >= 0)
        big_pow5(&a, e);
    else
        big_pow5(&b, -e);
    int d = e - Km1; /* powers of two: 2^e on the left, 2^(K-1) on the right */
    if (d >= 0)
        big_shl(&a, d);
    else
        big_shl(&b, -d);
    return big_cmp(&a, &b);
}

/* v = m * 10^e (m < 10^19), correctly rounded to nearest-even: an estimate,
 * then exact comparisons against the midpoints to its neighbours. */
static double decimal_to_double(uint64_t m, int e, int sticky) {
    if (!m) return 0;
    if (e > 310) return 1.0 / 0.0;
    if (e < -360) return 0;
    static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    if (!sticky && m < (1ull << 53) && e >= -22 && e <= 22) /* both exact: one rounding */
        return e >= 0 ? (double)m * p10[e] : (double)m / p10[-e];
    double z = (double)m;
    for (int k = e; k > 0; k -= 22) z *= p10[k > 22 ? 22 : k];
    for (int k = -e; k > 0; k -= 22) z /= p10[k > 22 ? 22 : k]; /* a few ulp off at most; may under/overflow */
    if (z > 1.7976931348623157e308) z = 1.7976931348623157e308;
    for (int iter = 0; iter < 64; iter++) {
        uint64_t b = to_bits(z);
        int be = (int)(b >> 52);
        uint64_t M = b & 0x000FFFFFFFFFFFFFull;
        int K;
        if (be)
            M |= 1ull << 52, K = be - 1075;
        else
            K = -1074;
        int up = cmp_midpoint(m, e, 2 * M + 1, K - 1);
        if (up > 0 || (up == 0 && (sticky || (M & 1)))) { /* above the upper midpoint, or a tie to odd */
            if (b == 0x7FEFFFFFFFFFFFFFull) return 1.0 / 0.0;
            z = from_bits(b + 1);
            continue;
        }
        if (!M && !be) return 0;
        /* the lower neighbour is closer when M is a power of two (binade edge) */
        int low;
        if (M == (1ull << 52) && be > 1)
            low = cmp_midpoint(m, e, 4 * M - 1, K - 2);
        else
            low = cmp_midpoint(m, e, 2 * M - 1, K - 1);
        if (low < 0 || (low == 0 && !sticky && (M & 1))) {
            z = from_bits(b - 1);
            continue;
        }
        return z;
    }
    return z;
}

double sf_parse_double(const char *s, size_t len) {
    size_t i = 0;
    int neg = 0, digits = 0, sticky = 0;
    long long e10 = 0;
    uint64_t m = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    for (int frac = 0; i < len; i++) {
        char ch = s[i];
        if (ch == '.' && !frac) {
            frac = 1;
            continue;
        }
        if (ch < '0' || ch > '9') break;
        if (digits < 19) {
            if (m || ch != '0') m = m * 10 + (uint64_t)(ch - '0'), digits += m != 0;
            if (frac) e10--;
        } else {
            sticky |= ch != '0';
            if (!frac) e10++;
        }
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0;
        long long ev = 0;
        if (i < len && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            if (ev < 100000) ev = ev * 10 + (s[i] - '0');
        e10 += eneg ? -ev : ev;
    }
    if (e10 > 100000) e10 = 100000;
    if (e10 < -100000) e10 = -100000;
    double v = decimal_to_double(m, (int)e10, sticky);
    return neg ? -v : v;
}
