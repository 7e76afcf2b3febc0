/* Convolutions through cuDNN's graph API with an SM-count target (see
 * conv_cuda.h). */
#include "collect/conv_cuda.h"

#include "common/common.h"

#include <stdint.h>
#include <stdlib.h>

#define MAX_CFGS 8

struct psi_conv_plan {
    cudnnBackendDescriptor_t x, w, y, conv, op, graph, engine, cfg, plan, pack;
};

#define DNN(call, what)                                                                                                \
    do {                                                                                                               \
        cudnnStatus_t s_ = (call);                                                                                     \
        if (s_ != CUDNN_STATUS_SUCCESS)                                                                                \
            return psi_error(PS_E_BACKEND, "cudnn graph: %s: %s", what, cudnnGetErrorString(s_));                      \
    } while (0)
#define SET(d, name, type, n, ptr) DNN(cudnnBackendSetAttribute(d, name, type, n, ptr), #name)

static void destroy(cudnnBackendDescriptor_t *d)
{
    if (*d)
        (void)cudnnBackendDestroyDescriptor(*d); /* cleanup: nothing to do on failure */
    *d = NULL;
}

static int tensor(cudnnBackendDescriptor_t *t, int64_t uid, int64_t n, int64_t c, int64_t h, int64_t w)
{
    const int64_t dims[4] = {n, c, h, w}, strides[4] = {c * h * w, h * w, w, 1};
    const int64_t align = 16;
    const cudnnDataType_t dt = CUDNN_DATA_HALF;
    DNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, t), "tensor");
    SET(*t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    SET(*t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    SET(*t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    SET(*t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    SET(*t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    DNN(cudnnBackendFinalize(*t), "tensor finalize");
    return 0;
}

/* The operation graph of one forward convolution. */
static int build_graph(cudnnHandle_t h, const psi_opdesc_t *op, psi_conv_plan_t *p)
{
    const long long *v = op->p;
    int64_t oh = psi_conv_out(v[PC_H], v[PC_R], v[PC_STRIDE], v[PC_PAD]);
    int64_t ow = psi_conv_out(v[PC_W], v[PC_S], v[PC_STRIDE], v[PC_PAD]);
    int rc = tensor(&p->x, 'x', v[PC_N], v[PC_C], v[PC_H], v[PC_W]);
    if (rc == 0)
        rc = tensor(&p->w, 'w', v[PC_K], v[PC_C] / v[PC_GROUPS], v[PC_R], v[PC_S]);
    if (rc == 0)
        rc = tensor(&p->y, 'y', v[PC_N], v[PC_K], oh, ow);
    if (rc)
        return rc;
    const int64_t dims = 2, pad[2] = {v[PC_PAD], v[PC_PAD]}, stride[2] = {v[PC_STRIDE], v[PC_STRIDE]};
    const int64_t dil[2] = {1, 1};
    const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    DNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &p->conv), "conv");
    SET(p->conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
    SET(p->conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    SET(p->conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    SET(p->conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    SET(p->conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    SET(p->conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
    SET(p->conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
    DNN(cudnnBackendFinalize(p->conv), "conv finalize");

    const float alpha = 1.0f, beta = 0.0f;
    DNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &p->op),
        "conv op");
    SET(p->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p->x);
    SET(p->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p->w);
    SET(p->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p->y);
    SET(p->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        &p->conv);
    SET(p->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
    SET(p->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
    DNN(cudnnBackendFinalize(p->op), "conv op finalize");

    DNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &p->graph), "graph");
    SET(p->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p->op);
    SET(p->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    DNN(cudnnBackendFinalize(p->graph), "graph finalize");
    return 0;
}

/* A plan from engine `index` of the graph, told to target sm_target SMs. */
static int try_engine(cudnnHandle_t h, psi_conv_plan_t *p, int64_t index, int32_t sm_target)
{
    destroy(&p->plan);
    destroy(&p->cfg);
    destroy(&p->engine);
    DNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &p->engine), "engine");
    SET(p->engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p->graph);
    SET(p->engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
    SET(p->engine, CUDNN_ATTR_ENGINE_SM_COUNT_TARGET, CUDNN_TYPE_INT32, 1, &sm_target);
    DNN(cudnnBackendFinalize(p->engine), "engine finalize");
    DNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &p->cfg), "engine config");
    SET(p->cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p->engine);
    DNN(cudnnBackendFinalize(p->cfg), "engine config finalize");
    DNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &p->plan), "plan");
    SET(p->plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    SET(p->plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p->cfg);
    DNN(cudnnBackendFinalize(p->plan), "plan finalize");
    return 0;
}

/* Global indices of the heuristic's engines for sm_target SMs, best first. */
static int heuristic(psi_conv_plan_t *p, int32_t sm_target, int64_t *index, int *n)
{
    cudnnBackendDescriptor_t heur = NULL, cfgs[MAX_CFGS] = {NULL};
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    int64_t got = 0;
    int rc = 0;
    *n = 0;
    cudnnStatus_t s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p->graph);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET, CUDNN_TYPE_INT32, 1,
                                     &sm_target);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendFinalize(heur);
    for (int i = 0; i < MAX_CFGS && s == CUDNN_STATUS_SUCCESS; i++)
        s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                     MAX_CFGS, &got, cfgs);
    for (int64_t i = 0; s == CUDNN_STATUS_SUCCESS && i < got && i < MAX_CFGS; i++) {
        cudnnBackendDescriptor_t eng = NULL;
        int64_t cnt = 0, idx = -1;
        if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng) != CUDNN_STATUS_SUCCESS)
            break;
        if (cudnnBackendGetAttribute(cfgs[i], CUDNN_ATTR_ENGINECFG_ENGINE,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cnt, &eng) == CUDNN_STATUS_SUCCESS &&
            cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &cnt,
                                     &idx) == CUDNN_STATUS_SUCCESS)
            index[(*n)++] = idx;
        (void)cudnnBackendDestroyDescriptor(eng);
    }
    if (s != CUDNN_STATUS_SUCCESS)
        rc = psi_error(PS_E_BACKEND, "cudnn graph: heuristic: %s", cudnnGetErrorString(s));
    for (int i = 0; i < MAX_CFGS; i++)
        destroy(&cfgs[i]);
    destroy(&heur);
    return rc;
}

int psi_conv_plan_make(cudnnHandle_t h, const psi_opdesc_t *op, int sm_target, psi_conv_plan_t **out, size_t *workspace)
{
    *out = NULL;
    *workspace = 0;
    psi_conv_plan_t *p = psi_calloc(1, sizeof *p);
    if (!p)
        return PS_E_NOMEM;
    int64_t index[MAX_CFGS];
    int n = 0;
    int rc = build_graph(h, op, p);
    if (rc == 0)
        rc = heuristic(p, (int32_t)sm_target, index, &n);
    rc = rc ? rc : psi_error(PS_E_BACKEND, "cudnn graph: no engine plans %s", op->name);
    for (int i = 0; i < n && rc != 0; i++)
        rc = try_engine(h, p, index[i], (int32_t)sm_target);
    int64_t ws = 0, cnt = 0;
    if (rc == 0 && cudnnBackendGetAttribute(p->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                            CUDNN_TYPE_INT64, 1, &cnt, &ws) != CUDNN_STATUS_SUCCESS)
        rc = psi_error(PS_E_BACKEND, "cudnn graph: workspace size of %s", op->name);
    if (rc) {
        psi_conv_plan_free(p);
        return rc;
    }
    *workspace = (size_t)ws;
    *out = p;
    return 0;
}

int psi_conv_plan_bind(psi_conv_plan_t *p, void *x, void *w, void *y, void *workspace)
{
    destroy(&p->pack);
    void *ptrs[3] = {x, w, y};
    const int64_t uids[3] = {'x', 'w', 'y'};
    DNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &p->pack), "variant pack");
    SET(p->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
    SET(p->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    SET(p->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    DNN(cudnnBackendFinalize(p->pack), "variant pack finalize");
    return 0;
}

int psi_conv_plan_run(cudnnHandle_t h, const psi_conv_plan_t *p)
{
    DNN(cudnnBackendExecute(h, p->plan, p->pack), "execute");
    return 0;
}

void psi_conv_plan_free(psi_conv_plan_t *p)
{
    if (!p)
        return;
    destroy(&p->pack);
    destroy(&p->plan);
    destroy(&p->cfg);
    destroy(&p->engine);
    destroy(&p->graph);
    destroy(&p->op);
    destroy(&p->conv);
    destroy(&p->x);
    destroy(&p->w);
    destroy(&p->y);
    free(p);
}
