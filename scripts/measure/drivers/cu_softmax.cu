// tests/fixtures/cu/softmax.cu: row-wise softmax, one block per row: rows = grid.x (the host's
// `rows`, not a kernel parameter), each row `cols` floats. Block: a multiple of 32 up to 1024
// (32-entry shared array, full-mask shuffles). Buffers: in and out = grid.x * cols floats,
// in random in [0, 1) (an attention-score-like input; no overflow in __expf).
#include "bench.cuh"
#include "../../../tests/fixtures/cu/softmax.cu"

void register_kernels(bench::Registry &r)
{
    r.add("softmax_rows", [](const bench::Launch &L, bench::Pool &P) {
        long long cols = L.args.i("cols");
        unsigned b = L.block.x;
        if (L.block.y != 1 || L.block.z != 1 || L.grid.y != 1 || L.grid.z != 1 || b == 0 || b % 32 ||
            b > 1024 || cols <= 0 || cols >= (1LL << 31) - 1024)
            throw std::runtime_error("softmax_rows rows need a 1-D grid, a 1-D block of a multiple of 32, cols > 0");
        size_t count = (size_t)L.grid.x * cols;
        const float *in = P.get<float>("in", count);
        float *out = P.get<float>("out", count, bench::Fill::Zero);
        int c = (int)cols;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { softmax_rows<<<L.grid, L.block, L.smem, s>>>(in, out, c); });
    });
}
