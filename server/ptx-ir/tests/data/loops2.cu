// More loop shapes for ptx-ir trip-count tests.
__global__ void const1000(float *a) {
    float s = 0.f;
    for (int i = 0; i < 1000; ++i) s += a[i];
    a[threadIdx.x] = s;
}
__global__ void countdown(float *a) {
    float s = 0.f;
#pragma unroll 1
    for (int i = 10; i > 0; --i) s += a[i * threadIdx.x];
    a[threadIdx.x] = s;
}
__global__ void le_step2(float *a, int n) {
    float s = 0.f;
#pragma unroll 1
    for (int i = 0; i <= n; i += 2) s += a[i];
    a[threadIdx.x] = s;
}
__global__ void blockstride(float *a) {
    __shared__ float buf[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) buf[i] = a[i];
    __syncthreads();
    a[threadIdx.x] = buf[255 - threadIdx.x];
}
__global__ void withbreak(const float *a, float *out, int n) {
    int i = 0;
#pragma unroll 1
    for (; i < n; ++i) if (a[i] < 0.f) break;
    out[threadIdx.x] = i;
}
#define TILE 16
__global__ void __launch_bounds__(256, 2) tiled(const float *A, const float *B, float *C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < n / TILE; ++t) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
__global__ void start_param(float *a, int lo, int hi) {
    float s = 0.f;
#pragma unroll 1
    for (int i = lo; i < hi; ++i) s += a[i];
    a[threadIdx.x] = s;
}
