/* UBJSON (ubjson.org, draft 12) as XGBoost 1.7 writes it: markers Z N T F
 * i U I l L d D C H S, arrays [ ] and objects { } with the optional
 * $type and #count of "optimized" containers; integers big-endian. */
#include "model/ubj.h"

#include "pairsight.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const unsigned char *p, *end;
    char *why;
    size_t why_n;
    int nomem; /* the failure was an allocation's */
} ubj_t;

static int fail(ubj_t *u, const char *what)
{
    snprintf(u->why, u->why_n, "%s", what);
    u->nomem = strcmp(what, "out of memory") == 0;
    return -1;
}

static size_t left(const ubj_t *u) { return (size_t)(u->end - u->p); }

/* Bytes of the payload of fixed-size types, -1 for the others. */
static int fixed_size(unsigned char t)
{
    switch (t) {
    case 'Z': case 'N': case 'T': case 'F': return 0;
    case 'i': case 'U': case 'C': return 1;
    case 'I': return 2;
    case 'l': case 'd': return 4;
    case 'L': case 'D': return 8;
    default: return -1;
    }
}

/* An integer of type t (i U I l L), which must be >= 0. */
static int read_count(ubj_t *u, unsigned char t, uint64_t *out)
{
    int k = fixed_size(t);
    if (!(t == 'i' || t == 'U' || t == 'I' || t == 'l' || t == 'L') || (size_t)k > left(u))
        return fail(u, "bad length");
    uint64_t v = 0;
    for (int i = 0; i < k; i++)
        v = v << 8 | u->p[i];
    int negative = t != 'U' && (u->p[0] & 0x80);
    u->p += k;
    if (negative)
        return fail(u, "negative length");
    *out = v;
    return 0;
}

static int read_length(ubj_t *u, uint64_t *out)
{
    if (left(u) < 1)
        return fail(u, "truncated length");
    unsigned char t = *u->p++;
    return read_count(u, t, out);
}

static int value(ubj_t *u, int t, int depth);

/* A container after its opening marker: close is ']' or '}'. */
static int container(ubj_t *u, unsigned char close, int depth)
{
    if (depth > 64)
        return fail(u, "nested too deep");
    int type = -1;
    uint64_t count = 0;
    int counted = 0;
    if (left(u) >= 2 && *u->p == '$') {
        type = u->p[1];
        u->p += 2;
        if (type == '[' || type == '{' || type == ']' || type == '}' || type == '$' || type == '#')
            return fail(u, "bad container type");
        if (left(u) < 1 || *u->p != '#')
            return fail(u, "typed container without a count");
    }
    if (left(u) >= 1 && *u->p == '#') {
        u->p++;
        if (read_length(u, &count))
            return -1;
        counted = 1;
        /* Every element takes at least one byte (a key at least two), or
         * its fixed size: a count beyond the bytes left is a lie. */
        int k = type >= 0 ? fixed_size((unsigned char)type) : 1;
        uint64_t min = (uint64_t)(k > 0 ? k : 1) + (close == '}' ? 2 : 0);
        if (count > left(u) / min)
            return fail(u, "element count larger than the bytes left");
    }
    for (uint64_t i = 0; counted ? i < count : 1; i++) {
        if (!counted) {
            if (left(u) < 1)
                return fail(u, "unterminated container");
            if (*u->p == close) {
                u->p++;
                return 0;
            }
            if (*u->p == 'N') { /* no-op */
                u->p++;
                continue;
            }
        }
        if (close == '}') {
            uint64_t kl;
            if (read_length(u, &kl))
                return -1;
            if (kl > left(u))
                return fail(u, "key longer than the bytes left");
            u->p += kl;
        }
        if (value(u, type, depth + 1))
            return -1;
    }
    return 0;
}

static int value(ubj_t *u, int t, int depth)
{
    if (t < 0) {
        if (left(u) < 1)
            return fail(u, "truncated value");
        t = *u->p++;
    }
    int k = fixed_size((unsigned char)t);
    if (k >= 0) {
        if ((size_t)k > left(u))
            return fail(u, "truncated number");
        u->p += k;
        return 0;
    }
    uint64_t len;
    switch (t) {
    case 'S':
    case 'H':
        if (read_length(u, &len))
            return -1;
        if (len > left(u))
            return fail(u, "string longer than the bytes left");
        u->p += len;
        return 0;
    case '[': return container(u, ']', depth);
    case '{': return container(u, '}', depth);
    default: return fail(u, "unknown marker");
    }
}

int psi_ubj_check(const unsigned char *buf, size_t n, char *why, size_t why_n)
{
    ubj_t u = {buf, buf + n, why, why_n, 0};
    if (value(&u, -1, 0) != 0) {
        char tmp[128];
        snprintf(tmp, sizeof tmp, "%s", why);
        snprintf(why, why_n, "%s at byte %zu", tmp, (size_t)(u.p - buf));
        return -1;
    }
    if (u.p != u.end) {
        snprintf(why, why_n, "%zu bytes after the value", left(&u));
        return -1;
    }
    return 0;
}

/* ---- conversion to cJSON (of a buffer psi_ubj_check passed) ---- */

/* The number of type t at u->p (k bytes, big-endian; k <= left(u)). */
static double number_at(ubj_t *u, unsigned char t, int k)
{
    uint64_t v = 0;
    for (int i = 0; i < k; i++)
        v = v << 8 | u->p[i];
    u->p += k;
    switch (t) {
    case 'i': return (double)(int8_t)v;
    case 'I': return (double)(int16_t)v;
    case 'l': return (double)(int32_t)v;
    case 'L': return (double)(int64_t)v;
    case 'd': {
        uint32_t b = (uint32_t)v;
        float f;
        memcpy(&f, &b, sizeof f);
        return (double)f;
    }
    case 'D': {
        double d;
        memcpy(&d, &v, sizeof d);
        return d;
    }
    default: return (double)v; /* U, C */
    }
}

/* A string of len bytes at u->p as a NUL-terminated copy; NULL when it
 * holds a NUL byte or memory runs out. */
static char *string_at(ubj_t *u, uint64_t len)
{
    if (len > left(u) || memchr(u->p, '\0', (size_t)len)) {
        fail(u, "a string holds a NUL byte");
        return NULL;
    }
    char *s = malloc((size_t)len + 1);
    if (!s) {
        fail(u, "out of memory");
        return NULL;
    }
    memcpy(s, u->p, (size_t)len);
    s[len] = '\0';
    u->p += len;
    return s;
}

static cJSON *to_json(ubj_t *u, int t);

/* A container after its opening marker, as a cJSON array or object. */
static cJSON *container_json(ubj_t *u, unsigned char close)
{
    int type = -1, counted = 0;
    uint64_t count = 0;
    cJSON *c = close == '}' ? cJSON_CreateObject() : cJSON_CreateArray();
    if (!c)
        return fail(u, "out of memory"), NULL;
    if (left(u) >= 2 && *u->p == '$') {
        type = u->p[1];
        u->p += 2;
    }
    if (left(u) >= 1 && *u->p == '#') {
        u->p++;
        if (read_length(u, &count))
            goto bad;
        counted = 1;
    }
    for (uint64_t i = 0; counted ? i < count : 1; i++) {
        if (!counted) {
            if (left(u) < 1)
                goto bad;
            if (*u->p == close) {
                u->p++;
                return c;
            }
            if (*u->p == 'N') {
                u->p++;
                continue;
            }
        }
        char *key = NULL;
        uint64_t kl;
        if (close == '}' && (read_length(u, &kl) || !(key = string_at(u, kl))))
            goto bad;
        cJSON *v = to_json(u, type);
        if (!v) {
            free(key);
            goto bad;
        }
        int added = key ? cJSON_AddItemToObject(c, key, v) : cJSON_AddItemToArray(c, v);
        free(key);
        if (!added) {
            cJSON_Delete(v);
            fail(u, "out of memory");
            goto bad;
        }
    }
    return c;
bad:
    cJSON_Delete(c);
    return NULL;
}

static cJSON *to_json(ubj_t *u, int t)
{
    if (t < 0) {
        if (left(u) < 1)
            return fail(u, "truncated value"), NULL;
        t = *u->p++;
    }
    int k = fixed_size((unsigned char)t);
    cJSON *v = NULL;
    uint64_t len;
    char *s;
    if (k >= 0 && (size_t)k > left(u))
        return fail(u, "truncated number"), NULL;
    switch (t) {
    case 'Z': v = cJSON_CreateNull(); break;
    case 'N': v = cJSON_CreateNull(); break;
    case 'T': v = cJSON_CreateTrue(); break;
    case 'F': v = cJSON_CreateFalse(); break;
    case 'S':
    case 'H':
        if (read_length(u, &len) || !(s = string_at(u, len)))
            return NULL;
        v = cJSON_CreateString(s);
        free(s);
        break;
    case '[': return container_json(u, ']');
    case '{': return container_json(u, '}');
    default:
        if (k < 0)
            return fail(u, "unknown marker"), NULL;
        v = cJSON_CreateNumber(number_at(u, (unsigned char)t, k));
    }
    if (!v)
        fail(u, "out of memory");
    return v;
}

int psi_ubj_to_cjson(const unsigned char *buf, size_t n, cJSON **out, char *why, size_t why_n)
{
    ubj_t u = {buf, buf + n, why, why_n, 0};
    *out = to_json(&u, -1);
    return *out ? 0 : u.nomem ? PS_E_NOMEM : -1;
}
