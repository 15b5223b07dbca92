// tests/fixtures/cu/spill.cu: kernels with local-memory traffic.
// row_block_spill: c[j * rows + row] = sum_k a[k * rows + row] * b[k * 96 + j] for 96
// columns j, one thread per row (guarded by row < rows); __launch_bounds__(128, 8) caps the
// block at 128 threads. Buffers: a = k_dim * rows, b = k_dim * 96, c = 96 * rows floats;
// a and b random in [0, 1).
// local_histogram: thread tid reads data[i * nthreads + tid] for i < per_thread (no bounds
// check) and writes out[tid]; nthreads = the launch's total threads. Buffers: data =
// per_thread * nthreads uniformly random 32-bit words (the bin is the low 5 bits),
// out = nthreads words.
#include "bench.cuh"
#include "../../../tests/fixtures/cu/spill.cu"

void register_kernels(bench::Registry &r)
{
    r.add("row_block_spill", [](const bench::Launch &L, bench::Pool &P) {
        long long rows = L.args.i("rows"), k_dim = L.args.i("k_dim");
        if (L.block.y != 1 || L.block.z != 1 || L.grid.y != 1 || L.grid.z != 1 || L.block.x == 0 ||
            L.block.x > 128 || rows <= 0 || k_dim <= 0 || rows + (long long)L.threads() >= (1LL << 31) ||
            k_dim * COLS >= (1LL << 31))
            throw std::runtime_error("row_block_spill rows need 1-D launches, block <= 128, rows, k_dim > 0");
        const float *a = P.get<float>("a", (size_t)k_dim * rows);
        const float *b = P.get<float>("b", (size_t)k_dim * COLS);
        float *c = P.get<float>("c", (size_t)COLS * rows, bench::Fill::Zero);
        int ri = (int)rows, ki = (int)k_dim;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { row_block_spill<<<L.grid, L.block, L.smem, s>>>(a, b, c, ri, ki); });
    });
    r.add("local_histogram", [](const bench::Launch &L, bench::Pool &P) {
        long long per_thread = L.args.i("per_thread");
        long long nthreads = (long long)L.threads();
        if (L.block.y != 1 || L.block.z != 1 || L.grid.y != 1 || L.grid.z != 1 || per_thread <= 0 ||
            (per_thread + 1) * nthreads >= (1LL << 31))
            throw std::runtime_error("local_histogram rows need 1-D launches and (per_thread + 1) * threads < 2^31");
        const unsigned *data = P.get<unsigned>("data", (size_t)(per_thread * nthreads), bench::Fill::Uniform);
        unsigned *out = P.get<unsigned>("out", (size_t)nthreads, bench::Fill::Zero);
        int pt = (int)per_thread;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { local_histogram<<<L.grid, L.block, L.smem, s>>>(data, out, pt); });
    });
}
