// tests/fixtures/cu/divergent.cu: four one-element-per-thread kernels (each returns for
// i >= n): lane-parity branches with sinf/cosf vs sqrtf, a Collatz step count, a switch on
// the lane, a block-uniform branch. Buffers: n elements each; grid = ceil(n / block) as the
// fixture's main computes.
// Data: uniform floats in [0, 1) and random 32-bit ints (the fixture gives none). Collatz
// start values are uniform in [0, 2^17): for every start below 2^17 the sequence stays below
// 2.49e9 < 2^32 (checked exhaustively on the host: no wrap-around, so every thread ends, after
// at most 353 steps, 110 on average); random 32-bit starts could wrap and never reach 1.
#define main fixture_main
#include "../../../tests/fixtures/cu/divergent.cu"
#undef main
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("divergent_parity", [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.int_count("n");
        const float *in = P.get<float>("fin", n);
        float *out = P.get<float>("fout", n, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { divergent_parity<<<L.grid, L.block, L.smem, s>>>(in, out, (int)n); });
    });
    r.add("collatz_steps", [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.int_count("n");
        const unsigned int *start = P.get<unsigned int>("start", n, bench::Fill::SmallInt, 1u << 17);
        unsigned int *steps = P.get<unsigned int>("steps", n, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { collatz_steps<<<L.grid, L.block, L.smem, s>>>(start, steps, (int)n); });
    });
    r.add("divergent_switch", [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.int_count("n");
        const int *in = P.get<int>("iin", n);
        int *out = P.get<int>("iout", n, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { divergent_switch<<<L.grid, L.block, L.smem, s>>>(in, out, (int)n); });
    });
    r.add("uniform_branch", [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.int_count("n");
        const float *in = P.get<float>("fin", n);
        float *out = P.get<float>("fout", n, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { uniform_branch<<<L.grid, L.block, L.smem, s>>>(in, out, (int)n); });
    });
}
