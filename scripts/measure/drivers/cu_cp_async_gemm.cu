// tests/fixtures/cu/cp_async_gemm.cu: C = A * B (row-major floats, A M x K, B K x N) with
// double-buffered cp.async 32x32 tiles; block 32x8 (fixed: 256 threads copy the tiles), grid
// N/32 x M/32 as launch_sgemm_cp_async computes. The kernel has no bounds tests, so M, N, K
// must be multiples of 32 and the grid exactly N/32 x M/32; then every access lies within
// A (M * K), B (K * N) and C (M * N).
// Data: uniform floats in [0, 1) (the fixture gives none).
#include "../../../tests/fixtures/cu/cp_async_gemm.cu"
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("sgemm_cp_async", [](const bench::Launch &L, bench::Pool &P) {
        const long long M = L.args.i("M"), N = L.args.i("N"), K = L.args.i("K");
        if (M < TILE || N < TILE || K < TILE || M % TILE || N % TILE || K % TILE || M * K >= (1ll << 34) ||
            K * N >= (1ll << 34) || M * N >= (1ll << 34))
            throw std::runtime_error("sgemm_cp_async needs M, N, K positive multiples of 32");
        if (L.block.x != TILE || L.block.y != 8 || L.block.z != 1 || L.grid.x != N / TILE || L.grid.y != M / TILE ||
            L.grid.z != 1)
            throw std::runtime_error("sgemm_cp_async needs block 32x8 and grid N/32 x M/32");
        const float *A = P.get<float>("A", (size_t)M * K), *B = P.get<float>("B", (size_t)K * N);
        float *C = P.get<float>("C", (size_t)M * N, bench::Fill::Zero);
        const int m = (int)M, n = (int)N, k = (int)K;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { sgemm_cp_async<<<L.grid, L.block, L.smem, s>>>(A, B, C, m, n, k); });
    });
}
