/*
 * `pairsight import abacus REPO`: the co-run profiles of the Abacus artefact
 * (SC'21) into overlap.csv. The repository has no licence, so nothing of it
 * is copied into pairsight: it is read from a clone or a fetched mirror.
 *
 * Layout read (commit 4c33e2e; later commits deleted it), one CSV per model
 * combination, one row per experiment:
 *     data/profile/A100/2in7/resnet50_vgg16.csv     2 processes, whole GPU
 *     data/profile/A100/3in4/...                     3 processes
 *     data/profile/A100/4in4/...                     4 processes
 *     data/profile/mig/2in4/...                      2 processes in a 2g.10gb
 *     data/profile/mig/4in4/...                      4 processes in a 4g.20gb
 *     model,start,end,bs,seq_len (once per process),median,mean,var
 * The times are microseconds over 100 runs less the fastest and the slowest
 * (abacus/utils.py make_record); "var" is numpy's std. The MIG profiles are
 * those nvidia_utils.sh creates: --mig 2 `-cgi 14,14` (2g.10gb, both
 * processes in the first), --mig 1 `-cgi 5` (4g.20gb, all four).
 */
#include "profile/abacus.h"

#include "profile/profile_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the models and their groups (abacus/option.py models_len) ---- */

static const struct {
    const char *name;
    int groups;
} models[] = {{"resnet50", 18}, {"resnet101", 35}, {"resnet152", 52}, {"inception_v3", 14},
              {"vgg16", 19},    {"vgg19", 22},     {"bert", 12}};

int psi_abacus_model_ops(const char *model)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (strcmp(models[i].name, model) == 0)
            return models[i].groups;
    return 0;
}

static int put(char *buf, size_t n, int count, const char *path)
{
    size_t len = strlen(buf);
    snprintf(buf + len, n > len ? n - len : 0, "%s%s", count ? " " : "", path);
    return count + 1;
}

/* ResNet (resnet_splited.py): the stem, one group per bottleneck in module
 * order, then avgpool with fc. */
static int resnet_paths(const int *blocks, int g, char *buf, size_t n)
{
    int total = blocks[0] + blocks[1] + blocks[2] + blocks[3];
    if (g == 0)
        return put(buf, n, put(buf, n, put(buf, n, put(buf, n, 0, "conv1"), "bn1"), "relu"), "maxpool");
    if (g == total + 1)
        return put(buf, n, put(buf, n, 0, "avgpool"), "fc");
    char p[32];
    for (int l = 0, first = 1; l < 4; first += blocks[l++])
        if (g < first + blocks[l]) {
            snprintf(p, sizeof p, "layer%d.%d", l + 1, g - first);
            return put(buf, n, 0, p);
        }
    return 0;
}

/* VGG (vgg_splited.py make_layers): each conv with its ReLU, each max pool
 * alone, in features order; then avgpool with the classifier. */
static int vgg_paths(int convs_per_stage_last, int g, char *buf, size_t n)
{
    const int stage[5] = {2, 2, convs_per_stage_last, convs_per_stage_last, convs_per_stage_last};
    int group = 0, idx = 0;
    char p[32];
    for (int s = 0; s < 5; s++) {
        for (int c = 0; c < stage[s]; c++, group++, idx += 2)
            if (group == g) {
                snprintf(p, sizeof p, "features.%d", idx);
                int k = put(buf, n, 0, p);
                snprintf(p, sizeof p, "features.%d", idx + 1);
                return put(buf, n, k, p);
            }
        if (group++ == g) {
            snprintf(p, sizeof p, "features.%d", idx);
            return put(buf, n, 0, p);
        }
        idx++;
    }
    return g == group ? put(buf, n, put(buf, n, 0, "avgpool"), "classifier") : 0;
}

/* Inception v3 (inception_splited.py generate_model_list, transform_input
 * off as models_len's 14 says). */
static int inception_paths(int g, char *buf, size_t n)
{
    static const char *const groups[] = {"Conv2d_1a_3x3 Conv2d_2a_3x3 Conv2d_2b_3x3 maxpool1",
                                         "Conv2d_3b_1x1 Conv2d_4a_3x3 maxpool2",
                                         "Mixed_5b",
                                         "Mixed_5c",
                                         "Mixed_5d",
                                         "Mixed_6a",
                                         "Mixed_6b",
                                         "Mixed_6c",
                                         "Mixed_6d",
                                         "Mixed_6e",
                                         "Mixed_7a",
                                         "Mixed_7b",
                                         "Mixed_7c",
                                         "avgpool dropout fc"};
    if (g < 0 || g >= 14)
        return 0;
    snprintf(buf, n, "%s", groups[g]);
    int k = 1;
    for (const char *c = groups[g]; *c; c++)
        k += *c == ' ';
    return k;
}

int psi_abacus_group_paths(const char *model, int g, char *buf, size_t n)
{
    static const int r50[4] = {3, 4, 6, 3}, r101[4] = {3, 4, 23, 3}, r152[4] = {3, 8, 36, 3};
    buf[0] = '\0';
    if (g < 0 || g >= psi_abacus_model_ops(model))
        return 0;
    if (strcmp(model, "resnet50") == 0)
        return resnet_paths(r50, g, buf, n);
    if (strcmp(model, "resnet101") == 0)
        return resnet_paths(r101, g, buf, n);
    if (strcmp(model, "resnet152") == 0)
        return resnet_paths(r152, g, buf, n);
    if (strcmp(model, "vgg16") == 0 || strcmp(model, "vgg19") == 0)
        return vgg_paths(model[4] == '6' ? 3 : 4, g, buf, n);
    if (strcmp(model, "inception_v3") == 0)
        return inception_paths(g, buf, n);
    /* BERT (bert.py BertModel.run): encoder layers [start, end) on hidden
     * states given; the embeddings are not run. */
    char p[32];
    snprintf(p, sizeof p, "encoder.layer.%d", g);
    return put(buf, n, 0, p);
}

int psi_abacus_in_path(const char *name, const char *p)
{
    size_t len = strlen(p);
    return strncmp(name, p, len) == 0 && (name[len] == '\0' || name[len] == '.');
}

/* ---- reading files: a work tree or git ---- */

typedef struct {
    const char *repo;
    char rev[48]; /* empty: the work tree */
} src_t;

/* Start git -C repo ARGS, its standard output on *fd (the caller's to
 * close), its standard error to /dev/null. */
static int spawn_git(const char *repo, const char *const *args, pid_t *pid, int *fd)
{
    int p[2];
    if (pipe(p) != 0)
        return psi_error(PS_E_IO, "pipe: %s", strerror(errno));
    *pid = fork();
    if (*pid < 0) {
        close(p[0]);
        close(p[1]);
        return psi_error(PS_E_IO, "fork: %s", strerror(errno));
    }
    if (*pid == 0) {
        const char *argv[16] = {"git", "-C", repo};
        int a = 3;
        for (int i = 0; args[i] && a < 15; i++)
            argv[a++] = args[i];
        argv[a] = NULL;
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        execvp("git", (char *const *)argv);
        _exit(127);
    }
    close(p[1]);
    *fd = p[0];
    return PS_OK;
}

/* Wait for git; PS_OK when it exited 0, else PS_E_IO naming the command. */
static int wait_git(pid_t pid, const char *repo, const char *const *args)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return PS_OK;
    return psi_error(PS_E_IO, "git -C %s %s %s failed (exit %d)", repo, args[0], args[1] ? args[1] : "",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* Run git -C repo ARGS, its standard output into *out (NUL-terminated,
 * caller frees): for the short listings only (a profile is streamed, see
 * open_profile). Non-zero exit: PS_E_IO. */
static int run_git(const char *repo, const char *const *args, char **out, size_t *len)
{
    pid_t pid;
    int fd, rc = spawn_git(repo, args, &pid, &fd);
    if (rc)
        return rc;
    size_t cap = 1 << 16, n = 0;
    char *buf = psi_malloc(cap);
    ssize_t r = 0;
    while (buf && (r = read(fd, buf + n, cap - n - 1)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        n += (size_t)r;
        if (n + 1 == cap) {
            char *b = psi_realloc(buf, cap *= 2);
            if (!b)
                free(buf);
            buf = b;
        }
    }
    close(fd);
    rc = wait_git(pid, repo, args);
    if (!buf)
        return PS_E_NOMEM;
    if (r < 0 && rc == PS_OK)
        rc = psi_error(PS_E_IO, "git -C %s %s: read error: %s", repo, args[0], strerror(errno));
    if (rc != PS_OK) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return PS_OK;
}

/* The largest profile file read: the artefact's largest is 4.3 MB; 256 MiB
 * is far above any real one and bounds what a damaged tree can cost. */
#define ABACUS_MAX_FILE ((off_t)256 << 20)

/* A regular file of the work tree as a stream: a symbolic link
 * (O_NOFOLLOW), a FIFO (opened without blocking, then refused), a device or
 * a file over ABACUS_MAX_FILE is an error; read errors surface from the
 * tokenizer. */
static int open_disk(const char *path, FILE **out)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return psi_error(PS_E_IO, "%s: %s%s", path, strerror(errno),
                         errno == ELOOP ? " (a symbolic link: only regular files are read)" : "");
    struct stat st;
    const char *why = NULL;
    if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file (a FIFO, device or folder): refused";
    else if (st.st_size > ABACUS_MAX_FILE)
        why = "larger than 256 MiB: not a profile of the artefact";
    FILE *f = why ? NULL : fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return why ? psi_error(PS_E_INPUT, "%s: %s", path, why) : psi_error(PS_E_IO, "%s: %s", path, strerror(errno));
    }
    *out = f;
    return PS_OK;
}

/* The newest commit whose tree holds data/profile/A100: of the commits of
 * every branch that touched data/profile, newest first, the first that holds
 * it (one that deleted it does not; a later commit that did not touch it
 * holds the same files). Abacus's history was rewritten: the profiles live
 * on a branch that master no longer contains, hence --all. */
static int default_rev(const char *repo, char *rev, size_t n)
{
    static const char *const log[] = {"rev-list", "--all", "--", "data/profile", NULL};
    char *list = NULL;
    int rc = run_git(repo, log, &list, NULL);
    if (rc)
        return rc;
    rc = psi_error(PS_E_INPUT, "%s: no commit holds data/profile/A100 (not the Abacus artefact?)", repo);
    for (char *save = NULL, *c = strtok_r(list, "\n", &save); c; c = strtok_r(NULL, "\n", &save)) {
        char obj[128];
        snprintf(obj, sizeof obj, "%s:data/profile/A100", c);
        const char *const probe[] = {"rev-parse", "--verify", "-q", obj, NULL};
        char *o = NULL;
        if (run_git(repo, probe, &o, NULL) == PS_OK) {
            free(o);
            snprintf(rev, n, "%s", c);
            rc = PS_OK;
            break;
        }
    }
    free(list);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The entries of a folder on disk, sorted, newline-separated (every one:
 * what is not a regular file is refused when read, as git's listing holds
 * it too). */
static int list_disk(const char *path, char **out)
{
    DIR *d = opendir(path);
    *out = psi_strdup("");
    if (!d)
        return errno == ENOENT ? PS_OK : psi_error(PS_E_IO, "%s: %s", path, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0, len = 1;
    int rc = *out ? PS_OK : PS_E_NOMEM;
    for (struct dirent *e; rc == PS_OK && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        void *grown = names;
        if ((rc = psi_array_grow(&grown, n, &cap, sizeof *names, 64)) != PS_OK)
            break;
        names = grown;
        if (!(names[n] = psi_strdup(e->d_name)))
            rc = PS_E_NOMEM;
        else
            len += strlen(names[n++]) + 1;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    char *buf = rc == PS_OK ? psi_realloc(*out, len) : NULL;
    if (rc == PS_OK && !buf)
        rc = PS_E_NOMEM;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(names[i]);
        if (buf) {
            memcpy(buf + at, names[i], l);
            buf[at + l] = '\n';
            at += l + 1;
        }
        free(names[i]);
    }
    free(names);
    if (rc != PS_OK) {
        free(buf ? buf : *out);
        *out = NULL;
        return rc;
    }
    buf[at] = '\0';
    *out = buf;
    return PS_OK;
}

/* Names of the CSV files in dir (newline-separated, sorted by git or by
 * readdir order sorted here), into *out. */
static int list_dir(const src_t *s, const char *dir, char **out)
{
    if (s->rev[0]) {
        char tree[160];
        snprintf(tree, sizeof tree, "%s:%s", s->rev, dir);
        /* -z: names as they are (without it, core.quotePath quotes names
         * with unusual bytes, "na\303\257ve.csv", and the quoted name lost
         * its .csv suffix: git mode read fewer files than the work tree). */
        const char *const args[] = {"ls-tree", "-z", "--name-only", tree, NULL};
        size_t n = 0;
        int rc = run_git(s->repo, args, out, &n);
        for (size_t i = 0; rc == PS_OK && i < n; i++)
            if ((*out)[i] == '\0')
                (*out)[i] = '\n';
        return rc;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", s->repo, dir);
    return list_disk(path, out);
}

/* ---- parsing one profile file ---- */

static const struct {
    const char *dir, *setting;
    int k;
} dirs[] = {{"data/profile/A100/2in7", "dedicated", 2},
            {"data/profile/A100/3in4", "dedicated", 3},
            {"data/profile/A100/4in4", "dedicated", 4},
            {"data/profile/mig/2in4", "mig-2g.10gb", 2},
            {"data/profile/mig/4in4", "mig-4g.20gb", 4}};

static int bad(psi_csv_t *c, int col, const char *why, const char *v)
{
    return psi_error(PS_E_INPUT, "%s:%zu:%d: %s%s%s%s", psi_csv_path(c), psi_csv_field_line(c, col), col + 1, why,
                     v ? " '" : "", v ? v : "", v ? "'" : "");
}

static int header_ok(psi_csv_t *c, int k)
{
    static const char *const slot[] = {"model", "start", "end", "bs", "seq_len"};
    static const char *const tail[] = {"median", "mean", "var"};
    if (psi_csv_nfields(c) != 5 * k + 3)
        return psi_error(PS_E_INPUT, "%s:1:1: %d columns; Abacus's %d-process header has %d", psi_csv_path(c),
                         psi_csv_nfields(c), k, 5 * k + 3);
    for (int i = 0; i < 5 * k + 3; i++) {
        const char *want = i < 5 * k ? slot[i % 5] : tail[i - 5 * k];
        if (strcmp(psi_csv_field(c, i), want) != 0)
            return bad(c, i, "expected the column name", want);
    }
    return PS_OK;
}

static int field_int(psi_csv_t *c, int col, int lo, int hi, int *out)
{
    const char *s = psi_csv_field(c, col);
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) {
        char why[64];
        snprintf(why, sizeof why, "not an integer in %d..%d:", lo, hi);
        return bad(c, col, why, s);
    }
    *out = (int)v;
    return PS_OK;
}

static int field_num(psi_csv_t *c, int col, int positive, double *out)
{
    const char *why = NULL;
    if (psi_parse_double(psi_csv_field(c, col), out, &why) != 0)
        return bad(c, col, why, psi_csv_field(c, col));
    if (positive ? !(*out > 0) : !(*out >= 0))
        return bad(c, col, positive ? "must be > 0:" : "must be >= 0:", psi_csv_field(c, col));
    return PS_OK;
}

static int parse_slot(psi_csv_t *c, int i, psi_ov_slot_t *s)
{
    int col = 5 * i, rc;
    s->model = psi_csv_field(c, col);
    if (!(s->model_ops = psi_abacus_model_ops(s->model)))
        return bad(c, col, "not one of Abacus's seven models:", s->model);
    if ((rc = field_int(c, col + 1, 0, s->model_ops, &s->op_start)) ||
        (rc = field_int(c, col + 2, s->op_start, s->model_ops, &s->op_end)) ||
        (rc = field_int(c, col + 3, 1, 1 << 20, &s->batch)) || (rc = field_int(c, col + 4, 0, 1 << 20, &s->seq_len)))
        return rc;
    return PS_OK;
}

/* One row of a k-process file into t; id is "<combination dir>/<file>:<line>". */
static int parse_row(psi_csv_t *c, int k, const char *setting, const char *stem, psi_overlap_t *t)
{
    psi_ov_exp_t e;
    memset(&e, 0, sizeof e);
    char id[300];
    snprintf(id, sizeof id, "%.255s:%zu", stem, psi_csv_line(c));
    e.id = id;
    e.gpu = "A100-40GB";
    e.setting = setting;
    e.mechanism = "mps";
    e.k = k;
    e.line = psi_csv_line(c);
    int rc;
    for (int i = 0; i < k; i++)
        if ((rc = parse_slot(c, i, &e.slot[i])) != PS_OK)
            return rc;
    if ((rc = field_num(c, 5 * k, 1, &e.median_us)) || (rc = field_num(c, 5 * k + 1, 0, &e.mean_us)) ||
        (rc = field_num(c, 5 * k + 2, 0, &e.std_us)))
        return rc;
    return psi_overlap_add(t, &e);
}

/* The rows of an open profile into t; 1 (nothing added) for a Git LFS
 * pointer. */
static int parse_file(psi_csv_t *c, const char *name, const char *stem, int k, const char *setting, psi_overlap_t *t)
{
    int rc = psi_csv_next(c);
    if (rc > 0 && strncmp(psi_csv_field(c, 0), "version https://git-lfs", 23) == 0)
        return 1;
    rc = rc > 0 ? header_ok(c, k) : rc < 0 ? rc : psi_error(PS_E_INPUT, "%s:1:1: empty file", name);
    for (int more = rc == PS_OK; more;) {
        int r = psi_csv_next(c);
        if (r <= 0)
            rc = r;
        else if (psi_csv_nfields(c) > 1 || psi_csv_field_len(c, 0) > 0)
            rc = psi_csv_nfields(c) != 5 * k + 3 ? psi_error(PS_E_INPUT, "%s:%zu:1: %d fields, the header has %d", name,
                                                             psi_csv_line(c), psi_csv_nfields(c), 5 * k + 3)
                                                 : parse_row(c, k, setting, stem, t);
        more = r > 0 && rc == PS_OK;
    }
    return rc;
}

static void note_skip(psi_abacus_info_t *info, const char *path, const char *why)
{
    size_t l = strlen(info->skipped);
    snprintf(info->skipped + l, sizeof info->skipped - l, "%s%s (%s)", l ? "; " : "", path, why);
}

/* One profile streamed into the tokenizer (never whole in memory: a blob
 * of git compresses a thousandfold, so a small repository can hold a
 * gigabyte of blank lines). Git mode: *pid is the cat-file to wait for. */
static int open_profile(const src_t *s, const char *path, const char *name, psi_csv_t **c, pid_t *pid)
{
    FILE *f = NULL;
    int rc, fd = -1;
    if (!s->rev[0]) {
        char full[4200];
        snprintf(full, sizeof full, "%s/%s", s->repo, path);
        rc = open_disk(full, &f);
    } else {
        char obj[4200];
        snprintf(obj, sizeof obj, "%s:%s", s->rev, path);
        /* Above bigFileThreshold (512 MB by default) git streams a blob;
         * below, it inflates it whole first: 1m keeps git small too. */
        const char *const args[] = {"-c", "core.bigFileThreshold=1m", "cat-file", "blob", obj, NULL};
        if ((rc = spawn_git(s->repo, args, pid, &fd)) == PS_OK && !(f = fdopen(fd, "rb"))) {
            rc = psi_error(PS_E_IO, "%s: %s", name, strerror(errno));
            close(fd);
            wait_git(*pid, s->repo, args);
            *pid = -1;
        }
    }
    return rc == PS_OK ? psi_csv_open_stream(f, name, c) : rc;
}

static const char *const git_cat[] = {"cat-file", "blob", NULL}; /* for messages */

/* One file of dir d: read, or noted as skipped when its content is absent
 * (a blob the mirror lacks: git prints nothing and fails; a Git LFS
 * pointer). */
static int import_file(const src_t *s, int d, const char *file, psi_overlap_t *t, psi_abacus_info_t *info)
{
    char path[512], name[4700], stem[256];
    snprintf(path, sizeof path, "%s/%s", dirs[d].dir, file);
    snprintf(stem, sizeof stem, "%s/%.*s", dirs[d].dir + strlen("data/profile/"), (int)(strlen(file) - 4), file);
    if (s->rev[0])
        snprintf(name, sizeof name, "%s@%.12s:%s", s->repo, s->rev, path);
    else
        snprintf(name, sizeof name, "%s/%s", s->repo, path);
    psi_csv_t *c = NULL;
    pid_t pid = -1;
    int rc = open_profile(s, path, name, &c, &pid);
    if (rc != PS_OK) {
        if (pid > 0 && c == NULL)
            wait_git(pid, s->repo, git_cat);
        return rc;
    }
    int empty = psi_csv_peek_byte(c) == -1;
    rc = parse_file(c, name, stem, dirs[d].k, dirs[d].setting, t);
    psi_csv_close(c);
    int git = pid > 0 ? wait_git(pid, s->repo, git_cat) : PS_OK;
    if (git != PS_OK && empty) {
        note_skip(info, path, "content absent");
        return PS_OK;
    }
    if (rc == 1)
        note_skip(info, path, "Git LFS pointer");
    else if (rc == PS_OK && git == PS_OK)
        info->files++;
    return rc == 1 ? PS_OK : rc != PS_OK ? rc : git;
}

static int import_dir(const src_t *s, int d, psi_overlap_t *t, psi_abacus_info_t *info)
{
    char *list = NULL;
    if (list_dir(s, dirs[d].dir, &list) != PS_OK) {
        free(list);
        return PS_OK; /* no such folder at this commit */
    }
    int rc = PS_OK;
    for (char *save = NULL, *f = strtok_r(list, "\n", &save); f && rc == PS_OK; f = strtok_r(NULL, "\n", &save))
        if (strlen(f) > 4 && strcmp(f + strlen(f) - 4, ".csv") == 0)
            rc = import_file(s, d, f, t, info);
    free(list);
    return rc;
}

int psi_abacus_import(const char *repo, const char *rev, psi_overlap_t **out, psi_abacus_info_t *info)
{
    *out = NULL;
    memset(info, 0, sizeof *info);
    src_t s = {repo, ""};
    char probe[4096];
    struct stat st;
    snprintf(probe, sizeof probe, "%s/data/profile/A100", repo);
    int rc = PS_OK;
    if (rev)
        snprintf(s.rev, sizeof s.rev, "%s", rev);
    else if (stat(probe, &st) != 0 || !S_ISDIR(st.st_mode))
        rc = default_rev(repo, s.rev, sizeof s.rev);
    if (rc)
        return rc;
    snprintf(info->rev, sizeof info->rev, "%s", s.rev[0] ? s.rev : "worktree");
    psi_overlap_t *t = psi_overlap_new();
    if (!t)
        return PS_E_NOMEM;
    locale_t loc = psi_c_numeric_begin();
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0] && rc == PS_OK; d++)
        rc = import_dir(&s, (int)d, t, info);
    psi_c_numeric_end(loc);
    if (rc == PS_OK && t->n == 0)
        rc = psi_error(PS_E_INPUT, "%s@%s: no profile under data/profile/A100 or data/profile/mig", repo, info->rev);
    if (rc != PS_OK) {
        psi_overlap_free(t);
        return rc;
    }
    info->experiments = t->n;
    *out = t;
    return PS_OK;
}
