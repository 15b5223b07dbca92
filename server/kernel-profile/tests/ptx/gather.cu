// A CSR sparse matrix-vector product, one row per thread, and a histogram whose bins are
// indexed by the data. Compiled by nvcc 13.5 for sm_80 into gather.ptx (`nvcc -arch=sm_80
// -ptx gather.cu`) for the tests of allocation-bounded gathers.
__global__ void spmv_csr(const int *rowptr, const int *col, const float *val, const float *x, float *y, int n)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    float s = 0;
    for (int k = rowptr[r]; k < rowptr[r + 1]; ++k) s += val[k] * x[col[k]];
    y[r] = s;
}

__global__ void histo(const unsigned *in, unsigned *bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[in[i]], 1u);
}

// A histogram privatised in shared memory: one shared atomicAdd of 1 per element, then the
// block's counters added to the global ones.
__global__ void histo_shared(const unsigned *in, unsigned *bins, int n)
{
    __shared__ unsigned priv[256];
    priv[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&priv[in[i]], 1u);
    __syncthreads();
    atomicAdd(&bins[threadIdx.x], priv[threadIdx.x]);
}
