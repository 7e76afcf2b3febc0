/* A structural check of UBJSON (the format of XGBoost's saved boosters),
 * run before a booster's bytes reach XGBoost. */
#ifndef PS_MODEL_UBJ_H
#define PS_MODEL_UBJ_H

#include <stddef.h>

/* 0 when buf[n] is exactly one well-formed UBJSON value, nested at most 64
 * deep, whose every declared length and element count fits in the bytes
 * that follow it; -1 otherwise, with the reason in why[why_n]. A file that
 * passes cannot make a reader allocate more than it holds: XGBoost's reader
 * trusted the counts (a crafted count asked for 0x290a1f0910630001 bytes). */
int psi_ubj_check(const unsigned char *buf, size_t n, char *why, size_t why_n);

struct cJSON;
/* buf[n], which psi_ubj_check has passed, as a cJSON tree (*out, owned by the
 * caller: cJSON_Delete). Integers and floats become numbers, 'H' numbers
 * strings; a key or string holding a NUL byte is refused. 0, or -1 with the
 * reason in why[why_n]; PS_E_NOMEM (why says so) when an allocation failed. */
int psi_ubj_to_cjson(const unsigned char *buf, size_t n, struct cJSON **out, char *why, size_t why_n);

#endif
