// tests/fixtures/cu/wmma_gemm.cu: C = alpha * A * B + beta * C with WMMA 16x16x16 (half in,
// float accumulate), one warp per 16x16 tile of C; A (M x K), B (K x N) row-major halves,
// C (M x N) row-major floats. Warp (x, y) of the launch covers rows 16 * x and columns
// 16 * y; warps past M or N return, so grid = ceil(M / (16 * block.x / 32)) x
// ceil(N / (16 * block.y)), as launch_wmma_gemm (block 128x4 there). M, N, K must be
// multiples of 16 (whole tiles, 32-byte aligned fragment pointers); block.x a multiple of 32.
// Buffers: A, B uniform in [0, 1) as halves, C zero (read when beta is applied).
// alpha, beta from the row (defaults 1 and 0, as launch_wmma_gemm).
#include "bench.cuh"
#include "../../../tests/fixtures/cu/wmma_gemm.cu"

void register_kernels(bench::Registry &r)
{
    r.add("wmma_gemm", [](const bench::Launch &L, bench::Pool &P) {
        long long M = L.args.i("M"), N = L.args.i("N"), K = L.args.i("K");
        float alpha = (float)L.args.f("alpha", 1.0), beta = (float)L.args.f("beta", 0.0);
        if (L.block.x == 0 || L.block.x % 32 || L.block.z != 1 || L.grid.z != 1 || M <= 0 || N <= 0 ||
            K <= 0 || M % 16 || N % 16 || K % 16 || M * K >= (1LL << 31) || K * N >= (1LL << 31) ||
            M * N >= (1LL << 31) || (long long)L.grid.x * L.block.x >= (1LL << 31) ||
            (long long)L.grid.y * L.block.y >= (1LL << 31))
            throw std::runtime_error("wmma_gemm rows need M, N, K multiples of 16, block.x a multiple of 32, int-sized matrices");
        half *A = bench::range_buffer<half>(P, "A", (size_t)(M * K), 0.0f, 1.0f, 101);
        half *B = bench::range_buffer<half>(P, "B", (size_t)(K * N), 0.0f, 1.0f, 202);
        float *C = P.get<float>("C", (size_t)(M * N), bench::Fill::Zero);
        int m = (int)M, n = (int)N, k = (int)K;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { wmma_gemm<<<L.grid, L.block, L.smem, s>>>(A, B, C, m, n, k, alpha, beta); });
    });
}
