// tests/fixtures/cu/bitonic_sort.cu. bitonic_sort_shared sorts each 1024-key block in shared
// memory (block of exactly SORT_BLOCK = 1024 threads; n = grid * 1024 keys, no scalar
// parameter). bitonic_merge_global is one compare-and-swap step (stride j, direction bit k) of
// the global merge over n = grid * block keys; with n a power of two and 1 <= j < n every
// partner index i ^ j stays below n.
//
// Data: uniformly random 32-bit keys (the fixture leaves them uninitialised). Both kernels
// work in place, and a second launch on the same keys would find them ordered (the merge step
// would then store nothing), so every launch gets its own copy of the random keys: the buffer
// holds COPIES * n keys (the harness's warm-up plus at most 30 timed launches), the closure
// moves to the next copy on each call, and the whole buffer is refilled (same seed) for every
// row so that each row starts from the same unsorted data.
#define main fixture_main
#include "../../../tests/fixtures/cu/bitonic_sort.cu"
#undef main
#include "bench.cuh"
#include <memory>

static const size_t COPIES = 31;

__global__ void fill_keys(unsigned int *p, size_t n, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = bench::bench_hash(((uint64_t)seed << 40) ^ i);
}

static unsigned int *fresh_keys(bench::Pool &P, size_t n)
{
    unsigned int *keys = P.get<unsigned int>("keys", COPIES * n, bench::Fill::Zero);
    fill_keys<<<4096, 256>>>(keys, COPIES * n, 7);
    BENCH_CHECK(cudaGetLastError());
    BENCH_CHECK(cudaDeviceSynchronize());
    return keys;
}

void register_kernels(bench::Registry &r)
{
    r.add("bitonic_sort_shared", [](const bench::Launch &L, bench::Pool &P) {
        if (L.block.x != SORT_BLOCK || L.block.y != 1 || L.block.z != 1 || L.grid.y != 1 || L.grid.z != 1)
            throw std::runtime_error("bitonic_sort_shared needs block 1024 and a 1-D grid");
        const size_t n = (size_t)L.grid.x * SORT_BLOCK;  // keys[blockIdx.x * 1024 + tid]
        unsigned int *keys = fresh_keys(P, n);
        auto next = std::make_shared<size_t>(0);
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) {
            unsigned int *k = keys + (*next % COPIES) * n;
            ++*next;
            bitonic_sort_shared<<<L.grid, L.block, L.smem, s>>>(k);
        });
    });
    r.add("bitonic_merge_global", [](const bench::Launch &L, bench::Pool &P) {
        if (L.block.y != 1 || L.block.z != 1 || L.grid.y != 1 || L.grid.z != 1)
            throw std::runtime_error("bitonic_merge_global needs a 1-D launch");
        const size_t n = (size_t)L.grid.x * L.block.x;  // i < grid * block, i ^ j < n
        const long long j = L.args.i("j"), k = L.args.i("k");
        if (n == 0 || (n & (n - 1)) != 0 || n > (1ull << 31) || j < 1 || (size_t)j >= n || k < 1 ||
            k > (long long)n)
            throw std::runtime_error("bitonic_merge_global needs grid * block = n a power of two, 1 <= j < n, k <= n");
        unsigned int *keys = fresh_keys(P, n);
        auto next = std::make_shared<size_t>(0);
        const unsigned int jj = (unsigned int)j, kk = (unsigned int)k;
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) {
            unsigned int *p = keys + (*next % COPIES) * n;
            ++*next;
            bitonic_merge_global<<<L.grid, L.block, L.smem, s>>>(p, jj, kk);
        });
    });
}
