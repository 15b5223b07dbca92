// tests/fixtures/heldout/gemm_wmma_steps_rtx3050.cu: Pupking's three WMMA steps, C = A*B with
// A, B row-major n x n halves and C n x n floats; no bounds checks in the kernels. The entry
// checks the block shape each kernel is written for, n a multiple of its k-tile (16, 64, 32;
// also keeps the 4- and 16-byte copies and the 32-byte WMMA pointers aligned), and that the
// grid covers at most n x n of C (wmma_naive: 16 columns and 4 x 16 rows per block; the
// other two: 64 columns and 128 rows), so every index stays below n*n (int indices; n*n <
// 2^31 checked). Data: A and B uniform in [-1, 1], filled by a small kernel below (the
// repository fills its inputs with random values); C zero-filled.
#define main fixture_main
#include "../../../tests/fixtures/heldout/gemm_wmma_steps_rtx3050.cu"
#undef main
#include "bench.cuh"

// bx, by: block shape; cols, rows: C columns and rows per block; tile: n's required multiple.
template <void (*K)(const __half *, const __half *, float *, int), unsigned bx, unsigned by, int cols, int rows, int tile>
static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long nn = L.args.i("n");
        if (nn <= 0 || nn > 32768 || nn % tile || nn % 16)
            throw std::runtime_error("n must be a positive multiple of the kernel's k-tile, at most 32768");
        if (L.block.x != bx || L.block.y != by || L.block.z != 1)
            throw std::runtime_error("block shape differs from the one the kernel is written for");
        if (L.grid.z != 1 || (long long)L.grid.x * cols > nn || (long long)L.grid.y * rows > nn)
            throw std::runtime_error("grid covers more than the n x n matrix (no bounds checks)");
        int n = (int)nn;
        size_t cnt = (size_t)n * n;
        const __half *a = bench::range_buffer<__half>(P, "a", cnt, -1.0f, 1.0f, 31), *b = bench::range_buffer<__half>(P, "b", cnt, -1.0f, 1.0f, 32);
        float *c = P.get<float>("c", cnt, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(a, b, c, n); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("wmma_naive", entry<wmma_naive, 32, 4, 16, 64, 16>());
    r.add("wmma_shared", entry<wmma_shared, THREADS, 1, BN, BM, 64>());
    r.add("wmma_cp_async", entry<wmma_cp_async, THREADS, 1, BN, BM, 32>());
}
