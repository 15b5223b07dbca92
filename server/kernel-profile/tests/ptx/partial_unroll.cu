// Loops with a run-time trip count, for the test of sass.rs item 8 (ptxas unrolls nvcc's
// 4-way unrolled loops by 4 more unless their body is too large, their exit compares a
// value other than their counter, or `#pragma unroll 1` asked for none):
// server/kernel-profile/tests/sass_counts.rs. Compiled with
//   nvcc -arch=sm_86 -ptx partial_unroll.cu
// (nvcc 13.5); the PTX beside it is that output with its `.file` path scrubbed.

// One shared and one global load per iteration: unrolled by 16 in all.
extern "C" __global__ void taps_shared(const float *__restrict__ a, const float *__restrict__ b, float *o, int n)
{
    __shared__ float s[4096];
    int t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    float acc = 0.f;
    for (int j = 0; j < n; ++j)
        acc += s[t + j] * b[j];
    o[t] = acc;
}

// Eight shared loads per iteration: nvcc's 4 copies are 61 SASS instructions, 16 copies 229.
extern "C" __global__ void taps_eight(const float *__restrict__ a, float *o, int n)
{
    __shared__ float s[4096];
    int t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    float acc = 0.f, acc2 = 0.f;
    for (int j = 0; j < n; ++j) {
        acc += s[t + j] * s[t + j + 512];
        acc2 += s[t + j + 1024] * s[t + j + 1536];
        acc = acc * acc2 + s[t + j + 256] * s[t + j + 768];
        acc2 = acc2 * acc + s[t + j + 2048] * s[t + j + 2560];
    }
    o[t] = acc + acc2;
}

// Ten shared loads per iteration: nvcc's 4 copies (77 SASS instructions) stay as they are.
extern "C" __global__ void taps_ten(const float *__restrict__ a, float *o, int n)
{
    __shared__ float s[4096];
    int t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    float acc = 0.f, acc2 = 0.f, acc3 = 0.f;
    for (int j = 0; j < n; ++j) {
        acc += s[t + j] * s[t + j + 512];
        acc2 += s[t + j + 1024] * s[t + j + 1536];
        acc = acc * acc2 + s[t + j + 256] * s[t + j + 768];
        acc2 = acc2 * acc + s[t + j + 2048] * s[t + j + 2560];
        acc3 = acc3 * acc2 + s[t + j + 3000] * s[t + j + 3500];
    }
    o[t] = acc + acc2 + acc3;
}

// A signed index: nvcc steps pointers, and the loop is unrolled by 16.
extern "C" __global__ void dot_signed(const float *__restrict__ a, const float *__restrict__ b, float *o, int n)
{
    float acc = 0.f;
    int t = threadIdx.x;
    for (int j = 0; j < n; ++j)
        acc += a[j * 64 + t] * b[j];
    o[t] = acc;
}

// An unsigned index: nvcc's loop exits on a sum of its counter and the bound, and ptxas
// keeps its 4 copies.
extern "C" __global__ void dot_unsigned(const float *a, const float *b, float *o, int n)
{
    float acc = 0.f;
    for (int j = 0; j < n; ++j)
        acc += a[j * 64 + threadIdx.x] * b[j];
    o[threadIdx.x] = acc;
}

// `#pragma unroll 1`: nvcc's `.pragma "nounroll"`, and ptxas keeps one copy.
extern "C" __global__ void taps_rolled(const float *__restrict__ a, const float *__restrict__ b, float *o, int n)
{
    __shared__ float s[4096];
    int t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    float acc = 0.f;
#pragma unroll 1
    for (int j = 0; j < n; ++j)
        acc += s[t + j] * b[j];
    o[t] = acc;
}

// A grid-stride sum with a signed step: nvcc computes the trip count and unrolls by 4,
// ptxas by 16 more; the sums and the index steps are three-input IADD3s, `in + i` after
// the first a 64-bit add of a wide product (IMAD.WIDE). (With the unsigned
// `i += blockDim.x * gridDim.x` nvcc keeps one copy, and so does ptxas: its step is a
// register.)
extern "C" __global__ void grid_sum(const int *__restrict__ in, int *o, int n)
{
    int first = blockIdx.x * blockDim.x + threadIdx.x;
    int step = blockDim.x * gridDim.x;
    int s = 0;
    for (int i = first; i < n; i += step)
        s += in[i];
    o[first] = s;
}
