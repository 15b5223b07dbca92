// A tile staged through shared memory with the thread's linear index kept in a `volatile`
// local, as CLBlast's Xgemm keeps `tid` (nvcc stores it in the local depot once and loads it
// back at every use). Compiled by nvcc for sm_80 into volatile_index.ptx
// (`nvcc -arch=sm_80 -ptx volatile_index.cu`) for the test of local-slot forwarding.
__global__ void volatile_tile(const float *in, float *out, int n)
{
    __shared__ float tile[256];
    volatile int tid = threadIdx.x + 16 * threadIdx.y;
    for (int k = 0; k < n; k += 256) {
        tile[tid] = in[blockIdx.x * n + k + tid];
        __syncthreads();
        out[blockIdx.x * n + k + tid] = tile[255 - tid];
        __syncthreads();
    }
}

// A loop whose bound is kept in a `volatile` local, read back at each test of the loop:
// 8 to 11 iterations by the thread's lane (8 + threadIdx.x % 4), for the test that the
// control-flow simulation reads the stored value too.
__global__ void volatile_bound(const float *in, float *out)
{
    volatile int count = 8 + threadIdx.x % 4;
    float acc = 0.0f;
    for (int i = 0; i < count; ++i)
        acc += in[i * blockDim.x + threadIdx.x];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// The same loop with its bound a kernel argument kept in a `volatile` local: the trip count
// is the argument, for the test that the loop analysis reads the stored value too.
__global__ void volatile_param_bound(const float *in, float *out, int n)
{
    volatile int count = n;
    float acc = 0.0f;
    for (int i = 0; i < count; ++i)
        acc += in[i * blockDim.x + threadIdx.x];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
