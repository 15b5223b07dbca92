#include <cuda_runtime.h>
#include <cuda/barrier>
__constant__ float coeffs[16];
__device__ int gcounter;
__device__ __noinline__ float helper(float a, float b) { return a * b + coeffs[3]; }
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = helper(a[i], b[i]);
}
__global__ void __launch_bounds__(256, 2) reduce(const float* in, float* out, int n) {
  __shared__ float s[256];
  int t = threadIdx.x;
  s[t] = t < n ? in[t] : 0.f;
  __syncthreads();
  for (int k = 128; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
  if (t == 0) { atomicAdd(out, s[0]); atomicAdd(&gcounter, 1); }
  float v = s[t];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  if (t == 0) out[1] = v;
}
__global__ void transpose(float* o, const float* in, int w) {
  __shared__ float tile[32][33];
  int x = blockIdx.x*32 + threadIdx.x, y = blockIdx.y*32+threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y*w+x];
  __syncthreads();
  o[x*w+y] = tile[threadIdx.x][threadIdx.y];
}
__global__ void vec4(float4* o, const float4* __restrict__ in, double d) {
  float4 v = __ldg(&in[threadIdx.x]);
  v.x += (float)d; v.y *= 1.5f;
  o[threadIdx.x] = v;
  printf("hello %d %f\n", threadIdx.x, d);
}
__global__ void dynsmem(float* o) {
  extern __shared__ float ds[];
  ds[threadIdx.x] = o[threadIdx.x];
  __syncthreads();
  o[threadIdx.x] = ds[(threadIdx.x+1)%blockDim.x] / 3.0;
}
