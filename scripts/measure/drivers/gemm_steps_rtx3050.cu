// tests/fixtures/heldout/gemm_steps_rtx3050.cu: Pupking's six FP32 GEMM steps, C = A*B,
// row-major n x n floats, no bounds checks in the kernels. Each kernel's block shape is fixed
// by its code (it indexes with 16 columns of threads and a fixed thread count per tile), and
// the grid must not cover more than n x n: the entry checks the block exactly, n a multiple
// of the kernel's tile, and grid * (C elements per block edge) <= n, so every index stays
// below n*n (A, B and C are n*n floats; int indices, n*n < 2^31 checked). Data: random
// floats in [0, 1) (the repository fills its inputs with random values).
#define main fixture_main
#include "../../../tests/fixtures/heldout/gemm_steps_rtx3050.cu"
#undef main
#include "bench.cuh"

// bx, by: the block shape the kernel assumes; edge: C elements per block edge; tile: the
// k-tile n must be a multiple of.
template <void (*K)(const float *, const float *, float *, int), unsigned bx, unsigned by, int edge, int tile>
static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long nn = L.args.i("n");
        if (nn <= 0 || nn > 32768 || nn % tile || nn % edge)
            throw std::runtime_error("n must be a positive multiple of the kernel's tiles, at most 32768");
        if (L.block.x != bx || L.block.y != by || L.block.z != 1)
            throw std::runtime_error("block shape differs from the one the kernel is written for");
        if (L.grid.z != 1 || (long long)L.grid.x * edge > nn || (long long)L.grid.y * edge > nn)
            throw std::runtime_error("grid covers more than the n x n matrix (no bounds checks)");
        int n = (int)nn;
        size_t cnt = (size_t)n * n;
        const float *a = P.get<float>("a", cnt), *b = P.get<float>("b", cnt);
        float *c = P.get<float>("c", cnt, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(a, b, c, n); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("gemm_naive", entry<gemm_naive, 16, 16, 16, 1>());
    r.add("gemm_t32_2x2", entry<gemm_t32_2x2, 16, 16, 32, 32>());
    r.add("gemm_t32_8x2", entry<gemm_t32_8x2, 16, 4, 32, 32>());
    // A block covers 2 x 2 tiles of 64: 128 C elements per block edge.
    r.add("gemm_t64_16x4", entry<gemm_t64_16x4, 16, 4, 128, 64>());
    r.add("gemm_t64_8x4", entry<gemm_t64_8x4, 16, 8, 128, 64>());
    r.add("gemm_t64_8x4_vec", entry<gemm_t64_8x4_vec, 16, 8, 128, 64>());
}
