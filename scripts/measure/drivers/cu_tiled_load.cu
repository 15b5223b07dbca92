// tests/fixtures/cu/tiled_load.cu: 7x7 box filter through a shared-memory tile with a halo of
// R = 3. out is width x height, in is (width + 6) x (height + 6), both row-major floats.
// The kernel has no bounds checks: blocks cover the output exactly, as the host launches
// compute (grid = width / block.x, height / block.y), so height = grid.y * block.y (height is
// not a kernel parameter). tile_box hard-codes the 32x8 block (BX, BY); tile_box_dyn takes
// any block with (block.y + 6) * (block.x + 6) * 4 bytes of dynamic shared memory.
// Largest in index: (height + 5) * (width + 6) + width + 5 < (width + 6) * (height + 6).
// Buffers: in random floats in [0, 1), out zero.
#include "bench.cuh"
#include "../../../tests/fixtures/cu/tiled_load.cu"

template <void (*K)(const float *, float *, int), bool Dyn> static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long width = L.args.i("width");
        if (!Dyn && (L.block.x != BX || L.block.y != BY))
            throw std::runtime_error("tile_box needs a 32x8 block");
        if (L.block.z != 1 || L.grid.z != 1 || L.block.x == 0 || L.block.y == 0 ||
            (long long)L.grid.x * L.block.x != width)
            throw std::runtime_error("tiled_load rows need grid.x * block.x == width, 2-D launches");
        if (Dyn && L.smem < (size_t)(L.block.y + 2 * R) * (L.block.x + 2 * R) * sizeof(float))
            throw std::runtime_error("tile_box_dyn needs (block.y + 6) * (block.x + 6) * 4 bytes of dynamic shared memory");
        long long height = (long long)L.grid.y * L.block.y;
        long long in_count = (width + 2 * R) * (height + 2 * R);
        if (in_count >= (1LL << 31))
            throw std::runtime_error("tiled_load: the input must stay below 2^31 elements (int indices)");
        const float *in = P.get<float>("in", (size_t)in_count);
        float *out = P.get<float>("out", (size_t)(width * height), bench::Fill::Zero);
        int w = (int)width;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(in, out, w); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("tile_box", entry<tile_box, false>());
    r.add("tile_box_dyn", entry<tile_box_dyn, true>());
}
