// tests/fixtures/heldout/pmpp_grayscale.cu: an interleaved 8-bit RGB image (3 bytes a pixel)
// to one gray byte a pixel, one pixel per thread on a 2-D grid. The kernel tests
// x < width and y < height, so it reads rgb[0 .. 3 * width * height) and writes
// gray[0 .. width * height): the buffers have exactly those sizes. Data: random bytes (an
// image's values do not change the timing; the benchmark's values are not stated).
#include "../../../tests/fixtures/heldout/pmpp_grayscale.cu"
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("rgb_to_gray", [](const bench::Launch &L, bench::Pool &P) {
        long long w = L.args.i("width"), h = L.args.i("height");
        if (w <= 0 || h <= 0 || 3 * w * h >= (1LL << 31))
            throw std::runtime_error("rgb_to_gray rows need 0 < 3 * width * height < 2^31 (int index)");
        size_t px = (size_t)w * h;
        unsigned char *rgb = P.get<unsigned char>("rgb", 3 * px, bench::Fill::Bytes);
        unsigned char *gray = P.get<unsigned char>("gray", px, bench::Fill::Zero);
        int wi = (int)w, hi = (int)h;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { rgb_to_gray<<<L.grid, L.block, L.smem, s>>>(rgb, gray, wi, hi); });
    });
}
