// tests/fixtures/cu/layernorm.cu: layer norm of rows x cols floats, one warp per row, 4 warps
// per block (block must be 128: __launch_bounds__(128, 4) and row = blockIdx.x * 4 + warp),
// grid ceil(rows / 4) as launch_layernorm computes; cols % 4 == 0 (float4 accesses). x and y
// rows * cols floats, gamma and beta cols floats; every access is for row < rows and
// column < cols. eps = 1e-5 as in launch_layernorm.
// Data: uniform floats in [0, 1) (the fixture gives none).
#include "../../../tests/fixtures/cu/layernorm.cu"
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("layernorm_warp", [](const bench::Launch &L, bench::Pool &P) {
        const long long rows = L.args.i("rows"), cols = L.args.i("cols");
        if (L.block.x != WARPS_PER_BLOCK * 32 || L.block.y != 1 || L.block.z != 1)
            throw std::runtime_error("layernorm_warp needs block 128");
        if (rows < 1 || cols < 4 || cols % 4 || (long long)L.grid.x * WARPS_PER_BLOCK + rows >= (1ll << 31) ||
            cols >= (1ll << 30))
            throw std::runtime_error("layernorm_warp: bad sizes (cols a multiple of 4)");
        const float eps = (float)L.args.f("eps", 1e-5);
        const float4 *x = reinterpret_cast<const float4 *>(P.get<float>("x", (size_t)rows * cols));
        const float4 *gamma = reinterpret_cast<const float4 *>(P.get<float>("gamma", cols));
        const float4 *beta = reinterpret_cast<const float4 *>(P.get<float>("beta", cols));
        float4 *y = reinterpret_cast<float4 *>(P.get<float>("y", (size_t)rows * cols, bench::Fill::Zero));
        const int nr = (int)rows, nc = (int)cols;
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) {
            layernorm_warp<<<L.grid, L.block, L.smem, s>>>(x, gamma, beta, y, nr, nc, eps);
        });
    });
}
