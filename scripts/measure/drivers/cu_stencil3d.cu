// tests/fixtures/cu/stencil3d.cu: one 7-point heat-equation step over an nx x ny x nz float
// grid, one thread per point (interior points only: the guard keeps every neighbour inside
// [0, nx * ny * nz)). Buffers: in = nx * ny * nz random floats in [0, 1), out the same size.
// c0, c1 from the row (defaults 0.4 and 0.1, as launch_heat3d). Grid = ceil(n / block) per
// dimension, as launch_heat3d.
#include "bench.cuh"
#include "../../../tests/fixtures/cu/stencil3d.cu"

void register_kernels(bench::Registry &r)
{
    r.add("heat3d", [](const bench::Launch &L, bench::Pool &P) {
        long long nx = L.args.i("nx"), ny = L.args.i("ny"), nz = L.args.i("nz");
        float c0 = (float)L.args.f("c0", 0.4), c1 = (float)L.args.f("c1", 0.1);
        if (nx < 3 || ny < 3 || nz < 3 || nx * ny * nz > (1LL << 32))
            throw std::runtime_error("heat3d rows need nx, ny, nz >= 3 and at most 2^32 points");
        size_t count = (size_t)(nx * ny * nz);
        const float *in = P.get<float>("in", count);
        float *out = P.get<float>("out", count, bench::Fill::Zero);
        int x = (int)nx, y = (int)ny, z = (int)nz;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { heat3d<<<L.grid, L.block, L.smem, s>>>(in, out, x, y, z, c0, c1); });
    });
}
