// Launch-site patterns for the cuda-frontend tests. Tests find each launch by its
// `// case:` comment. The file also compiles with nvcc (a test checks that).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define N (1 << 20)
#define BLOCK 256
#define TILE 16
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
constexpr int kThreads = 128;
enum { kWarps = 8 };

__global__ void scale(int n, float a, float *x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

__global__ void __launch_bounds__(BLOCK, 2) bounded(const float *__restrict__ in, float *out, int count) {
    __shared__ float s[BLOCK];
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    if (threadIdx.x < count) out[threadIdx.x] = s[BLOCK - 1 - threadIdx.x];
}

__global__ void tile2d(float *m, int width, int height) {
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    if (x < width && y < height) m[y * width + x] += 1.0f;
}

template <typename T>
__global__ void typed(T *p, size_t len) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) p[i] = p[i] + p[i];
}

namespace ops {
__global__ void dyn(float *p, int n) {
    extern __shared__ float buf[];
    buf[threadIdx.x] = p[threadIdx.x];
    __syncthreads();
    if (threadIdx.x < n) p[threadIdx.x] = buf[0];
}
}

// warpsight: grid=64 block=32 n=4096
__global__ void annotated(int n, float *p) {
    if (threadIdx.x < n) p[threadIdx.x] = 0.0f;
}

void run_scale(float *x, int len) {
    scale<<<(len + BLOCK - 1) / BLOCK, BLOCK>>>(len, 2.0f, x);
}

int main(int argc, char **argv) {
    float *x = nullptr;
    cudaMalloc(&x, N * sizeof(float));
    scale<<<4096, 256>>>(N, 1.0f, x);                               // case: literals
    scale<<<(N + BLOCK - 1) / BLOCK, BLOCK>>>(N, 1.0f, x);          // case: macro idiom
    const int grid = CEIL_DIV(N, kThreads);
    scale<<<grid, kThreads>>>(N, 1.0f, x);                          // case: const + constexpr
    dim3 block2(TILE, TILE);
    dim3 grid2(1024 / TILE, 512 / TILE);
    tile2d<<<grid2, block2>>>(x, 1024, 512);                        // case: dim3 variables
    tile2d<<<dim3(2048 / TILE, 64 / TILE), dim3(TILE, TILE, 1)>>>(x, 2048, 64);  // case: inline dim3
    cudaStream_t stream = 0;
    ops::dyn<<<1, kWarps * 32, kWarps * 32 * sizeof(float), stream>>>(x, 7); // case: smem
    typed<float><<<min(65535, (N + 255) / 256), 256>>>(x, N);       // case: template + min
    int n = 10;
    n = 1 << 12;
    bounded<<<n / BLOCK, BLOCK>>>(x, x, n);                         // case: reassigned
    int m = atoi(argv[1]);
    scale<<<(m + 255) / 256, 256>>>(m, 1.0f, x);                    // case: from argv
    run_scale(x, 1 << 16);
    /* scale<<<1, 1>>>(1, 1.0f, x); */ const char *s = "scale<<<2, 2>>>(2, 1.0f, x)";
    // warpsight: grid=7 block=64 m=99
    scale<<<(m + 255) / 256, 256>>>(m, 1.0f, x);                    // case: annotated launch
    dim3 g3;
    g3.x = 12;
    g3.y = N / (1 << 18);
    tile2d<<<g3,
             dim3(TILE, TILE)>>>(x, /* width */ 12 * TILE,
                                 4 * TILE);                          // case: multi-line
    annotated<<<argc, 32>>>(argc, x);                               // case: kernel annotation fills gaps
    printf("%s\n", s);
    return 0;
}
