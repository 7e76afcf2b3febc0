// Kernels of our own for the operators that PyTorch runs outside cuBLAS and
// cuDNN: normalisation, softmax, elementwise, pooling, fused attention and
// embedding. fp16 storage, fp32 arithmetic, one launch per operator, so that
// each operator of the list is one timed kernel as in ops.csv.
#include "collect/kernels.h"

#include <cuda_fp16.h>
#include <math.h>

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float ld(const __half *p, long long i) { return __half2float(p[i]); }
__device__ __forceinline__ void st(__half *p, long long i, float v) { p[i] = __float2half(v); }

__global__ void fill_kernel(__half *p, long long n, unsigned seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        x ^= x >> 15;
        x *= 2246822519u;
        x ^= x >> 13;
        st(p, i, (float)(x & 0xffff) / 32768.0f - 1.0f);
    }
}

__device__ __forceinline__ float gelu(float x)
{
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

__device__ __forceinline__ float silu(float x) { return x / (1.0f + __expf(-x)); }

// Unary and binary elementwise operators; a binary one reads its second
// operand from the second half of `in` (inputs=2).
__global__ void eltwise_kernel(const __half *in, __half *out, long long n, int variant, int head_dim)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        float x = ld(in, i), y;
        switch (variant) {
        case PS_ELT_RELU: y = fmaxf(x, 0.0f); break;
        case PS_ELT_RELU6: y = fminf(fmaxf(x, 0.0f), 6.0f); break;
        case PS_ELT_GELU: y = gelu(x); break;
        case PS_ELT_SILU: y = silu(x); break;
        case PS_ELT_TANH: y = tanhf(x); break;
        case PS_ELT_SCALE: y = x * 0.125f; break;
        case PS_ELT_ADD: y = x + ld(in, n + i); break;
        case PS_ELT_MUL: y = x * ld(in, n + i); break;
        case PS_ELT_SILU_MUL: y = silu(x) * ld(in, n + i); break;
        case PS_ELT_ROPE: {
            // Rotary embedding: rotate the pair (x[j], x[j + d/2]) of each head
            // by an angle of the position; i indexes the first half.
            int d = head_dim, j = (int)(i % d);
            long long pos = (i / d) % 4096;
            float theta = (float)pos * __powf(10000.0f, -2.0f * (float)(j % (d / 2)) / (float)d);
            float s, c;
            __sincosf(theta, &s, &c);
            long long partner = j < d / 2 ? i + d / 2 : i - d / 2;
            float xp = ld(in, partner);
            y = j < d / 2 ? x * c - xp * s : x * c + xp * s;
            break;
        }
        default: y = x;
        }
        st(out, i, y);
    }
}

// Inference batch norm: a per-channel affine map (folded statistics).
__global__ void batchnorm_kernel(const __half *in, const __half *w, __half *out, long long n,
                                 long long c, long long hw)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long ch = (i / hw) % c;
        st(out, i, ld(in, i) * ld(w, ch) + ld(w, c + ch));
    }
}

__device__ float block_sum(float v, float *shm)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0)
        shm[warp] = v;
    __syncthreads();
    float t = 0;
    for (int k = 0; k < (int)(blockDim.x >> 5); k++)
        t += shm[k];
    return t;
}

__device__ float block_max(float v, float *shm)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0)
        shm[warp] = v;
    __syncthreads();
    float t = -INFINITY;
    for (int k = 0; k < (int)(blockDim.x >> 5); k++)
        t = fmaxf(t, shm[k]);
    return t;
}

// Layer norm (rms = 0) or RMS norm (rms = 1) of one row per block.
__global__ void rownorm_kernel(const __half *in, const __half *w, __half *out, long long cols, int rms)
{
    __shared__ float shm[32];
    const __half *x = in + blockIdx.x * cols;
    __half *y = out + blockIdx.x * cols;
    float s = 0, s2 = 0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
        float v = ld(x, j);
        s += v;
        s2 += v * v;
    }
    float mean = rms ? 0.0f : block_sum(s, shm) / (float)cols;
    float var = block_sum(s2, shm) / (float)cols - mean * mean;
    float inv = rsqrtf(var + 1e-5f);
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        st(y, j, (ld(x, j) - mean) * inv * ld(w, j) + (rms ? 0.0f : ld(w, cols + j)));
}

__global__ void softmax_kernel(const __half *in, __half *out, long long cols)
{
    __shared__ float shm[32];
    const __half *x = in + blockIdx.x * cols;
    __half *y = out + blockIdx.x * cols;
    float m = -INFINITY;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        m = fmaxf(m, ld(x, j));
    m = block_max(m, shm);
    float s = 0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        s += __expf(ld(x, j) - m);
    s = block_sum(s, shm);
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        st(y, j, __expf(ld(x, j) - m) / s);
}

// The shape of a pooling: nc planes of h x w_ in, oh x ow out, window win,
// stride and padding win/2 (NCHW).
struct pool_shape {
    long long nc, h, w_, oh, ow;
    int win, stride;
};

// Max or average pooling of shape ps.
__global__ void pool_kernel(const __half *in, __half *out, pool_shape ps, int is_max)
{
    const long long h = ps.h, w_ = ps.w_, oh = ps.oh, ow = ps.ow;
    const int win = ps.win, stride = ps.stride;
    long long n = ps.nc * oh * ow;
    int pad = win / 2;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long ox = i % ow, oy = (i / ow) % oh, plane = i / (oh * ow);
        float acc = is_max ? -INFINITY : 0.0f;
        for (int dy = 0; dy < win; dy++)
            for (int dx = 0; dx < win; dx++) {
                long long y = oy * stride - pad + dy, x = ox * stride - pad + dx;
                if (y < 0 || y >= h || x < 0 || x >= w_)
                    continue;
                float v = ld(in, (plane * h + y) * w_ + x);
                acc = is_max ? fmaxf(acc, v) : acc + v;
            }
        st(out, i, is_max ? acc : acc / (float)(win * win));
    }
}

// Global average pooling: one block per (n, c) plane.
__global__ void global_pool_kernel(const __half *in, __half *out, long long hw)
{
    __shared__ float shm[32];
    float s = 0;
    for (long long j = threadIdx.x; j < hw; j += blockDim.x)
        s += ld(in, blockIdx.x * hw + j);
    s = block_sum(s, shm);
    if (threadIdx.x == 0)
        st(out, blockIdx.x, s / (float)hw);
}

// The shape of an attention: query heads and key/value heads, query and
// key/value lengths, head dimension d, causal masking or not.
struct attn_shape {
    int heads, kv_heads, seq_q, seq_kv, d, causal;
};

// Fused scaled-dot-product attention, one block per (query, head, batch):
// scores against every key in shared memory, softmax, weighted sum of the
// values. Grouped-query heads share their key/value head. Causal masking
// keeps keys up to the query's position.
__global__ void attn_kernel(const __half *q, const __half *kv, __half *out, attn_shape as)
{
    const int heads = as.heads, kv_heads = as.kv_heads, seq_q = as.seq_q, seq_kv = as.seq_kv;
    const int d = as.d, causal = as.causal;
    extern __shared__ float sh[]; // [seq_kv] scores, then [d] query, [32] reduce
    float *score = sh, *qs = sh + seq_kv, *red = qs + d;
    int iq = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    int hk = h / (heads / kv_heads);
    const __half *qrow = q + (((long long)b * heads + h) * seq_q + iq) * d;
    long long kv_plane = (long long)kv_heads * seq_kv * d;
    const __half *k = kv + (long long)b * 2 * kv_plane + (long long)hk * seq_kv * d;
    const __half *v = k + kv_plane;
    for (int j = threadIdx.x; j < d; j += blockDim.x)
        qs[j] = ld(qrow, j);
    __syncthreads();
    int last = causal ? min(seq_kv, iq + 1 + (seq_kv - seq_q)) : seq_kv;
    float scale = rsqrtf((float)d), m = -INFINITY;
    for (int j = threadIdx.x; j < last; j += blockDim.x) {
        float s = 0;
        for (int t = 0; t < d; t++)
            s += qs[t] * ld(k, (long long)j * d + t);
        score[j] = s * scale;
        m = fmaxf(m, score[j]);
    }
    m = block_max(m, red);
    float sum = 0;
    for (int j = threadIdx.x; j < last; j += blockDim.x) {
        score[j] = __expf(score[j] - m);
        sum += score[j];
    }
    sum = block_sum(sum, red);
    __syncthreads();
    __half *o = out + (((long long)b * heads + h) * seq_q + iq) * d;
    for (int t = threadIdx.x; t < d; t += blockDim.x) {
        float acc = 0;
        for (int j = 0; j < last; j++)
            acc += score[j] * ld(v, (long long)j * d + t);
        st(o, t, acc / sum);
    }
}

// Embedding gather: row r of the output is row idx(r) of the table, with
// token ids spread over the vocabulary.
__global__ void embed_kernel(const __half *table, __half *out, long long rows, long long dim,
                             long long vocab)
{
    long long n = rows * dim;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long r = i / dim, tok = (r * 2654435761LL) % vocab;
        out[i] = table[tok * dim + i % dim];
    }
}

unsigned grid_for(long long n)
{
    long long g = (n + kThreads - 1) / kThreads;
    return (unsigned)(g < 1 ? 1 : (g > 65535LL * 8 ? 65535LL * 8 : g));
}

} // namespace

extern "C" cudaError_t psi_kernel_fill(void *buf, size_t elems, unsigned seed, cudaStream_t stream)
{
    fill_kernel<<<grid_for((long long)elems), kThreads, 0, stream>>>((__half *)buf, (long long)elems, seed);
    return cudaGetLastError();
}

extern "C" cudaError_t psi_kernel_launch(const psi_opdesc_t *op, void *in_, void *w_, void *out_, cudaStream_t stream)
{
    const __half *in = (const __half *)in_, *w = (const __half *)w_;
    __half *out = (__half *)out_;
    const long long *p = op->p;
    switch (op->kind) {
    case PS_OPK_ELTWISE: {
        int head_dim = 64; // rotary pairs within 64-wide heads
        eltwise_kernel<<<grid_for(p[PE_ELEMS]), kThreads, 0, stream>>>(in, out, p[PE_ELEMS],
                                                                      op->variant, head_dim);
        break;
    }
    case PS_OPK_NORM:
        if (op->variant == PS_NORM_BATCH) {
            long long n = p[PN_N] * p[PN_C] * p[PN_HW];
            batchnorm_kernel<<<grid_for(n), kThreads, 0, stream>>>(in, w, out, n, p[PN_C], p[PN_HW]);
        } else {
            rownorm_kernel<<<(unsigned)(p[PN_N] * p[PN_HW]), kThreads, 0, stream>>>(
                in, w, out, p[PN_C], op->variant == PS_NORM_RMS);
        }
        break;
    case PS_OPK_SOFTMAX:
        softmax_kernel<<<(unsigned)p[PS_ROWS], kThreads, 0, stream>>>(in, out, p[PS_COLS]);
        break;
    case PS_OPK_POOL:
        if (op->variant == PS_POOL_GLOBAL) {
            global_pool_kernel<<<(unsigned)(p[PP_N] * p[PP_C]), kThreads, 0, stream>>>(
                in, out, p[PP_H] * p[PP_W]);
        } else {
            int win = (int)p[PP_WINDOW], stride = (int)p[PP_STRIDE];
            long long oh = psi_conv_out(p[PP_H], win, stride, win / 2);
            long long ow = psi_conv_out(p[PP_W], win, stride, win / 2);
            pool_shape ps = {p[PP_N] * p[PP_C], p[PP_H], p[PP_W], oh, ow, win, stride};
            pool_kernel<<<grid_for(p[PP_N] * p[PP_C] * oh * ow), kThreads, 0, stream>>>(in, out, ps,
                                                                                        op->variant == PS_POOL_MAX);
        }
        break;
    case PS_OPK_ATTN: {
        dim3 grid((unsigned)p[PA_SEQ_Q], (unsigned)p[PA_HEADS], (unsigned)p[PA_BATCH]);
        size_t shm = (size_t)(p[PA_SEQ_KV] + p[PA_HEAD_DIM] + 32) * sizeof(float);
        if (shm > 48 * 1024) {
            cudaError_t e = cudaFuncSetAttribute(attn_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm);
            if (e != cudaSuccess)
                return e;
        }
        attn_shape as = {(int)p[PA_HEADS],  (int)p[PA_KV_HEADS], (int)p[PA_SEQ_Q],
                         (int)p[PA_SEQ_KV], (int)p[PA_HEAD_DIM], (int)p[PA_CAUSAL]};
        attn_kernel<<<grid, 128, shm, stream>>>(in, w, out, as);
        break;
    }
    case PS_OPK_EMBED:
        embed_kernel<<<grid_for(p[PM_ROWS] * p[PM_DIM]), kThreads, 0, stream>>>(
            w, out, p[PM_ROWS], p[PM_DIM], p[PM_VOCAB]);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
