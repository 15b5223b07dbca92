// tests/fixtures/cu/grid_stride.cu: out[i] = in[i] * s in a grid-stride loop (any grid is
// safe: every access is below n). The fixture's host sizes the grid as 32 blocks per SM
// (32 * 132 = 4224 on an H200) with 256 threads. Buffers: n floats each.
// Data: uniform floats in [0, 1); s = 0.5 as in the fixture's main.
#define main fixture_main
#include "../../../tests/fixtures/cu/grid_stride.cu"
#undef main
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("scale_grid_stride", [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.args.i("n");
        // i + blockDim.x * gridDim.x must not overflow an int.
        if (n < 1 || n + 2 * (long long)L.threads() >= (1ll << 31))
            throw std::runtime_error("n and the thread count must fit in an int");
        const float sc = (float)L.args.f("s", 0.5);
        const float *in = P.get<float>("in", n);
        float *out = P.get<float>("out", n, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { scale_grid_stride<<<L.grid, L.block, L.smem, s>>>(out, in, sc, (int)n); });
    });
}
