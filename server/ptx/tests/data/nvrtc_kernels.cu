extern "C" __global__ void stencil(float* o, const float* i, int w, int h) {
  __shared__ float t[18][18];
  int x = blockIdx.x*16+threadIdx.x, y = blockIdx.y*16+threadIdx.y;
  t[threadIdx.y+1][threadIdx.x+1] = i[y*w+x];
  __syncthreads();
  float s = 0; 
  #pragma unroll 1
  for (int k = 0; k < h; ++k) s += t[threadIdx.y][threadIdx.x] * 0.25f + (float)k;
  o[y*w+x] = s;
}
extern "C" __global__ void dgemm(double* c, const double* a, const double* b, int n) {
  int r = blockIdx.y*blockDim.y+threadIdx.y, col = blockIdx.x*blockDim.x+threadIdx.x;
  double acc = 0.0;
  for (int k = 0; k < n; ++k) acc += a[r*n+k]*b[k*n+col];
  c[r*n+col] = acc;
}
