// Matrix transpose: straight from global memory, and through shared memory with and
// without padding.
//
// transpose_naive reads a row and writes a column: each warp's store touches 32 rows, 4
// bytes in each, so the SM sends 32 requests to L2 for what a coalesced store sends in one.
// The tiled kernels read and write global memory in coalesced rows. They differ only in the
// shape of the shared tile: in transpose_tiled the column read tile[tx][ty] puts all 32
// lanes of a warp in the same shared-memory bank (a 32-way bank conflict); the extra
// column of transpose_padded (32x33) spreads them over 32 banks. Compare the three in
// warpsight's output.
#include <cuda_runtime.h>

#define TILE 32

__global__ void transpose_naive(float *out, const float *in, int n)
{
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    out[x * n + y] = in[y * n + x];
}

__global__ void transpose_tiled(float *out, const float *in, int n)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

__global__ void transpose_padded(float *out, const float *in, int n)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

int main()
{
    const int n = 4096; // a multiple of TILE
    float *in, *out;
    cudaMalloc(&in, n * n * sizeof(float));
    cudaMalloc(&out, n * n * sizeof(float));
    dim3 block(TILE, TILE);
    dim3 grid(n / TILE, n / TILE);
    transpose_naive<<<grid, block>>>(out, in, n);
    transpose_tiled<<<grid, block>>>(out, in, n);
    transpose_padded<<<grid, block>>>(out, in, n);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
    return 0;
}
