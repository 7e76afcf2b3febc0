/*
 * Users' operator lists, registered under a model name (`--oplist
 * NAME=FILE` of simulate, collect and replay; ps_oplist_register in C):
 * psi_zoo_build, the simulator's workloads and the twin then take the name
 * as they take a built-in model's. A list holds one batch size, the one it
 * was captured at (python -m pairsight.capture --batch).
 *
 * Registration is for the start of a program: it is not thread safe against
 * runs that look names up. The lists stay until ps_oplist_clear.
 */
#include "profile/oplist.h"

#include "common/common.h"

#include <stdlib.h>
#include <string.h>

#define USER_LISTS 32

static psi_oplist_t *lists[USER_LISTS];
static int n_lists;

const psi_oplist_t *psi_oplist_user(const char *name)
{
    for (int i = 0; name && i < n_lists; i++)
        if (strcmp(lists[i]->model, name) == 0)
            return lists[i];
    return NULL;
}

static int valid_name(const char *s, size_t n)
{
    if (n == 0 || n > 31)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '-' || s[i] == '_' || s[i] == '.' || (s[i] >= '0' && s[i] <= '9') ||
              (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
            return 0;
    return 1;
}

/* One NAME=FILE item of length n at s. */
static int register_one(const char *s, size_t n)
{
    const char *eq = memchr(s, '=', n);
    if (!eq || !valid_name(s, (size_t)(eq - s)) || eq + 1 == s + n)
        return psi_error(PS_E_ARG,
                         "oplist: expected NAME=FILE with a name of 1..31 letters, digits, '-', '_' or "
                         "'.', got '%.*s'",
                         (int)n, s);
    char name[32], path[4096];
    snprintf(name, sizeof name, "%.*s", (int)(eq - s), s);
    snprintf(path, sizeof path, "%.*s", (int)(n - (size_t)(eq - s) - 1), eq + 1);
    psi_oplist_t *probe = NULL;
    if (psi_zoo_build(name, 1, 0, &probe) == 0 && !psi_oplist_user(name)) {
        psi_oplist_free(probe);
        return psi_error(PS_E_ARG, "oplist: '%s' is a built-in model; name the list otherwise", name);
    }
    psi_oplist_t *l = NULL;
    int rc = psi_oplist_read(path, &l);
    if (rc != 0)
        return rc;
    if (l->batch <= 0) {
        psi_oplist_free(l);
        return psi_error(PS_E_INPUT, "%s: no '# model=... batch=B seq_len=S' header: the batch size is unknown", path);
    }
    snprintf(l->model, sizeof l->model, "%s", name);
    for (int i = 0; i < n_lists; i++)
        if (strcmp(lists[i]->model, name) == 0) { /* the same name again: the new list */
            psi_oplist_free(lists[i]);
            lists[i] = l;
            return 0;
        }
    if (n_lists == USER_LISTS) {
        psi_oplist_free(l);
        return psi_error(PS_E_ARG, "oplist: more than %d lists", USER_LISTS);
    }
    lists[n_lists++] = l;
    return 0;
}

int ps_oplist_register(const char *spec)
{
    if (!spec || !*spec)
        return psi_error(PS_E_ARG, "oplist: expected NAME=FILE[,NAME=FILE...]");
    for (const char *s = spec; *s;) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        int rc = register_one(s, n);
        if (rc != 0)
            return rc;
        s += n + (e ? 1 : 0);
    }
    return 0;
}

void ps_oplist_clear(void)
{
    for (int i = 0; i < n_lists; i++)
        psi_oplist_free(lists[i]);
    n_lists = 0;
}

/* A copy of a user list for psi_zoo_build: the batch must be the list's. */
int psi_oplist_user_copy(const psi_oplist_t *u, int batch, psi_oplist_t **out)
{
    *out = NULL;
    if (batch != u->batch)
        return psi_error(PS_E_ARG,
                         "%s: its operator list was captured at batch %d, not %d (capture it again with "
                         "--batch %d)",
                         u->model, u->batch, batch, batch);
    psi_oplist_t *l = psi_oplist_new(u->model, u->batch, u->seq_len);
    if (!l)
        return PS_E_NOMEM;
    l->fp32 = u->fp32;
    for (int i = 0; i < u->n; i++)
        if (psi_oplist_push(l, &u->ops[i]) != 0) {
            psi_oplist_free(l);
            return PS_E_NOMEM;
        }
    *out = l;
    return 0;
}
