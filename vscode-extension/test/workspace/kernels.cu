// The CUDA file of the VS Code end-to-end test (test/code-server.cjs): two kernels and a
// main that launches them, with one problem each that warpsight finds statically.
//
// transpose_tile reads its 32x32 shared tile down a column, tile[threadIdx.x][threadIdx.y]:
// 32 addresses 32 words apart, all in one bank, a 32-way bank conflict. The quick fix pads
// the tile's row to 33 floats, after which the conflict is gone.
//
// row_sums gives each thread one row of a row-major matrix: neighbouring threads read
// addresses `cols` floats apart, so every warp request touches 32 sectors (uncoalesced).
// Its block size is set at the launch site, which the test edits.
#include <cuda_runtime.h>

#define TILE 32

__global__ void transpose_tile(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE][TILE];

    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < width && y < height)
        tile[threadIdx.y][threadIdx.x] = in[y * width + x];

    __syncthreads();

    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < height && y < width)
        out[y * height + x] = tile[threadIdx.x][threadIdx.y];
}

__global__ void row_sums(float *sums, const float *m, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c)
        s += m[r * cols + c];
    sums[r] = s;
}

int main()
{
    const int n = 4096;
    float *in, *out, *sums;
    cudaMalloc(&in, n * n * sizeof(float));
    cudaMalloc(&out, n * n * sizeof(float));
    cudaMalloc(&sums, n * sizeof(float));

    dim3 block(TILE, TILE);
    dim3 grid(n / TILE, n / TILE);
    transpose_tile<<<grid, block>>>(out, in, n, n);

    const int threads = 256;
    row_sums<<<(n + threads - 1) / threads, threads>>>(sums, in, n, n);

    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
    cudaFree(sums);
    return 0;
}
