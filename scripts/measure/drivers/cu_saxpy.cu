// tests/fixtures/cu/saxpy.cu: y = a*x + y over n floats (saxpy) or doubles (daxpy), guarded by
// i < n. Buffers: x and y = n random values in [0, 1); y is updated in place across the timed
// launches (it grows by about a per launch, harmless). `a` comes from the row (default 2, as
// the fixture's main()).
#include "bench.cuh"
#define main fixture_main
#include "../../../tests/fixtures/cu/saxpy.cu"
#undef main

template <typename T, void (*K)(int, T, const T *, T *)> static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long n = L.args.i("n");
        T a = (T)L.args.f("a", 2.0);
        if (n <= 0 || n >= (1LL << 31) - 1024)
            throw std::runtime_error("axpy rows need 0 < n < 2^31");
        const T *x = P.get<T>("x", (size_t)n);
        T *y = P.get<T>("y", (size_t)n);
        int ni = (int)n;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(ni, a, x, y); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("saxpy", entry<float, saxpy>());
    r.add("daxpy", entry<double, daxpy>());
}
