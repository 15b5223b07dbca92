// tests/fixtures/heldout/amaris_apps.cu: the nine small applications of Amarís et al.
// (matrix products, matrix sums, dot product, vector add, maximum subsequence). Built once per
// defines value of the rows: TILE (tiled products: the block is TILE x TILE) and BLOCK (the dot
// product's shared array, one float per thread); each entry checks that its row's launch
// matches the define it was built with.
//
// bench.cuh comes first so that the fixture's macros (TILE, BLOCK) cannot reach the standard
// headers it includes; the fixture has no main().
#include "bench.cuh"
#include "../../../tests/fixtures/heldout/amaris_apps.cu"

namespace {

using Launcher = std::function<void(cudaStream_t)>;

void need(bool ok, const char *what)
{
    if (!ok)
        throw std::runtime_error(std::string("amaris_apps: ") + what);
}

bool pow2(unsigned v) { return v && !(v & (v - 1)); }

// The measured dotProd filled a[i] = i and b[i] = 2 i (gpuperfpredict src/dotProd/dotProd.cu).
__global__ void fill_dot(float *a, float *b, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        a[i] = (float)i;
        b[i] = 2.0f * (float)i;
    }
}

// Matrix products C = A B on width x width floats (random in [0, 1)). None of the four kernels
// tests its indices: every thread reads row `row` of A and column `col` of B and writes
// C[row][col], so the launch's threads must stay inside the matrix in both dimensions (x is
// the column for the coalesced kernels and the row for the uncoalesced ones: the same bound
// grid.x * block.x <= width, grid.y * block.y <= width either way). The tiled kernels also
// need a TILE x TILE block (shared tiles indexed by threadIdx) and width a multiple of TILE.
template <void (*K)(float *, const float *, const float *, int), bool Tiled> bench::Prepare matmul()
{
    return [](const bench::Launch &L, bench::Pool &P) -> Launcher {
        long long width = L.args.i("width");
        need(width > 0 && width <= 46340, "width out of range");
        need(L.grid.z == 1 && L.block.z == 1, "2-D launches only");
        need((long long)L.grid.x * L.block.x <= width && (long long)L.grid.y * L.block.y <= width,
             "the launch's threads must stay inside the width x width matrix");
        if (Tiled)
            need(L.block.x == TILE && L.block.y == TILE && width % TILE == 0,
                 "tiled products need a TILE x TILE block (the build's TILE define) and width % TILE == 0");
        size_t elems = (size_t)width * width;
        const float *a = P.get<float>("mm_a", elems);
        const float *b = P.get<float>("mm_b", elems);
        float *c = P.get<float>("mm_c", elems, bench::Fill::Zero);
        int w = (int)width;
        dim3 g = L.grid, bl = L.block;
        size_t sm = L.smem;
        return [=](cudaStream_t s) { K<<<g, bl, sm, s>>>(c, a, b, w); };
    };
}

// Matrix sums S = A + B on n x n floats (random). The kernels test i = row * n + col < n * n
// in int arithmetic: the launch must not exceed n in either dimension so that i cannot
// overflow (the rows cover the matrix exactly).
template <void (*K)(float *, const float *, const float *, int)> bench::Prepare matsum()
{
    return [](const bench::Launch &L, bench::Pool &P) -> Launcher {
        long long n = L.args.i("n");
        need(n > 0 && n <= 46340, "n out of range");
        need(L.grid.z == 1 && L.block.z == 1, "2-D launches only");
        need((long long)L.grid.x * L.block.x <= n && (long long)L.grid.y * L.block.y <= n,
             "the launch's threads must stay inside the n x n matrix");
        size_t elems = (size_t)n * n;
        const float *a = P.get<float>("ms_a", elems);
        const float *b = P.get<float>("ms_b", elems);
        float *out = P.get<float>("ms_s", elems, bench::Fill::Zero);
        int nn = (int)n;
        dim3 g = L.grid, bl = L.block;
        size_t sm = L.smem;
        return [=](cudaStream_t s) { K<<<g, bl, sm, s>>>(out, a, b, nn); };
    };
}

}  // namespace

void register_kernels(bench::Registry &r)
{
    r.add("matmul_naive", matmul<matmul_naive, false>());
    r.add("matmul_uncoalesced", matmul<matmul_uncoalesced, false>());
    r.add("matmul_shared", matmul<matmul_shared, true>());
    r.add("matmul_shared_uncoalesced", matmul<matmul_shared_uncoalesced, true>());
    r.add("matsum_coalesced", matsum<matsum_coalesced>());
    r.add("matsum_normal", matsum<matsum_normal>());

    // Dot product: a grid-stride loop over n elements (tested against n), then a tree over the
    // block's shared array of BLOCK floats indexed by threadIdx.x: the block must be BLOCK
    // threads (a power of two, for the halving tree). One partial sum per block: grid.x
    // floats. The loop index is an int: n plus the grid's thread count must fit in one.
    r.add("dot_prod", [](const bench::Launch &L, bench::Pool &P) -> Launcher {
        long long n = L.args.i("n");
        need(n > 0, "n must be positive");
        need(L.block.x == BLOCK && L.block.y == 1 && L.block.z == 1 && pow2(L.block.x),
             "dot_prod needs a 1-D block of BLOCK threads (the build's BLOCK define), a power of two");
        need(L.grid.y == 1 && L.grid.z == 1, "1-D grid only");
        need(n + (long long)L.grid.x * L.block.x < (1LL << 31), "int index would overflow");
        float *a = P.get<float>("dot_a", (size_t)n, bench::Fill::Zero);
        float *b = P.get<float>("dot_b", (size_t)n, bench::Fill::Zero);
        fill_dot<<<1024, 256>>>(a, b, (size_t)n);
        BENCH_CHECK(cudaGetLastError());
        BENCH_CHECK(cudaDeviceSynchronize());
        float *partial = P.get<float>("dot_partial", L.grid.x, bench::Fill::Zero);
        int nn = (int)n;
        dim3 g = L.grid, bl = L.block;
        size_t sm = L.smem;
        return [=](cudaStream_t s) { dot_prod<<<g, bl, sm, s>>>(a, b, partial, nn); };
    });

    // Vector add: one element per thread, tested against n; n floats each (random).
    r.add("vector_add", [](const bench::Launch &L, bench::Pool &P) -> Launcher {
        long long n = L.args.i("n");
        need(n > 0, "n must be positive");
        need(L.grid.y == 1 && L.grid.z == 1 && L.block.y == 1 && L.block.z == 1, "1-D launches only");
        need((long long)L.grid.x * L.block.x < (1LL << 31), "int index would overflow");
        const float *a = P.get<float>("va_a", (size_t)n);
        const float *b = P.get<float>("va_b", (size_t)n);
        float *c = P.get<float>("va_c", (size_t)n, bench::Fill::Zero);
        int nn = (int)n;
        dim3 g = L.grid, bl = L.block;
        size_t sm = L.smem;
        return [=](cudaStream_t s) { vector_add<<<g, bl, sm, s>>>(a, b, c, nn); };
    });

    // Maximum subsequence (the measured Subseqmax.cu's kernel): block b reads the integers
    // [b * per_block, (b + 1) * per_block) in per_block / 4096 chunks of 4096 (the staging
    // loop assumes 128 threads: 32 steps of 128 cover the 4096-int shared array), so the data
    // are grid.x * per_block ints. Each of the 128 threads writes 5 ints at
    // (blockIdx.x * blockDim.x + threadIdx.x) * 5: grid.x * 128 * 5 ints of output (the
    // measured program allocated only 128 * 5 and wrote past them; not reproduced).
    // Data as measured: every integer -1 except data[131] = 954 and data[132] = 10.
    //
    // The scan's 33rd step of thread 127 reads staged[4096], one int past the kernel's 16 KB
    // static shared array (ptxas for sm_90 gives the kernel exactly 16384 bytes of shared
    // memory: the __shared__ pointer is forwarded away), which can raise an out-of-range
    // shared address exception. The launch therefore adds 128 bytes of dynamic shared memory
    // (never used by the kernel) so that the block's shared window covers that int; the rows
    // give 0, and 128 bytes more on 32 blocks of 16 KB changes neither occupancy nor time.
    r.add("sub_seq_max", [](const bench::Launch &L, bench::Pool &P) -> Launcher {
        long long per_block = L.args.i("per_block");
        long long per_thread = L.args.i("per_thread", per_block / 128);  // unused by the kernel
        need(L.block.x == 128 && L.block.y == 1 && L.block.z == 1, "sub_seq_max needs 128-thread blocks");
        need(L.grid.y == 1 && L.grid.z == 1, "1-D grid only");
        need(per_block >= 4096 && per_block % 4096 == 0, "per_block must be a positive multiple of 4096");
        long long n = (long long)L.grid.x * per_block;
        need(n < (1LL << 31), "int index would overflow");
        int *data = P.get<int>("ssm_data", (size_t)n, bench::Fill::Zero);
        BENCH_CHECK(cudaMemset(data, 0xff, (size_t)n * sizeof(int)));  // every int -1
        if (n > 132) {
            int two[2] = {954, 10};
            BENCH_CHECK(cudaMemcpy(data + 131, two, sizeof(two), cudaMemcpyHostToDevice));
        }
        int *out = P.get<int>("ssm_out", (size_t)L.grid.x * L.block.x * 5, bench::Fill::Zero);
        int pt = (int)per_thread, pb = (int)per_block;
        dim3 g = L.grid, bl = L.block;
        size_t sm = std::max<size_t>(L.smem, 128);
        return [=](cudaStream_t s) { sub_seq_max<<<g, bl, sm, s>>>(data, out, pt, pb); };
    });
}
