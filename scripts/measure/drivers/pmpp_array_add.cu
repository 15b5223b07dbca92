// tests/fixtures/heldout/pmpp_array_add.cu: c = a + b over a rows x cols row-major array, one
// element per thread on a 2-D grid; "coalesced" kernels put threadIdx.x along a row, "not
// coalesced" ones down a column. Both test row < rows and col < cols, so every access is at
// row * cols + col < rows * cols: each buffer holds rows * cols elements of the kernel's type.
// Data: random (floats uniform in [0, 1), integers random bits); the published benchmark
// (R100001's array_add, see tests/fixtures/heldout/README.md) adds two filled arrays and
// nothing in the timing depends on the values.
#include "../../../tests/fixtures/heldout/pmpp_array_add.cu"
#include "bench.cuh"

template <typename T, void (*K)(T *, T *, T *, int, int)> static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long cols = L.args.i("cols"), rows = L.args.i("rows");
        if (cols <= 0 || rows <= 0 || cols * rows >= (1LL << 31))
            throw std::runtime_error("array_add rows need 0 < rows * cols < 2^31 (int index)");
        size_t n = (size_t)cols * rows;
        T *a = P.get<T>("a", n), *b = P.get<T>("b", n);
        T *c = P.get<T>("c", n, bench::Fill::Zero);
        int ci = (int)cols, ri = (int)rows;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(a, b, c, ci, ri); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("add_coalesced_f32", entry<float, add_coalesced_f32>());
    r.add("add_not_coalesced_f32", entry<float, add_not_coalesced_f32>());
    r.add("add_coalesced_u8", entry<unsigned char, add_coalesced_u8>());
    r.add("add_coalesced_u16", entry<unsigned short, add_coalesced_u16>());
    r.add("add_coalesced_u32", entry<unsigned int, add_coalesced_u32>());
    r.add("add_coalesced_u64", entry<unsigned long long, add_coalesced_u64>());
    r.add("add_not_coalesced_u8", entry<unsigned char, add_not_coalesced_u8>());
    r.add("add_not_coalesced_u16", entry<unsigned short, add_not_coalesced_u16>());
    r.add("add_not_coalesced_u32", entry<unsigned int, add_not_coalesced_u32>());
    r.add("add_not_coalesced_u64", entry<unsigned long long, add_not_coalesced_u64>());
}
