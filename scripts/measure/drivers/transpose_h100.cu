// tests/fixtures/heldout/transpose_h100.cu: out = in^T for the fixed N x N float matrix
// (N = 32768, 4 GiB per matrix) of yencal's H100 study, built once per (TILE, ROWS) define.
//
// Buffers: in (random floats) and out, N * N floats each (8 GiB together). Element indices are
// ints below N * N = 2^30. Only the naive, tiled and padded kernels test their indices (against
// N); the coarsened and vector kernels do not, so the driver requires the launch the kernels
// are written for: a grid of N / TILE x N / TILE tiles, blocks of TILE (coarsen), TILE / 2
// (vec2) or TILE / 4 (vec4) x ROWS threads, TILE a multiple of ROWS (and of 4), so that every
// thread's rows y + r stay below N, its columns below N (N / 2 float2, N / 4 float4 words per
// row), and its shared indices inside the TILE x (TILE + 1) tile. The tiled and padded kernels
// index a 32 x 32 tile by threadIdx: 32 x 32 blocks.
//
// bench.cuh first: the fixture's N, TILE and ROWS macros then cannot reach the standard headers.
#include "bench.cuh"
#include "../../../tests/fixtures/heldout/transpose_h100.cu"

namespace {

using Launcher = std::function<void(cudaStream_t)>;

void need(bool ok, const char *what)
{
    if (!ok)
        throw std::runtime_error(std::string("transpose_h100: ") + what);
}

// Threads per tile row: 0 = the fixed 32 x 32 kernels; else TILE / words per thread.
template <void (*K)(const float *, float *), int Kind> bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) -> Launcher {
        need(L.grid.z == 1 && L.block.z == 1, "2-D launches only");
        if (Kind == 0) {  // naive: indices tested; tiled/padded: 32 x 32 blocks, 32-tiles
            need(L.block.x == 32 && L.block.y == 32, "these kernels need 32 x 32 blocks");
            need(L.grid.x * 32 == N && L.grid.y * 32 == N, "grid must be N / 32 x N / 32");
        } else {
            int per = Kind;  // floats per thread per load: 1 coarsen, 2 vec2, 4 vec4
            need(TILE % 4 == 0 && TILE % ROWS == 0 && N % TILE == 0, "TILE must be a multiple of 4 and of ROWS");
            need(L.block.x * per == TILE && L.block.y == ROWS,
                 "block must be TILE / (floats per load) x ROWS (the build's TILE and ROWS defines)");
            need((long long)L.grid.x * TILE == N && (long long)L.grid.y * TILE == N, "grid must be N / TILE x N / TILE");
        }
        size_t elems = (size_t)N * N;
        const float *in = P.get<float>("in", elems);
        float *out = P.get<float>("out", elems, bench::Fill::Zero);
        dim3 g = L.grid, bl = L.block;
        size_t sm = L.smem;
        return [=](cudaStream_t s) { K<<<g, bl, sm, s>>>(in, out); };
    };
}

}  // namespace

void register_kernels(bench::Registry &r)
{
    r.add("transpose_naive", entry<transpose_naive, 0>());
    r.add("transpose_tiled", entry<transpose_tiled, 0>());
    r.add("transpose_padded", entry<transpose_padded, 0>());
    r.add("transpose_coarsen", entry<transpose_coarsen, 1>());
    r.add("transpose_vec2", entry<transpose_vec2, 2>());
    r.add("transpose_vec4", entry<transpose_vec4, 4>());
}
