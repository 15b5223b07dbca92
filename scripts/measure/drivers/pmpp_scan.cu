// tests/fixtures/heldout/pmpp_scan.cu: single-block inclusive scans in dynamic shared memory,
// six element types: Kogge-Stone (one element a thread), Brent-Kung (two), three-phase
// (`section` elements, section / blockDim.x consecutive ones a thread).
// Buffers: x and y are read/written only at indices < n, but are sized for the whole launch
// (Kogge-Stone: grid * block, Brent-Kung: 2 * grid * block, three-phase: grid * section) or
// n, whichever is larger. Shared memory: block, 2 * block and section elements of the type.
// The three-phase kernel needs section a positive multiple of blockDim.x (its down-sweep
// loop over an unsigned stride would not end for section / blockDim.x = 0).
// `part` (the per-block sums) is null when the row gives part=0, as in the benchmark;
// otherwise a buffer of gridDim.x elements.
// Data: random (integers random bits, floats uniform in [0, 1); the benchmark's values are
// not stated and do not change the timing).
#include "../../../tests/fixtures/heldout/pmpp_scan.cu"
#include "bench.cuh"

template <typename T> static T *part_buffer(const bench::Launch &L, bench::Pool &P)
{
    if (L.args.i("part", 0) == 0)
        return nullptr;
    return P.get<T>("part", L.grid.x, bench::Fill::Zero);
}

static void check_1d(const bench::Launch &L, long long n)
{
    if (n <= 0 || n >= (1LL << 31) || L.grid.y != 1 || L.grid.z != 1 || L.block.y != 1 || L.block.z != 1 ||
        2 * L.threads() >= (1ULL << 31))
        throw std::runtime_error("scan rows need a 1-D launch and 0 < n < 2^31");
}

template <typename T, void (*K)(const T *, T *, int, T *), int PerThread> static bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long n = L.args.i("n");
        check_1d(L, n);
        if (L.smem < (size_t)PerThread * L.block.x * sizeof(T))
            throw std::runtime_error("scan needs block * elements-per-thread elements of shared memory");
        if (L.smem > 48 * 1024)
            BENCH_CHECK(cudaFuncSetAttribute(K, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L.smem));
        size_t ext = std::max<size_t>((size_t)n, PerThread * L.threads());
        const T *x = P.get<T>("x", ext);
        T *y = P.get<T>("y", ext, bench::Fill::Zero);
        T *part = part_buffer<T>(L, P);
        int ni = (int)n;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(x, y, ni, part); });
    };
}

template <typename T, void (*K)(const T *, T *, int, int, T *)> static bench::Prepare entry3()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long n = L.args.i("n"), section = L.args.i("section");
        check_1d(L, n);
        if (section <= 0 || section % L.block.x != 0 || (long long)L.grid.x * section >= (1LL << 31))
            throw std::runtime_error("three-phase scan needs section a positive multiple of blockDim.x");
        if (L.smem < (size_t)section * sizeof(T))
            throw std::runtime_error("three-phase scan needs section elements of shared memory");
        if (L.smem > 48 * 1024)
            BENCH_CHECK(cudaFuncSetAttribute(K, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L.smem));
        size_t ext = std::max<size_t>((size_t)n, (size_t)L.grid.x * section);
        const T *x = P.get<T>("x", ext);
        T *y = P.get<T>("y", ext, bench::Fill::Zero);
        T *part = part_buffer<T>(L, P);
        int ni = (int)n, si = (int)section;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(x, y, ni, si, part); });
    };
}

#define SCAN_ENTRIES(T, S)                                                   \
    r.add("scan_kogge_stone_" #S, entry<T, scan_kogge_stone_##S, 1>());      \
    r.add("scan_brent_kung_" #S, entry<T, scan_brent_kung_##S, 2>());        \
    r.add("scan_three_phase_" #S, entry3<T, scan_three_phase_##S>());

void register_kernels(bench::Registry &r)
{
    SCAN_ENTRIES(uint8_t, u8)
    SCAN_ENTRIES(uint16_t, u16)
    SCAN_ENTRIES(uint32_t, u32)
    SCAN_ENTRIES(uint64_t, u64)
    SCAN_ENTRIES(float, f32)
    SCAN_ENTRIES(double, f64)
}
