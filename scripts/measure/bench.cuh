// Timing harness for scripts/measure: times the repository's fixture kernels on a real GPU
// and prints one line per row, which run.py turns into `warpsight validate` rows.
//
// A driver (scripts/measure/drivers/NAME.cu) includes the fixture source and this header and
// defines `void register_kernels(Registry &r)`, one entry per kernel base name: the entry
// allocates and fills the kernel's buffers from the row's arguments (untimed) and returns the
// launch. The harness then, per row:
//   - launches once and checks the launch and the execution (a failure ends the row);
//   - times each launch alone with CUDA events recorded around it on one stream
//     (CUDA Runtime API, "Event Management": cudaEventElapsedTime has a resolution of about
//     half a microsecond), after overwriting a buffer twice the L2's size so that every timed
//     launch starts with a cold L2, as a single launch in an application does;
//   - repeats until 200 ms of kernel time or 30 launches (at least 5) and reports the median.
//
// Usage: DRIVER ROWS_TSV START_INDEX. Each line of ROWS_TSV is
//   index \t kernel \t grid \t block \t dynamic_smem \t args
// (grid and block as X, XxY or XxYxZ; args as name=value;name=value). The binary prints
//   RESULT \t index \t median_ms \t launches \t min_ms \t max_ms
// or
//   FAILED \t index \t reason
// and flushes after each line, so that run.py can restart it after the row that brought the
// context down (an illegal address ends every later launch in the process).
//
// With BENCH_PROFILE set in the environment, each row's launch runs once more after the
// warm-up, after the L2 flush, between cudaProfilerStart and cudaProfilerStop, and is not
// timed: under `ncu --profile-from-start off` exactly one launch per row is profiled, in row
// order (run.py --profile).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

namespace bench {

#define BENCH_CHECK(call)                                                                      \
    do {                                                                                       \
        cudaError_t bench_err_ = (call);                                                       \
        if (bench_err_ != cudaSuccess)                                                         \
            throw std::runtime_error(std::string(#call) + ": " + cudaGetErrorString(bench_err_)); \
    } while (0)

// A row's arguments: name=value pairs. Values are integers, or floating point where a kernel
// takes a float (f()).
struct Args {
    std::map<std::string, std::string> kv;
    bool has(const std::string &k) const { return kv.count(k) != 0; }
    long long i(const std::string &k) const
    {
        auto it = kv.find(k);
        if (it == kv.end())
            throw std::runtime_error("row lacks argument " + k);
        return std::stoll(it->second, nullptr, 0);
    }
    long long i(const std::string &k, long long dflt) const { return has(k) ? i(k) : dflt; }
    double f(const std::string &k) const
    {
        auto it = kv.find(k);
        if (it == kv.end())
            throw std::runtime_error("row lacks argument " + k);
        return std::stod(it->second);
    }
    double f(const std::string &k, double dflt) const { return has(k) ? f(k) : dflt; }
};

struct Launch {
    dim3 grid, block;
    size_t smem = 0;
    Args args;
    // Total threads in x, y, z: what a buffer sized by the launch needs.
    size_t threads() const
    {
        return (size_t)grid.x * grid.y * grid.z * block.x * block.y * block.z;
    }
    // Argument `name`, an element count that a kernel indexes with an int: positive, and
    // with the launch's thread count added still under 2^31.
    long long int_count(const std::string &name) const
    {
        const long long n = args.i(name);
        if (n < 1 || n + (long long)threads() >= (1ll << 31))
            throw std::runtime_error(name + " and the thread count must fit in an int");
        return n;
    }
};

enum class Fill {
    Zero,      // all bytes 0
    Uniform,   // floats/doubles uniform in [0, 1); integers: all bits random
    Bytes,     // every byte random (0..255)
    SmallInt,  // 32-bit integers uniform in [0, modulus)
    Iota,      // 32-bit integers 0, 1, 2, ...
};

// Device-side fills: a counter-based hash, so that fills run at memory speed and the same
// seed gives the same data.
__device__ inline uint32_t bench_hash(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

__global__ void bench_fill_u32(uint32_t *p, size_t n, uint32_t seed, int mode, uint32_t modulus)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = bench_hash(((uint64_t)seed << 40) ^ i);
        uint32_t v;
        switch (mode) {
        case 1: v = h; break;                                 // random bits
        case 2: v = modulus ? h % modulus : h; break;         // small integers
        case 3: v = (uint32_t)i; break;                       // iota
        case 4: v = __float_as_uint((h >> 8) * (1.0f / 16777216.0f)); break; // float [0,1)
        default: v = 0; break;
        }
        p[i] = v;
    }
}

__global__ void bench_fill_f64(double *p, size_t n, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (bench_hash(((uint64_t)seed << 40) ^ i) >> 8) * (1.0 / 16777216.0);
}

// Values uniform in [lo, hi): lo + (hi - lo) * u in float, u the hash's top 24 bits over
// 2^24, converted to T (float, or __half where the driver's source includes cuda_fp16.h).
// The same seed gives the same data, so a slot the pool reuses may be filled again.
template <typename T> __global__ void bench_fill_range(T *p, size_t n, float lo, float hi, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = static_cast<T>(lo + (hi - lo) * ((bench_hash(((uint64_t)seed << 40) ^ i) >> 8) * (1.0f / 16777216.0f)));
}

// Fills p[0, n) as bench_fill_range does, and waits for it.
template <typename T> void fill_range(T *p, size_t n, float lo, float hi, uint32_t seed)
{
    bench_fill_range<T><<<1024, 256>>>(p, n, lo, hi, seed);
    BENCH_CHECK(cudaGetLastError());
    BENCH_CHECK(cudaDeviceSynchronize());
}

// Buffers by slot: a slot keeps its allocation across rows while its size and fill stay the
// same, so that a sweep over launch shapes does not refill gigabytes for every row.
class Pool {
  public:
    struct Buf {
        void *p = nullptr;
        size_t bytes = 0;
        int kind = -1;
        uint32_t mod = 0;
    };
    ~Pool()
    {
        for (auto &b : bufs_)
            cudaFree(b.second.p);
    }
    void release_all()
    {
        for (auto &b : bufs_)
            cudaFree(b.second.p);
        bufs_.clear();
    }
    // `count` elements of T, filled as asked. kind codes the element type for the fill.
    template <typename T> T *get(const std::string &slot, size_t count, Fill fill = Fill::Uniform, uint32_t modulus = 0)
    {
        size_t bytes = std::max<size_t>(count * sizeof(T), 16);
        bytes = (bytes + 15) / 16 * 16;
        int kind = (int)fill * 16 + (int)(std::is_floating_point<T>::value ? sizeof(T) : 0);
        Buf &b = bufs_[slot];
        if (b.p && b.bytes == bytes && b.kind == kind && b.mod == modulus)
            return (T *)b.p;
        if (b.p)
            BENCH_CHECK(cudaFree(b.p));
        b = Buf{};
        BENCH_CHECK(cudaMalloc(&b.p, bytes));
        b.bytes = bytes;
        b.kind = kind;
        b.mod = modulus;
        fill_buffer(b.p, bytes, fill, sizeof(T), std::is_floating_point<T>::value, modulus, (uint32_t)bufs_.size());
        return (T *)b.p;
    }
    // Resets a buffer to zero before every timed launch (an accumulator, a histogram).
    void zero_before_launch(const std::string &slot) { zero_slots_.push_back(slot); }
    void before_launch(cudaStream_t s)
    {
        for (auto &z : zero_slots_) {
            auto it = bufs_.find(z);
            if (it != bufs_.end())
                BENCH_CHECK(cudaMemsetAsync(it->second.p, 0, it->second.bytes, s));
        }
    }
    void clear_row_state() { zero_slots_.clear(); }

  private:
    static void fill_buffer(void *p, size_t bytes, Fill fill, size_t elem, bool fp, uint32_t modulus, uint32_t seed)
    {
        if (fill == Fill::Zero) {
            BENCH_CHECK(cudaMemset(p, 0, bytes));
            return;
        }
        if (fill == Fill::Uniform && fp && elem == 8) {
            bench_fill_f64<<<1024, 256>>>((double *)p, bytes / 8, seed);
        } else {
            int mode = 1;
            if (fill == Fill::Uniform && fp && elem == 4)
                mode = 4;
            else if (fill == Fill::SmallInt)
                mode = 2;
            else if (fill == Fill::Iota)
                mode = 3;
            bench_fill_u32<<<1024, 256>>>((uint32_t *)p, bytes / 4, seed, mode, modulus);
        }
        BENCH_CHECK(cudaGetLastError());
        BENCH_CHECK(cudaDeviceSynchronize());
    }
    std::map<std::string, Buf> bufs_;
    std::vector<std::string> zero_slots_;
};

// A slot's buffer of `count` values uniform in [lo, hi) as fill_range makes them (float, or
// __half where the driver includes cuda_fp16.h), filled again on every call.
template <typename T> T *range_buffer(Pool &P, const std::string &slot, size_t count, float lo, float hi, uint32_t seed)
{
    T *p = P.get<T>(slot, count, Fill::Zero);
    fill_range(p, count, lo, hi, seed);
    return p;
}

using Prepare = std::function<std::function<void(cudaStream_t)>(const Launch &, Pool &)>;

struct Registry {
    std::map<std::string, Prepare> entries;
    void add(const std::string &kernel, Prepare p) { entries[kernel] = std::move(p); }
};

inline dim3 parse_dim(const std::string &s)
{
    unsigned v[3] = {1, 1, 1};
    std::stringstream ss(s);
    std::string part;
    int k = 0;
    while (std::getline(ss, part, 'x')) {
        if (k >= 3)
            throw std::runtime_error("bad dimension " + s);
        v[k++] = (unsigned)std::stoul(part);
    }
    return dim3(v[0], v[1], v[2]);
}

inline Args parse_args(const std::string &s)
{
    Args a;
    std::stringstream ss(s);
    std::string part;
    while (std::getline(ss, part, ';')) {
        if (part.empty())
            continue;
        auto eq = part.find('=');
        if (eq == std::string::npos)
            throw std::runtime_error("bad argument " + part);
        a.kv[part.substr(0, eq)] = part.substr(eq + 1);
    }
    return a;
}

inline std::vector<std::string> split_tabs(const std::string &line)
{
    std::vector<std::string> out;
    std::string cur;
    for (char c : line) {
        if (c == '\t') {
            out.push_back(cur);
            cur.clear();
        } else if (c != '\r' && c != '\n') {
            cur.push_back(c);
        }
    }
    out.push_back(cur);
    return out;
}

}  // namespace bench

void register_kernels(bench::Registry &r);

int main(int argc, char **argv)
{
    using namespace bench;
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s ROWS_TSV START_INDEX\n", argv[0]);
        return 2;
    }
    Registry reg;
    register_kernels(reg);
    long start = std::atol(argv[2]);
    std::ifstream in(argv[1]);
    std::string line;
    std::vector<std::vector<std::string>> rows;
    while (std::getline(in, line))
        if (!line.empty())
            rows.push_back(split_tabs(line));

    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
    size_t flush_bytes = (size_t)std::max(l2, 1 << 20) * 2;
    void *flush = nullptr;
    if (cudaMalloc(&flush, flush_bytes) != cudaSuccess) {
        std::printf("FAILED\t-1\tcannot allocate the L2 flush buffer\n");
        return 1;
    }
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    Pool pool;
    int flip = 0;
    // Raise the clocks from idle before the first row: 100 ms of memory traffic.
    {
        float busy = 0;
        while (busy < 100.0f) {
            cudaEventRecord(e0, stream);
            for (int k = 0; k < 20; ++k)
                cudaMemsetAsync(flush, flip++ & 0xff, flush_bytes, stream);
            cudaEventRecord(e1, stream);
            if (cudaEventSynchronize(e1) != cudaSuccess)
                break;
            float ms = 0;
            cudaEventElapsedTime(&ms, e0, e1);
            busy += ms;
        }
    }

    for (auto &f : rows) {
        if (f.size() < 6) {
            std::printf("FAILED\t%s\tmalformed row\n", f.empty() ? "?" : f[0].c_str());
            continue;
        }
        long index = std::atol(f[0].c_str());
        if (index < start)
            continue;
        try {
            auto it = reg.entries.find(f[1]);
            if (it == reg.entries.end())
                throw std::runtime_error("no driver entry for kernel " + f[1]);
            Launch L;
            L.grid = parse_dim(f[2]);
            L.block = parse_dim(f[3]);
            L.smem = f[4].empty() ? 0 : (size_t)std::stoull(f[4]);
            L.args = parse_args(f[5]);
            pool.clear_row_state();
            auto launch = it->second(L, pool);
            BENCH_CHECK(cudaDeviceSynchronize());
            // Warm-up launch: module load, first-touch, and the error check.
            pool.before_launch(stream);
            launch(stream);
            BENCH_CHECK(cudaGetLastError());
            BENCH_CHECK(cudaStreamSynchronize(stream));
            if (std::getenv("BENCH_PROFILE")) {
                BENCH_CHECK(cudaMemsetAsync(flush, flip++ & 0xff, flush_bytes, stream));
                pool.before_launch(stream);
                BENCH_CHECK(cudaStreamSynchronize(stream));
                BENCH_CHECK(cudaProfilerStart());
                launch(stream);
                BENCH_CHECK(cudaStreamSynchronize(stream));
                BENCH_CHECK(cudaProfilerStop());
                BENCH_CHECK(cudaGetLastError());
                std::printf("RESULT\t%ld\t0\t1\t0\t0\n", index);
                std::fflush(stdout);
                continue;
            }
            std::vector<float> times;
            float total = 0;
            while ((times.size() < 5 || total < 200.0f) && times.size() < 30) {
                BENCH_CHECK(cudaMemsetAsync(flush, flip++ & 0xff, flush_bytes, stream));
                pool.before_launch(stream);
                BENCH_CHECK(cudaEventRecord(e0, stream));
                launch(stream);
                BENCH_CHECK(cudaEventRecord(e1, stream));
                BENCH_CHECK(cudaGetLastError());
                BENCH_CHECK(cudaEventSynchronize(e1));
                float ms = 0;
                BENCH_CHECK(cudaEventElapsedTime(&ms, e0, e1));
                times.push_back(ms);
                total += ms;
            }
            std::vector<float> s = times;
            std::sort(s.begin(), s.end());
            float med = s.size() % 2 ? s[s.size() / 2] : 0.5f * (s[s.size() / 2 - 1] + s[s.size() / 2]);
            std::printf("RESULT\t%ld\t%.6f\t%zu\t%.6f\t%.6f\n", index, med, s.size(), s.front(), s.back());
        } catch (const std::exception &e) {
            std::printf("FAILED\t%ld\t%s\n", index, e.what());
            std::fflush(stdout);
            // A sticky error (illegal address, launch failure) poisons the context: end the
            // process and let run.py restart after this row.
            cudaError_t sticky = cudaDeviceSynchronize();
            if (sticky != cudaSuccess)
                return 3;
            pool.release_all();
        }
        std::fflush(stdout);
    }
    return 0;
}
