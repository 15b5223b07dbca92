__constant__ float k[4] = {1.f, 2.f, 3.f, 4.f};
__device__ float g[16];
struct S { float a, b, c, d; };
__device__ __attribute__((noinline)) S mk(float x) { S s{x, x*2, x*3, x*4}; return s; }
__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i] + k[i & 3];
}
__global__ void red(float* out, const float* in, int n) {
  __shared__ float s[256];
  float acc = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc += in[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int st = blockDim.x / 2; st > 0; st >>= 1) { if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st]; __syncthreads(); }
  if (threadIdx.x == 0) { S v = mk(s[0]); out[blockIdx.x] = v.a + v.d; g[1] = v.b; }
  double d = in[0]; out[1] = (float)(d * 1.0e-3 + 0.5);
}
