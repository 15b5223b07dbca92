// Sum reduction, two ways: a shared-memory tree and warp shuffles.
//
// reduce_shared halves the active threads each step and needs a __syncthreads() per step
// (8 barriers for 256 threads). reduce_shuffle reduces inside each warp with
// __shfl_down_sync (no shared memory, no barrier) and only meets in shared memory once.
// Both finish with one atomicAdd per block.
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

int main()
{
    const int n = 1 << 24;
    float *in, *out;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, sizeof(float));
    cudaMemset(out, 0, sizeof(float));
    reduce_shared<<<(n + THREADS - 1) / THREADS, THREADS>>>(in, out, n);
    reduce_shuffle<<<(n + THREADS - 1) / THREADS, THREADS>>>(in, out, n);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
    return 0;
}
