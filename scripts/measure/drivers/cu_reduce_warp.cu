// tests/fixtures/cu/reduce_warp.cu: grid-stride sum of n floats with warp shuffles, one
// atomicAdd per block into out[0]. __launch_bounds__(256) and warp_sums[8]: blocks must be a
// multiple of 32 and at most 256 threads. Buffers: in = n random floats in [0, 1) (the
// grid-stride loop is guarded by i < n), out = 1 float, zeroed before each launch.
#include "bench.cuh"
#define main fixture_main
#include "../../../tests/fixtures/cu/reduce_warp.cu"
#undef main

void register_kernels(bench::Registry &r)
{
    r.add("reduce_warp", [](const bench::Launch &L, bench::Pool &P) {
        long long n = L.args.i("n");
        unsigned b = L.block.x;
        if (L.block.y != 1 || L.block.z != 1 || b == 0 || b > kThreads || b % 32 || n <= 0 ||
            n + (long long)L.threads() >= (1LL << 31))
            throw std::runtime_error("reduce_warp rows need a 1-D block, a multiple of 32 up to 256, and n + threads < 2^31");
        const float *in = P.get<float>("in", (size_t)n);
        float *out = P.get<float>("out", 1, bench::Fill::Zero);
        P.zero_before_launch("out");
        int ni = (int)n;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { reduce_warp<<<L.grid, L.block, L.smem, s>>>(in, out, ni); });
    });
}
