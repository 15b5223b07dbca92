// tests/fixtures/heldout/memcpy_h100.cu: device-to-device copies of n bytes through 1- to
// 16-byte words (yencal's H100 study), 1024 threads per block and one word per thread.
//
// Buffers: source and destination of n bytes (+ 16 spare). Every access is tested against n
// (the words against n / sizeof(word), the leftover bytes against n) with size_t indices, so
// any launch stays in bounds; cudaMalloc's alignment serves the 16-byte words. Source bytes
// random (the study's contents are not given and do not matter to a copy).
#include "bench.cuh"
#include "../../../tests/fixtures/heldout/memcpy_h100.cu"

namespace {

using Launcher = std::function<void(cudaStream_t)>;

template <void (*K)(unsigned char *, const unsigned char *, size_t)> bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) -> Launcher {
        long long n = L.args.i("n");
        if (n <= 0)
            throw std::runtime_error("memcpy_h100: n must be positive");
        const unsigned char *src = P.get<unsigned char>("src", (size_t)n + 16, bench::Fill::Bytes);
        unsigned char *dst = P.get<unsigned char>("dst", (size_t)n + 16, bench::Fill::Zero);
        size_t nn = (size_t)n;
        dim3 g = L.grid, bl = L.block;
        size_t sm = L.smem;
        return [=](cudaStream_t s) { K<<<g, bl, sm, s>>>(dst, src, nn); };
    };
}

}  // namespace

void register_kernels(bench::Registry &r)
{
    r.add("copy_u8", entry<copy_u8>());
    r.add("copy_u16", entry<copy_u16>());
    r.add("copy_u32", entry<copy_u32>());
    r.add("copy_u64", entry<copy_u64>());
    r.add("copy_u128", entry<copy_u128>());
}
