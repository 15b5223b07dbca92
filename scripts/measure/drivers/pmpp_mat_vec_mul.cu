// tests/fixtures/heldout/pmpp_mat_vec_mul.cu: y = A x on uint32, A m x n row-major, one
// thread per row (mv_row_per_thread: x from global memory; mv_row_per_thread_smem_x: x staged
// through blockDim.x words of dynamic shared memory one slice at a time).
// Buffers: A m * n words (reads guarded by row < m and column < n), x n words (guarded),
// y: mv_row_per_thread tests row < m (m words), but mv_row_per_thread_smem_x stores y[row]
// for every thread of the grid, so y holds max(m, grid * block) words.
// Data: random 32-bit words (products wrap modulo 2^32; the values do not change the timing
// and the benchmark's are not stated).
#include "../../../tests/fixtures/heldout/pmpp_mat_vec_mul.cu"
#include "bench.cuh"

template <void (*K)(unsigned *, const unsigned *, const unsigned *, int, int), bool Smem> static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long m = L.args.i("m"), n = L.args.i("n");
        if (m <= 0 || n <= 0 || m * n >= (1LL << 31) || L.threads() >= (1ULL << 31))
            throw std::runtime_error("mat_vec rows need 0 < m * n < 2^31 (int index) and under 2^31 threads");
        if (L.grid.y != 1 || L.grid.z != 1 || L.block.y != 1 || L.block.z != 1)
            throw std::runtime_error("mat_vec rows need a 1-D launch");
        if (Smem && L.smem < L.block.x * sizeof(unsigned))
            throw std::runtime_error("mv_row_per_thread_smem_x needs blockDim.x words of shared memory");
        const unsigned *a = P.get<unsigned>("a", (size_t)m * n);
        const unsigned *x = P.get<unsigned>("x", (size_t)n);
        unsigned *y = P.get<unsigned>("y", std::max<size_t>((size_t)m, L.threads()), bench::Fill::Zero);
        int mi = (int)m, ni = (int)n;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(y, a, x, mi, ni); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("mv_row_per_thread", entry<mv_row_per_thread, false>());
    r.add("mv_row_per_thread_smem_x", entry<mv_row_per_thread_smem_x, true>());
}
