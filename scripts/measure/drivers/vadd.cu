// examples/vadd.cu: c = a + b over n floats.
#define main fixture_main
#include "../../../examples/vadd.cu"
#undef main
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("vadd", [](const bench::Launch &L, bench::Pool &P) {
        int n = (int)L.args.i("n");
        const float *a = P.get<float>("a", n), *b = P.get<float>("b", n);
        float *c = P.get<float>("c", n, bench::Fill::Zero);
        return [=](cudaStream_t s) { vadd<<<L.grid, L.block, L.smem, s>>>(a, b, c, n); };
    });
}
