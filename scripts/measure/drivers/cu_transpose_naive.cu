// tests/fixtures/cu/transpose_naive.cu: out = in^T (in: height rows of width floats) through a 32x32
// shared tile without padding (32-way bank conflicts). TILE_DIM fixes the block at 32x32; grid =
// ceil(width / 32) x ceil(height / 32), as main(); every global access is guarded by
// x < width, y < height. Buffers: in, out = width * height floats, in random in [0, 1).
#include "bench.cuh"
#define main fixture_main
#include "../../../tests/fixtures/cu/transpose_naive.cu"
#undef main

void register_kernels(bench::Registry &r)
{
    r.add("transpose_naive", [](const bench::Launch &L, bench::Pool &P) {
        long long w = L.args.i("width"), h = L.args.i("height");
        if (L.block.x != TILE_DIM || L.block.y != TILE_DIM || L.block.z != 1 || L.grid.z != 1 || w <= 0 ||
            h <= 0 || w * h >= (1LL << 31) || (long long)L.grid.x * TILE_DIM >= (1LL << 31) ||
            (long long)L.grid.y * TILE_DIM >= (1LL << 31))
            throw std::runtime_error("transpose_naive rows need a 32x32 block and width * height < 2^31");
        const float *in = P.get<float>("in", (size_t)(w * h));
        float *out = P.get<float>("out", (size_t)(w * h), bench::Fill::Zero);
        int wi = (int)w, hi = (int)h;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { transpose_naive<<<L.grid, L.block, L.smem, s>>>(out, in, wi, hi); });
    });
}
