// tests/fixtures/heldout/gemm_wmma_rtx3090.cu: Lei Mao's V07 half-precision WMMA GEMM,
// C = alpha*A*B + beta*C, row-major m x k, k x n, m x n halves, 128 x 128 C tile per block of
// 256 threads. The tile loads test their bounds, the epilogue (a 16 x 16 WMMA load and store
// of C per fragment) does not: the entry requires grid.x * 128 <= n and grid.y * 128 <= m,
// n a multiple of 16 (32-byte aligned fragment pointers) and k a multiple of 8 (16-byte
// vector loads of A). Buffers are exactly m*k, k*n and m*n halves. alpha = 1 and beta = 0 as
// the repository's profile_gemm sets them (C zero-filled; the kernel still reads it).
// Data: A and B uniform in [-1, 1], filled by a small kernel below.
#define main fixture_main
#include "../../../tests/fixtures/heldout/gemm_wmma_rtx3090.cu"
#undef main
#include "bench.cuh"

template <void (*K)(int, int, int, __half, const __half *, const __half *, __half, __half *)> static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long mm = L.args.i("m"), nn = L.args.i("n"), kk = L.args.i("k");
        if (mm <= 0 || nn <= 0 || kk <= 0 || mm > (1 << 16) || nn > (1 << 16) || kk > (1 << 16) || nn % 16 || kk % 8)
            throw std::runtime_error("gemm_wmma rows need 0 < m, n, k <= 65536, n % 16 == 0, k % 8 == 0");
        if (L.block.x != THREADS || L.block.y != 1 || L.block.z != 1)
            throw std::runtime_error("gemm_wmma needs 256 threads per block");
        if (L.grid.z != 1 || (long long)L.grid.x * BN > nn || (long long)L.grid.y * BM > mm)
            throw std::runtime_error("grid covers more than C (the epilogue has no bounds check)");
        int m = (int)mm, n = (int)nn, k = (int)kk;
        const __half *A = bench::range_buffer<__half>(P, "A", (size_t)m * k, -1.0f, 1.0f, 21), *B = bench::range_buffer<__half>(P, "B", (size_t)k * n, -1.0f, 1.0f, 22);
        __half *C = P.get<__half>("C", (size_t)m * n, bench::Fill::Zero);
        BENCH_CHECK(cudaMemset(C, 0, (size_t)m * n * sizeof(__half)));
        const __half one = __float2half(1.0f), zero = __float2half(0.0f);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(m, n, k, one, A, B, zero, C); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("gemm_wmma", entry<gemm_wmma>());
    r.add("gemm_wmma_vec", entry<gemm_wmma_vec>());
}
