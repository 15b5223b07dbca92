// tests/fixtures/cu/branches.cu: seven one-element-per-thread streaming kernels with guards
// whose outcome is known (runtime flag, bounds, stencil edges, thread index, sentinel,
// remainder) and one data-dependent branch. Grid = ceil(n / block) except half_warp_guard
// (no n: it reads in[] at every thread, so in holds grid * block floats and out grid * 16)
// and remainder_guard (one float4 per thread: grid = ceil((n / 4) / block)).
//
// Buffers: n elements each (flag_guarded's out 2n, as the fixture allocates, for the flag
// path that writes out[i + n]; remainder_guard's tail 4 floats, enough for i < n % 4).
// Data: uniform floats/doubles in [0, 1) (so sentinel_read's value 1.2345 never occurs, as the
// fixture intends; flag is 0 as in the fixture's main). data_branch gets uniform floats in
// [-1, 1): the fixture says nothing about the data, and random signs make the branch go
// either way per lane (with [0, 1) it would always be taken).
#define main fixture_main
#include "../../../tests/fixtures/cu/branches.cu"
#undef main
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("flag_guarded", [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.int_count("n");
        const bool flag = L.args.i("flag", 0) != 0;
        if (flag && L.block.x * L.block.y * L.block.z > 256)
            throw std::runtime_error("flag_guarded with flag set indexes scratch[256] by threadIdx.x: block <= 256");
        const float *in = P.get<float>("in", n);
        float *out = P.get<float>("out2", 2 * (size_t)n, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { flag_guarded<<<L.grid, L.block, L.smem, s>>>(out, in, (int)n, flag); });
    });
    r.add("bounds_guard", [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.int_count("n");
        const float *in = P.get<float>("in", n);
        float *out = P.get<float>("out", n, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { bounds_guard<<<L.grid, L.block, L.smem, s>>>(out, in, (int)n); });
    });
    r.add("stencil3_guard", [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.int_count("n");  // reads in[i - 1 .. i + 1] for 1 <= i < n - 1
        const double *in = P.get<double>("din", n);
        double *out = P.get<double>("dout", n, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { stencil3_guard<<<L.grid, L.block, L.smem, s>>>(out, in, (int)n); });
    });
    r.add("half_warp_guard", [](const bench::Launch &L, bench::Pool &P) {
        if (L.grid.y != 1 || L.grid.z != 1 || L.block.y != 1 || L.block.z != 1)
            throw std::runtime_error("half_warp_guard needs a 1-D launch");
        const size_t threads = L.threads();
        if (threads >= (1ull << 31))
            throw std::runtime_error("thread count must fit in an int");
        // in[blockIdx.x * blockDim.x + threadIdx.x] for threadIdx.x < 16; out[blockIdx.x * 16 + threadIdx.x].
        const float *in = P.get<float>("in", threads);
        float *out = P.get<float>("out", (size_t)L.grid.x * 16, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { half_warp_guard<<<L.grid, L.block, L.smem, s>>>(out, in); });
    });
    r.add("sentinel_read", [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.int_count("n");
        const double *in = P.get<double>("din", n);  // [0, 1): never 1.2345, out is never written
        double *out = P.get<double>("dout", n, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { sentinel_read<<<L.grid, L.block, L.smem, s>>>(out, in, (int)n); });
    });
    r.add("remainder_guard", [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.int_count("n");
        const size_t vec = (size_t)n / 4;  // out[i], in[i] for i < n / 4
        const float4 *in = reinterpret_cast<const float4 *>(P.get<float>("in", 4 * vec + 4));
        float4 *out = reinterpret_cast<float4 *>(P.get<float>("out", 4 * vec + 4, bench::Fill::Zero));
        float *tail = P.get<float>("tail", 4, bench::Fill::Zero);  // tail[i] for i < n % 4
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { remainder_guard<<<L.grid, L.block, L.smem, s>>>(out, in, tail, (int)n); });
    });
    r.add("data_branch", [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.int_count("n");
        float *in = bench::range_buffer<float>(P, "signed_in", n, -1.0f, 1.0f, 11);
        float *out = P.get<float>("out", n, bench::Fill::Zero);
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { data_branch<<<L.grid, L.block, L.smem, s>>>(out, in, (int)n); });
    });
}
