/*
 * The JSON of `pairsight serve`: a strict RFC 8259 tokenizer that parses a
 * request body in place into one flat array of tokens (no allocation per
 * element: the array is reused across requests and grows by doubling), and
 * an append-only text buffer for replies.
 *
 * Why not cJSON: a 1,000-query /v1/predict body is 11,000 values; cJSON
 * allocates a node and a string per value, about 15,000 mallocs per request,
 * which costs more than the prediction itself. The tokens here point into
 * the body, strings are unescaped in place, and numbers are converted when
 * read.
 */
#ifndef PS_SERVE_SJSON_H
#define PS_SERVE_SJSON_H

#include <stddef.h>

typedef enum { SJ_NULL, SJ_FALSE, SJ_TRUE, SJ_NUMBER, SJ_STRING, SJ_ARRAY, SJ_OBJECT } sj_type_t;

/* One value. For a string, start..end is its text between the quotes (raw
 * until sj_str unescapes it); for other values the whole value. size counts
 * an array's elements or an object's members; next is the index of the
 * token after this value's subtree (an object member's key is a string
 * token followed by its value's subtree). */
typedef struct {
    unsigned char type, escaped;
    int start, end, size, next;
} sj_tok_t;

typedef struct {
    char *text; /* the body, modified in place by sj_str */
    size_t len;
    sj_tok_t *tok;
    int n, cap;
    int max_depth; /* containers nested deeper are refused */
    char err[160]; /* why the text was refused */
} sj_doc_t;

/* Tokenize text[len] into d (d->tok kept from earlier calls and grown as
 * needed). Returns 0, or -1 with d->err ("not valid JSON near byte N",
 * "nested deeper than D", "out of memory"). The text must stay alive and
 * writable while the tokens are used. */
int sj_parse(sj_doc_t *d, char *text, size_t len);
/* Release the token array. */
void sj_free(sj_doc_t *d);

/* The value of member key of object token obj (key compared ignoring ASCII
 * case when nocase; of duplicate keys the last, as Go's encoding/json and
 * so kube-scheduler read them), or -1. */
int sj_get(sj_doc_t *d, int obj, const char *key, int nocase);
/* The first child of array or object token t (an object's first key), or
 * -1 when empty; then sj_next. */
int sj_child(const sj_doc_t *d, int t);
/* The sibling after t within its container: for a key, the next key. */
int sj_next_item(const sj_doc_t *d, int t, int is_key);

/* String token t, unescaped and NUL-terminated in place (idempotent). */
const char *sj_str(sj_doc_t *d, int t);
/* Number token t as a double: 0, or -1 when t is not a number. Finite
 * numbers only: 1e400 is refused. */
int sj_num(const sj_doc_t *d, int t, double *out);
/* Number token t as an int in lo..hi: 0, or -1. */
int sj_int(const sj_doc_t *d, int t, long lo, long hi, int *out);
/* "an object", "a string", ... for messages. */
const char *sj_type_name(int type);

/* A growing text buffer; on allocation failure it sets oom and drops the
 * rest. */
typedef struct {
    char *s;
    size_t len, cap;
    int oom;
} sb_t;

void sb_putn(sb_t *b, const char *s, size_t n);
void sb_puts(sb_t *b, const char *s);
void sb_printf(sb_t *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* s as a JSON string, quotes included; bytes that are not UTF-8 become
 * U+FFFD, so that the reply is JSON whatever s holds. */
void sb_str(sb_t *b, const char *s);
/* A double as JSON: %.17g (shortest exact), null when not finite. */
void sb_num(sb_t *b, double v);
void sb_free(sb_t *b);

#endif
