// tests/fixtures/cu/scan.cu: first and third stages of a two-level Blelloch exclusive scan.
// scan_blelloch: each block scans a tile of 2 * blockDim.x floats in dynamic shared memory
// (the row's dynamic_smem must be at least 2 * blockDim.x * 4 bytes; blockDim.x a power of
// two), writes the tile's total to block_sums[blockIdx.x]; in/out accesses are guarded by
// < n. scan_add_block_sums: adds block_sums[blockIdx.x] to a 2 * blockDim.x tile of out.
// Buffers: in = n random floats in [0, 1), out = n floats, block_sums = max(grid.x, tiles)
// floats (random, as a scanned block-sum array would be). Grid = ceil(n / (2 * block)), as
// launch_scan computes.
#include "bench.cuh"
#include "../../../tests/fixtures/cu/scan.cu"

static void check(const bench::Launch &L, long long n)
{
    unsigned b = L.block.x;
    if (L.block.y != 1 || L.block.z != 1 || L.grid.y != 1 || L.grid.z != 1 || b == 0 || (b & (b - 1)) ||
        n <= 0 || n + 2LL * L.threads() >= (1LL << 31))
        throw std::runtime_error("scan rows need 1-D launches, a power-of-two block and n + 2 * threads < 2^31");
}

void register_kernels(bench::Registry &r)
{
    r.add("scan_blelloch", [](const bench::Launch &L, bench::Pool &P) {
        long long n = L.args.i("n");
        check(L, n);
        if (L.smem < 2 * (size_t)L.block.x * sizeof(float))
            throw std::runtime_error("scan_blelloch needs dynamic_smem >= 2 * block * 4");
        const float *in = P.get<float>("in", (size_t)n);
        float *out = P.get<float>("out", (size_t)n, bench::Fill::Zero);
        float *sums = P.get<float>("block_sums", L.grid.x, bench::Fill::Zero);
        int ni = (int)n;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { scan_blelloch<<<L.grid, L.block, L.smem, s>>>(in, out, sums, ni); });
    });
    r.add("scan_add_block_sums", [](const bench::Launch &L, bench::Pool &P) {
        long long n = L.args.i("n");
        check(L, n);
        float *out = P.get<float>("out", (size_t)n);
        const float *sums = P.get<float>("block_sums", L.grid.x);
        int ni = (int)n;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { scan_add_block_sums<<<L.grid, L.block, L.smem, s>>>(out, sums, ni); });
    });
}
