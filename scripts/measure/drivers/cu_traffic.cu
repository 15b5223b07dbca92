// tests/fixtures/cu/traffic.cu: kernels with hand-countable traffic.
// stencil3/stencil5: out[i] from in[i-1..i+1] / in[i-2..i+2] for interior i (guarded by
//   i < n - 1 / n - 2, i >= 1 / 2 by construction): in, out = n doubles, in random in [0, 1).
// transpose_plain: out[x * n + y] = in[y * n + x], guarded by x, y < n: in, out = n * n floats.
// atomic_counter: every thread with i < n adds 1 to counter[0]; atomic_bins8: to
//   bins[threadIdx.x % 8]. Counters: 8 words, zeroed before each launch.
#include "bench.cuh"
#include "../../../tests/fixtures/cu/traffic.cu"

static void check_1d(const bench::Launch &L, long long n)
{
    if (L.block.y != 1 || L.block.z != 1 || L.grid.y != 1 || L.grid.z != 1 || n <= 0 ||
        n + (long long)L.threads() >= (1LL << 31))
        throw std::runtime_error("1-D rows need n > 0 and n + threads < 2^31");
}

template <void (*K)(const double *, double *, int)> static bench::Prepare stencil()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long n = L.args.i("n");
        check_1d(L, n);
        const double *in = P.get<double>("in", (size_t)n);
        double *out = P.get<double>("out", (size_t)n, bench::Fill::Zero);
        int ni = (int)n;
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(in, out, ni); });
    };
}

template <void (*K)(unsigned *, int)> static bench::Prepare atomic()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long n = L.args.i("n");
        check_1d(L, n);
        unsigned *c = P.get<unsigned>("counter", 8, bench::Fill::Zero);
        P.zero_before_launch("counter");
        int ni = (int)n;
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(c, ni); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("stencil3", stencil<stencil3>());
    r.add("stencil5", stencil<stencil5>());
    r.add("atomic_counter", atomic<atomic_counter>());
    r.add("atomic_bins8", atomic<atomic_bins8>());
    r.add("transpose_plain", [](const bench::Launch &L, bench::Pool &P) {
        long long n = L.args.i("n");
        if (n <= 0 || n * n >= (1LL << 31) || L.grid.z != 1 || L.block.z != 1)
            throw std::runtime_error("transpose_plain rows need 0 < n * n < 2^31, 2-D launches");
        const float *in = P.get<float>("in_f", (size_t)(n * n));
        float *out = P.get<float>("out_f", (size_t)(n * n), bench::Fill::Zero);
        int ni = (int)n;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { transpose_plain<<<L.grid, L.block, L.smem, s>>>(out, in, ni); });
    });
}
