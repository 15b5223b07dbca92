// tests/fixtures/cu/stencil2d.cu: one 5-point Jacobi sweep over an nx x ny float grid, one
// thread per point (interior points only: the guard keeps every neighbour index inside
// [0, nx * ny)). Buffers: u = nx * ny random floats in [0, 1), u_new = nx * ny floats.
// Grid = ceil(nx / block.x) x ceil(ny / block.y), as the fixture's main().
#include "bench.cuh"
#define main fixture_main
#include "../../../tests/fixtures/cu/stencil2d.cu"
#undef main

void register_kernels(bench::Registry &r)
{
    r.add("jacobi2d", [](const bench::Launch &L, bench::Pool &P) {
        long long nx = L.args.i("nx"), ny = L.args.i("ny");
        if (nx < 3 || ny < 3 || nx * ny >= (1LL << 31) || L.grid.z != 1 || L.block.z != 1 ||
            (long long)L.grid.x * L.block.x >= (1LL << 31) || (long long)L.grid.y * L.block.y >= (1LL << 31))
            throw std::runtime_error("jacobi2d rows need nx, ny >= 3 and nx * ny < 2^31, 2-D launches");
        const float *u = P.get<float>("u", (size_t)(nx * ny));
        float *u_new = P.get<float>("u_new", (size_t)(nx * ny), bench::Fill::Zero);
        int x = (int)nx, y = (int)ny;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { jacobi2d<<<L.grid, L.block, L.smem, s>>>(u, u_new, x, y); });
    });
}
