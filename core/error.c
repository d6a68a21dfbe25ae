#include "error.h"

#include <stdarg.h>

typedef struct {
    char *p;
    size_t n, cap;
} msgbuf;

static void put_char(msgbuf *b, char c) {
    if (b->n + 1 < b->cap) b->p[b->n++] = c;
}

static void put_str(msgbuf *b, const char *s) {
    if (!s) s = "(null)";
    while (*s) put_char(b, *s++);
}

static void put_uint(msgbuf *b, unsigned long long v) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n) put_char(b, tmp[--n]);
}

static void put_int(msgbuf *b, long long v) {
    if (v < 0) {
        put_char(b, '-');
        put_uint(b, 0ull - (unsigned long long)v);
    } else {
        put_uint(b, (unsigned long long)v);
    }
}

/* Enough for messages: integers print as integers, the rest with 6 significant
 * digits in scientific notation when far from 1. */
static void put_double(msgbuf *b, double v) {
    if (v != v) {
        put_str(b, "NaN");
        return;
    }
    if (v > 1.7976931348623157e308) {
        put_str(b, "Infinity");
        return;
    }
    if (v < -1.7976931348623157e308) {
        put_str(b, "-Infinity");
        return;
    }
    if (v < 0) {
        put_char(b, '-');
        v = -v;
    }
    if (v < 1e15 && v == (double)(long long)v) {
        put_uint(b, (unsigned long long)v);
        return;
    }
    double orig = v;
    int e = 0;
    if (v != 0) {
        while (v >= 10) {
            v /= 10;
            e++;
        }
        while (v < 1) {
            v *= 10;
            e--;
        }
    }
    int sci = e < -4 || e > 6;
    if (!sci) v = orig; /* v in [1,10) when sci, else the plain value (< 1e7) */
    unsigned long long ip = (unsigned long long)v;
    double frac = v - (double)ip;
    unsigned long long f = (unsigned long long)(frac * 1e6 + 0.5);
    if (f >= 1000000ull) {
        ip += 1;
        f -= 1000000ull;
    }
    put_uint(b, ip);
    if (f) {
        char d[7];
        for (int i = 5; i >= 0; i--) {
            d[i] = (char)('0' + f % 10);
            f /= 10;
        }
        int last = 5;
        while (last > 0 && d[last] == '0') last--;
        put_char(b, '.');
        for (int i = 0; i <= last; i++) put_char(b, d[i]);
    }
    if (sci) {
        put_char(b, 'e');
        put_int(b, e);
    }
}

int sf_fail(sf_error *err, int code, const char *fmt, ...) {
    if (!err) return code;
    err->code = code;
    msgbuf b = {err->msg, 0, sizeof err->msg};
    va_list ap;
    va_start(ap, fmt);
    for (const char *f = fmt; *f; f++) {
        if (*f != '%' || !f[1]) {
            put_char(&b, *f);
            continue;
        }
        switch (*++f) {
        case 's': put_str(&b, va_arg(ap, const char *)); break;
        case 'd': put_int(&b, va_arg(ap, int)); break;
        case 'z': put_int(&b, va_arg(ap, long long)); break;
        case 'g': put_double(&b, va_arg(ap, double)); break;
        default: put_char(&b, *f); break;
        }
    }
    va_end(ap);
    err->msg[b.n] = 0;
    return code;
}
