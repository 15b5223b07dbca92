// tests/fixtures/heldout/histogram_h100.cu: 256-bin histograms of n bytes (yencal's H100
// study): 2^30 uniformly random bytes as the study's README says, block 512, grid 4224.
//
// Buffers: n bytes of input (+ 16 spare; every read is tested against n, the 16-byte loads
// against n / 16, and cudaMalloc's alignment serves them); bins are bytes, so every atomic
// lands in the 256-int histogram, which is cleared before every timed launch. The loop
// indices are ints: n plus the grid's thread count must fit in one.
//
// bench.cuh first: the fixture's BINS macro then cannot reach the standard headers.
#include "bench.cuh"
#include "../../../tests/fixtures/heldout/histogram_h100.cu"

namespace {

using Launcher = std::function<void(cudaStream_t)>;

template <void (*K)(const unsigned char *, int, int *)> bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) -> Launcher {
        long long n = L.args.i("n");
        if (n <= 0 || n + (long long)L.grid.x * L.grid.y * L.grid.z * L.block.x * L.block.y * L.block.z >= (1LL << 31))
            throw std::runtime_error("histogram_h100: n must be positive and n + threads must fit in an int");
        if (L.grid.y != 1 || L.grid.z != 1 || L.block.y != 1 || L.block.z != 1)
            throw std::runtime_error("histogram_h100: 1-D launches only");
        const unsigned char *in = P.get<unsigned char>("in", (size_t)n + 16, bench::Fill::Bytes);
        int *hist = P.get<int>("hist", BINS, bench::Fill::Zero);
        P.zero_before_launch("hist");
        int nn = (int)n;
        dim3 g = L.grid, bl = L.block;
        size_t sm = L.smem;
        return [=](cudaStream_t s) { K<<<g, bl, sm, s>>>(in, nn, hist); };
    };
}

}  // namespace

void register_kernels(bench::Registry &r)
{
    r.add("hist_global", entry<hist_global>());
    r.add("hist_shared", entry<hist_shared>());
    r.add("hist_shared_vec", entry<hist_shared_vec>());
}
