// Loop shapes for ptx-ir trip-count tests.
__global__ void const64(float *a) {
    float s = 0.f;
    for (int i = 0; i < 64; ++i) s += a[i * blockDim.x + threadIdx.x];
    a[threadIdx.x] = s;
}
__global__ void step4(float *a) {
    float s = 0.f;
#pragma unroll 1
    for (int i = 0; i < 100; i += 4) s += a[i + threadIdx.x];
    a[threadIdx.x] = s;
}
__global__ void paramN(float *a, const float *b, int n) {
    float s = 0.f;
#pragma unroll 1
    for (int i = 0; i < n; ++i) s += b[i];
    a[threadIdx.x] = s;
}
__global__ void nested(float *a, int n) {
    float s = 0.f;
#pragma unroll 1
    for (int i = 0; i < 16; ++i) {
#pragma unroll 1
        for (int j = 0; j < 8; ++j) s += a[i * 8 + j];
    }
    a[threadIdx.x] = s;
}
__global__ void gridstride(float *y, const float *x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = 2.f * x[i] + y[i];
}
__global__ void unroll4(float *a, const float *b, int n) {
    float s = 0.f;
#pragma unroll 4
    for (int i = 0; i < n; ++i) s += b[i];
    a[threadIdx.x] = s;
}
__global__ void whileloop(int *a) {
    int i = threadIdx.x;
    while (a[i] != 0) i = a[i];
    a[threadIdx.x] = i;
}
