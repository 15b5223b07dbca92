// tests/fixtures/heldout/flash_minimal_t4.cu: tspeterkim's minimal flash-attention forward,
// one block per (batch, head) = (grid.x, grid.y), one thread per row of a tile. Buffers:
// q, k, v, o are batch*heads*n*d floats, l and m batch*heads*n. The kernel has no bounds
// checks: it assumes block.x == bc == br, tc*bc <= n and tr*br <= n (reads q/k/v/o at
// base + bc*d*j + t*d + x < base + n*d, l/m at lm + br*i + t < lm + n) and dynamic shared
// memory for Q, K, V tiles (3*bc*d floats) and S (bc*block.x floats); the entry checks all
// of that. scale is not in the rows: 1/sqrt(d), as flash.cu's forward computes it. Data as
// the README's bench.py: q, k, v standard normal (torch.randn), built on the host; o and l
// zero and m = -inf as the forward allocates them. o and l are zeroed again before each
// timed launch; m keeps the previous launch's row maxima (finite, so no NaN; no branch in
// the kernel depends on it).
#define main fixture_main
#include "../../../tests/fixtures/heldout/flash_minimal_t4.cu"
#undef main
#include "bench.cuh"

#include <cmath>
#include <random>

void register_kernels(bench::Registry &r)
{
    r.add("fa_fwd", [](const bench::Launch &L, bench::Pool &P) {
        long long n = L.args.i("n"), d = L.args.i("d"), tc = L.args.i("tc"), tr = L.args.i("tr"), bc = L.args.i("bc"),
                  br = L.args.i("br");
        if (n <= 0 || d <= 0 || tc <= 0 || tr <= 0 || bc <= 0 || br <= 0 || bc != br || L.block.x != (unsigned)bc ||
            L.block.y != 1 || L.block.z != 1 || tc * bc > n || tr * br > n || L.grid.z != 1)
            throw std::runtime_error("fa_fwd needs block.x == bc == br, tc*bc <= n, tr*br <= n");
        size_t need = (size_t)(3 * bc * d + bc * (long long)L.block.x) * sizeof(float);
        if (L.smem < need)
            throw std::runtime_error("dynamic shared memory smaller than the Q, K, V tiles and S");
        size_t bh = (size_t)L.grid.x * L.grid.y;
        size_t elems = bh * n * d;
        if (elems >= (1ull << 31))
            throw std::runtime_error("int indices would overflow");
        if (L.smem > 48 * 1024)
            BENCH_CHECK(cudaFuncSetAttribute(fa_fwd, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L.smem));
        std::mt19937 gen(1234);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        std::vector<float> h(elems);
        float *qkv[3];
        const char *names[3] = {"q", "k", "v"};
        for (int i = 0; i < 3; ++i) {
            for (auto &x : h) x = nd(gen);
            qkv[i] = P.get<float>(names[i], elems, bench::Fill::Zero);
            BENCH_CHECK(cudaMemcpy(qkv[i], h.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
        }
        float *o = P.get<float>("o", elems, bench::Fill::Zero);
        float *l = P.get<float>("l", bh * n, bench::Fill::Zero);
        float *m = P.get<float>("m", bh * n, bench::Fill::Zero);
        std::vector<float> minf(bh * n, -INFINITY);
        BENCH_CHECK(cudaMemcpy(m, minf.data(), minf.size() * sizeof(float), cudaMemcpyHostToDevice));
        P.zero_before_launch("o");
        P.zero_before_launch("l");
        const float scale = 1.0f / std::sqrt((float)d);
        int ni = (int)n, di = (int)d, tci = (int)tc, tri = (int)tr, bci = (int)bc, bri = (int)br;
        const float *q = qkv[0], *k = qkv[1], *v = qkv[2];
        return std::function<void(cudaStream_t)>([=](cudaStream_t s) {
            fa_fwd<<<L.grid, L.block, L.smem, s>>>(q, k, v, ni, di, tci, tri, bci, bri, scale, l, m, o);
        });
    });
}
