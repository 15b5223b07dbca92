// Sum reduction, three ways: a shared-memory tree, warp shuffles, and warp shuffles over
// a grid-stride loop.
//
// reduce_shared halves the active threads each step and needs a __syncthreads() per step
// (8 barriers for 256 threads). reduce_shuffle reduces inside each warp with
// __shfl_down_sync (no shared memory, no barrier) and only meets in shared memory once.
// Both finish with one atomicAdd per block, and both take one element per thread, so each
// block pays its shuffles, barriers and atomic for 256 elements. reduce_grid_stride (below)
// is the fast way.
#include <cuda_runtime.h>

#define THREADS 256

__global__ void reduce_shared(const float *in, float *out, int n)
{
    __shared__ float s[THREADS];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0)
        atomicAdd(out, s[0]);
}

__global__ void reduce_shuffle(const float *in, float *out, int n)
{
    __shared__ float warp_sums[THREADS / 32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? in[i] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    if (threadIdx.x % 32 == 0)
        warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = (threadIdx.x < THREADS / 32) ? warp_sums[threadIdx.x] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(0xffffffff, v, offset);
        if (threadIdx.x == 0)
            atomicAdd(out, v);
    }
}

// What a fast reduction does: one wave of blocks, each thread summing many elements with
// a grid-stride loop of 16-byte float4 loads, so that every load moves four elements (a
// load waits for nothing but the previous add, so a warp has one load in flight: make it
// a wide one), and the shuffles, the barrier and the atomic are paid once per 76 elements
// instead of once per element. The scalar loop takes the n % 4 elements left over.
__global__ void reduce_grid_stride(const float *in, float *out, int n)
{
    __shared__ float warp_sums[THREADS / 32];
    float v = 0.0f;
    const float4 *in4 = reinterpret_cast<const float4 *>(in);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n / 4; i += gridDim.x * blockDim.x) {
        float4 q = in4[i];
        v += (q.x + q.y) + (q.z + q.w);
    }
    for (int i = n / 4 * 4 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        v += in[i];
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    if (threadIdx.x % 32 == 0)
        warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = (threadIdx.x < THREADS / 32) ? warp_sums[threadIdx.x] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(0xffffffff, v, offset);
        if (threadIdx.x == 0)
            atomicAdd(out, v);
    }
}

int main()
{
    const int n = 1 << 24;
    float *in, *out;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, sizeof(float));
    cudaMemset(out, 0, sizeof(float));
    reduce_shared<<<(n + THREADS - 1) / THREADS, THREADS>>>(in, out, n);
    reduce_shuffle<<<(n + THREADS - 1) / THREADS, THREADS>>>(in, out, n);
    // One full wave: an A100's 108 SMs × 8 resident blocks of 256 threads (real code asks
    // cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount) and the occupancy API).
    reduce_grid_stride<<<108 * 8, THREADS>>>(in, out, n);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
    return 0;
}
