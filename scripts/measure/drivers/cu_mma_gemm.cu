// tests/fixtures/cu/mma_gemm.cu: C = A * B with ldmatrix + mma.sync m16n8k8 (A M x K and
// B K x N row-major half, C M x N float), 4 warps per block (block must be 128), a 64x8
// C tile per block, grid N/8 x M/64 as launch_mma_gemm computes. No bounds tests: M % 64,
// N % 8 and K % 8 must be 0 and the grid exact; then every access lies within A (M * K),
// B (K * N) and C (M * N), and the 8- and 4-byte vector loads are aligned.
// Data: halves uniform in [-1, 1) (the fixture gives none; random bit patterns would be
// NaNs and infinities).
#include "../../../tests/fixtures/cu/mma_gemm.cu"
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("mma_gemm_f16", [](const bench::Launch &L, bench::Pool &P) {
        const long long M = L.args.i("M"), N = L.args.i("N"), K = L.args.i("K");
        if (M < BM || N < BN || K < BK || M % BM || N % BN || K % BK || M * K >= (1ll << 34) ||
            K * N >= (1ll << 34) || M * N >= (1ll << 34))
            throw std::runtime_error("mma_gemm_f16 needs M % 64 == 0, N % 8 == 0, K % 8 == 0");
        if (L.block.x != 128 || L.block.y != 1 || L.block.z != 1 || L.grid.x != N / BN || L.grid.y != M / BM ||
            L.grid.z != 1)
            throw std::runtime_error("mma_gemm_f16 needs block 128 and grid N/8 x M/64");
        const half *A = bench::range_buffer<half>(P, "A", (size_t)M * K, -1.0f, 1.0f, 1), *B = bench::range_buffer<half>(P, "B", (size_t)K * N, -1.0f, 1.0f, 2);
        float *C = P.get<float>("C", (size_t)M * N, bench::Fill::Zero);
        const int m = (int)M, n = (int)N, k = (int)K;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { mma_gemm_f16<<<L.grid, L.block, L.smem, s>>>(A, B, C, m, n, k); });
    });
}
