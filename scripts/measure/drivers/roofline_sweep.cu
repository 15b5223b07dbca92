// tests/fixtures/heldout/roofline_sweep.cu: the gpu-roofline sweep, each thread reading M =
// 4000 floats of a and b (256 apart) and running N dependent multiply-subtracts per element
// (N from the row's defines). Array size as the measurement (roofline-sweep.csv: time =
// 2 x blocks x 256 x 4000 x 4 B): a and b hold grid.x * 256 * 4000 floats each, which is
// exactly what the kernel reads (block b reads [b*256*4000, (b+1)*256*4000)); c one float per
// block. The kernel assumes 256 threads per block (BS) and indexes with unsigned 32-bit
// products: the entry checks block.x == 256 and grid.x * 256 * 4000 < 2^32. Data: random
// floats in [0, 1) (u = u*x - y then stays bounded).
#define main fixture_main
#include "../../../tests/fixtures/heldout/roofline_sweep.cu"
#undef main
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("sweep", [](const bench::Launch &L, bench::Pool &P) {
        if (L.block.x != BS || L.block.y != 1 || L.block.z != 1 || L.grid.y != 1 || L.grid.z != 1)
            throw std::runtime_error("sweep needs a 1-D launch of 256 threads per block");
        size_t elems = (size_t)L.grid.x * BS * M;
        if (elems >= (1ull << 32))
            throw std::runtime_error("grid too large for the kernel's 32-bit offsets");
        const float *a = P.get<float>("a", elems), *b = P.get<float>("b", elems);
        float *c = P.get<float>("c", L.grid.x, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) { sweep<<<L.grid, L.block, L.smem, s>>>(a, b, c); });
    });
}
