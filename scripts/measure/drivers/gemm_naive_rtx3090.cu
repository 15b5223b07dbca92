// tests/fixtures/heldout/gemm_naive_rtx3090.cu: Lei Mao's V00/V01 naive GEMMs,
// C = alpha*A*B + beta*C, row-major m x k, k x n, m x n, one C element per thread (FP32 and
// FP16). The kernels test row < m && col < n, so any grid is safe with buffers of exactly
// m*k, k*n and m*n elements (indices are size_t products). alpha and beta are not in the
// rows: 1 and 0 as the repository's profile_gemm sets them (the kernel still reads C,
// which is zero-filled). Data: random floats in [0, 1) for FP32; halves uniform in [-1, 1]
// filled by a small kernel below (the repository fills A, B and C with random values).
#define main fixture_main
#include "../../../tests/fixtures/heldout/gemm_naive_rtx3090.cu"
#undef main
#include "bench.cuh"

static void dims(const bench::Launch &L, int &m, int &n, int &k)
{
    long long mm = L.args.i("m"), nn = L.args.i("n"), kk = L.args.i("k");
    if (mm <= 0 || nn <= 0 || kk <= 0 || mm > (1 << 16) || nn > (1 << 16) || kk > (1 << 16))
        throw std::runtime_error("gemm_naive rows need 0 < m, n, k <= 65536");
    m = (int)mm, n = (int)nn, k = (int)kk;
}

template <void (*K)(int, int, int, float, const float *, const float *, float, float *)> static bench::Prepare entry_f32()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        int m, n, k;
        dims(L, m, n, k);
        const float *A = P.get<float>("A32", (size_t)m * k), *B = P.get<float>("B32", (size_t)k * n);
        float *C = P.get<float>("C32", (size_t)m * n, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(m, n, k, 1.0f, A, B, 0.0f, C); });
    };
}

template <void (*K)(int, int, int, __half, const __half *, const __half *, __half, __half *)> static bench::Prepare entry_f16()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        int m, n, k;
        dims(L, m, n, k);
        const __half *A = bench::range_buffer<__half>(P, "A16", (size_t)m * k, -1.0f, 1.0f, 11), *B = bench::range_buffer<__half>(P, "B16", (size_t)k * n, -1.0f, 1.0f, 12);
        __half *C = P.get<__half>("C16", (size_t)m * n, bench::Fill::Zero);
        BENCH_CHECK(cudaMemset(C, 0, (size_t)m * n * sizeof(__half)));
        const __half one = __float2half(1.0f), zero = __float2half(0.0f);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(m, n, k, one, A, B, zero, C); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("gemm_noncoalesced_f32", entry_f32<gemm_noncoalesced_f32>());
    r.add("gemm_coalesced_f32", entry_f32<gemm_coalesced_f32>());
    r.add("gemm_noncoalesced_f16", entry_f16<gemm_noncoalesced_f16>());
    r.add("gemm_coalesced_f16", entry_f16<gemm_coalesced_f16>());
}
