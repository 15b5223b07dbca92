// Row softmax two ways, for the tests of a block's later passes over its own data. Compiled
// by nvcc 13.5 for sm_80 into softmax_rows.ptx (`nvcc -arch=sm_80 -ptx softmax_rows.cu`).
// softmax_warp: a warp per row, three passes over the row (its maximum, the sum of the
// exponentials, the output), each lane a column in 32; the warps of a block read rows of
// their own. softmax_block: a block per row, the same passes with the block's threads.
#include <float.h>

__global__ void softmax_warp(const float *x, float *y, int rows, int cols)
{
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float *r = x + (size_t)row * cols;
    float m = -FLT_MAX;
    for (int c = lane; c < cols; c += 32) m = fmaxf(m, r[c]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32) s += __expf(r[c] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    float inv = 1.0f / s;
    for (int c = lane; c < cols; c += 32) y[(size_t)row * cols + c] = __expf(r[c] - m) * inv;
}

__global__ void softmax_block(const float *x, float *y, int cols)
{
    __shared__ float red[256];
    const float *r = x + (size_t)blockIdx.x * cols;
    float m = -FLT_MAX;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, r[c]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += __expf(r[c] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    float inv = 1.0f / red[0];
    for (int c = threadIdx.x; c < cols; c += blockDim.x) y[(size_t)blockIdx.x * cols + c] = __expf(r[c] - m) * inv;
}
