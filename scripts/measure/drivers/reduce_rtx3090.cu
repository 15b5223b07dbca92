// tests/fixtures/heldout/reduce_rtx3090.cu: the six float sums of the RTX 3090 study
// (2^25 random floats), each ending in atomicAdds into one float, which is cleared before
// every timed launch as the study's timing loop did (a 4-byte cudaMemset).
//
// Buffers: atomic_per_thread reads n4 float4 (tested against n4); the tree kernels read in[i]
// for i < n (tree_two_per_thread also in[i + blockDim.x]) and keep blockDim.x floats in
// dynamic shared memory, indexed up to blockDim.x - 1 for a power-of-two block (the warp
// tails read part[t + 32] for t < 32: at least 64 threads). The input is one slot of
// n (or 4 n4) + 2048 floats, covering the read one block past n; the rows' sizes are equal,
// so it is filled once. The kernels return before their barriers when i >= n: the driver
// asks for n a multiple of the elements per block so that no block is partial.
//
// bench.cuh first, for symmetry with the other held-out drivers (this fixture has no macros).
#include "bench.cuh"
#include "../../../tests/fixtures/heldout/reduce_rtx3090.cu"

namespace {

using Launcher = std::function<void(cudaStream_t)>;

void need(bool ok, const char *what)
{
    if (!ok)
        throw std::runtime_error(std::string("reduce_rtx3090: ") + what);
}

bool pow2(unsigned v) { return v && !(v & (v - 1)); }

const size_t kPad = 2048;  // floats past n: one block of up to 1024 threads, twice

template <void (*K)(float *, const float *, int), unsigned PerThread> bench::Prepare tree()
{
    return [](const bench::Launch &L, bench::Pool &P) -> Launcher {
        long long n = L.args.i("n");
        need(L.block.y == 1 && L.block.z == 1 && L.grid.y == 1 && L.grid.z == 1, "1-D launches only");
        need(pow2(L.block.x) && L.block.x >= 64 && L.block.x <= 1024, "block must be a power of two, 64 to 1024");
        need(L.smem >= (size_t)L.block.x * sizeof(float), "dynamic shared memory must hold blockDim.x floats");
        need(n > 0 && n % ((long long)L.block.x * PerThread) == 0, "n must be a multiple of the elements per block");
        need((long long)L.grid.x * L.block.x * PerThread < (1LL << 31), "int index would overflow");
        const float *in = P.get<float>("in", (size_t)n + kPad);
        float *out = P.get<float>("out", 1, bench::Fill::Zero);
        P.zero_before_launch("out");
        int nn = (int)n;
        dim3 g = L.grid, bl = L.block;
        size_t sm = L.smem;
        return [=](cudaStream_t s) { K<<<g, bl, sm, s>>>(out, in, nn); };
    };
}

}  // namespace

void register_kernels(bench::Registry &r)
{
    r.add("atomic_per_thread", [](const bench::Launch &L, bench::Pool &P) -> Launcher {
        long long n4 = L.args.i("n4");
        need(n4 > 0, "n4 must be positive");
        need(L.block.y == 1 && L.block.z == 1 && L.grid.y == 1 && L.grid.z == 1, "1-D launches only");
        need((long long)L.grid.x * L.block.x < (1LL << 31), "int index would overflow");
        // Same slot and size as the tree kernels' 2^25 floats (cudaMalloc is 256-byte aligned).
        const float4 *in = reinterpret_cast<const float4 *>(P.get<float>("in", (size_t)n4 * 4 + kPad));
        float *out = P.get<float>("out", 1, bench::Fill::Zero);
        P.zero_before_launch("out");
        int nn = (int)n4;
        dim3 g = L.grid, bl = L.block;
        size_t sm = L.smem;
        return [=](cudaStream_t s) { atomic_per_thread<<<g, bl, sm, s>>>(out, in, nn); };
    });
    r.add("tree_divergent", tree<tree_divergent, 1>());
    r.add("tree_strided", tree<tree_strided, 1>());
    r.add("tree_sequential", tree<tree_sequential, 1>());
    r.add("tree_warp_tail", tree<tree_warp_tail, 1>());
    r.add("tree_two_per_thread", tree<tree_two_per_thread, 2>());
}
