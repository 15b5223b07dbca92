// Vector addition: c[i] = a[i] + b[i].
//
// The smallest useful kernel: every thread does two coalesced loads, one add and one
// coalesced store, so it is limited by memory bandwidth, not arithmetic. warpsight should
// say so (low arithmetic intensity, memory-bound) for any GPU you pick.
#include <cuda_runtime.h>

// warpsight: grid=65536 block=256 n=16777216
__global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

int main()
{
    const int n = 1 << 24;
    const int threads = 256;
    float *a, *b, *c;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    cudaMalloc(&c, n * sizeof(float));
    vadd<<<(n + threads - 1) / threads, threads>>>(a, b, c, n);
    cudaDeviceSynchronize();
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 0;
}
