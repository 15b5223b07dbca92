// tests/fixtures/heldout/sgemm_worklog.cu: the first six kernels of S. Boehm's SGEMM worklog,
// C = A*B for row-major N x N floats with N = 4096 fixed by the source's `#define N` (the
// size the README's times are for; the rows give no argument). No bounds checks in the
// kernels: the entry requires each kernel's exact launch (block size, and a grid of N / tile
// blocks per dimension, tile 32, 32, 32, 64, 128, 128), so every index is below N*N (int
// indices, 4096^2 < 2^31). A, B and C are N*N floats. Data: random floats in [0, 1) (the
// worklog fills its matrices with random values).
#define main fixture_main
#include "../../../tests/fixtures/heldout/sgemm_worklog.cu"
#undef main
#include "bench.cuh"

static constexpr int kDim = N;  // the source's N

// bx, by: the block; tile: C elements per block edge (grid = kDim / tile in x and y).
template <void (*K)(const float *, const float *, float *), unsigned bx, unsigned by, int tile> static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        if (L.block.x != bx || L.block.y != by || L.block.z != 1)
            throw std::runtime_error("block shape differs from the one the kernel is written for");
        if (L.grid.x * tile != (unsigned)kDim || L.grid.y * tile != (unsigned)kDim || L.grid.z != 1)
            throw std::runtime_error("grid must be N / tile blocks in x and y (no bounds checks)");
        size_t cnt = (size_t)kDim * kDim;
        const float *A = P.get<float>("A", cnt), *B = P.get<float>("B", cnt);
        float *C = P.get<float>("C", cnt, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(A, B, C); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("sgemm_naive", entry<sgemm_naive, 32, 32, 32>());
    r.add("sgemm_coalesced", entry<sgemm_coalesced, 1024, 1, 32>());
    r.add("sgemm_shared", entry<sgemm_shared, 1024, 1, 32>());
    r.add("sgemm_1d_tiling", entry<sgemm_1d_tiling, 512, 1, BM4>());
    r.add("sgemm_2d_tiling", entry<sgemm_2d_tiling, 256, 1, BM5>());
    r.add("sgemm_vectorized", entry<sgemm_vectorized, 256, 1, BM5>());
}
