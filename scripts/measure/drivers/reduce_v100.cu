// tests/fixtures/heldout/reduce_v100.cu: M. Harris's eight float sums as the V100 study ran
// them: 2^25 random floats, 256-thread blocks (the BLOCK of the fixture, which sizes every
// shared array), each block storing its sum to out[blockIdx.x].
//
// Buffers: the first six kernels take no n; they read blockIdx.x * blockDim.x * k + t
// (k = 1 for the first three, 2 for first_add, warp_tail and unrolled, which also read one
// block further), so the input must hold grid.x * 256 * k floats. grid_stride and shuffle
// read in[i] and in[i + 256] for i < n. The input is one slot of max(2^25, what the row
// reads) + 512 floats (the 512 cover the second read past n), the same size for every row
// here, so it is filled once. Output: grid.x floats.
//
// bench.cuh first: the fixture's BLOCK macro then cannot reach the standard headers.
#include "bench.cuh"
#include "../../../tests/fixtures/heldout/reduce_v100.cu"

namespace {

using Launcher = std::function<void(cudaStream_t)>;

void need(bool ok, const char *what)
{
    if (!ok)
        throw std::runtime_error(std::string("reduce_v100: ") + what);
}

void check_launch(const bench::Launch &L)
{
    need(L.block.x == BLOCK && L.block.y == 1 && L.block.z == 1,
         "these kernels need 1-D blocks of BLOCK = 256 threads (shared arrays and trees are sized by it)");
    need(L.grid.y == 1 && L.grid.z == 1, "1-D grid only");
}

const size_t kBase = (size_t)1 << 25;  // 2^25 floats, as measured

// Per-block kernels without n: `per_block` elements read per block.
template <void (*K)(const float *, float *), unsigned PerThread> bench::Prepare fixed()
{
    return [](const bench::Launch &L, bench::Pool &P) -> Launcher {
        check_launch(L);
        size_t reads = (size_t)L.grid.x * BLOCK * PerThread;
        need(reads < ((size_t)1 << 32), "unsigned index would overflow");
        const float *in = P.get<float>("in", std::max(kBase, reads) + 2 * BLOCK);
        float *out = P.get<float>("out", L.grid.x, bench::Fill::Zero);
        dim3 g = L.grid, bl = L.block;
        size_t sm = L.smem;
        return [=](cudaStream_t s) { K<<<g, bl, sm, s>>>(in, out); };
    };
}

// Grid-stride kernels: in[i] and in[i + 256] for i < n.
template <void (*K)(const float *, float *, unsigned)> bench::Prepare strided()
{
    return [](const bench::Launch &L, bench::Pool &P) -> Launcher {
        check_launch(L);
        long long n = L.args.i("n");
        need(n > 0, "n must be positive");
        // i + 2 * 256 * gridDim.x must not wrap around in unsigned arithmetic.
        need((unsigned long long)n + 2ULL * BLOCK * L.grid.x < (1ULL << 32), "unsigned index would overflow");
        const float *in = P.get<float>("in", std::max(kBase, (size_t)n) + 2 * BLOCK);
        float *out = P.get<float>("out", L.grid.x, bench::Fill::Zero);
        unsigned nn = (unsigned)n;
        dim3 g = L.grid, bl = L.block;
        size_t sm = L.smem;
        return [=](cudaStream_t s) { K<<<g, bl, sm, s>>>(in, out, nn); };
    };
}

}  // namespace

void register_kernels(bench::Registry &r)
{
    r.add("interleaved_divergent", fixed<interleaved_divergent, 1>());
    r.add("interleaved_strided", fixed<interleaved_strided, 1>());
    r.add("sequential", fixed<sequential, 1>());
    r.add("first_add", fixed<first_add, 2>());
    r.add("warp_tail", fixed<warp_tail, 2>());
    r.add("unrolled", fixed<unrolled, 2>());
    r.add("grid_stride", strided<grid_stride>());
    r.add("shuffle", strided<shuffle>());
}
