// tests/fixtures/cu/vadd.cu: c = a + b over n floats, guarded by i < n. Buffers: a, b = n
// random floats in [0, 1), c = n floats. Grid = ceil(n / block), as launch_vadd.
#include "bench.cuh"
#define main fixture_main
#include "../../../tests/fixtures/cu/vadd.cu"
#undef main

void register_kernels(bench::Registry &r)
{
    r.add("vadd", [](const bench::Launch &L, bench::Pool &P) {
        long long n = L.args.i("n");
        if (n <= 0 || n + (long long)L.threads() >= (1LL << 31) || L.grid.y != 1 || L.grid.z != 1 ||
            L.block.y != 1 || L.block.z != 1)
            throw std::runtime_error("vadd rows need 1-D launches and n + threads < 2^31");
        const float *a = P.get<float>("a", (size_t)n), *b = P.get<float>("b", (size_t)n);
        float *c = P.get<float>("c", (size_t)n, bench::Fill::Zero);
        int ni = (int)n;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { vadd<<<L.grid, L.block, L.smem, s>>>(a, b, c, ni); });
    });
}
