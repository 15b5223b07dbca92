// tests/fixtures/heldout/pmpp_histogram.cu: nbins 32-bit counters, one atomicAdd per 32-bit
// input element (hist_global_u32: on the global counters; hist_shared_u32: on a per-block
// copy in dynamic shared memory, merged with one global atomicAdd per counter).
// Buffers: in holds n elements (both kernels test i < n), bins nbins counters (loops test
// b < nbins). Every input value must be < nbins (it indexes the counters).
// Data: all zeros, as measured: the benchmark's input was a freshly constructed, never filled
// device vector, so every element hits bin 0 and the atomics of a launch range over 4 bytes
// (the rows' footprint=4; tests/fixtures/heldout/README.md). The counters are zeroed before
// each timed launch (outside the timed region; hist_global_u32 also clears them itself).
#include "../../../tests/fixtures/heldout/pmpp_histogram.cu"
#include "bench.cuh"

template <void (*K)(const unsigned *, unsigned *, unsigned, unsigned), bool Shared> static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long n = L.args.i("n"), nbins = L.args.i("nbins");
        if (n <= 0 || nbins <= 0 || n >= (1LL << 32) || L.threads() >= (1ULL << 32))
            throw std::runtime_error("histogram rows need 0 < n < 2^32, nbins > 0 and under 2^32 threads");
        if (Shared && L.smem < (size_t)nbins * sizeof(unsigned))
            throw std::runtime_error("hist_shared_u32 needs nbins * 4 bytes of dynamic shared memory");
        const unsigned *in = P.get<unsigned>("in", (size_t)n, bench::Fill::Zero);  // all in bin 0
        unsigned *bins = P.get<unsigned>("bins", (size_t)nbins, bench::Fill::Zero);
        P.zero_before_launch("bins");
        unsigned nu = (unsigned)n, bu = (unsigned)nbins;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(in, bins, nu, bu); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("hist_global_u32", entry<hist_global_u32, false>());
    r.add("hist_shared_u32", entry<hist_shared_u32, true>());
}
