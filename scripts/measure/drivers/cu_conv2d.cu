// tests/fixtures/cu/conv2d.cu: 5x5 convolution of a width x height float image with the mask
// in __constant__ memory and a 20x20 shared tile per 16x16 block (block must be 16x16: the
// tile loop strides by TILE * TILE threads). Every global access is bounds-tested; in and out
// hold width * height floats. Grid as in launch_conv2d: ceil(width/16) x ceil(height/16).
// Data: uniform floats in [0, 1) for the image; the mask is a fixed random 5x5 set with the
// fixture's cudaMemcpyToSymbol before the timed launches.
#include "../../../tests/fixtures/cu/conv2d.cu"
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("conv2d", [](const bench::Launch &L, bench::Pool &P) {
        const long long width = L.args.i("width"), height = L.args.i("height");
        if (L.block.x != TILE || L.block.y != TILE || L.block.z != 1)
            throw std::runtime_error("conv2d needs block 16x16");
        if (width < 1 || height < 1 || width * height >= (1ll << 31) ||
            (long long)L.grid.x * TILE >= (1ll << 31) - 64 || (long long)L.grid.y * TILE >= (1ll << 31) - 64)
            throw std::runtime_error("conv2d: bad sizes");
        float h_mask[MASK_DIM * MASK_DIM];
        uint32_t x = 12345;
        for (float &m : h_mask) {
            x = x * 1664525u + 1013904223u;
            m = (x >> 8) * (1.0f / 16777216.0f) / (MASK_DIM * MASK_DIM);
        }
        BENCH_CHECK(cudaMemcpyToSymbol(c_mask, h_mask, sizeof(h_mask)));
        const float *in = P.get<float>("in", (size_t)width * height);
        float *out = P.get<float>("out", (size_t)width * height, bench::Fill::Zero);
        const int w = (int)width, h = (int)height;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { conv2d<<<L.grid, L.block, L.smem, s>>>(in, out, w, h); });
    });
}
