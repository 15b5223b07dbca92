// examples/reduce.cu: three sums of n floats into one, each block ending in an atomicAdd.
#define main fixture_main
#include "../../../examples/reduce.cu"
#undef main
#include "bench.cuh"

template <void (*K)(const float *, float *, int)> static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        int n = (int)L.args.i("n");
        const float *in = P.get<float>("in", n);
        float *out = P.get<float>("out", 1, bench::Fill::Zero);
        P.zero_before_launch("out");
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(in, out, n); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("reduce_shared", entry<reduce_shared>());
    r.add("reduce_shuffle", entry<reduce_shuffle>());
    r.add("reduce_grid_stride", entry<reduce_grid_stride>());
}
