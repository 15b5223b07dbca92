// tests/fixtures/cu/black_scholes.cu: Black-Scholes call and put prices of opt_n options,
// grid-stride loop (any grid is safe). Five buffers of opt_n floats.
//
// Data as in the CUDA SDK BlackScholes sample the kernel follows: stock price uniform in
// [5, 30), strike in [1, 100), years in [0.25, 10); riskfree 0.02 and volatility 0.30 as in
// the fixture's main() (defaults when a row does not give them).
#define main fixture_main
#include "../../../tests/fixtures/cu/black_scholes.cu"
#undef main
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("black_scholes", [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.args.i("opt_n");
        if (n < 1 || n + (long long)L.threads() >= (1ll << 31))
            throw std::runtime_error("opt_n plus the thread count must fit in an int");
        const float riskfree = (float)L.args.f("riskfree", 0.02), volatility = (float)L.args.f("volatility", 0.30);
        float *call = P.get<float>("call", n, bench::Fill::Zero), *put = P.get<float>("put", n, bench::Fill::Zero);
        float *price = bench::range_buffer<float>(P, "price", n, 5.0f, 30.0f, 1);
        float *strike = bench::range_buffer<float>(P, "strike", n, 1.0f, 100.0f, 2);
        float *years = bench::range_buffer<float>(P, "years", n, 0.25f, 10.0f, 3);
        const int opt_n = (int)n;
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) {
            black_scholes<<<L.grid, L.block, L.smem, s>>>(call, put, price, strike, years, riskfree, volatility, opt_n);
        });
    });
}
