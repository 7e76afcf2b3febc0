/*
 * The gather floor of a tree traversal: the time of the loads that any
 * row-parallel walk of depth-8 trees must make, with nothing else and no
 * dependency between them, so the CPU overlaps them as far as its ports
 * allow. A kernel that walks the trees cannot be faster than this; the
 * figure bounds how far src/model/forest.c's traversal kernels can still go.
 *
 * The layout is the kernels' own (src/model/forest.c): a block of 32 rows
 * copied column-major (196 features, 25 KB, in L1), 400 trees of 2^8 float
 * leaves (400 KB, in L2). Per tree and vector of rows it times:
 *   x      the row's value at each level below the levels a kernel can read
 *          with a contiguous load (AVX2: levels 2-7, 6 gathers; AVX-512:
 *          levels 1-7, 7 gathers; at the root every row reads one feature);
 *   leaf   the leaf value (1 gather);
 *   nodes  the kernels' node gathers at levels 6 and 7 (AVX2: two 4-lane
 *          64-bit gathers each; AVX-512: two 8-lane), which their permute
 *          lookups do not cover.
 * The indices are random (lanes on different cache lines, as rows at
 * different nodes are) and read from a precomputed table in L2.
 *
 * Usage: bench_floor [-t trees] [-r reps]   (defaults 400, 10)
 * Prints ns per row per tree, and per candidate (two regressors of the
 * given trees each), CPU time, fastest of the repetitions. "one row" is the
 * one-row kernels' scheme (one lane per tree); its per-candidate figure is
 * two regressors for one row. On a shared machine, run it several times and
 * read the fastest: a floor is the least the loads can cost.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if !defined(__x86_64__) && !defined(__i386__)
int main(void)
{
    fputs("bench_floor: measures AVX2/AVX-512 gathers, x86 only\n", stderr);
    return 0;
}
#else
#include <immintrin.h>

enum { ROWS = 32, FEATURES = 196, LEAVES = 256, LEVELS = 8 };

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng = 88172645463325252ULL;
static uint32_t next_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

/* What one timing needs: the row block, the leaves, the nodes, and per tree,
 * level and lane a random feature offset, leaf index and node index. */
typedef struct {
    int trees, passes;
    float *xt, *leaves;
    int64_t *nodes;
    int32_t *xoff, *leaf, *node; /* [tree][level][ROWS] */
    int32_t *rx, *rnode, *rleaf; /* one row: [level][tree] and [tree] */
} floor_t;

static int floor_init(floor_t *b, int trees)
{
    size_t per = (size_t)trees * LEVELS * ROWS;
    b->trees = trees;
    b->xt = malloc(FEATURES * ROWS * sizeof *b->xt);
    b->leaves = malloc((size_t)trees * LEAVES * sizeof *b->leaves);
    b->nodes = malloc((size_t)trees * LEAVES * sizeof *b->nodes);
    b->xoff = malloc(per * sizeof *b->xoff);
    b->leaf = malloc(per * sizeof *b->leaf);
    b->node = malloc(per * sizeof *b->node);
    b->rx = malloc((size_t)(trees + 16) * LEVELS * sizeof *b->rx);
    b->rnode = malloc((size_t)(trees + 16) * LEVELS * sizeof *b->rnode);
    b->rleaf = malloc((size_t)(trees + 16) * sizeof *b->rleaf);
    if (!b->xt || !b->leaves || !b->nodes || !b->xoff || !b->leaf || !b->node || !b->rx || !b->rnode || !b->rleaf)
        return 1;
    for (int i = 0; i < FEATURES * ROWS; i++)
        b->xt[i] = (float)(next_u32() % 1000) / 1000.0f;
    for (size_t i = 0; i < (size_t)trees * LEAVES; i++) {
        b->leaves[i] = (float)(next_u32() % 1000) / 1e6f;
        b->nodes[i] = (int64_t)next_u32();
    }
    for (size_t i = 0; i < per; i++) {
        int r = (int)(i % ROWS), t = (int)(i / (LEVELS * ROWS));
        b->xoff[i] = (int32_t)(next_u32() % FEATURES) * ROWS + r;
        b->leaf[i] = t * LEAVES + (int32_t)(next_u32() % LEAVES);
        b->node[i] = t * LEAVES + 64 + (int32_t)(next_u32() % 192); /* levels 6-7 of a perfect tree */
    }
    for (int t = 0; t < trees + 16; t++) { /* lanes past the last tree read the last tree */
        int u = t < trees ? t : trees - 1;
        b->rleaf[t] = u * LEAVES + (int32_t)(next_u32() % LEAVES);
        for (int d = 0; d < LEVELS; d++) {
            b->rx[d * (trees + 16) + t] = (int32_t)(next_u32() % FEATURES);
            b->rnode[d * (trees + 16) + t] = u * LEAVES + (1 << d) - 1 + (int32_t)(next_u32() % (1u << d));
        }
    }
    return 0;
}

/* The AVX2 floor over one block of 32 rows (4 vectors of 8); what = 1 x,
 * 2 x + leaf, 3 x + leaf + nodes. */
__attribute__((target("avx2"))) static float avx2_pass(const floor_t *b, int what)
{
    __m256 acc = _mm256_setzero_ps();
    __m256i nacc = _mm256_setzero_si256();
    for (int t = 0; t < b->trees; t++) {
        const int32_t *xo = b->xoff + (size_t)t * LEVELS * ROWS;
        for (int d = 2; d < LEVELS; d++)
            for (int v = 0; v < ROWS / 8; v++)
                acc = _mm256_add_ps(
                    acc, _mm256_i32gather_ps(b->xt, _mm256_loadu_si256((const void *)(xo + d * ROWS + 8 * v)), 4));
        if (what >= 2)
            for (int v = 0; v < ROWS / 8; v++)
                acc = _mm256_add_ps(
                    acc,
                    _mm256_i32gather_ps(
                        b->leaves, _mm256_loadu_si256((const void *)(b->leaf + (size_t)t * LEVELS * ROWS + 8 * v)), 4));
        if (what >= 3)
            for (int d = 6; d < LEVELS; d++)
                for (int h = 0; h < ROWS / 4; h++) {
                    __m128i k = _mm_loadu_si128((const void *)(b->node + ((size_t)t * LEVELS + d) * ROWS + 4 * h));
                    nacc = _mm256_add_epi64(nacc, _mm256_i32gather_epi64((const long long *)b->nodes, k, 8));
                }
    }
    float s[8];
    _mm256_storeu_ps(s, acc);
    return s[0] + s[7] + (float)_mm256_extract_epi64(nacc, 0);
}

/* As avx2_pass with 16 lanes (2 vectors per block), x from level 1. */
__attribute__((target("avx512f"))) static float avx512_pass(const floor_t *b, int what)
{
    __m512 acc = _mm512_setzero_ps();
    __m512i nacc = _mm512_setzero_si512();
    for (int t = 0; t < b->trees; t++) {
        const int32_t *xo = b->xoff + (size_t)t * LEVELS * ROWS;
        for (int d = 1; d < LEVELS; d++)
            for (int v = 0; v < ROWS / 16; v++)
                acc = _mm512_add_ps(acc, _mm512_i32gather_ps(_mm512_loadu_si512(xo + d * ROWS + 16 * v), b->xt, 4));
        if (what >= 2)
            for (int v = 0; v < ROWS / 16; v++)
                acc = _mm512_add_ps(
                    acc, _mm512_i32gather_ps(_mm512_loadu_si512(b->leaf + (size_t)t * LEVELS * ROWS + 16 * v),
                                             b->leaves, 4));
        if (what >= 3)
            for (int d = 6; d < LEVELS; d++)
                for (int h = 0; h < ROWS / 8; h++) {
                    __m256i k = _mm256_loadu_si256((const void *)(b->node + ((size_t)t * LEVELS + d) * ROWS + 8 * h));
                    nacc = _mm512_add_epi64(nacc, _mm512_i32gather_epi64(k, (const long long *)b->nodes, 8));
                }
    }
    return _mm512_reduce_add_ps(acc) + (float)_mm512_reduce_add_epi64(nacc);
}

/* One row, one lane per tree (the one-row kernels' scheme), 8 trees per
 * vector: the root's feature value (the roots' fields are one contiguous
 * load), then per level below it the node (two 4-lane 64-bit gathers) and
 * the value, then the leaf. */
__attribute__((target("avx2"))) static float avx2_row_pass(const floor_t *b)
{
    const int T = b->trees + 16;
    __m256 acc = _mm256_setzero_ps();
    __m256i nacc = _mm256_setzero_si256();
    for (int t = 0; t < b->trees; t += 8) {
        for (int d = 0; d < LEVELS; d++) {
            __m256i j = _mm256_loadu_si256((const void *)(b->rx + d * T + t));
            acc = _mm256_add_ps(acc, _mm256_i32gather_ps(b->xt, j, 4));
            if (d == 0)
                continue;
            for (int h = 0; h < 2; h++) {
                __m128i k = _mm_loadu_si128((const void *)(b->rnode + d * T + t + 4 * h));
                nacc = _mm256_add_epi64(nacc, _mm256_i32gather_epi64((const long long *)b->nodes, k, 8));
            }
        }
        __m256i l = _mm256_loadu_si256((const void *)(b->rleaf + t));
        acc = _mm256_add_ps(acc, _mm256_i32gather_ps(b->leaves, l, 4));
    }
    float s[8];
    _mm256_storeu_ps(s, acc);
    return s[0] + s[7] + (float)_mm256_extract_epi64(nacc, 0);
}

/* As avx2_row_pass, 16 trees per vector. */
__attribute__((target("avx512f"))) static float avx512_row_pass(const floor_t *b)
{
    const int T = b->trees + 16;
    __m512 acc = _mm512_setzero_ps();
    __m512i nacc = _mm512_setzero_si512();
    for (int t = 0; t < b->trees; t += 16) {
        for (int d = 0; d < LEVELS; d++) {
            __m512i j = _mm512_loadu_si512(b->rx + d * T + t);
            acc = _mm512_add_ps(acc, _mm512_i32gather_ps(j, b->xt, 4));
            if (d == 0)
                continue;
            for (int h = 0; h < 2; h++) {
                __m256i k = _mm256_loadu_si256((const void *)(b->rnode + d * T + t + 8 * h));
                nacc = _mm512_add_epi64(nacc, _mm512_i32gather_epi64(k, (const long long *)b->nodes, 8));
            }
        }
        acc = _mm512_add_ps(acc, _mm512_i32gather_ps(_mm512_loadu_si512(b->rleaf + t), b->leaves, 4));
    }
    return _mm512_reduce_add_ps(acc) + (float)_mm512_reduce_add_epi64(nacc);
}

/* One pass of kernel k (0 avx2, 1 avx512) and gather set what (1-3 a block
 * of rows, 4 one row). */
static float pass(const floor_t *b, int k, int what)
{
    if (what == 4)
        return k ? avx512_row_pass(b) : avx2_row_pass(b);
    return k ? avx512_pass(b, what) : avx2_pass(b, what);
}

/* ns per row per tree of `passes` passes, fastest of reps. */
static double time_floor(const floor_t *b, int k, int what, int reps, float *sink)
{
    double best = 1e30;
    int passes = what == 4 ? ROWS * b->passes : b->passes, rows = what == 4 ? 1 : ROWS;
    for (int r = 0; r < reps; r++) {
        double t0 = cpu_now();
        for (int p = 0; p < passes; p++)
            *sink += pass(b, k, what);
        double dt = cpu_now() - t0;
        best = dt < best ? dt : best;
    }
    return 1e9 * best / ((double)passes * rows * b->trees);
}

static void usage(FILE *to)
{
    fputs("Usage: bench_floor [-t trees] [-r reps]\n"
          "The gather floor of a depth-8 traversal: the loads any row-parallel walk must\n"
          "make, timed alone, in ns per row per tree and us per candidate (two regressors),\n"
          "CPU time, fastest of the repetitions, for AVX2 and AVX-512 where the CPU has them.\n\n"
          "options:\n"
          "  -t trees : trees per regressor, 1..100000 (default 400)\n"
          "  -r reps  : repetitions, the fastest is kept, 1..1000 (default 10)\n"
          "  -h       : this help\n\n"
          "examples:\n"
          "  bench_floor              # 400 trees, 10 repetitions\n"
          "  bench_floor -t 400 -r 5\n",
          to);
}

/* An integer option in lo..hi, or a message naming it: 0, or -1. */
static int int_opt(int c, const char *v, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi) {
        fprintf(stderr, "bench_floor: -%c: bad value '%s': expected an integer in %ld..%ld (see -h)\n", c, v, lo, hi);
        return -1;
    }
    *out = (int)x;
    return 0;
}

int main(int argc, char **argv)
{
    int trees = 400, reps = 10, c, bad = 0;
    opterr = 0;
    while (!bad && (c = getopt(argc, argv, ":t:r:h")) != -1) {
        if (c == 't')
            bad = int_opt(c, optarg, 1, 100000, &trees);
        else if (c == 'r')
            bad = int_opt(c, optarg, 1, 1000, &reps);
        else if (c == 'h') {
            usage(stdout);
            return 0;
        } else {
            if (c == ':')
                fprintf(stderr, "bench_floor: -%c needs a value (see -h)\n", optopt);
            else
                fprintf(stderr, "bench_floor: unknown option -%c (see -h)\n", optopt);
            bad = -1;
        }
    }
    if (!bad && optind < argc) {
        fprintf(stderr, "bench_floor: unexpected argument '%s' (options only, see -h)\n", argv[optind]);
        bad = -1;
    }
    if (bad)
        return 2;
    floor_t b;
    if (floor_init(&b, trees)) {
        fputs("bench_floor: out of memory\n", stderr);
        return 1;
    }
    b.passes = 2000000 / trees > 0 ? 2000000 / trees : 1; /* 64M row-trees per timing */
    __builtin_cpu_init();
    int has[2] = {__builtin_cpu_supports("avx2"), __builtin_cpu_supports("avx512f")};
    const char *names[] = {"x", "x+leaf", "x+leaf+nodes", "one row"};
    float sink = 0;
    printf("gather floor, %d trees of depth 8, block of %d rows x %d features, CPU time, fastest of %d\n", trees, ROWS,
           FEATURES, reps);
    printf("%-8s %-14s %14s %22s\n", "kernel", "gathers", "ns/row/tree", "us/candidate (2 x trees)");
    for (int k = 0; k < 2; k++) {
        if (!has[k])
            continue;
        for (int w = 1; w <= 4; w++) {
            double ns = time_floor(&b, k, w, reps, &sink);
            printf("%-8s %-14s %14.3f %22.3f\n", k ? "avx512" : "avx2", names[w - 1], ns, 2e-3 * ns * trees);
        }
    }
    fprintf(stderr, "(checksum %g)\n", (double)sink);
    return 0;
}
#endif
