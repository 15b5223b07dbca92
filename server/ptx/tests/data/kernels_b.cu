#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_pipeline.h>
namespace cg = cooperative_groups;
using namespace nvcuda;
__global__ void wmma_k(const half* a, const half* b, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16); wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
__global__ void pipe(float* out, const float* in) {
  __shared__ float s[128];
  __pipeline_memcpy_async(&s[threadIdx.x], &in[threadIdx.x], sizeof(float));
  __pipeline_commit(); __pipeline_wait_prior(0);
  cg::thread_block tb = cg::this_thread_block();
  cg::thread_block_tile<32> w = cg::tiled_partition<32>(tb);
  float v = cg::reduce(w, s[threadIdx.x], cg::plus<float>());
  unsigned m = __ballot_sync(0xffffffff, v > 0);
  int r = __reduce_add_sync(0xffffffff, (int)v);
  out[threadIdx.x] = v + __popc(m) + r + __any_sync(~0u, v<0) + __match_any_sync(~0u, r);
}
__global__ void halfk(__half2* o, const __half2* a, __nv_bfloat16* p, double d) {
  __half2 x = __hmul2(a[threadIdx.x], a[threadIdx.x+1]);
  o[threadIdx.x] = __hfma2(x, x, a[0]);
  p[threadIdx.x] = __float2bfloat16(__bfloat162float(p[threadIdx.x]) * 2.f);
  double e = exp(d) + sin(d) + rsqrt((float)d) + __sinf((float)d);
  o[1] = __float2half2_rn((float)e);
}
__device__ int fib(int n) { return n < 2 ? n : fib(n-1) + fib(n-2); }
typedef float (*fp)(float);
__device__ float f1(float x) { return x + 1; }
__device__ float f2(float x) { return x * 2; }
__device__ fp tbl[2] = {f1, f2};
__global__ void indirect(float* o, int s) {
  o[threadIdx.x] = tbl[s & 1](o[threadIdx.x]) + fib(s);
  switch (s) { case 0: o[0] = 1; break; case 1: o[1]=2; break; case 2: o[2]=3; break; case 3: o[3] = 4; break; case 5: o[5]=7; break; default: break; }
}
__global__ void grid_stride(float* x, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    x[i] = x[i] * 2.0f + 1.0f;
    atomicMax((int*)&x[0], (int)i); atomicCAS((unsigned long long*)x, 0ull, 1ull);
  }
  __threadfence(); __nanosleep(100);
  unsigned long long t = clock64(); if (t == 7) __trap();
}
__global__ void hopper(int* out, const int* in) {
  unsigned r;
  asm volatile("{\n.reg .pred P;\nelect.sync %0|P, 0xffffffff;\n}" : "=r"(r) :: );
  asm volatile("griddepcontrol.wait;");
  asm volatile("griddepcontrol.launch_dependents;");
  __shared__ alignas(16) unsigned long long bar;
  __shared__ alignas(128) int buf[256];
  unsigned sbar = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned sbuf = (unsigned)__cvta_generic_to_shared(buf);
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sbar));
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 1024;" :: "r"(sbar));
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 1024, [%2];" :: "r"(sbuf), "l"(in), "r"(sbar) : "memory");
  asm volatile("{\n.reg .pred P1;\nLAB_WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n@P1 bra DONE;\nbra LAB_WAIT;\nDONE:\n}" :: "r"(sbar));
  asm volatile("fence.proxy.async.shared::cta;");
  asm volatile("wgmma.fence.sync.aligned;");
  asm volatile("wgmma.commit_group.sync.aligned;");
  asm volatile("wgmma.wait_group.sync.aligned 0;");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" :: "r"(sbuf), "r"(r), "r"(r), "r"(r), "r"(r));
  unsigned a0,a1,a2,a3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(a0),"=r"(a1),"=r"(a2),"=r"(a3) : "r"(sbuf));
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" :: "r"(sbuf), "l"(in), "r"(0), "r"(0), "r"(sbar) : "memory");
  asm volatile("cp.async.bulk.commit_group;");
  asm volatile("cp.async.bulk.wait_group.read 0;");
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;");
  out[threadIdx.x] = buf[threadIdx.x] + r + a0 + a1 + a2 + a3;
}
