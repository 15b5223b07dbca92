// tests/fixtures/cu/conv1d.cu: the PMPP basic convolutions with a runtime mask width.
// conv1d: P[i] = sum_j N[i - mask_width/2 + j] * M[j]; N reads are bounds-tested but the
// store P[i] is not, so P holds one float per launched thread (grid * block >= width).
// conv2d_runtime: out = in (*) mask over width x height, every access bounds-tested.
// Data: uniform floats in [0, 1) for inputs and masks (the fixture gives none).
#include "../../../tests/fixtures/cu/conv1d.cu"
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("conv1d", [](const bench::Launch &L, bench::Pool &P) {
        const long long width = L.args.i("width"), mw = L.args.i("mask_width");
        const size_t threads = L.threads();
        if (width < 1 || mw < 1 || mw > 4096 || threads + width + mw >= (1ull << 31))
            throw std::runtime_error("conv1d: bad width, mask_width or launch size");
        const float *in = P.get<float>("in", width);
        const float *mask = P.get<float>("mask", mw);
        float *out = P.get<float>("out", std::max<size_t>(threads, width), bench::Fill::Zero);
        const int m = (int)mw, w = (int)width;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { conv1d<<<L.grid, L.block, L.smem, s>>>(in, mask, out, m, w); });
    });
    r.add("conv2d_runtime", [](const bench::Launch &L, bench::Pool &P) {
        const long long width = L.args.i("width"), height = L.args.i("height"), mw = L.args.i("mask_width");
        if (width < 1 || height < 1 || mw < 1 || mw > 64 || width * height >= (1ll << 31) ||
            (long long)L.grid.x * L.block.x + width >= (1ll << 31) || (long long)L.grid.y * L.block.y + height >= (1ll << 31))
            throw std::runtime_error("conv2d_runtime: bad sizes");
        const float *in = P.get<float>("in", (size_t)width * height);
        const float *mask = P.get<float>("mask", (size_t)mw * mw);
        float *out = P.get<float>("out", (size_t)width * height, bench::Fill::Zero);
        const int m = (int)mw, w = (int)width, h = (int)height;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { conv2d_runtime<<<L.grid, L.block, L.smem, s>>>(in, mask, out, m, w, h); });
    });
}
