/*
 * Saved co-location models, format CL_FORMAT (3). Text lines, then sections:
 *   PAIRSIGHT-COLOC 3
 *   section params LEN CRC     then LEN bytes: feature layout, kind,
 *                              parameters, scaling vectors, the ratio table
 *   section BODY LEN CRC       BODY is booster (XGBoost UBJSON, tagged with
 *                              the model kind as an XGBoost attribute), mlp
 *                              (the MLP as text, model/mlp.c), lowrank (its
 *                              parameters as text) or none
 *   end
 * CRC is the CRC-32 (zlib, 8 hex digits) of "NAME LEN" and the section's
 * bytes. Every line and section is checked (exact text, length, checksum)
 * before any byte is parsed or handed to XGBoost: single-byte flips crashed
 * version 1's reader, which is refused by version; version 2 held a FANN
 * network in its mlp section, version 3 the project's own MLP. Names in the
 * ratio table are percent-escaped (space, %, control bytes), so that a
 * workload name with a space round-trips. Numbers are written with %.17g
 * and read in the C locale, pinned per thread (psi_c_numeric_begin), whatever
 * the process's locale; the file is replaced atomically.
 */
#include "colocate/model_internal.h"

#include "common/common.h"
#include "model/mlp.h"
#include "model/model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>
#include <zlib.h>

#define CL_MAGIC "PAIRSIGHT-COLOC"
#define CL_FORMAT 3
/* Changes whenever a feature builder changes meaning. */
#define CL_LAYOUT "cw13-sum13-xu5-mps34lr"
/* The largest model file read (the biggest, mps, is about 0.5 MB). */
#define CL_MAX_FILE (1u << 30)

static void put_vec(FILE *f, const char *name, const double *v, int n)
{
    fprintf(f, "%s", name);
    for (int i = 0; i < n; i++)
        fprintf(f, " %.17g", v[i]);
    fputc('\n', f);
}

/* Percent-escape the bytes a whitespace-separated token cannot hold. */
static void put_name(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p <= ' ' || *p == '%' || *p == 0x7f)
            fprintf(f, "%%%02X", *p);
        else
            fputc(*p, f);
    }
}

/* Undo put_name in place; -1 on a bad escape. */
static int unescape_name(char *s)
{
    char *o = s;
    for (const char *p = s; *p; p++) {
        if (*p != '%') {
            *o++ = *p;
            continue;
        }
        unsigned v;
        if (sscanf(p + 1, "%2x", &v) != 1 || !p[1] || !p[2] || v == 0)
            return -1;
        *o++ = (char)v;
        p += 2;
    }
    *o = '\0';
    return 0;
}

static uint32_t section_crc(const char *name, size_t len, const void *data)
{
    char head[64];
    int k = snprintf(head, sizeof head, "%s %zu", name, len);
    uLong c = crc32(0L, (const Bytef *)head, (uInt)k);
    const Bytef *p = data;
    while (len > 0) {
        uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
        c = crc32(c, p, n);
        p += n;
        len -= n;
    }
    return (uint32_t)c;
}

static void put_section(FILE *f, const char *name, const void *data, size_t len)
{
    fprintf(f, "section %s %zu %08x\n", name, len, (unsigned)section_crc(name, len, data));
    fwrite(data, 1, len, f);
}

/* mps only: "mps 1", its pairwise encoding (2 n agg, 2 n^2 pair numbers,
 * n = the ratio table's size) and its lowrank margin; else "mps 0". */
static void put_mps_extra(const ps_coloc_model_t *m, FILE *f)
{
    int on = m->kind == PS_COLOC_MPS && m->enc_agg && m->lowrank;
    fprintf(f, "mps %d\n", on);
    if (!on)
        return;
    size_t n = (size_t)m->n_ratio;
    put_vec(f, "agg", m->enc_agg, (int)(2 * n));
    for (size_t i = 0; i < n; i++)
        put_vec(f, "pair", m->enc_pair + 2 * n * i, (int)(2 * n));
    psi_cl_lowrank_save(m->lowrank, f);
}

static int bad(const char *path, const char *what);

/* "ks 2,3": the sizes k of the training co-locations (bit k of ks; bit 31:
 * 31 or more). Absent when unknown, as in files written before it. */
static void put_ks(FILE *f, unsigned ks)
{
    if (!ks)
        return;
    fputs("ks", f);
    for (int k = 0, n = 0; k < 32; k++)
        if (ks >> k & 1)
            fprintf(f, "%c%d", n++ ? ',' : ' ', k);
    fputc('\n', f);
}

/* The optional ks line after "auto N" into *ks (0 when absent). */
static int get_ks(const char *path, FILE *f, unsigned *ks)
{
    char list[160];
    *ks = 0;
    if (fscanf(f, " ks %159s", list) != 1)
        return 0;
    for (char *p = list; *p;) {
        char *e;
        long k = strtol(p, &e, 10);
        if (e == p || k < 1 || k > 31 || (*e && *e != ','))
            return bad(path, "ks");
        *ks |= 1u << k;
        p = *e ? e + 1 : e;
    }
    return *ks ? 0 : bad(path, "ks");
}

/* The params section's text, in a malloc'ed buffer (open_memstream). */
static int params_text(const ps_coloc_model_t *m, char **out, size_t *len)
{
    FILE *f = open_memstream(out, len);
    if (!f)
        return psi_error(PS_E_NOMEM, "out of memory writing a co-location model");
    fprintf(f, "layout %s\nkind %s\nnf %d\n", CL_LAYOUT, ps_coloc_kind_name(m->kind), m->nf);
    fprintf(f, "params %llu %d %d %d\n", (unsigned long long)m->p.seed, m->p.trees, m->p.mlp_epochs, m->p.boost_rounds);
    put_vec(f, "mu", m->mu, m->nf);
    put_vec(f, "sd", m->sd, m->nf);
    put_vec(f, "beta", m->beta, m->nf + 1);
    fprintf(f, "y %.17g %.17g\n", m->ymu, m->ysd);
    fprintf(f, "ratio %d %.17g\n", m->n_ratio, m->ratio_global);
    for (int i = 0; i < m->n_ratio; i++) {
        fprintf(f, "%.17g ", m->ratio_med[i]);
        put_name(f, m->ratio_name[i]);
        fputc('\n', f);
    }
    put_mps_extra(m, f);
    /* The GPU(s) of the training co-locations ("-": unknown) and whether
     * auto chose the kind. */
    fputs("gpu ", f);
    if (m->gpu && *m->gpu)
        put_name(f, m->gpu);
    else
        fputc('-', f);
    fprintf(f, "\nauto %d\n", m->autosel);
    put_ks(f, m->ks);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(*out);
        *out = NULL;
        return psi_error(PS_E_NOMEM, "out of memory writing a co-location model");
    }
    return PS_OK;
}

/* The MLP as text (psi_mlp_save). */
static int mlp_text(const ps_coloc_model_t *m, char **out, size_t *len)
{
    FILE *f = open_memstream(out, len);
    if (!f)
        return psi_error(PS_E_NOMEM, "out of memory writing a co-location model");
    int bad = psi_mlp_save(m->mlp, f) != 0 || ferror(f);
    if (fclose(f) != 0 || bad) {
        free(*out);
        *out = NULL;
        return psi_error(PS_E_NOMEM, "out of memory writing a co-location model");
    }
    return PS_OK;
}

/* A single (not blended) model's file into f. */
static int single_write(const ps_coloc_model_t *m, FILE *f)
{
    char *params = NULL, *mlp = NULL;
    size_t plen = 0, mlen = 0;
    const char *bst = NULL;
    bst_ulong blen = 0;
    int rc = params_text(m, &params, &plen);
    if (rc == PS_OK && m->booster &&
        (XGBoosterSetAttr(m->booster, "pairsight_kind", ps_coloc_kind_name(m->kind)) ||
         XGBoosterSaveModelToBuffer(m->booster, "{\"format\": \"ubj\"}", &blen, &bst)))
        rc = psi_xgb_error("save");
    if (rc == PS_OK && !m->booster && m->mlp)
        rc = mlp_text(m, &mlp, &mlen);
    const char *body = psi_cl_kind(m->kind)->body;
    int lowrank = body && strcmp(body, "lowrank") == 0;
    if (rc == PS_OK && lowrank) {
        FILE *lf = open_memstream(&mlp, &mlen);
        if (!lf || psi_cl_lowrank_save(m->lowrank, lf) || fclose(lf) != 0)
            rc = psi_error(PS_E_NOMEM, "out of memory writing a co-location model");
    }
    if (rc == PS_OK) {
        fprintf(f, "%s %d\n", CL_MAGIC, CL_FORMAT);
        put_section(f, "params", params, plen);
        if (m->booster)
            put_section(f, "booster", bst, (size_t)blen);
        else if (m->mlp)
            put_section(f, "mlp", mlp, mlen);
        else if (lowrank)
            put_section(f, "lowrank", mlp, mlen);
        else
            put_section(f, "none", "", 0);
        fputs("end\n", f);
    }
    free(params);
    free(mlp);
    return rc;
}

/* auto's blend: a blend section (its weights, the GPU, "auto 1"), then
 * each blended kind's whole model file as a model section. */
static int blend_write(const ps_coloc_model_t *m, FILE *f)
{
    char *txt = NULL, *sub = NULL;
    size_t tlen = 0, slen = 0;
    FILE *t = open_memstream(&txt, &tlen);
    if (!t)
        return psi_error(PS_E_NOMEM, "out of memory writing a co-location model");
    fprintf(t, "layout %s\nblend %d\n", CL_LAYOUT, m->n_blend);
    for (int j = 0; j < m->n_blend; j++)
        fprintf(t, "weight %.17g %s\n", m->blend_w[j], ps_coloc_kind_name(m->blend[j]->kind));
    fputs("gpu ", t);
    if (m->gpu && *m->gpu)
        put_name(t, m->gpu);
    else
        fputc('-', t);
    fputs("\nauto 1\n", t);
    put_ks(t, m->ks);
    if (fclose(t) != 0) {
        free(txt);
        return psi_error(PS_E_NOMEM, "out of memory writing a co-location model");
    }
    fprintf(f, "%s %d\n", CL_MAGIC, CL_FORMAT);
    put_section(f, "blend", txt, tlen);
    free(txt);
    int rc = PS_OK;
    for (int j = 0; j < m->n_blend && !rc; j++) {
        FILE *b = open_memstream(&sub, &slen);
        if (!b)
            return psi_error(PS_E_NOMEM, "out of memory writing a co-location model");
        rc = single_write(m->blend[j], b);
        if (fclose(b) != 0 && !rc)
            rc = psi_error(PS_E_NOMEM, "out of memory writing a co-location model");
        if (!rc)
            put_section(f, "model", sub, slen);
        free(sub);
        sub = NULL;
    }
    fputs("end\n", f);
    return rc;
}

static int coloc_save(const ps_coloc_model_t *m, const char *path)
{
    psi_atomic_t *a = NULL;
    int rc = psi_atomic_open(path, &a);
    if (rc != PS_OK)
        return rc;
    FILE *f = psi_atomic_stream(a);
    rc = m->n_blend ? blend_write(m, f) : single_write(m, f);
    if (rc == PS_OK && ferror(f))
        rc = psi_error(PS_E_IO, "%s: write failed", path);
    if (rc != PS_OK) {
        psi_atomic_abort(a);
        return rc;
    }
    return psi_atomic_commit(a);
}

static int get_vec(FILE *f, const char *name, double *v, int n)
{
    char w[32];
    if (fscanf(f, "%31s", w) != 1 || strcmp(w, name) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (fscanf(f, "%lf", &v[i]) != 1)
            return -1;
    return 0;
}

static int bad(const char *path, const char *what)
{
    return psi_error(PS_E_INPUT, "%s: not a valid co-location model (%s)", path, what);
}

/* The next line of buf from *at, without its newline, into line[cap];
 * -1 when there is none or it is longer than cap - 1 bytes. */
static int take_line(const unsigned char *buf, size_t n, size_t *at, char *line, size_t cap)
{
    const unsigned char *nl = *at < n ? memchr(buf + *at, '\n', n - *at) : NULL;
    if (!nl)
        return -1;
    size_t k = (size_t)(nl - (buf + *at));
    if (k >= cap || memchr(buf + *at, '\0', k))
        return -1;
    memcpy(line, buf + *at, k);
    line[k] = '\0';
    *at += k + 1;
    return 0;
}

/* A section of a model file held in memory: its name and its bytes. */
typedef struct {
    char name[16];
    const unsigned char *data;
    size_t len;
} section_t;

/* The section at *at into *sec: its header line must be exactly what
 * put_section writes, its bytes inside the file and their checksum right. */
static int take_section(const char *path, const unsigned char *buf, size_t n, size_t *at, section_t *sec)
{
    char *name = sec->name;
    char line[96], again[96];
    unsigned crc = 0;
    size_t l = 0;
    if (take_line(buf, n, at, line, sizeof line) != 0 || sscanf(line, "section %15s %zu %8x", name, &l, &crc) != 3)
        return bad(path, "damaged section line");
    snprintf(again, sizeof again, "section %s %zu %08x", name, l, crc);
    if (strcmp(line, again) != 0)
        return bad(path, "damaged section line");
    if (l > n - *at)
        return bad(path, "truncated section");
    if (!PSI_CHECKSUM_OK(section_crc(name, l, buf + *at), crc))
        return psi_error(PS_E_INPUT, "%s: damaged co-location model: checksum mismatch in section %s", path, name);
    sec->data = buf + *at;
    sec->len = l;
    *at += l;
    return PS_OK;
}

/* put_mps_extra's block. */
static int get_mps_extra(const char *path, FILE *f, ps_coloc_model_t *m)
{
    int on = -1;
    if (fscanf(f, " mps %d", &on) != 1 || on != (m->kind == PS_COLOC_MPS))
        return bad(path, "mps block");
    if (!on)
        return PS_OK;
    if (psi_pairenc_alloc(m))
        return PS_E_NOMEM;
    int n = m->n_ratio;
    if (get_vec(f, "agg", m->enc_agg, 2 * n))
        return bad(path, "mps encoding");
    for (int i = 0; i < n; i++)
        if (get_vec(f, "pair", m->enc_pair + (size_t)2 * n * i, 2 * n))
            return bad(path, "mps encoding");
    int rc = psi_cl_lowrank_load(f, &m->lowrank);
    return rc == PS_E_NOMEM ? rc : rc ? bad(path, "mps margin") : PS_OK;
}

/* The params section (text). */
static int parse_params(const char *path, const unsigned char *data, size_t len, ps_coloc_model_t *m)
{
    FILE *f = fmemopen((void *)data, len, "r");
    if (!f)
        return psi_error(PS_E_NOMEM, "%s: out of memory", path);
    char layout[64], kind[32];
    unsigned long long seed = 0;
    /* The ratio table's size is read into nr, never into m->n_ratio: a
     * half-read "ratio N" line left n_ratio set with no table, which
     * ps_coloc_model_free then walked. m->n_ratio counts names read. */
    int rc = PS_OK, nr = 0;
    if (fscanf(f, " layout %63s kind %31s nf %d", layout, kind, &m->nf) != 3) {
        rc = bad(path, "header");
        goto done;
    }
    if (strcmp(layout, CL_LAYOUT) != 0) {
        rc = psi_error(PS_E_MISMATCH, "%s: feature layout %s, this build uses %s", path, layout, CL_LAYOUT);
        goto done;
    }
    if ((rc = ps_coloc_kind_from_name(kind, &m->kind)))
        goto done;
    const psi_cl_kind_t *row = psi_cl_kind(m->kind);
    if (m->nf != row->nf && !(row->nf_alt && m->nf == row->nf_alt)) {
        rc = psi_error(PS_E_MISMATCH, "%s: %d features, expected %d", path, m->nf, psi_cl_model_nf(m->kind));
        goto done;
    }
    if (fscanf(f, " params %llu %d %d %d", &seed, &m->p.trees, &m->p.mlp_epochs, &m->p.boost_rounds) != 4 ||
        get_vec(f, "mu", m->mu, m->nf) || get_vec(f, "sd", m->sd, m->nf) || get_vec(f, "beta", m->beta, m->nf + 1) ||
        fscanf(f, " y %lf %lf", &m->ymu, &m->ysd) != 2 || fscanf(f, " ratio %d %lf", &nr, &m->ratio_global) != 2 ||
        nr < 0 || (size_t)nr > len) {
        rc = bad(path, "parameters");
        goto done;
    }
    m->p.kind = m->kind;
    m->p.seed = seed;
    m->ratio_name = psi_calloc((size_t)nr + 1, sizeof *m->ratio_name);
    m->ratio_med = psi_calloc((size_t)nr + 1, sizeof *m->ratio_med);
    if (!m->ratio_name || !m->ratio_med) {
        rc = PS_E_NOMEM;
        goto done;
    }
    for (int i = 0; i < nr; i++) {
        char name[1024];
        if (fscanf(f, "%lf %1023s", &m->ratio_med[i], name) != 2 || unescape_name(name) != 0) {
            rc = bad(path, "ratio table");
            goto done;
        }
        if (!(m->ratio_name[i] = psi_strdup(name))) {
            rc = PS_E_NOMEM;
            goto done;
        }
        m->n_ratio++;
    }
    if ((rc = get_mps_extra(path, f, m)))
        goto done;
    char gpu[1024];
    if (fscanf(f, " gpu %1023s auto %d", gpu, &m->autosel) != 2 || unescape_name(gpu) != 0) {
        rc = bad(path, "gpu");
        goto done;
    }
    if (!(m->gpu = psi_strdup(strcmp(gpu, "-") == 0 ? "" : gpu))) {
        rc = PS_E_NOMEM;
        goto done;
    }
    if ((rc = get_ks(path, f, &m->ks)))
        goto done;
    if (fscanf(f, " %*c") != EOF)
        rc = bad(path, "trailing parameters");
done:
    fclose(f);
    return rc;
}

/* The lowrank section (text, lowrank.c). */
static int parse_lowrank(const char *path, const unsigned char *data, size_t len, ps_coloc_model_t *m)
{
    FILE *f = len ? fmemopen((void *)data, len, "r") : NULL;
    if (!f)
        return bad(path, "lowrank parameters");
    int rc = psi_cl_lowrank_load(f, &m->lowrank);
    if (rc == 0 && fscanf(f, " %*c") != EOF)
        rc = -1;
    fclose(f);
    return rc == PS_E_NOMEM ? rc : rc ? bad(path, "lowrank parameters") : PS_OK;
}

/* The mlp section (psi_mlp_load): a network over the model's nf inputs. */
static int parse_mlp(const char *path, const unsigned char *data, size_t len, ps_coloc_model_t *m)
{
    FILE *f = len ? fmemopen((void *)data, len, "r") : NULL;
    if (!f)
        return bad(path, "network");
    int rc = psi_mlp_load(f, &m->mlp);
    if (rc == 0 && (psi_mlp_n_in(m->mlp) != m->nf || psi_mlp_n_out(m->mlp) != 1 || fscanf(f, " %*c") != EOF))
        rc = -1;
    fclose(f);
    return rc == PS_E_NOMEM ? rc : rc ? bad(path, "network") : PS_OK;
}

static int load_booster(const char *path, const unsigned char *data, size_t len, ps_coloc_model_t *m)
{
    BoosterHandle b = NULL;
    int rc = psi_xgb_load(path, "booster", data, len, m->nf, &b);
    if (rc != PS_OK)
        return rc;
    if ((rc = psi_xgb_set_param(b, "nthread", "1")) != PS_OK) {
        XGBoosterFree(b);
        return psi_error_prefix(rc, path);
    }
    m->booster = b;
    const char *v = NULL;
    int ok = 0;
    if (XGBoosterGetAttr(b, "pairsight_kind", &v, &ok) != 0)
        return psi_error_prefix(psi_xgb_error("the booster's kind"), path);
    if (!ok || !v || strcmp(v, ps_coloc_kind_name(m->kind)) != 0)
        return psi_error(PS_E_INPUT, "%s: the booster is tagged as kind '%s', the model is %s", path,
                         ok && v ? v : "(none)", ps_coloc_kind_name(m->kind));
    return PS_OK;
}

/* The blend section's text: n_blend weights and kinds, the GPU. */
static int parse_blend(const char *path, const section_t *blend, int ns, double *w, ps_coloc_kind_t *kinds,
                       ps_coloc_model_t *m)
{
    FILE *f = fmemopen((void *)blend->data, blend->len, "r");
    if (!f)
        return psi_error(PS_E_NOMEM, "%s: out of memory", path);
    char layout[64], kind[32], gpu[1024];
    int nb = 0, au = 0, rc = PS_OK;
    if (fscanf(f, " layout %63s blend %d", layout, &nb) != 2 || nb != ns)
        rc = bad(path, "blend header");
    else if (strcmp(layout, CL_LAYOUT) != 0)
        rc = psi_error(PS_E_MISMATCH, "%s: feature layout %s, this build uses %s", path, layout, CL_LAYOUT);
    for (int j = 0; j < nb && !rc; j++)
        if (fscanf(f, " weight %lf %31s", &w[j], kind) != 2 || !(w[j] >= 0 && w[j] <= 1) ||
            ps_coloc_kind_from_name(kind, &kinds[j]) || kinds[j] == PS_COLOC_AUTO)
            rc = bad(path, "blend weights");
    if (!rc && (fscanf(f, " gpu %1023s auto %d", gpu, &au) != 2 || au != 1 || unescape_name(gpu) != 0))
        rc = bad(path, "gpu");
    if (!rc)
        rc = get_ks(path, f, &m->ks);
    if (!rc && fscanf(f, " %*c") != EOF)
        rc = bad(path, "trailing parameters");
    if (!rc && !(m->gpu = psi_strdup(strcmp(gpu, "-") == 0 ? "" : gpu)))
        rc = PS_E_NOMEM;
    fclose(f);
    return rc;
}

/* auto's blend after its blend section at *at: the model sections and the
 * end line are checked before anything is parsed; each model section is a
 * whole single-model file. */
static int load_blend(const char *path, const unsigned char *buf, size_t n, size_t at, const section_t *blend,
                      ps_coloc_model_t *m)
{
    section_t sec[PS_COLOC_KIND_COUNT];
    char line[96];
    int ns = 0, rc = PS_OK;
    while (n - at >= 8 && memcmp(buf + at, "section ", 8) == 0 && ns < PS_COLOC_KIND_COUNT - 1) {
        if ((rc = take_section(path, buf, n, &at, &sec[ns])))
            return rc;
        if (strcmp(sec[ns].name, "model") != 0)
            return bad(path, "a blend holds model sections only");
        ns++;
    }
    if (!ns || take_line(buf, n, &at, line, sizeof line) != 0 || strcmp(line, "end") != 0 || at != n)
        return bad(path, "no end marker, or data after it");
    double w[PS_COLOC_KIND_COUNT];
    ps_coloc_kind_t kinds[PS_COLOC_KIND_COUNT];
    if ((rc = parse_blend(path, blend, ns, w, kinds, m)))
        return rc;
    m->kind = PS_COLOC_AUTO;
    m->p = ps_coloc_default_params();
    m->p.kind = PS_COLOC_AUTO;
    m->autosel = 1;
    for (int j = 0; j < ns && !rc; j++) {
        if ((rc = psi_cl_model_load_mem(path, sec[j].data, sec[j].len, &m->blend[j])))
            break;
        m->blend_w[j] = w[j];
        m->n_blend++;
        if (m->blend[j]->kind != kinds[j] || m->blend[j]->n_blend || m->blend[j]->autosel)
            rc = bad(path, "a blended model of another kind");
    }
    return rc;
}

static int load_mem(const char *path, const unsigned char *buf, size_t n, ps_coloc_model_t *m)
{
    char line[96], again[96], magic[32] = "";
    int fmt = 0;
    size_t at = 0;
    if (n == 0)
        return bad(path, "empty file");
    if (n >= 7 && memcmp(buf, "PSMODEL", 7) == 0)
        return bad(path, "a PairSight segment model from `pairsight train`, not `colocate train`");
    if (take_line(buf, n, &at, line, sizeof line) != 0 || sscanf(line, "%31s %d", magic, &fmt) != 2 ||
        strcmp(magic, CL_MAGIC) != 0)
        return bad(path, "no magic");
    snprintf(again, sizeof again, "%s %d", CL_MAGIC, fmt);
    if (strcmp(line, again) != 0)
        return bad(path, "damaged first line");
    if (fmt != CL_FORMAT)
        return psi_error(PS_E_MISMATCH, "%s: model format %d, this build reads %d%s", path, fmt, CL_FORMAT,
                         fmt < CL_FORMAT ? " (retrain it with `pairsight colocate train`)" : "");
    /* Both sections and the end line are checked before either is parsed. */
    section_t params, sbody;
    int rc = take_section(path, buf, n, &at, &params);
    if (rc)
        return rc;
    if (strcmp(params.name, "blend") == 0)
        return load_blend(path, buf, n, at, &params, m);
    if (strcmp(params.name, "params") != 0)
        return bad(path, "no params section");
    if ((rc = take_section(path, buf, n, &at, &sbody)))
        return rc;
    const char *body = sbody.name;
    const unsigned char *pdata = params.data, *bdata = sbody.data;
    size_t plen = params.len, blen = sbody.len;
    if (take_line(buf, n, &at, line, sizeof line) != 0 || strcmp(line, "end") != 0 || at != n)
        return bad(path, "no end marker, or data after it");
    if ((rc = parse_params(path, pdata, plen, m)))
        return rc;
    const char *want = psi_cl_kind(m->kind)->body;
    if (!want)
        return bad(path, "kind auto without a blend");
    if (strcmp(body, want) != 0)
        return psi_error(PS_E_INPUT, "%s: a %s model with a %s section, expected %s", path, ps_coloc_kind_name(m->kind),
                         body, want);
    if (strcmp(body, "booster") == 0)
        return load_booster(path, bdata, blen, m);
    if (strcmp(body, "mlp") == 0)
        return parse_mlp(path, bdata, blen, m);
    if (strcmp(body, "lowrank") == 0)
        return parse_lowrank(path, bdata, blen, m);
    return blen == 0 ? PS_OK : bad(path, "data in the none section");
}

/* psi_cl_model_load_mem behind the size limit of a co-location model (a
 * psi_model_reader_t: dst is a ps_coloc_model_t **). */
static int read_coloc(const char *path, const unsigned char *buf, size_t n, void *dst)
{
    return n > CL_MAX_FILE ? bad(path, "larger than 1 GB") : psi_cl_model_load_mem(path, buf, n, dst);
}

int ps_coloc_model_load(const char *path, ps_coloc_model_t **out)
{
    *out = NULL;
    return psi_model_load_file("ps_coloc_model_load", path, read_coloc, out);
}

int psi_cl_model_load_mem(const char *path, const unsigned char *buf, size_t n, ps_coloc_model_t **out)
{
    *out = NULL;
    ps_coloc_model_t *m = psi_calloc(1, sizeof *m);
    locale_t old = psi_c_numeric_begin();
    int rc = !m ? PS_E_NOMEM : load_mem(path, buf, n, m);
    psi_c_numeric_end(old);
    if (rc) {
        ps_coloc_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

int ps_coloc_model_save(const ps_coloc_model_t *m, const char *path)
{
    locale_t old = psi_c_numeric_begin();
    int rc = coloc_save(m, path);
    psi_c_numeric_end(old);
    return rc;
}

static int write_coloc(const void *p, FILE *f)
{
    const ps_coloc_model_t *m = p;
    return m->n_blend ? blend_write(m, f) : single_write(m, f);
}

int ps_coloc_model_save_mem(const ps_coloc_model_t *m, unsigned char **out, size_t *out_len)
{
    return psi_write_mem(write_coloc, m, "ps_coloc_model_save_mem", out, out_len);
}

int ps_coloc_model_load_mem(const unsigned char *buf, size_t len, ps_coloc_model_t **out)
{
    if (out)
        *out = NULL;
    return psi_model_load_buffer("ps_coloc_model_load_mem", "co-location model in memory", buf, len, read_coloc, out);
}
