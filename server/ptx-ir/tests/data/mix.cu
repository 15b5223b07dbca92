// Instruction-mix and module-info fixture for ptx-ir tests.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

__constant__ float coeffs[16];
__device__ int counter;
extern __shared__ float dyn[];
__shared__ float shared_scratch[64];

__device__ __noinline__ float helper(float x) {
    shared_scratch[threadIdx.x % 64] = x;
    __syncwarp();
    return __expf(x) + coeffs[threadIdx.x % 16] + shared_scratch[(threadIdx.x + 1) % 64];
}

__global__ void __launch_bounds__(128) mix(float *out, const double *d, const __half *h,
                                            cudaTextureObject_t tex, int n) {
    float v = helper(out[threadIdx.x]);
    double dv = d[threadIdx.x] * 2.0 + 1.0;
    __half hv = __hadd(h[threadIdx.x], h[threadIdx.x + 1]);
    v += __shfl_down_sync(0xffffffff, v, 16);
    dyn[threadIdx.x] = v;
    __syncthreads();
    v += dyn[(threadIdx.x + 1) % blockDim.x];
    v += tex1Dfetch<float>(tex, threadIdx.x);
    float local_arr[8];
    for (int i = 0; i < 8; ++i) local_arr[i] = v * i;
    atomicAdd(&counter, 1);
    out[threadIdx.x] = v + (float)dv + __half2float(hv) + local_arr[n & 7] + sinf(v);
}

__global__ void tc(const half *a, const half *b, float *c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
