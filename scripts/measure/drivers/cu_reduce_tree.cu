// tests/fixtures/cu/reduce_tree.cu: shared-memory tree reduction, one partial sum per block
// (out[blockIdx.x]). sdata is BLOCK_SIZE (256) floats, so blocks must be a power of two <= 256.
// Buffers: in = n random floats in [0, 1) (reads are guarded by i < n), out = grid.x floats.
#include "bench.cuh"
#define main fixture_main
#include "../../../tests/fixtures/cu/reduce_tree.cu"
#undef main

void register_kernels(bench::Registry &r)
{
    r.add("reduce_tree", [](const bench::Launch &L, bench::Pool &P) {
        long long n = L.args.i("n");
        unsigned b = L.block.x;
        if (L.block.y != 1 || L.block.z != 1 || b == 0 || b > BLOCK_SIZE || (b & (b - 1)) ||
            L.grid.y != 1 || L.grid.z != 1 || n <= 0 || n > (1LL << 30))
            throw std::runtime_error("reduce_tree rows need a 1-D block of a power of two <= 256 and 0 < n <= 2^30");
        const float *in = P.get<float>("in", (size_t)n);
        float *out = P.get<float>("out", L.grid.x, bench::Fill::Zero);
        int ni = (int)n;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { reduce_tree<<<L.grid, L.block, L.smem, s>>>(in, out, ni); });
    });
}
