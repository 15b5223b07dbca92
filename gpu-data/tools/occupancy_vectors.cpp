// Generates reference occupancy vectors from NVIDIA's cuda_occupancy.h.
//
// Why: the Rust reimplementation in server/gpu-spec/src/occupancy.rs must match NVIDIA's
// calculator exactly; these vectors are that check. The header is NVIDIA's and is never
// committed: it ships in the PyPI wheel nvidia-cuda-runtime (CUDA 13.5). Build and run:
//
//   CUDA=.cuda/lib/python3.11/site-packages/nvidia/cu13
//   g++ -O1 -std=c++17 -I$CUDA/include gpu-data/tools/occupancy_vectors.cpp -o /tmp/occvec
//   /tmp/occvec occ  > tests/golden/occupancy/occupancy-generated.csv
//   /tmp/occvec best > tests/golden/occupancy/blocksize-generated.csv
//
// The device properties below are the CUDA Programming Guide values per compute
// capability (the same numbers as gpu-data/compute-capabilities.toml; the Rust test
// builds its properties from that file, so a disagreement shows up as a failure).
// The random generator is a fixed 64-bit LCG so the output is reproducible.

#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cuda_occupancy.h>

struct Cc {
    int major, minor, threads_per_sm, regs_per_block;
    size_t smem_per_sm, smem_optin, reserved;
};

static const Cc CCS[] = {
    {5, 0, 2048, 65536, 65536, 49152, 0},
    {5, 2, 2048, 65536, 98304, 49152, 0},
    {5, 3, 2048, 32768, 65536, 49152, 0},
    {6, 0, 2048, 65536, 65536, 49152, 0},
    {6, 1, 2048, 65536, 98304, 49152, 0},
    {6, 2, 2048, 32768, 65536, 49152, 0},
    {7, 0, 2048, 65536, 98304, 98304, 0},
    {7, 2, 2048, 65536, 98304, 98304, 0},
    {7, 5, 1024, 65536, 65536, 65536, 0},
    {8, 0, 2048, 65536, 167936, 166912, 1024},
    {8, 6, 1536, 65536, 102400, 101376, 1024},
    {8, 7, 1536, 65536, 167936, 166912, 1024},
    {8, 9, 1536, 65536, 102400, 101376, 1024},
    {9, 0, 2048, 65536, 233472, 232448, 1024},
    {10, 0, 2048, 65536, 233472, 232448, 1024},
    {10, 3, 2048, 65536, 233472, 232448, 1024},
    {11, 0, 1536, 65536, 233472, 232448, 1024},
    {12, 0, 1536, 65536, 102400, 101376, 1024},
    {12, 1, 1536, 65536, 102400, 101376, 1024},
};

static uint64_t rng_state = 0x5eed2024u;
static uint32_t rnd(uint32_t n) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((rng_state >> 33) % n);
}

static cudaOccDeviceProp props_for(const Cc &c) {
    cudaOccDeviceProp p;
    p.computeMajor = c.major;
    p.computeMinor = c.minor;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsPerMultiprocessor = c.threads_per_sm;
    p.regsPerBlock = c.regs_per_block;
    p.regsPerMultiprocessor = 65536;
    p.warpSize = 32;
    p.sharedMemPerBlock = 49152;
    p.sharedMemPerMultiprocessor = c.smem_per_sm;
    p.numSms = 100;
    p.sharedMemPerBlockOptin = c.smem_optin;
    p.reservedSharedMemPerBlock = c.reserved;
    return p;
}

static const int BARRIERS[] = {0, 1, 1, 1, 1, 2, 3, 4, 16};
static const int CARVEOUTS[] = {-1, -1, -1, -1, 0, 10, 25, 50, 60, 100};

int main(int argc, char **argv) {
    const bool best = argc > 1 && strcmp(argv[1], "best") == 0;
    const int n_cc = sizeof(CCS) / sizeof(CCS[0]);
    if (!best) {
        printf("cc,threads,regs,dyn_smem,static_smem,barriers,carveout,cache_config,shmem_optin,max_dyn_smem,pgc,virtual,"
               "status,blocks_per_sm,limiters,limit_regs,limit_smem,limit_warps,limit_blocks,limit_barriers,alloc_regs,alloc_smem\n");
        for (int i = 0; i < 2400; i++) {
            const Cc &c = CCS[i % n_cc];
            cudaOccDeviceProp p = props_for(c);
            cudaOccFuncAttributes a;
            int threads = rnd(10) == 0 ? 1 + rnd(1100) : 32 * (1 + rnd(32)) - (rnd(4) == 0 ? rnd(31) : 0);
            a.maxThreadsPerBlock = 1024;
            a.numRegs = rnd(8) == 0 ? rnd(260) : 8 * rnd(17);
            a.sharedSizeBytes = rnd(4) == 0 ? rnd(rnd(2) ? 8192 : 49153) : 0;
            a.partitionedGCConfig = (cudaOccPartitionedGCConfig)(rnd(4) == 0 ? 1 + rnd(2) : 0);
            a.shmemLimitConfig = rnd(5) == 0 ? FUNC_SHMEM_LIMIT_DEFAULT : FUNC_SHMEM_LIMIT_OPTIN;
            size_t optin = c.smem_optin > 49152 ? c.smem_optin : 49152;
            a.maxDynamicSharedSizeBytes = rnd(10) == 0 ? rnd(120000) : (optin > a.sharedSizeBytes ? optin - a.sharedSizeBytes : 0);
            a.numBlockBarriers = BARRIERS[rnd(9)];
            a.virtualResourceCount = rnd(6) == 0 ? 1 + rnd(40) : 0;
            size_t dyn = 0;
            switch (rnd(4)) {
                case 0: dyn = 0; break;
                case 1: dyn = 1024 * rnd(32); break;
                case 2: dyn = rnd(8) == 0 ? rnd(240000) : rnd(40000); break;
                default: dyn = 256 * rnd(64); break;
            }
            cudaOccDeviceState s;
            s.carveoutConfig = CARVEOUTS[rnd(10)];
            s.cacheConfig = (cudaOccCacheConfig)(rnd(5) == 0 ? rnd(4) : 0);
            cudaOccResult r;
            memset(&r, 0, sizeof(r));
            cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, threads, dyn);
            printf("%d.%d,%d,%d,%zu,%zu,%d,%d,%d,%d,%zu,%d,%d,%d,%d,%u,%d,%d,%d,%d,%d,%d,%zu\n", c.major, c.minor, threads, a.numRegs, dyn,
                   a.sharedSizeBytes, a.numBlockBarriers, s.carveoutConfig, (int)s.cacheConfig,
                   a.shmemLimitConfig == FUNC_SHMEM_LIMIT_OPTIN ? 1 : 0, a.maxDynamicSharedSizeBytes, (int)a.partitionedGCConfig,
                   a.virtualResourceCount, (int)e, r.activeBlocksPerMultiprocessor, r.limitingFactors, r.blockLimitRegs,
                   r.blockLimitSharedMem, r.blockLimitWarps, r.blockLimitBlocks, r.blockLimitBarriers, r.allocatedRegistersPerBlock,
                   r.allocatedSharedMemPerBlock);
        }
    } else {
        printf("cc,regs,static_smem,dyn_smem,smem_per_thread,barriers,status,block_size,min_grid_size\n");
        for (int i = 0; i < 400; i++) {
            const Cc &c = CCS[i % n_cc];
            cudaOccDeviceProp p = props_for(c);
            cudaOccFuncAttributes a;
            a.maxThreadsPerBlock = 1024;
            a.numRegs = 8 * rnd(33);
            a.sharedSizeBytes = rnd(3) == 0 ? rnd(20000) : 0;
            a.partitionedGCConfig = PARTITIONED_GC_OFF;
            a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
            a.maxDynamicSharedSizeBytes = c.smem_optin > a.sharedSizeBytes ? c.smem_optin - a.sharedSizeBytes : 0;
            a.numBlockBarriers = 1;
            a.virtualResourceCount = 0;
            cudaOccDeviceState s;
            // Half the cases use dynamic shared memory proportional to the block size.
            size_t dyn = rnd(2) == 0 ? 1024 * rnd(40) : 0;
            size_t per_thread = rnd(2) == 0 ? 4 * rnd(33) : 0;
            int min_grid = 0, block = 0;
            cudaOccError e = cudaOccMaxPotentialOccupancyBlockSizeVariableSMem(
                &min_grid, &block, &p, &a, &s, [=](int bs) { return dyn + per_thread * (size_t)bs; });
            printf("%d.%d,%d,%zu,%zu,%zu,%d,%d,%d,%d\n", c.major, c.minor, a.numRegs, a.sharedSizeBytes, dyn, per_thread,
                   a.numBlockBarriers, (int)e, block, min_grid);
        }
    }
    return 0;
}
