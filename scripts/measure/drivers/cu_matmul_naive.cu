// tests/fixtures/cu/matmul_naive.cu: Pd = Md * Nd for N x N floats, one output per thread,
// blocks of tWidth x tWidth = 16x16 and grid ceil(N/16) x ceil(N/16) as the fixture's launcher
// computes. The kernel has no bounds tests, so N must be a multiple of 16 and the grid exactly
// N/16 x N/16; then every access is below N * N.
// Data: uniform floats in [0, 1) (the fixture gives none).
#define main fixture_main
#include "../../../tests/fixtures/cu/matmul_naive.cu"
#undef main
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("matmul_naive", [](const bench::Launch &L, bench::Pool &P) {
        const long long N = L.args.i("N");
        if (N < tWidth || N % tWidth || N * N >= (1ll << 31))
            throw std::runtime_error("matmul_naive needs N a multiple of 16 with N * N < 2^31");
        if (L.block.x != tWidth || L.block.y != tWidth || L.block.z != 1 || L.grid.x != N / tWidth ||
            L.grid.y != N / tWidth || L.grid.z != 1)
            throw std::runtime_error("matmul_naive needs block 16x16 and grid N/16 x N/16");
        float *Md = P.get<float>("M", (size_t)N * N), *Nd = P.get<float>("N", (size_t)N * N);
        float *Pd = P.get<float>("P", (size_t)N * N, bench::Fill::Zero);
        const int n = (int)N;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { matmul_naive<<<L.grid, L.block, L.smem, s>>>(Pd, Md, Nd, n); });
    });
}
