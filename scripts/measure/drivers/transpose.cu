// examples/transpose.cu: out = in^T for an n x n float matrix (n a multiple of 32), blocks
// of 32 x 32 threads.
#define main fixture_main
#include "../../../examples/transpose.cu"
#undef main
#include "bench.cuh"

template <void (*K)(float *, const float *, int)> static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        int n = (int)L.args.i("n");
        if (n % TILE || L.grid.x * TILE != (unsigned)n || L.grid.y * TILE != (unsigned)n ||
            L.block.x != TILE || L.block.y != TILE)
            throw std::runtime_error("transpose rows need n a multiple of 32, grid n/32 x n/32, block 32x32");
        const float *in = P.get<float>("in", (size_t)n * n);
        float *out = P.get<float>("out", (size_t)n * n, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(out, in, n); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("transpose_naive", entry<transpose_naive>());
    r.add("transpose_tiled", entry<transpose_tiled>());
    r.add("transpose_padded", entry<transpose_padded>());
}
