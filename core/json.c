#include "json.h"

#include "sfmath.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- reading */

typedef struct {
    sf_json *j;
    size_t pos;
    const char *what;
    int code;
    sf_error *err;
} parser;

static int perr(parser *p, const char *msg) { return sf_fail(p->err, p->code, "%s: invalid JSON at byte %z: %s", p->what, (long long)p->pos, msg); }

static void skip_ws(parser *p) {
    const char *s = p->j->src;
    while (p->pos < p->j->len && (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' || s[p->pos] == '\r')) p->pos++;
}

static int new_node(parser *p, int type) {
    sf_json *j = p->j;
    if (j->n == j->cap) {
        if (j->cap > (1 << 26)) return -1; /* 64M nodes: far beyond any real header */
        int cap = j->cap ? j->cap * 2 : 64;
        sf_jnode *nodes = realloc(j->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes) return -1;
        j->nodes = nodes;
        j->cap = cap;
    }
    sf_jnode *n = &j->nodes[j->n];
    memset(n, 0, sizeof *n);
    n->type = type;
    n->first = n->next = -1;
    n->start = p->pos;
    return j->n++;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int read_hex4(const char *s, size_t len, size_t at, unsigned *out) {
    if (at + 4 > len) return 0;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(s[at + i]);
        if (h < 0) return 0;
        v = v * 16 + (unsigned)h;
    }
    *out = v;
    return 1;
}

/* Length of the valid UTF-8 sequence at s[0..avail), or 0. */
static size_t utf8_len(const unsigned char *s, size_t avail) {
    unsigned c = s[0];
    size_t n;
    unsigned min, cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
        min = 0x10000;
    } else
        return 0;
    if (n > avail) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

/* Scans a string starting at the opening quote; sets the span to the inside. */
static int scan_string(parser *p, size_t *start, size_t *end, int *escaped) {
    const char *s = p->j->src;
    size_t len = p->j->len;
    p->pos++; /* opening quote */
    *start = p->pos;
    *escaped = 0;
    while (p->pos < len) {
        unsigned char c = (unsigned char)s[p->pos];
        if (c == '"') {
            *end = p->pos++;
            return 0;
        }
        if (c < 0x20) return perr(p, "control character in string");
        if (c == '\\') {
            *escaped = 1;
            if (p->pos + 1 >= len) break;
            char e = s[p->pos + 1];
            if (e == 'u') {
                unsigned u;
                if (!read_hex4(s, len, p->pos + 2, &u)) return perr(p, "bad \\u escape");
                p->pos += 6;
                /* C strings end at NUL: 'rope\u0000xyz' would read as 'rope' */
                if (u == 0) return perr(p, "\\u0000 (NUL) is not allowed in a string");
                if (u >= 0xDC00 && u <= 0xDFFF) return perr(p, "lone low surrogate");
                if (u >= 0xD800 && u <= 0xDBFF) {
                    unsigned lo;
                    if (p->pos + 1 >= len || s[p->pos] != '\\' || s[p->pos + 1] != 'u' || !read_hex4(s, len, p->pos + 2, &lo) || lo < 0xDC00 ||
                        lo > 0xDFFF)
                        return perr(p, "unpaired surrogate");
                    p->pos += 6;
                }
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || e == 0) return perr(p, "bad escape");
            p->pos += 2;
            continue;
        }
        size_t n = utf8_len((const unsigned char *)s + p->pos, len - p->pos);
        if (!n) return perr(p, "invalid UTF-8");
        p->pos += n;
    }
    return perr(p, "unterminated string");
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int scan_number(parser *p, double *out) {
    const char *s = p->j->src;
    size_t len = p->j->len, b = p->pos, i = p->pos;
    if (i < len && s[i] == '-') i++;
    if (i < len && s[i] == '0')
        i++;
    else if (i < len && s[i] >= '1' && s[i] <= '9')
        while (i < len && is_digit(s[i])) i++;
    else
        return perr(p, "bad number");
    if (i < len && s[i] == '.') {
        i++;
        if (i >= len || !is_digit(s[i])) return perr(p, "bad number");
        while (i < len && is_digit(s[i])) i++;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= len || !is_digit(s[i])) return perr(p, "bad number");
        while (i < len && is_digit(s[i])) i++;
    }
    *out = sf_parse_double(s + b, i - b);
    p->pos = i;
    return 0;
}

static int parse_value(parser *p, int depth);

static int parse_container(parser *p, int node, int depth, int is_obj) {
    sf_json *j = p->j;
    const char *s = j->src;
    char close = is_obj ? '}' : ']';
    p->pos++; /* opening bracket */
    skip_ws(p);
    if (p->pos < j->len && s[p->pos] == close) {
        p->pos++;
        return 0;
    }
    int last = -1;
    for (;;) {
        size_t ks = 0, ke = 0;
        int kesc = 0, rc;
        if (is_obj) {
            skip_ws(p);
            if (p->pos >= j->len || s[p->pos] != '"') return perr(p, "expected a string key");
            if ((rc = scan_string(p, &ks, &ke, &kesc))) return rc;
            skip_ws(p);
            if (p->pos >= j->len || s[p->pos] != ':') return perr(p, "expected ':'");
            p->pos++;
        }
        skip_ws(p);
        int child = j->n;
        if ((rc = parse_value(p, depth + 1))) return rc;
        if (is_obj) {
            j->nodes[child].kstart = ks;
            j->nodes[child].kend = ke;
            j->nodes[child].kescaped = kesc;
        }
        if (last < 0)
            j->nodes[node].first = child;
        else
            j->nodes[last].next = child;
        last = child;
        if (j->nodes[node].count == 0x7fffffff) return perr(p, "too many members");
        j->nodes[node].count++;
        skip_ws(p);
        if (p->pos < j->len && s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < j->len && s[p->pos] == close) {
            p->pos++;
            return 0;
        }
        return perr(p, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int parse_value(parser *p, int depth) {
    sf_json *j = p->j;
    const char *s = j->src;
    if (depth > SF_JSON_MAX_DEPTH) return perr(p, "nested too deeply");
    skip_ws(p);
    if (p->pos >= j->len) return perr(p, "unexpected end");
    char c = s[p->pos];
    int type = c == '{'   ? SF_JOBJECT
               : c == '[' ? SF_JARRAY
               : c == '"' ? SF_JSTRING
               : c == 't' ? SF_JTRUE
               : c == 'f' ? SF_JFALSE
               : c == 'n' ? SF_JNULL
                          : SF_JNUMBER;
    int node = new_node(p, type);
    if (node < 0) return sf_fail(p->err, SF_OUT_OF_MEMORY, "%s: out of memory parsing JSON", p->what);
    int rc = 0;
    switch (type) {
    case SF_JOBJECT:
    case SF_JARRAY: rc = parse_container(p, node, depth, type == SF_JOBJECT); break;
    case SF_JSTRING: {
        size_t a, b;
        int esc;
        rc = scan_string(p, &a, &b, &esc);
        j->nodes[node].start = a;
        j->nodes[node].end = b;
        j->nodes[node].escaped = esc;
        return rc;
    }
    case SF_JTRUE:
    case SF_JFALSE:
    case SF_JNULL: {
        const char *lit = type == SF_JTRUE ? "true" : type == SF_JFALSE ? "false" : "null";
        size_t n = strlen(lit);
        if (j->len - p->pos < n || memcmp(s + p->pos, lit, n)) return perr(p, "unexpected token");
        p->pos += n;
        break;
    }
    default: {
        double v;
        rc = scan_number(p, &v);
        j->nodes[node].num = v;
        break;
    }
    }
    j->nodes[node].end = p->pos;
    return rc;
}

int sf_json_parse(sf_json *j, const char *src, size_t len, const char *what, int code, sf_error *err) {
    memset(j, 0, sizeof *j);
    j->src = src;
    j->len = len;
    parser p = {j, 0, what, code, err};
    int rc = parse_value(&p, 0);
    if (!rc) {
        skip_ws(&p);
        if (p.pos != len) rc = perr(&p, "trailing characters after the value");
    }
    if (rc) sf_json_free(j);
    return rc;
}

void sf_json_free(sf_json *j) {
    free(j->nodes);
    j->nodes = NULL;
    j->n = j->cap = 0;
}

/* Decodes the escaped text s[a..b) into out (if not NULL). Returns the decoded
 * length; the text was validated by the parser. */
static size_t unescape(const char *s, size_t a, size_t b, char *out, size_t cap) {
    size_t n = 0;
#define PUT(ch)                                                                                                                                      \
    do {                                                                                                                                             \
        if (out && n < cap) out[n] = (char)(ch);                                                                                                     \
        n++;                                                                                                                                         \
    } while (0)
    for (size_t i = a; i < b;) {
        if (s[i] != '\\') {
            PUT(s[i]);
            i++;
            continue;
        }
        char e = s[i + 1];
        if (e != 'u') {
            char c = e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
            PUT(c);
            i += 2;
            continue;
        }
        unsigned u = 0, lo = 0;
        read_hex4(s, b, i + 2, &u);
        i += 6;
        if (u >= 0xD800 && u <= 0xDBFF) {
            read_hex4(s, b, i + 2, &lo);
            i += 6;
            u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (u < 0x80)
            PUT(u);
        else if (u < 0x800) {
            PUT(0xC0 | (u >> 6));
            PUT(0x80 | (u & 0x3F));
        } else if (u < 0x10000) {
            PUT(0xE0 | (u >> 12));
            PUT(0x80 | ((u >> 6) & 0x3F));
            PUT(0x80 | (u & 0x3F));
        } else {
            PUT(0xF0 | (u >> 18));
            PUT(0x80 | ((u >> 12) & 0x3F));
            PUT(0x80 | ((u >> 6) & 0x3F));
            PUT(0x80 | (u & 0x3F));
        }
    }
#undef PUT
    return n;
}

static int span_is(const sf_json *j, size_t a, size_t b, int escaped, const char *s) {
    size_t n = strlen(s);
    if (!escaped) return b - a == n && memcmp(j->src + a, s, n) == 0;
    if (unescape(j->src, a, b, NULL, 0) != n) return 0;
    char tmp[256];
    if (n > sizeof tmp) return 0;
    unescape(j->src, a, b, tmp, sizeof tmp);
    return memcmp(tmp, s, n) == 0;
}

int sf_json_key_is(const sf_json *j, int m, const char *s) {
    const sf_jnode *n = &j->nodes[m];
    return span_is(j, n->kstart, n->kend, n->kescaped, s);
}

int sf_json_member(const sf_json *j, int obj, const char *key) {
    if (obj < 0 || j->nodes[obj].type != SF_JOBJECT) return -1;
    for (int c = j->nodes[obj].first; c >= 0; c = j->nodes[c].next)
        if (sf_json_key_is(j, c, key)) return c;
    return -1;
}

void sf_json_key(const sf_json *j, int m, char *out, size_t cap) {
    const sf_jnode *n = &j->nodes[m];
    size_t len = unescape(j->src, n->kstart, n->kend, out, cap ? cap - 1 : 0);
    if (cap) out[len < cap - 1 ? len : cap - 1] = 0;
}

long sf_json_string(const sf_json *j, int node, char *out, size_t cap) {
    const sf_jnode *n = &j->nodes[node];
    size_t len = unescape(j->src, n->start, n->end, NULL, 0);
    if (len + 1 > cap) return -1;
    unescape(j->src, n->start, n->end, out, cap);
    out[len] = 0;
    return (long)len;
}

size_t sf_json_string_len(const sf_json *j, int node) {
    const sf_jnode *n = &j->nodes[node];
    return unescape(j->src, n->start, n->end, NULL, 0);
}

int sf_json_string_is(const sf_json *j, int node, const char *s) {
    const sf_jnode *n = &j->nodes[node];
    return n->type == SF_JSTRING && span_is(j, n->start, n->end, n->escaped, s);
}

int sf_json_is_int(const sf_json *j, int node, double lo, double hi) {
    const sf_jnode *n = &j->nodes[node];
    return n->type == SF_JNUMBER && n->num >= lo && n->num <= hi && n->num == (double)(long long)n->num;
}

const char *sf_json_type_name(int type) {
    static const char *names[] = {"null", "false", "true", "a number", "a string", "an array", "an object"};
    return type >= 0 && type <= SF_JOBJECT ? names[type] : "?";
}

/* ---------------------------------------------------------------- writing */

void sf_buf_put(sf_buf *b, const char *s, size_t n) {
    if (b->failed) return;
    if (n > b->cap - b->n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->n < n) {
            if (cap > ((size_t)-1) / 2) {
                b->failed = 1;
                return;
            }
            cap *= 2;
        }
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

void sf_buf_str(sf_buf *b, const char *s) { sf_buf_put(b, s, strlen(s)); }

void sf_buf_free(sf_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

void sf_buf_json_string(sf_buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    sf_buf_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            sf_buf_put(b, e, 2);
        } else if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            sf_buf_put(b, e, 6);
        } else {
            sf_buf_put(b, (const char *)&c, 1);
        }
    }
    sf_buf_put(b, "\"", 1);
}

/* Exact decimal digits of a finite positive double, by big-integer
 * arithmetic in base 1e9: v = m * 2^e, so v = m*2^e (e >= 0) or
 * m*5^-e / 10^-e (e < 0). Writes the digits (no leading zeros) to out and
 * returns their count; *dexp is the power of ten of the last digit. */
static int exact_digits(double v, char *out, int *dexp) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    int be = (int)((bits >> 52) & 0x7FF);
    uint64_t m = bits & ((1ull << 52) - 1);
    if (be)
        m |= 1ull << 52;
    else
        be = 1;
    int e = be - 1075;
    uint32_t limb[130];
    int n = 0;
    while (m) {
        limb[n++] = (uint32_t)(m % 1000000000u);
        m /= 1000000000u;
    }
    int mul_by = e >= 0 ? 2 : 5, times = e >= 0 ? e : -e;
    while (times > 0) {
        int k = times > 12 ? 12 : times; /* 5^12 and 2^12 keep products in 64 bits */
        uint64_t f = 1;
        for (int i = 0; i < k; i++) f *= (uint64_t)mul_by;
        uint64_t carry = 0;
        for (int i = 0; i < n; i++) {
            uint64_t x = (uint64_t)limb[i] * f + carry;
            limb[i] = (uint32_t)(x % 1000000000u);
            carry = x / 1000000000u;
        }
        while (carry) {
            limb[n++] = (uint32_t)(carry % 1000000000u);
            carry /= 1000000000u;
        }
        times -= k;
    }
    int len = 0;
    for (int i = n - 1; i >= 0; i--) {
        char tmp[9];
        uint32_t x = limb[i];
        for (int d = 8; d >= 0; d--) {
            tmp[d] = (char)('0' + x % 10);
            x /= 10;
        }
        int from = 0;
        if (i == n - 1)
            while (from < 8 && tmp[from] == '0') from++;
        memcpy(out + len, tmp + from, (size_t)(9 - from));
        len += 9 - from;
    }
    *dexp = e >= 0 ? 0 : e;
    return len;
}

/* Formats digits d[0..p) with the value d * 10^(x) as a JSON number. */
static void put_digits(sf_buf *b, int neg, const char *d, int p, int x) {
    char s[64];
    int n = 0;
    while (p > 1 && d[p - 1] == '0') {
        p--;
        x++;
    }
    int sci = p + x; /* position of the decimal point, counting from the first digit */
    if (neg) s[n++] = '-';
    if (x >= 0 && sci <= 21) {
        memcpy(s + n, d, (size_t)p);
        n += p;
        for (int i = 0; i < x; i++) s[n++] = '0';
    } else if (x < 0 && sci > 0) {
        memcpy(s + n, d, (size_t)sci);
        n += sci;
        s[n++] = '.';
        memcpy(s + n, d + sci, (size_t)(p - sci));
        n += p - sci;
    } else if (x < 0 && sci > -6) {
        s[n++] = '0';
        s[n++] = '.';
        for (int i = 0; i < -sci; i++) s[n++] = '0';
        memcpy(s + n, d, (size_t)p);
        n += p;
    } else {
        s[n++] = d[0];
        if (p > 1) {
            s[n++] = '.';
            memcpy(s + n, d + 1, (size_t)(p - 1));
            n += p - 1;
        }
        s[n++] = 'e';
        int ex = sci - 1;
        if (ex < 0) {
            s[n++] = '-';
            ex = -ex;
        }
        char t[8];
        int tn = 0;
        do {
            t[tn++] = (char)('0' + ex % 10);
            ex /= 10;
        } while (ex);
        while (tn) s[n++] = t[--tn];
    }
    sf_buf_put(b, s, (size_t)n);
}

/* The shortest decimal that reads back (sf_parse_double) as exactly v. */
void sf_buf_json_number(sf_buf *b, double v) {
    if (v != v || v - v != 0) {
        sf_buf_str(b, "null");
        return;
    } /* JSON has no NaN/Inf */
    if (v == 0) {
        sf_buf_str(b, "0");
        return;
    }
    int neg = v < 0;
    if (neg) v = -v;
    char all[1100];
    int dexp, len = exact_digits(v, all, &dexp);
    for (int p = 1; p <= 17; p++) {
        char d[20];
        int x = dexp + (len > p ? len - p : 0), q = len > p ? p : len;
        memcpy(d, all, (size_t)q);
        if (len > p) { /* round half to even on the exact tail */
            int up = all[p] > '5' || (all[p] == '5' && (d[p - 1] - '0') % 2);
            if (all[p] == '5' && !up)
                for (int i = p + 1; i < len; i++)
                    if (all[i] != '0') {
                        up = 1;
                        break;
                    }
            if (up) {
                int i = q - 1;
                while (i >= 0 && d[i] == '9') d[i--] = '0';
                if (i >= 0)
                    d[i]++;
                else {
                    d[0] = '1';
                    x += q;
                    q = 1;
                } /* 99..9 rounds up to 1e(q) */
            }
        }
        char txt[64];
        sf_buf tmp = {txt, 0, sizeof txt, 0};
        put_digits(&tmp, 0, d, q, x);
        if (sf_parse_double(txt, tmp.n) == v || p == 17) {
            put_digits(b, neg, d, q, x);
            return;
        }
    }
}

/* ------------------------------------------------------------ duplicates */

static uint64_t key_hash(const sf_json *j, int m, char *tmp, size_t cap) {
    const sf_jnode *n = &j->nodes[m];
    const char *k = j->src + n->kstart;
    size_t len = n->kend - n->kstart;
    if (n->kescaped) len = unescape(j->src, n->kstart, n->kend, tmp, cap), k = tmp; /* cap >= the raw span */
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)k[i]) * 0x100000001b3ull;
    return h;
}

static int keys_equal(const sf_json *j, int a, int b) {
    const sf_jnode *x = &j->nodes[a], *y = &j->nodes[b];
    if (!x->kescaped && !y->kescaped)
        return x->kend - x->kstart == y->kend - y->kstart && !memcmp(j->src + x->kstart, j->src + y->kstart, x->kend - x->kstart);
    size_t lx = unescape(j->src, x->kstart, x->kend, NULL, 0), ly = unescape(j->src, y->kstart, y->kend, NULL, 0);
    if (lx != ly) return 0;
    char *bx = malloc(lx + 1), *by = malloc(ly + 1);
    int eq = bx && by;
    if (eq) {
        unescape(j->src, x->kstart, x->kend, bx, lx);
        unescape(j->src, y->kstart, y->kend, by, ly);
        eq = !memcmp(bx, by, lx);
    }
    free(bx);
    free(by);
    return eq;
}

typedef struct {
    uint64_t h;
    int m;
} keyed;
static int by_hash(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    return x->h < y->h ? -1 : x->h > y->h ? 1 : x->m - y->m;
}

int sf_json_duplicate(const sf_json *j, int obj) {
    if (obj < 0 || j->nodes[obj].type != SF_JOBJECT || j->nodes[obj].count < 2) return -1;
    size_t n = (size_t)j->nodes[obj].count, cap = 0;
    for (int m = j->nodes[obj].first; m >= 0; m = j->nodes[m].next)
        if (j->nodes[m].kend - j->nodes[m].kstart > cap) cap = j->nodes[m].kend - j->nodes[m].kstart;
    keyed *ks = malloc(n * sizeof *ks);
    char *tmp = malloc(cap + 1);
    if (!ks || !tmp) {
        free(ks);
        free(tmp);
        return -2;
    }
    size_t k = 0;
    for (int m = j->nodes[obj].first; m >= 0; m = j->nodes[m].next, k++) ks[k] = (keyed){key_hash(j, m, tmp, cap + 1), m};
    qsort(ks, n, sizeof *ks, by_hash); /* O(n log n): headers may hold thousands of tensors */
    int dup = -1;
    for (size_t i = 1; i < n && dup < 0; i++)
        for (size_t p = i; p-- > 0 && ks[p].h == ks[i].h;)
            if (keys_equal(j, ks[p].m, ks[i].m)) {
                dup = ks[i].m;
                break;
            }
    free(ks);
    free(tmp);
    return dup;
}
