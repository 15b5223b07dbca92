// tests/fixtures/cu/spmv_csr.cu: y = A * x for a square num_rows x num_rows CSR matrix,
// one thread per row (spmv_csr_scalar, guarded by row < num_rows) or one warp per row
// (spmv_csr_vector, guarded by warp index < num_rows).
// The matrix is built on the host from the row's extra arguments (not kernel parameters):
//   random=0: banded, the nnz_per_row columns row - nnz_per_row/2 ... clipped to
//             [0, num_rows) (so edge rows are shorter), i.e. a band around the diagonal;
//   random=1: each row's length uniform in [nnz_per_row/2, 3*nnz_per_row/2] (mean
//             nnz_per_row), its columns uniformly random in [0, num_rows), sorted.
// Every column index is in [0, num_rows) and row_ptr is non-decreasing with
// row_ptr[num_rows] = nnz, so every access is in bounds. Buffers: row_ptr = num_rows + 1
// ints, col_idx = nnz ints (uploaded), values = nnz and x = num_rows random floats in
// [0, 1), y = num_rows floats. The last matrix built is cached on the host.
#include "bench.cuh"
#include "../../../tests/fixtures/cu/spmv_csr.cu"

namespace {
struct Csr {
    std::string key;
    std::vector<int> row_ptr, col_idx;
};

uint64_t splitmix(uint64_t &s)
{
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

const Csr &build(long long num_rows, long long k, bool random)
{
    static Csr c;
    std::string key = std::to_string(num_rows) + "/" + std::to_string(k) + "/" + std::to_string(random);
    if (c.key == key)
        return c;
    c.key.clear();
    c.row_ptr.assign(num_rows + 1, 0);
    c.col_idx.clear();
    c.col_idx.reserve((size_t)(num_rows * (random ? k + k / 2 + 1 : k)));
    uint64_t seed = 12345;
    for (long long r = 0; r < num_rows; ++r) {
        if (!random) {
            long long lo = std::max(0LL, r - k / 2), hi = std::min(num_rows - 1, r - k / 2 + k - 1);
            for (long long col = lo; col <= hi; ++col)
                c.col_idx.push_back((int)col);
        } else {
            long long len = k / 2 + (long long)(splitmix(seed) % (uint64_t)(k + 1));
            size_t start = c.col_idx.size();
            for (long long j = 0; j < len; ++j)
                c.col_idx.push_back((int)(splitmix(seed) % (uint64_t)num_rows));
            std::sort(c.col_idx.begin() + start, c.col_idx.end());
        }
        if (c.col_idx.size() >= (size_t)INT32_MAX)
            throw std::runtime_error("spmv: nnz must stay below 2^31");
        c.row_ptr[r + 1] = (int)c.col_idx.size();
    }
    c.key = key;
    return c;
}

template <void (*K)(int, const int *, const int *, const float *, const float *, float *), bool Vector>
bench::Prepare entry()
{
    return [](const bench::Launch &L, bench::Pool &P) {
        long long num_rows = L.args.i("num_rows");
        long long k = L.args.i("nnz_per_row", 16);
        bool random = L.args.i("random", 0) != 0;
        if (L.block.y != 1 || L.block.z != 1 || L.grid.y != 1 || L.grid.z != 1 || num_rows <= 0 ||
            num_rows >= (1LL << 30) || k <= 0 || k > 4096 || (long long)L.threads() >= (1LL << 31) ||
            (Vector && L.block.x % 32))
            throw std::runtime_error("spmv rows need 1-D launches, 0 < num_rows < 2^30, 0 < nnz_per_row <= 4096"
                                     " (vector: block a multiple of 32)");
        const Csr &c = build(num_rows, k, random);
        size_t nnz = c.col_idx.size();
        int *row_ptr = P.get<int>("row_ptr", c.row_ptr.size(), bench::Fill::Zero);
        int *col_idx = P.get<int>("col_idx", nnz, bench::Fill::Zero);
        BENCH_CHECK(cudaMemcpy(row_ptr, c.row_ptr.data(), c.row_ptr.size() * sizeof(int), cudaMemcpyHostToDevice));
        BENCH_CHECK(cudaMemcpy(col_idx, c.col_idx.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
        const float *values = P.get<float>("values", nnz);
        const float *x = P.get<float>("x", (size_t)num_rows);
        float *y = P.get<float>("y", (size_t)num_rows, bench::Fill::Zero);
        int nr = (int)num_rows;
        return std::function<void(cudaStream_t)>(
            [=](cudaStream_t s) { K<<<L.grid, L.block, L.smem, s>>>(nr, row_ptr, col_idx, values, x, y); });
    };
}
}  // namespace

void register_kernels(bench::Registry &r)
{
    r.add("spmv_csr_scalar", entry<spmv_csr_scalar, false>());
    r.add("spmv_csr_vector", entry<spmv_csr_vector, true>());
}
