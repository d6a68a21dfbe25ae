/* A strict JSON (RFC 8259) reader into a flat node array, and a small writer.
 *
 * Used for the config and for the safetensors header, both of which come from
 * untrusted files: every node is bounds-checked, nesting is limited, numbers
 * follow the JSON grammar exactly, strings must be valid UTF-8 and \u escapes
 * valid code points. Nodes refer back into the source text; nothing is copied
 * until a caller asks for a string with sf_json_string(). */
#ifndef SF_JSON_H
#define SF_JSON_H

#include <stddef.h>

#include "error.h"

enum { SF_JNULL, SF_JFALSE, SF_JTRUE, SF_JNUMBER, SF_JSTRING, SF_JARRAY, SF_JOBJECT };

typedef struct sf_jnode {
    int type;
    int first;           /* first child (array items, object values), -1 if none */
    int next;            /* next sibling, -1 if last */
    int count;           /* number of children */
    size_t start, end;   /* source span; for strings, the inside of the quotes */
    size_t kstart, kend; /* for object members: the key's span, inside the quotes */
    int kescaped;        /* the key contains a backslash escape */
    int escaped;         /* a string value contains a backslash escape */
    double num;          /* SF_JNUMBER */
} sf_jnode;

typedef struct sf_json {
    const char *src;
    size_t len;
    sf_jnode *nodes;
    int n, cap;
} sf_json;

#define SF_JSON_MAX_DEPTH 32

/* Parses src[0..len); the root is node 0. what names the document in messages
 * ("config", "header"); errors are reported with code. */
int sf_json_parse(sf_json *j, const char *src, size_t len, const char *what, int code, sf_error *err);
void sf_json_free(sf_json *j);

/* The value of member key in object node obj, or -1. */
int sf_json_member(const sf_json *j, int obj, const char *key);
/* 1 if the key of member node equals s. */
int sf_json_key_is(const sf_json *j, int member, const char *s);
/* Copies the key of member node, unescaped and NUL-terminated, truncating to cap. */
void sf_json_key(const sf_json *j, int member, char *out, size_t cap);
/* Unescapes string node into out (NUL-terminated). Returns its length, or -1
 * when it does not fit in cap bytes (including the NUL). */
long sf_json_string(const sf_json *j, int node, char *out, size_t cap);
/* 1 if string node equals s. */
int sf_json_string_is(const sf_json *j, int node, const char *s);
/* Unescaped length of string node. */
size_t sf_json_string_len(const sf_json *j, int node);
/* A member of object obj whose key repeats an earlier member's (JSON.parse
 * would silently take the last; we refuse), -1 if none, -2 out of memory. */
int sf_json_duplicate(const sf_json *j, int obj);
/* 1 if a number node holds an integer in [lo, hi]. */
int sf_json_is_int(const sf_json *j, int node, double lo, double hi);

const char *sf_json_type_name(int type);

/* A growable byte buffer for writing JSON and files. On allocation failure it
 * sets failed and drops further writes; check failed once at the end. */
typedef struct sf_buf {
    char *p;
    size_t n, cap;
    int failed;
} sf_buf;

void sf_buf_put(sf_buf *b, const char *s, size_t n);
void sf_buf_str(sf_buf *b, const char *s);
void sf_buf_json_string(sf_buf *b, const char *s, size_t n); /* quoted + escaped */
void sf_buf_json_number(sf_buf *b, double v);                /* shortest round-trip */
void sf_buf_free(sf_buf *b);

#endif
