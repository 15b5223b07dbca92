// tests/fixtures/cu/histogram.cu: 256-bin histogram of n bytes, grid-stride loop, with global
// atomics (histogram_global) or per-block shared-memory bins merged with 256 global atomics
// (histogram_shared). launch_histogram uses 240 blocks of 256 threads. Buffers: n bytes of
// data, 256 bins (indexed by a byte value, so always in bounds), zeroed before every launch.
// Data: uniformly random bytes (every byte independent), the usual histogram benchmark input.
#define main fixture_main
#include "../../../tests/fixtures/cu/histogram.cu"
#undef main
#include "bench.cuh"

template <void (*K)(const unsigned char *, unsigned int *, int)> static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.args.i("n");
        if (n < 1 || n + 2 * (long long)L.threads() >= (1ll << 31))
            throw std::runtime_error("n and the thread count must fit in an int");
        const unsigned char *data = P.get<unsigned char>("data", n, bench::Fill::Bytes);
        unsigned int *bins = P.get<unsigned int>("bins", NUM_BINS, bench::Fill::Zero);
        P.zero_before_launch("bins");
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(data, bins, (int)n); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("histogram_global", entry<histogram_global>());
    r.add("histogram_shared", entry<histogram_shared>());
}
