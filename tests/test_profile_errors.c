/* Every class of malformed input, and the accepted variations of the text
 * (BOM, CRLF, comments, quoting, column order), against the table loaders.
 * Each rejected file must be named with the line and column of its first
 * error, and nothing may be loaded from it. */
#include "common/common.h"
#include "profile/tables.h"
#include "testhelp.h"

#include <unistd.h>

#define OPS_H "gpu,model,batch,op,name,tpcs,duration_ns,intensity\n"
#define OPS_R0 "V100,resnet,4,0,Conv,40,100,compute\n"
#define OPS_R1 "V100,resnet,4,1,BatchNorm,40,50.5,memory\n"
#define CX_H "experiment,gpu,hp_model,hp_batch,hp_start,hp_len,lp_model,lp_batch,lp_start,lp_len,hp_tpcs,lp_tpcs,hp_ns,lp_ns\n"
#define CX_R "e1,H200,resnet,8,0,16,bert,8,4,16,30,36,1e5,2e5\n"

typedef struct {
    const char *what;
    ps_table_kind_t kind;
    const char *text;
    const char *where; /* expected ":LINE:COL: " after the path, NULL = valid */
    const char *says;  /* a phrase of the message */
} err_case_t;

static const err_case_t cases[] = {
    /* The classes named by the issue. */
    {"missing column", PS_TABLE_OPS,
     "gpu,model,batch,op,name,tpcs,intensity\n"
     "V100,resnet,4,0,Conv,40,compute\n",
     ":1:1: ", "missing required column 'duration_ns'"},
    {"bad number", PS_TABLE_OPS, OPS_H OPS_R0 "V100,resnet,4,1,BN,40,12x,memory\n",
     ":3:7: ", "duration_ns: '12x': not a number"},
    {"NaN", PS_TABLE_OPS, OPS_H OPS_R0 "V100,resnet,4,1,BN,40,nan,memory\n", ":3:7: ", "NaN is not allowed"},
    {"NaN in an optional column", PS_TABLE_OPS,
     "gpu,model,batch,op,name,tpcs,duration_ns,dram_bytes\nV100,m,1,0,k,4,5,NaN\n",
     ":2:8: ", "dram_bytes: 'NaN': NaN is not allowed"},
    {"inf", PS_TABLE_OPS, OPS_H OPS_R0 "V100,resnet,4,1,BN,40,-Infinity,memory\n", ":3:7: ", "infinity is not allowed"},
    {"overflowing float", PS_TABLE_OPS, OPS_H "V100,resnet,4,0,BN,40,1e999,memory\n", ":2:7: ", "out of range"},
    {"negative duration", PS_TABLE_OPS, OPS_H OPS_R0 "V100,resnet,4,1,BN,40,-3,memory\n",
     ":3:7: ", "duration_ns: -3: must be in (0, 3.6e+12]"},
    {"zero duration", PS_TABLE_OPS, OPS_H "V100,resnet,4,0,BN,40,0,memory\n", ":2:7: ", "must be in (0, 3.6e+12]"},
    {"gap in op indices", PS_TABLE_OPS, OPS_H OPS_R0 "V100,resnet,4,2,BN,40,3,memory\n", ":3:4: ", "op 1 is missing"},
    {"ops not starting at 0", PS_TABLE_OPS, OPS_H OPS_R1, ":2:4: ", "op 0 is missing"},
    {"duplicate key", PS_TABLE_OPS, OPS_H OPS_R0 OPS_R1 "V100,resnet,4,0,Conv,40,90,compute\n",
     ":4:4: ", "duplicate key (gpu, model, batch, op, tpcs) = (V100, resnet, 4, 0, 40) (first at line 2)"},
    {"unterminated quote", PS_TABLE_OPS, OPS_H OPS_R0 "V100,resnet,4,1,\"BN,40,3,memory\n",
     ":3:5: ", "unterminated quoted field"},
    {"empty file", PS_TABLE_OPS, "", ":1:1: ", "empty file"},
    {"only comments", PS_TABLE_UNKNOWN, "# nothing here\n\n", ":1:1: ", "empty file"},
    {"header only", PS_TABLE_OPS, OPS_H, ":2:1: ", "header only"},
    {"UTF-8 BOM", PS_TABLE_OPS, "\xEF\xBB\xBF" OPS_H OPS_R0 OPS_R1, NULL, NULL},
    {"CRLF line ends", PS_TABLE_OPS,
     "gpu,model,batch,op,name,tpcs,duration_ns,intensity\r\n"
     "V100,resnet,4,0,Conv,40,100,compute\r\nV100,resnet,4,1,BN,40,50.5,memory\r\n",
     NULL, NULL},
    {"CRLF with an error", PS_TABLE_OPS,
     "gpu,model,batch,op,name,tpcs,duration_ns,intensity\r\n"
     "V100,resnet,4,0,Conv,40,100,compute\r\nV100,resnet,4,1,BN,40,-1,memory\r\n",
     ":3:7: ", "must be in (0, 3.6e+12]"},
    /* More of the text. */
    {"comments and blank lines", PS_TABLE_OPS, "# made by hand\n#\n\n" OPS_H OPS_R0 "\n" OPS_R1, NULL, NULL},
    {"quoted fields", PS_TABLE_OPS,
     "\"gpu\",model,batch,op,name,tpcs,duration_ns\n"
     "V100,resnet,4,0,\"void f<a, \"\"b\"\">\nsecond line\",40,\"100\"\n"
     "V100,resnet,4,1,k,40,7\n",
     NULL, NULL},
    {"line numbers after a multi-line field", PS_TABLE_OPS,
     OPS_H "V100,resnet,4,0,\"a\nb\nc\",40,100,compute\nV100,resnet,4,1,k,40,x,memory\n", ":5:7: ", "not a number"},
    {"text after a closing quote", PS_TABLE_OPS, OPS_H "V100,resnet,4,0,\"Conv\"x,40,1,compute\n",
     ":2:5: ", "after closing quote"},
    {"quote inside a field", PS_TABLE_OPS, OPS_H "V100,resnet,4,0,Co\"nv,40,1,compute\n",
     ":2:5: ", "quote inside an unquoted field"},
    {"too few fields", PS_TABLE_OPS, OPS_H "V100,resnet,4,0,Conv,40,1\n",
     ":2:8: ", "expected 8 fields as in the header, found 7"},
    {"too many fields", PS_TABLE_OPS, OPS_H "V100,resnet,4,0,Conv,40,1,compute,x\n", ":2:9: ", "found 9"},
    {"columns in any order, unknown ignored", PS_TABLE_OPS,
     "duration_ns,comment,tpcs,name,op,batch,model,gpu\n1.5,\"x,y\",40,k,0,4,m,V100\n", NULL, NULL},
    {"unknown columns repeated or unnamed", PS_TABLE_OPS,
     "gpu,model,note,batch,op,name,tpcs,duration_ns,note,,\nV100,m,a,4,0,k,40,1,b,,\n", NULL, NULL},
    {"duplicate column", PS_TABLE_OPS, "gpu,model,batch,op,name,tpcs,duration_ns,model\n",
     ":1:8: ", "duplicate column 'model'"},
    {"empty required cell", PS_TABLE_OPS, OPS_H "V100,,4,0,Conv,40,1,compute\n", ":2:2: ", "model: missing value"},
    {"empty optional cells", PS_TABLE_OPS,
     "gpu,model,batch,op,name,tpcs,duration_ns,intensity,sm_pct\nV100,m,4,0,k,40,1,,\n", NULL, NULL},
    {"bad intensity", PS_TABLE_OPS, OPS_H "V100,resnet,4,0,Conv,40,1,Compute\n",
     ":2:8: ", "expected compute, memory, unknown"},
    {"batch not an integer", PS_TABLE_OPS, OPS_H "V100,resnet,4.0,0,Conv,40,1,compute\n",
     ":2:3: ", "batch: '4.0': not an integer"},
    {"integer out of range", PS_TABLE_OPS, OPS_H "V100,resnet,4,99999999999,Conv,40,1,compute\n",
     ":2:4: ", "integer out of range"},
    {"negative op", PS_TABLE_OPS, OPS_H "V100,resnet,4,-1,Conv,40,1,compute\n", ":2:4: ", "op: -1: must be >= 0"},
    {"zero tpcs", PS_TABLE_OPS, OPS_H "V100,resnet,4,0,Conv,0,1,compute\n", ":2:6: ", "tpcs: 0: must be > 0"},
    {"percentage above 100", PS_TABLE_OPS,
     "gpu,model,batch,op,name,tpcs,duration_ns,mem_pct\nV100,m,4,0,k,40,1,100.5\n",
     ":2:8: ", "mem_pct: 100.5: must be in [0, 100]"},
    {"hex float", PS_TABLE_OPS, OPS_H "V100,resnet,4,0,Conv,40,0x10,compute\n", ":2:7: ", "not a number"},
    {"space in a number", PS_TABLE_OPS, OPS_H "V100,resnet,4,0,Conv,40, 10,compute\n", ":2:7: ", "not a number"},
    {"control character kept", PS_TABLE_OPS, OPS_H "V100,res\x01net,4,0,Conv,40,1,compute\n", NULL, NULL},
    {"unknown table", PS_TABLE_UNKNOWN, "a,b,c\n1,2,3\n", ":1:1: ", "unknown table"},
    /* coexec */
    {"coexec valid", PS_TABLE_COEXEC, CX_H CX_R CX_R, NULL, NULL},
    {"coexec zero length", PS_TABLE_COEXEC, CX_H "e1,H200,resnet,8,0,0,bert,8,4,16,30,36,1e5,2e5\n",
     ":2:6: ", "hp_len: 0: must be > 0"},
    {"coexec negative latency", PS_TABLE_COEXEC, CX_H "e1,H200,resnet,8,0,16,bert,8,4,16,30,36,1e5,-2e5\n",
     ":2:14: ", "lp_ns: -200000"},
    {"coexec experiment disagrees", PS_TABLE_COEXEC, CX_H CX_R "e1,H200,resnet,8,0,16,bert,8,5,16,30,36,1e5,2e5\n",
     ":3:9: ", "lp_start: differs from an earlier row of experiment 'e1'"},
    {"coexec experiment disagrees after others (first row read again)", PS_TABLE_COEXEC,
     CX_H CX_R "e2,H200,resnet,8,0,16,bert,8,4,16,30,36,1e5,2e5\n" CX_R
               "e1,H200,resnet,8,0,16,bert,8,4,16,29,36,1e5,2e5\n",
     ":5:11: ",
     "hp_tpcs: differs from an earlier row of experiment 'e1' (rows of one experiment share gpu, "
     "models, batches, segments and TPCs) (first at line 2)"},
    {"coexec experiments interleaved", PS_TABLE_COEXEC,
     CX_H CX_R "e2,H200,resnet,8,0,16,bert,8,4,16,29,36,1e5,2e5\n" CX_R
               "e2,H200,resnet,8,0,16,bert,8,4,16,29,36,1e5,2e5\n",
     NULL, NULL},
    {"coexec zero tpcs", PS_TABLE_COEXEC, CX_H "e1,H200,resnet,8,0,16,bert,8,4,16,0,36,1e5,2e5\n",
     ":2:11: ", "hp_tpcs: 0"},
    {"coexec split beyond the GPU", PS_TABLE_COEXEC, CX_H "e1,H200,resnet,8,0,16,bert,8,4,16,30,37,1e5,2e5\n",
     ":2:12: ", "lp_tpcs: hp_tpcs + lp_tpcs = 67 exceeds the 66 TPCs of H200"},
    {"coexec split on an unknown GPU", PS_TABLE_COEXEC, CX_H "e1,MyGPU,resnet,8,0,16,bert,8,4,16,300,370,1e5,2e5\n",
     NULL, NULL},
    {"ops tpcs beyond the GPU", PS_TABLE_OPS, OPS_H "V100-SXM2-16GB,resnet,4,0,Conv,41,1,compute\n",
     ":2:6: ", "tpcs: 41 exceeds the 40 TPCs of V100-SXM2-16GB"},
    /* workloads, scaling, colocations */
    {"workloads duplicate", PS_TABLE_WORKLOADS, "gpu,workload,exclusive_tput\nV100,a,1\nV100,b,2\nV100,a,3\n",
     ":4:2: ", "duplicate key (gpu, workload) = (V100, a) (first at line 2)"},
    {"workloads same name on two GPUs", PS_TABLE_WORKLOADS, "gpu,workload,exclusive_tput\nV100,a,1\nA100,a,3\n", NULL,
     NULL},
    {"workloads zero throughput", PS_TABLE_WORKLOADS, "gpu,workload,exclusive_tput\nV100,a,0\n",
     ":2:3: ", "exclusive_tput: 0: must be > 0"},
    {"scaling share 0", PS_TABLE_SCALING, "gpu,workload,share_pct,tput\nV100,a,0,1\n",
     ":2:3: ", "share_pct: 0: must be in (0, 100]"},
    {"scaling share 101", PS_TABLE_SCALING, "gpu,workload,share_pct,tput\nV100,a,101,1\n",
     ":2:3: ", "must be in (0, 100]"},
    {"scaling duplicate", PS_TABLE_SCALING, "gpu,workload,share_pct,tput\nV100,a,10,1\nV100,a,20,2\nV100,a,10,3\n",
     ":4:3: ", "duplicate key (gpu, workload, share_pct) = (V100, a, 10)"},
    {"colocations duplicate slot", PS_TABLE_COLOCATIONS,
     "colocation,gpu,slot,workload,share_pct,tput\np,V100,1,a,100,1\np,V100,1,b,100,2\n",
     ":3:3: ", "duplicate key (colocation, slot) = (p, 1)"},
    {"colocations slot 0", PS_TABLE_COLOCATIONS, "colocation,gpu,slot,workload,share_pct,tput\np,V100,0,a,100,1\n",
     ":2:3: ", "slot: 0: must be >= 1"},
    {"colocations two GPUs", PS_TABLE_COLOCATIONS,
     "colocation,gpu,slot,workload,share_pct,tput\np,V100,1,a,100,1\nq,V100,1,a,50,\np,A100,2,b,100,2\n",
     ":4:2: ", "gpu: co-location 'p' is on A100 here but on V100"},
    {"colocations unmeasured tput", PS_TABLE_COLOCATIONS,
     "colocation,gpu,slot,workload,share_pct,tput\np,V100,1,a,100,\np,V100,2,b,100,2\n", NULL, NULL},
};

static char dir[64];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fputs(text, f);
    fclose(f);
}

/* Load with the table's own loader; returns rc and frees what loaded. */
static int load_kind(ps_table_kind_t kind, const char *path, int *got_null_on_error)
{
    int rc = PS_E_ARG;
    void *t = (void *)1;
    switch (kind) {
    case PS_TABLE_OPS: { ps_ops_t *o = (ps_ops_t *)t; rc = ps_ops_load(path, &o); t = o; ps_ops_free(o); break; }
    case PS_TABLE_COEXEC: { ps_coexec_t *o = (ps_coexec_t *)t; rc = ps_coexec_load(path, &o); t = o; ps_coexec_free(o); break; }
    case PS_TABLE_WORKLOADS: { ps_workloads_t *o = (ps_workloads_t *)t; rc = ps_workloads_load(path, &o); t = o; ps_workloads_free(o); break; }
    case PS_TABLE_SCALING: { ps_scaling_t *o = (ps_scaling_t *)t; rc = ps_scaling_load(path, &o); t = o; ps_scaling_free(o); break; }
    case PS_TABLE_COLOCATIONS: { ps_colocations_t *o = (ps_colocations_t *)t; rc = ps_colocations_load(path, &o); t = o; ps_colocations_free(o); break; }
    default: return PS_E_ARG;
    }
    *got_null_on_error = rc == PS_OK || t == NULL;
    return rc;
}

static void test_cases(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/case.csv", dir);
    for (size_t i = 0; i < PS_ARRAY_LEN(cases); i++) {
        const err_case_t *c = &cases[i];
        write_file(path, c->text);
        ps_check_result_t r;
        int rc = ps_table_check(path, &r);
        char want[600];
        const char *err = ps_last_error();
        if (!c->where) {
            CHECK_MSG(rc == PS_OK, "%s: %s", c->what, err);
            CHECK_MSG(rc != PS_OK || c->kind == PS_TABLE_UNKNOWN || r.kind == c->kind, "%s: kind %d",
                      c->what, (int)r.kind);
        } else {
            snprintf(want, sizeof want, "%s%s", path, c->where);
            CHECK_MSG(rc == PS_E_INPUT, "%s: rc %d", c->what, rc);
            CHECK_MSG(strncmp(err, want, strlen(want)) == 0 && strstr(err, c->says),
                      "%s: got '%s', want '%s...%s'", c->what, err, want, c->says);
        }
        if (c->kind == PS_TABLE_UNKNOWN)
            continue;
        int null_on_error = 0;
        int rc2 = load_kind(c->kind, path, &null_on_error);
        CHECK_MSG(rc2 == rc, "%s: loader %d vs check %d", c->what, rc2, rc);
        CHECK_MSG(null_on_error, "%s: *out not NULL after an error", c->what);
    }
    remove(path);
}

/* NUL bytes (a UTF-16 file) are refused, not truncated silently. */
static void test_nul_byte(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/nul.csv", dir);
    static const char text[] = OPS_H "V100,res\0net,4,0,Conv,40,1,compute\n";
    FILE *f = fopen(path, "wb");
    fwrite(text, 1, sizeof text - 1, f);
    fclose(f);
    ps_ops_t *o = NULL;
    CHECK(ps_ops_load(path, &o) == PS_E_INPUT && o == NULL);
    CHECK_MSG(strstr(ps_last_error(), "nul.csv:2:2: NUL byte"), "%s", ps_last_error());
    remove(path);
}

/* A record that spans many refills of the tokenizer's buffer, and a file
 * whose rows cross buffer boundaries at every offset. */
static void test_long_fields(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/long.csv", dir);
    FILE *f = fopen(path, "wb");
    fputs(OPS_H, f);
    fputs("V100,resnet,4,0,\"", f);
    for (int i = 0; i < 200000; i++)
        fputs(i % 1000 ? "ab" : "\"\"\n", f);
    fputs("\",40,100,compute\n", f);
    for (int op = 1; op < 5000; op++)
        fprintf(f, "V100,resnet,4,%d,%*s,40,%d.25,memory\n", op, 1 + op % 37, "k", op);
    fclose(f);
    ps_ops_t *o = NULL;
    CHECK_OK(ps_ops_load(path, &o));
    CHECK(o && o->n == 5000 && o->n_groups == 1);
    if (o) {
        CHECK(strlen(o->rows[0].name) == 199800 * 2 + 200 * 2);
        CHECK(o->rows[4999].op == 4999 && o->rows[4999].duration_ns == 4999.25);
        CHECK(o->groups[0].n_ops == 5000);
    }
    ps_ops_free(o);
    remove(path);
}

static void test_setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/psi_test_errorsXXXXXX");
    CHECK(mkdtemp(dir) != NULL);
}
static void test_teardown(void) { CHECK(rmdir(dir) == 0); }

TH_MAIN(TEST(test_setup), TEST(test_cases), TEST(test_nul_byte), TEST(test_long_fields),
        TEST(test_teardown))
