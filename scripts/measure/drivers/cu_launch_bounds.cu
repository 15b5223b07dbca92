// tests/fixtures/cu/launch_bounds.cu: y[i] = degree-15 polynomial of x[i] (float4, Horner)
// for i < n float4s, under four register-limit annotations. Launch limits: poly_maxthreads
// block <= 1024, poly_minblocks block <= 128 (__launch_bounds__(128, 8)). Grid =
// ceil(n / block) as launch_poly computes. Buffers: coef 16 floats, x and y n float4 each
// (every access is below n).
// Data: uniform floats in [0, 1) (the fixture gives none).
#include "../../../tests/fixtures/cu/launch_bounds.cu"
#include "bench.cuh"

template <void (*K)(const float *, const float4 *, float4 *, int), unsigned MaxBlock> static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.args.i("n");
        if (n < 1 || n + (long long)L.threads() >= (1ll << 31))
            throw std::runtime_error("n and the thread count must fit in an int");
        if (L.block.x * L.block.y * L.block.z > MaxBlock)
            throw std::runtime_error("block larger than the kernel's __launch_bounds__");
        const float *coef = P.get<float>("coef", DEGREE + 1);
        const float4 *x = reinterpret_cast<const float4 *>(P.get<float>("x", 4 * (size_t)n));
        float4 *y = reinterpret_cast<float4 *>(P.get<float>("y", 4 * (size_t)n, bench::Fill::Zero));
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(coef, x, y, (int)n); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("poly_unbounded", entry<poly_unbounded, 1024>());
    r.add("poly_maxthreads", entry<poly_maxthreads, 1024>());
    r.add("poly_minblocks", entry<poly_minblocks, 128>());
    r.add("poly_maxnreg", entry<poly_maxnreg, 1024>());
}
