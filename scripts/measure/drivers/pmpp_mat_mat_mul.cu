// tests/fixtures/heldout/pmpp_mat_mat_mul.cu: uint32 C = A * B, A a_rows x a_cols, B b_rows x
// b_cols (b_rows = a_cols), C a_rows x b_cols, all row-major, on T x T blocks (T =
// blockDim.x = blockDim.y): naive (one element a thread), tiled (two T x T tiles in dynamic
// shared memory, 2 T^2 words), rectangular tiles (two elements a thread, T columns apart; the
// B tiles at word T^2 + ty * T (+ T) + tx, so it needs 2 T^2 + T words; the rows give 3 T^2).
// Every global access is guarded (row < a_rows, k < a_cols or k < b_rows, col (+ T) <
// b_cols), so A, B and C hold exactly a_rows * a_cols, b_rows * b_cols and a_rows * b_cols
// words; the naive kernel reads B at rows < a_cols, hence the check a_cols == b_rows.
// Data: random 32-bit words (integer products wrap; the values do not change the timing and
// the benchmark's are not stated).
#include "../../../tests/fixtures/heldout/pmpp_mat_mat_mul.cu"
#include "bench.cuh"

typedef void (*MM)(unsigned int *, unsigned int *, unsigned int *, int, int, int, int);

// smem_words(T): the dynamic shared memory the kernel indexes, in words (0: none).
template <MM K, int Kind> static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long ar = L.args.i("a_rows"), ac = L.args.i("a_cols"), br = L.args.i("b_rows"), bc = L.args.i("b_cols");
        if (ar <= 0 || ac <= 0 || br <= 0 || bc <= 0 || ac != br)
            throw std::runtime_error("mat_mat rows need positive sizes and a_cols == b_rows");
        if (ar * ac >= (1LL << 31) || br * bc >= (1LL << 31) || ar * bc >= (1LL << 31))
            throw std::runtime_error("mat_mat rows need every matrix under 2^31 elements (int index)");
        if (L.block.z != 1 || L.grid.z != 1 || (Kind != 0 && L.block.x != L.block.y))
            throw std::runtime_error("mat_mat rows need 2-D launches (square blocks for the tiled kernels)");
        size_t t = L.block.x;
        size_t words = Kind == 1 ? 2 * t * t : Kind == 2 ? 2 * t * t + t : 0;
        if (L.smem < words * sizeof(unsigned int))
            throw std::runtime_error("dynamic shared memory smaller than the kernel's tiles");
        if (L.smem > 48 * 1024)
            BENCH_CHECK(cudaFuncSetAttribute(K, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L.smem));
        unsigned int *a = P.get<unsigned int>("a", (size_t)(ar * ac));
        unsigned int *b = P.get<unsigned int>("b", (size_t)(br * bc));
        unsigned int *c = P.get<unsigned int>("c", (size_t)(ar * bc), bench::Fill::Zero);
        int w = (int)ar, x = (int)ac, y = (int)br, z = (int)bc;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(a, b, c, w, x, y, z); });
    };
}

void register_kernels(bench::Registry &r)
{
    r.add("mm_naive_u32", entry<mm_naive_u32, 0>());
    r.add("mm_tiled_u32", entry<mm_tiled_u32, 1>());
    r.add("mm_rect_u32", entry<mm_rect_u32, 2>());
}
