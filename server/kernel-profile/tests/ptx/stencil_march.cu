// A 7-point stencil on an nx × ny × nz grid of floats, written the way the textbooks march a
// 2-D block of threads through z (one output column per thread). Compiled by nvcc 13.5 for
// sm_80 into stencil_march.ptx (`nvcc -arch=sm_80 -ptx stencil_march.cu`) for the traffic
// tests: `march` as nvcc unrolls it (by four, with a remainder loop), `march_nounroll` not
// unrolled.
__global__ void march(const float *in, float *out, int nx, int ny, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
    long sz = (long)nx * ny;
    for (int z = 1; z < nz - 1; ++z) {
        long i = z * sz + (long)y * nx + x;
        out[i] = 0.4f * in[i] + 0.1f * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - sz] + in[i + sz]);
    }
}

__global__ void march_nounroll(const float *__restrict__ in, float *__restrict__ out, int nx, int ny, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
    long sz = (long)nx * ny;
#pragma unroll 1
    for (int z = 1; z < nz - 1; ++z) {
        long i = z * sz + (long)y * nx + x;
        out[i] = 0.4f * in[i] + 0.1f * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - sz] + in[i + sz]);
    }
}
