// Halving and doubling loops (tree reduction, scan sweeps) for ptx-ir trip-count tests.
__global__ void tree(const float *in, float *out) {
    extern __shared__ float s[];
    s[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
__global__ void tree256(float *out) {
    __shared__ float s[256];
    s[threadIdx.x] = out[threadIdx.x];
    __syncthreads();
#pragma unroll 1
    for (int stride = 128; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    out[threadIdx.x] = s[threadIdx.x];
}
__global__ void doubling(float *data, int n) {
    __shared__ float s[1024];
    s[threadIdx.x] = data[threadIdx.x];
    __syncthreads();
    for (int d = 1; d < n; d *= 2) {
        if (threadIdx.x >= d) s[threadIdx.x] += s[threadIdx.x - d];
        __syncthreads();
    }
    data[threadIdx.x] = s[threadIdx.x];
}
