// tests/fixtures/heldout/pmpp_convolution.cu: the chapter-7 convolutions on floats (output
// clamped to [0, 1]). 1-D at mask_width taps, 2-D at mask_height x mask_width taps, the mask
// in global memory (conv*_basic) or in the fixture's __constant__ c_mask (121 floats), which
// each entry fills with cudaMemcpyToSymbol before returning the launch.
// Buffer sizes, from the kernels' indexing:
// - conv1d_basic: tests i < width and every tap: in, out of width floats, mask of mask_width.
// - conv1d_const: taps tested against width, but out[i] is stored for every thread of the
//   grid: out holds max(width, grid * block) floats (in too, for margin).
// - conv1d_tiled: in[i] and out[i] untested for every thread of the grid (halo taps tested):
//   in and out hold max(width, grid * block) floats; shared memory (block + 2 * (m / 2)) floats.
// - conv1d_tiled_cache: in[i], out[i] untested as above; shared memory block floats.
// - conv2d_*: row/col and every tap tested: in, out of height * width * channels floats;
//   conv2d_tiled's shared tile is blockDim.x * blockDim.y floats and needs block >= mask.
// Data: zeros for the input and the masks, as in the measurement (README: "the data are zeros
// (nothing depends on them)"; the benchmark's vectors were never filled).
#include "../../../tests/fixtures/heldout/pmpp_convolution.cu"
#include "bench.cuh"

static void set_const_mask(long long taps)
{
    if (taps <= 0 || taps > MAX_MASK_ELEMS)
        throw std::runtime_error("mask does not fit the 121-float constant mask");
    std::vector<float> zeros(MAX_MASK_ELEMS, 0.0f);
    BENCH_CHECK(cudaMemcpyToSymbol(c_mask, zeros.data(), sizeof(float) * MAX_MASK_ELEMS));
}

// Common checks of the 1-D rows: returns max(width, grid * block).
static size_t conv1d_extent(const bench::Launch &L, long long mw, long long width)
{
    if (mw <= 0 || width <= 0 || L.grid.y != 1 || L.grid.z != 1 || L.block.y != 1 || L.block.z != 1)
        throw std::runtime_error("conv1d rows need a 1-D launch, mask_width > 0, width > 0");
    size_t threads = L.threads();
    if (threads >= (1ULL << 31) || width >= (1LL << 31))
        throw std::runtime_error("conv1d rows need grid * block and width below 2^31 (int index)");
    return std::max<size_t>((size_t)width, threads);
}

static void conv2d_check(const bench::Launch &L, long long mh, long long mw, long long h, long long w, long long ch)
{
    if (mh <= 0 || mw <= 0 || h <= 0 || w <= 0 || ch <= 0 || h * w * ch >= (1LL << 31))
        throw std::runtime_error("conv2d rows need positive sizes and height * width * channels < 2^31");
    if (L.grid.z != 1 || L.block.z != 1)
        throw std::runtime_error("conv2d rows need a 2-D launch");
}

void register_kernels(bench::Registry &r)
{
    r.add("conv1d_basic", [](const bench::Launch &L, bench::Pool &P) {
        long long mw = L.args.i("mask_width"), width = L.args.i("width");
        size_t ext = conv1d_extent(L, mw, width);
        const float *in = P.get<float>("in", ext, bench::Fill::Zero);
        const float *mask = P.get<float>("mask", (size_t)mw, bench::Fill::Zero);
        float *out = P.get<float>("out", ext, bench::Fill::Zero);
        int m = (int)mw, n = (int)width;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { conv1d_basic<<<L.grid, L.block, L.smem, s>>>(in, mask, out, m, n); });
    });
    r.add("conv1d_const", [](const bench::Launch &L, bench::Pool &P) {
        long long mw = L.args.i("mask_width"), width = L.args.i("width");
        size_t ext = conv1d_extent(L, mw, width);
        set_const_mask(mw);
        const float *in = P.get<float>("in", ext, bench::Fill::Zero);
        float *out = P.get<float>("out", ext, bench::Fill::Zero);
        int m = (int)mw, n = (int)width;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { conv1d_const<<<L.grid, L.block, L.smem, s>>>(in, out, m, n); });
    });
    r.add("conv1d_tiled", [](const bench::Launch &L, bench::Pool &P) {
        long long mw = L.args.i("mask_width"), width = L.args.i("width");
        size_t ext = conv1d_extent(L, mw, width);
        set_const_mask(mw);
        if ((long long)L.block.x <= mw / 2 || L.smem < (L.block.x + 2 * (size_t)(mw / 2)) * sizeof(float))
            throw std::runtime_error("conv1d_tiled needs block > mask_width / 2 and (block + 2 * (m / 2)) floats of shared memory");
        const float *in = P.get<float>("in", ext, bench::Fill::Zero);
        float *out = P.get<float>("out", ext, bench::Fill::Zero);
        int m = (int)mw, n = (int)width;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { conv1d_tiled<<<L.grid, L.block, L.smem, s>>>(in, out, m, n); });
    });
    r.add("conv1d_tiled_cache", [](const bench::Launch &L, bench::Pool &P) {
        long long mw = L.args.i("mask_width"), width = L.args.i("width");
        size_t ext = conv1d_extent(L, mw, width);
        set_const_mask(mw);
        if (L.smem < L.block.x * sizeof(float))
            throw std::runtime_error("conv1d_tiled_cache needs block floats of shared memory");
        const float *in = P.get<float>("in", ext, bench::Fill::Zero);
        float *out = P.get<float>("out", ext, bench::Fill::Zero);
        int m = (int)mw, n = (int)width;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { conv1d_tiled_cache<<<L.grid, L.block, L.smem, s>>>(in, out, m, n); });
    });
    r.add("conv2d_basic", [](const bench::Launch &L, bench::Pool &P) {
        long long mh = L.args.i("mask_height"), mw = L.args.i("mask_width"), h = L.args.i("height"),
                  w = L.args.i("width"), ch = L.args.i("channels", 1);
        conv2d_check(L, mh, mw, h, w, ch);
        size_t n = (size_t)h * w * ch;
        const float *in = P.get<float>("in", n, bench::Fill::Zero);
        const float *mask = P.get<float>("mask", (size_t)(mh * mw), bench::Fill::Zero);
        float *out = P.get<float>("out", n, bench::Fill::Zero);
        int a = (int)mh, b = (int)mw, hh = (int)h, ww = (int)w, cc = (int)ch;
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) {
            conv2d_basic<<<L.grid, L.block, L.smem, s>>>(in, mask, out, a, b, hh, ww, cc);
        });
    });
    r.add("conv2d_const", [](const bench::Launch &L, bench::Pool &P) {
        long long mh = L.args.i("mask_height"), mw = L.args.i("mask_width"), h = L.args.i("height"),
                  w = L.args.i("width"), ch = L.args.i("channels", 1);
        conv2d_check(L, mh, mw, h, w, ch);
        set_const_mask(mh * mw);
        size_t n = (size_t)h * w * ch;
        const float *in = P.get<float>("in", n, bench::Fill::Zero);
        float *out = P.get<float>("out", n, bench::Fill::Zero);
        int a = (int)mh, b = (int)mw, hh = (int)h, ww = (int)w, cc = (int)ch;
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) {
            conv2d_const<<<L.grid, L.block, L.smem, s>>>(in, out, a, b, hh, ww, cc);
        });
    });
    r.add("conv2d_tiled", [](const bench::Launch &L, bench::Pool &P) {
        long long mh = L.args.i("mask_height"), mw = L.args.i("mask_width"), h = L.args.i("height"),
                  w = L.args.i("width"), ch = L.args.i("channels", 1);
        conv2d_check(L, mh, mw, h, w, ch);
        set_const_mask(mh * mw);
        if ((long long)L.block.x < mw || (long long)L.block.y < mh)
            throw std::runtime_error("conv2d_tiled needs a block at least as large as the mask");
        if (L.smem < (size_t)L.block.x * L.block.y * sizeof(float))
            throw std::runtime_error("conv2d_tiled needs blockDim.x * blockDim.y floats of shared memory");
        size_t n = (size_t)h * w * ch;
        const float *in = P.get<float>("in", n, bench::Fill::Zero);
        float *out = P.get<float>("out", n, bench::Fill::Zero);
        int a = (int)mh, b = (int)mw, hh = (int)h, ww = (int)w, cc = (int)ch;
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) {
            conv2d_tiled<<<L.grid, L.block, L.smem, s>>>(in, out, a, b, hh, ww, cc);
        });
    });
}
