// nvcc-flags: -gencode=arch=compute_90a,code=sm_90a
// tests/fixtures/cu/wgmma_sm90a.cu: C (M x N floats) = A (M x K halves) * B^T (B: N x K
// halves), one warpgroup (128 threads, __launch_bounds__(128)) per 64x8 tile of C with
// wgmma.mma_async m64n8k16. Grid = N / 8 x M / 64, as launch_wgmma_gemm; M % 64, N % 8 and
// K % 16 must be 0 (no bounds checks: the tiles cover C exactly, 16-byte vector loads need
// K % 8 == 0). Buffers: A = M * K and B = N * K halves uniform in [0, 1), C = M * N floats.
//
// run.py also passes -arch=sm_90, so the binary holds both an sm_90 cubin (where the kernel
// body is __trap()) and an sm_90a cubin. Each entry first launches a probe kernel from the
// same translation unit that reports whether the sm_90a code was loaded, and refuses the row
// instead of trapping (which would end the process) when it was not.
#include "bench.cuh"
#include "../../../tests/fixtures/cu/wgmma_sm90a.cu"

__global__ void wgmma_probe_arch(int *flag)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    *flag = 1;
#else
    *flag = 2;
#endif
}

static bool sm90a_loaded()
{
    static int state = 0;  // 0 unknown, 1 sm_90a code, 2 other
    if (state == 0) {
        int *d = nullptr, h = 0;
        BENCH_CHECK(cudaMalloc(&d, sizeof(int)));
        BENCH_CHECK(cudaMemset(d, 0, sizeof(int)));
        wgmma_probe_arch<<<1, 1>>>(d);
        BENCH_CHECK(cudaGetLastError());
        BENCH_CHECK(cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost));
        BENCH_CHECK(cudaFree(d));
        state = h == 1 ? 1 : 2;
    }
    return state == 1;
}

void register_kernels(bench::Registry &r)
{
    r.add("wgmma_gemm_f16", [](const bench::Launch &L, bench::Pool &P) {
        long long M = L.args.i("M"), N = L.args.i("N"), K = L.args.i("K");
        if (L.block.x != 128 || L.block.y != 1 || L.block.z != 1 || L.grid.z != 1 || M <= 0 || N <= 0 ||
            K <= 0 || M % WG_M || N % WG_N || K % WG_K || (long long)L.grid.x * WG_N != N ||
            (long long)L.grid.y * WG_M != M)
            throw std::runtime_error("wgmma rows need block 128, grid N/8 x M/64, M % 64 == N % 8 == K % 16 == 0");
        if (!sm90a_loaded())
            throw std::runtime_error("the sm_90a cubin was not loaded: wgmma_gemm_f16 would trap");
        half *A = bench::range_buffer<half>(P, "A", (size_t)(M * K), 0.0f, 1.0f, 101);
        half *B = bench::range_buffer<half>(P, "B", (size_t)(N * K), 0.0f, 1.0f, 202);
        float *C = P.get<float>("C", (size_t)(M * N), bench::Fill::Zero);
        int m = (int)M, n = (int)N, k = (int)K;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { wgmma_gemm_f16<<<L.grid, L.block, L.smem, s>>>(A, B, C, m, n, k); });
    });
}
