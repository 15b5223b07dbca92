// tests/fixtures/cu/dyn_smem.cu: y = A * x (A rows x cols row-major, one thread per row), x
// staged chunk floats at a time in dynamic shared memory followed by blockDim.x floats of
// partial sums, so dynamic_smem must be at least (chunk + block) * 4 bytes (launch_gemv:
// block 256, chunk 1024, 5120 bytes, grid ceil(rows / 256)). A is read only for row < rows
// and column < cols, x for column < cols, y written for row < rows: A rows * cols floats,
// x cols, y rows.
// Data: uniform floats in [0, 1) (the fixture gives none).
#include "../../../tests/fixtures/cu/dyn_smem.cu"
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("gemv_xshared", [](const bench::Launch &L, bench::Pool &P) {
        const long long rows = L.args.i("rows"), cols = L.args.i("cols"), chunk = L.args.i("chunk");
        const size_t block = (size_t)L.block.x * L.block.y * L.block.z;
        if (L.block.y != 1 || L.block.z != 1 || L.grid.y != 1 || L.grid.z != 1)
            throw std::runtime_error("gemv_xshared needs a 1-D launch");
        if (rows < 1 || cols < 1 || chunk < 1 || rows + (long long)L.threads() >= (1ll << 31) ||
            cols + chunk >= (1ll << 31))
            throw std::runtime_error("gemv_xshared: bad sizes");
        if (L.smem < (size_t)(chunk + block) * sizeof(float))
            throw std::runtime_error("gemv_xshared needs dynamic_smem >= (chunk + block) * 4");
        if (L.smem > 48 * 1024)
            BENCH_CHECK(cudaFuncSetAttribute(gemv_xshared, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L.smem));
        const float *A = P.get<float>("A", (size_t)rows * cols), *x = P.get<float>("x", cols);
        float *y = P.get<float>("y", rows, bench::Fill::Zero);
        const int nr = (int)rows, nc = (int)cols, ch = (int)chunk;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { gemv_xshared<<<L.grid, L.block, L.smem, s>>>(A, x, y, nr, nc, ch); });
    });
}
