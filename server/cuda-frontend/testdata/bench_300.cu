// A ~300-line CUDA file for the edit-to-PTX latency benchmark (examples/latency.rs):
// a mix of streaming, shared-memory, reduction and stencil kernels plus host code, the
// size of a typical single-file CUDA program.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define BLOCK 256
#define TILE 16
#define RADIUS 3
constexpr int kWarp = 32;

__global__ void ew_add(const float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c, float *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = a[i] + b[i];
    }
}

__global__ void ew_sub(const float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c, float *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = a[i] - b[i];
    }
}

__global__ void ew_mul(const float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c, float *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = a[i] * b[i];
    }
}

__global__ void ew_fma(const float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c, float *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = fmaf(a[i], b[i], c[i]);
    }
}

__global__ void ew_max(const float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c, float *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = fmaxf(a[i], b[i]);
    }
}

__global__ void ew_axpb(const float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c, float *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = 2.0f * a[i] + b[i];
    }
}

__global__ void ew_min(const float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c, float *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = fminf(a[i], b[i]);
    }
}

__global__ void ew_sq(const float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c, float *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = a[i] * a[i] + b[i];
    }
}

__global__ void ew_lerp(const float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c, float *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = a[i] + 0.25f * (b[i] - a[i]);
    }
}

__global__ void ew_abs(const float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c, float *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = fabsf(a[i] - b[i]);
    }
}

__global__ void ew_div(const float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c, float *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = a[i] / (b[i] + 1.0f);
    }
}

__global__ void ew_sel(const float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c, float *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = a[i] > b[i] ? a[i] : c[i];
    }
}

__global__ void reduce_0(const float *in, float *out, int n)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    s[tid] = v * 1.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > kWarp; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid < kWarp) {
        float w = s[tid] + s[tid + kWarp];
        for (int off = kWarp / 2; off > 0; off >>= 1)
            w += __shfl_down_sync(0xffffffffu, w, off);
        if (tid == 0) atomicAdd(out, w);
    }
}

__global__ void reduce_1(const float *in, float *out, int n)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    s[tid] = v * 2.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > kWarp; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid < kWarp) {
        float w = s[tid] + s[tid + kWarp];
        for (int off = kWarp / 2; off > 0; off >>= 1)
            w += __shfl_down_sync(0xffffffffu, w, off);
        if (tid == 0) atomicAdd(out, w);
    }
}

__global__ void reduce_2(const float *in, float *out, int n)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    s[tid] = v * 3.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > kWarp; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid < kWarp) {
        float w = s[tid] + s[tid + kWarp];
        for (int off = kWarp / 2; off > 0; off >>= 1)
            w += __shfl_down_sync(0xffffffffu, w, off);
        if (tid == 0) atomicAdd(out, w);
    }
}

__global__ void transpose_0(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE][TILE + 0];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < width && y < height) tile[threadIdx.y][threadIdx.x] = in[y * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < height && y < width) out[y * height + x] = tile[threadIdx.x][threadIdx.y];
}

__global__ void transpose_1(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < width && y < height) tile[threadIdx.y][threadIdx.x] = in[y * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < height && y < width) out[y * height + x] = tile[threadIdx.x][threadIdx.y];
}

__global__ void stencil1d(const float *in, float *out, int n)
{
    __shared__ float s[BLOCK + 2 * RADIUS];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + RADIUS;
    s[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        s[l - RADIUS] = g >= RADIUS ? in[g - RADIUS] : 0.0f;
        s[l + BLOCK] = g + BLOCK < n ? in[g + BLOCK] : 0.0f;
    }
    __syncthreads();
    float acc = 0.0f;
#pragma unroll
    for (int o = -RADIUS; o <= RADIUS; ++o) acc += s[l + o];
    if (g < n) out[g] = acc / (2 * RADIUS + 1);
}

__global__ void matmul(const float *A, const float *B, float *C, int N)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < N / TILE; ++t) {
        As[threadIdx.y][threadIdx.x] = A[row * N + t * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * N + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * N + col] = acc;
}

#define BINS 64
__global__ void histogram(const unsigned char *data, unsigned *bins, int n)
{
    __shared__ unsigned local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&local[data[i] % BINS], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        if (local[b] != 0) atomicAdd(&bins[b], local[b]);
    }
}

__global__ void saxpy_strided(int n, float alpha, const float *x, int incx, float *y, int incy)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float xv = x[i * incx];
        float yv = y[i * incy];
        y[i * incy] = alpha * xv + yv;
    }
}

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    const int n = 1 << 22;
    const int N = 1024;
    float *a, *b, *c, *out, *sum;
    check(cudaMalloc(&a, n * sizeof(float)), "a");
    check(cudaMalloc(&b, n * sizeof(float)), "b");
    check(cudaMalloc(&c, n * sizeof(float)), "c");
    check(cudaMalloc(&out, n * sizeof(float)), "out");
    check(cudaMalloc(&sum, sizeof(float)), "sum");
    int grid = (n + BLOCK - 1) / BLOCK;
    ew_add<<<grid, BLOCK>>>(a, b, c, out, n);
    ew_sub<<<grid, BLOCK>>>(a, b, c, out, n);
    ew_mul<<<grid, BLOCK>>>(a, b, c, out, n);
    ew_fma<<<grid, BLOCK>>>(a, b, c, out, n);
    ew_max<<<grid, BLOCK>>>(a, b, c, out, n);
    ew_axpb<<<grid, BLOCK>>>(a, b, c, out, n);
    ew_min<<<grid, BLOCK>>>(a, b, c, out, n);
    ew_sq<<<grid, BLOCK>>>(a, b, c, out, n);
    ew_lerp<<<grid, BLOCK>>>(a, b, c, out, n);
    ew_abs<<<grid, BLOCK>>>(a, b, c, out, n);
    ew_div<<<grid, BLOCK>>>(a, b, c, out, n);
    ew_sel<<<grid, BLOCK>>>(a, b, c, out, n);
    reduce_0<<<(n + 2 * BLOCK - 1) / (2 * BLOCK), BLOCK>>>(a, sum, n);
    reduce_1<<<(n + 2 * BLOCK - 1) / (2 * BLOCK), BLOCK>>>(a, sum, n);
    reduce_2<<<(n + 2 * BLOCK - 1) / (2 * BLOCK), BLOCK>>>(a, sum, n);
    dim3 tblock(TILE, TILE);
    dim3 tgrid(N / TILE, N / TILE);
    transpose_0<<<tgrid, tblock>>>(out, a, N, N);
    transpose_1<<<tgrid, tblock>>>(out, a, N, N);
    stencil1d<<<grid, BLOCK>>>(a, out, n);
    matmul<<<tgrid, tblock>>>(a, b, c, N);
    histogram<<<32 * 80, BLOCK>>>((const unsigned char *)a, (unsigned *)sum, n);
    saxpy_strided<<<grid, BLOCK>>>(n, 2.0f, a, 1, b, 1);
    check(cudaDeviceSynchronize(), "sync");
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(out);
    cudaFree(sum);
    return 0;
}
