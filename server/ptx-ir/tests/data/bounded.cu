// Loops whose count depends on data but that a counted exit bounds (ptx-ir
// `Loop::trip_bounds`): an escape-time iteration tested as one `and.pred`, a search that
// `break`s out of a counted `for`, and a convergence loop capped at five steps.
__global__ void escape(unsigned char *img, const float *c, int max_iter)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    float cr = c[x], zr = 0, zi = 0;
    int it = 0;
    while (zr * zr + zi * zi < 4.0f && it < max_iter) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + 0.5f;
        zr = t;
        ++it;
    }
    img[x] = it;
}

__global__ void search(const int *a, int *pos, int key, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int found = -1;
#pragma unroll 1
    for (int i = 0; i < n; ++i) {
        if (a[x * n + i] == key) {
            found = i;
            break;
        }
    }
    pos[x] = found;
}

__global__ void newton(float *v)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    float y = v[x], e = 1.0f;
#pragma unroll 1
    for (int it = 0; it < 5 && e > 1e-6f; ++it) {
        float yn = 0.5f * (y + v[x] / y);
        e = fabsf(yn - y);
        y = yn;
    }
    v[x] = y;
}
