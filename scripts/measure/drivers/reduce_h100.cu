// tests/fixtures/heldout/reduce_h100.cu: int sums of yencal's H100 study, built once per
// load width (WIDTH = 1, 2, 4: int, int2, int4 grid-stride loads), 2^28 ints, block 512,
// grid 1024.
//
// Buffers: every load is tested against n (n / 4 int4, n / 2 int2, then the tail ints), so
// the input is n ints (+ 16 spare; cudaMalloc's alignment serves the int4 loads); random
// small ints (the study's values are not given; sums wrap harmlessly). two_pass writes one
// int per block (grid.x); block_atomic and warp_atomic add into one int, cleared before
// every timed launch. block_sum keeps one int per warp in a 32-int shared array: blocks of at
// most 1024 threads, a multiple of 32. The loop indices are ints: n plus the grid's thread
// count must fit in one.
//
// bench.cuh first: the fixture's WIDTH macro then cannot reach the standard headers.
#include "bench.cuh"
#include "../../../tests/fixtures/heldout/reduce_h100.cu"

namespace {

using Launcher = std::function<void(cudaStream_t)>;

void need(bool ok, const char *what)
{
    if (!ok)
        throw std::runtime_error(std::string("reduce_h100: ") + what);
}

template <void (*K)(const int *, int *, int), bool Atomic> bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) -> Launcher {
        long long n = L.args.i("n");
        need(n > 0, "n must be positive");
        need(L.block.y == 1 && L.block.z == 1 && L.grid.y == 1 && L.grid.z == 1, "1-D launches only");
        need(L.block.x % 32 == 0 && L.block.x <= 1024, "block must be a multiple of 32, at most 1024");
        need(n + (long long)L.grid.x * L.block.x < (1LL << 31), "int index would overflow");
        const int *in = P.get<int>("in", (size_t)n + 16, bench::Fill::SmallInt, 16);
        int *out;
        if (Atomic) {
            out = P.get<int>("out", 1, bench::Fill::Zero);
            P.zero_before_launch("out");
        } else {
            out = P.get<int>("partial", L.grid.x, bench::Fill::Zero);
        }
        int nn = (int)n;
        dim3 g = L.grid, bl = L.block;
        size_t sm = L.smem;
        return [=](cudaStream_t s) { K<<<g, bl, sm, s>>>(in, out, nn); };
    };
}

}  // namespace

void register_kernels(bench::Registry &r)
{
    r.add("two_pass", entry<two_pass, false>());
    r.add("block_atomic", entry<block_atomic, true>());
    r.add("warp_atomic", entry<warp_atomic, true>());
}
