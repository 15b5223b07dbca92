// tests/fixtures/cu/nbody.cu: all-pairs gravitational accelerations of n bodies (float4
// positions, w = mass), tiles of blockDim.x bodies in dynamic shared memory (dynamic_smem
// must be at least block * 16 bytes, as launch_nbody passes), grid ceil(n / block). Position
// reads are tested against n (j < n, i < n) and vel is read and written for i < n: pos and vel
// hold n float4 each.
// Data: positions and masses uniform in [0, 1) (the fixture gives none), velocities 0;
// dt = 0.01 when a row does not give it.
#include "../../../tests/fixtures/cu/nbody.cu"
#include "bench.cuh"

void register_kernels(bench::Registry &r)
{
    r.add("nbody_forces", [](const bench::Launch &L, bench::Pool &P) {
        const long long n = L.args.i("n");
        if (L.block.y != 1 || L.block.z != 1 || L.grid.y != 1 || L.grid.z != 1)
            throw std::runtime_error("nbody_forces needs a 1-D launch");
        if (n < 1 || n + (long long)L.threads() >= (1ll << 31))
            throw std::runtime_error("n and the thread count must fit in an int");
        if (L.smem < (size_t)L.block.x * sizeof(float4))
            throw std::runtime_error("nbody_forces needs dynamic_smem >= block * 16");
        if (L.smem > 48 * 1024)
            BENCH_CHECK(cudaFuncSetAttribute(nbody_forces, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L.smem));
        const float dt = (float)L.args.f("dt", 0.01);
        const float4 *pos = reinterpret_cast<const float4 *>(P.get<float>("pos", 4 * (size_t)n));
        float4 *vel = reinterpret_cast<float4 *>(P.get<float>("vel", 4 * (size_t)n, bench::Fill::Zero));
        const int nn = (int)n;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { nbody_forces<<<L.grid, L.block, L.smem, s>>>(pos, vel, dt, nn); });
    });
}
