#include "impl/math/cuda/cuda_compute.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <cublas_v2.h>

#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/device_buffer.hpp"
#include "impl/math/cuda/ns_cuda.hpp"
#include "impl/math/cuda/ns_resident.hpp"

namespace muoncheck::impl {
namespace {

using cuda::check;
using cuda::check_launch;
using cuda::DeviceBuffer;

constexpr int kThreads = 256;
int blocks_for(int64_t n) { return static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65535)); }

#define GRID_STRIDE(i, n) \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// Each expression mirrors optim.cpp operation by operation; _rn intrinsics forbid FMA.
__global__ void k_momentum(float* m, const float* g, int64_t n, double beta, double gw) {
  GRID_STRIDE(i, n) m[i] = __double2float_rn(__dadd_rn(__dmul_rn(beta, m[i]), __dmul_rn(gw, g[i])));
}
__global__ void k_muon_input(float* u, const float* g, const float* m, int64_t n, double beta, double gw) {
  GRID_STRIDE(i, n) u[i] = __double2float_rn(__dadd_rn(__dmul_rn(gw, g[i]), __dmul_rn(beta, m[i])));
}
__global__ void k_muon_apply(float* w, const float* o, int64_t n, double lr, double keep) {
  GRID_STRIDE(i, n) w[i] = __double2float_rn(__dsub_rn(__dmul_rn(w[i], keep), __dmul_rn(lr, o[i])));
}
__global__ void k_adamw(float* w, float* m, float* v, const float* g, int64_t n, double b1, double b2, double eps,
                        double bc1, double bc2, double lr, double keep) {
  GRID_STRIDE(i, n) {
    const double gi = g[i];
    const float mi = __double2float_rn(__dadd_rn(__dmul_rn(b1, m[i]), __dmul_rn(1.0 - b1, gi)));
    const float vi = __double2float_rn(__dadd_rn(__dmul_rn(b2, v[i]), __dmul_rn(__dmul_rn(1.0 - b2, gi), gi)));
    m[i] = mi;
    v[i] = vi;
    const double mhat = __ddiv_rn(mi, bc1), vhat = __ddiv_rn(vi, bc2);
    const double step = __ddiv_rn(__dmul_rn(lr, mhat), __dadd_rn(__dsqrt_rn(vhat), eps));
    w[i] = __double2float_rn(__dsub_rn(__dmul_rn(w[i], keep), step));
  }
}
__global__ void k_scale(float* x, int64_t n, double f) {
  GRID_STRIDE(i, n) x[i] = __double2float_rn(__dmul_rn(x[i], f));
}
__global__ void k_nonfinite(const float* x, int64_t n, int* flag) {
  GRID_STRIDE(i, n) if (!isfinite(x[i])) *flag = 1;      // every writer writes 1: no race on the value
}
// Partial Σx² per block in double; the host adds the partials in block order.
__global__ void k_sum_squares(const float* x, int64_t n, int64_t chunk, double* partial) {
  __shared__ double red[kThreads];
  const int64_t begin = blockIdx.x * chunk, end = min(n, begin + chunk);
  double s = 0.0;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) s += static_cast<double>(x[i]) * x[i];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = red[0];
}

class CudaCompute final : public Compute {
 public:
  CudaCompute(int device, NsKernel kernel) : device_(device), kernel_(kernel) {
    const int count = cuda::device_count();
    if (device < 0 || device >= count)
      throw Error(ErrorKind::Infrastructure, "backend cuda: no CUDA device " + std::to_string(device) + " (" +
                                                 std::to_string(count) + " visible)");
    bind();
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cublasCreate(&handle_), "cublasCreate");
    check(cublasSetStream(handle_, stream_), "cublasSetStream");
    check(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");   // fp32 stays fp32 (no TF32)
    cuda::NsOptions o;
    o.resident = kernel == NsKernel::resident ? cuda::NsOptions::Resident::always
                 : kernel == NsKernel::gemms  ? cuda::NsOptions::Resident::never
                                              : cuda::NsOptions::Resident::by_shape;
    ns_ = std::make_unique<cuda::NsDevice>(handle_, stream_, o);
  }
  ~CudaCompute() override {
    (void)cudaSetDevice(device_);          // the buffers' cudaFree (after this body) needs it too
    if (handle_ != nullptr) (void)cublasDestroy(handle_);
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }

  std::string name() const override { return "cuda:" + std::to_string(device_); }

  Mat orthogonalize_scaled(const Mat& u, int heads, const NsConfig& cfg, ScaleRule rule) override {
    bind();
    const int h = std::max(heads, 1);
    const int64_t hd = u.rows / h, n = u.cols;
    const bool tall = hd > n;                            // NS works on the wide orientation
    const int64_t rows = tall ? n : hd, cols = tall ? hd : n, per = hd * n, total = per * h;
    std::vector<float> staged;
    const float* src = u.v.data();
    if (tall) {                                          // each head block, transposed (host)
      staged.resize(static_cast<size_t>(total));
      for (int k = 0; k < h; ++k)
        for (int64_t i = 0; i < hd; ++i)
          for (int64_t j = 0; j < n; ++j) staged[k * per + j * hd + i] = u.v[k * per + i * n + j];
      src = staged.data();
    }
    auto* f = static_cast<float*>(b0_.reserve(sizeof(float) * total));
    void* x = b1_.reserve(static_cast<size_t>(dtype_bytes(cfg.dtype)) * total);
    upload(f, src, total);
    cuda::to_dtype(cfg.dtype, f, x, total, stream_);
    if (kernel_ == NsKernel::resident && !cuda::resident_fits(h, rows, cols, cfg))
      throw Error(ErrorKind::Unsupported,
                  "--ns-kernel resident: the resident NS kernel cannot run the " +
                      std::string(cfg.method == NsMethod::gram ? "gram" : "standard") + " NS of " + std::to_string(h) + " × " +
                      std::to_string(rows) + "×" + std::to_string(cols) + " " + std::string(dtype_name(cfg.dtype)) + ", " +
                      std::to_string(cfg.steps) + " steps (it takes " + cuda::resident_scope() + ")");
    const void* o = ns_->run(x, h, rows, cols, cfg);
    cuda::from_dtype_scaled(cfg.dtype, o, f, total, static_cast<float>(scale_factor(rule, hd, n)), stream_);
    Mat out(u.rows, u.cols);
    if (!tall) {
      download(out.v.data(), f, total);
    } else {
      download(staged.data(), f, total);
      for (int k = 0; k < h; ++k)
        for (int64_t i = 0; i < hd; ++i)
          for (int64_t j = 0; j < n; ++j) out.v[k * per + i * n + j] = staged[k * per + j * hd + i];
    }
    return out;
  }

  void momentum_update(float* m, const float* g, int64_t n, double beta, MomentumForm form) override {
    if (n <= 0) return;
    bind();
    float* dm = stage(b0_, m, n);
    const float* dg = stage(b1_, g, n);
    k_momentum<<<blocks_for(n), kThreads, 0, stream_>>>(dm, dg, n, beta, form == MomentumForm::ema ? 1.0 - beta : 1.0);
    check_launch("k_momentum");
    download(m, dm, n);
  }

  void muon_input(float* u, const float* g, const float* m, int64_t n, double beta, MomentumForm form,
                  bool nesterov) override {
    if (n <= 0) return;
    if (!nesterov) {                                     // U = M: a copy, nothing to compute
      std::copy_n(m, n, u);
      return;
    }
    bind();
    const float* dg = stage(b0_, g, n);
    const float* dm = stage(b1_, m, n);
    auto* du = static_cast<float*>(b2_.reserve(sizeof(float) * n));
    k_muon_input<<<blocks_for(n), kThreads, 0, stream_>>>(du, dg, dm, n, beta,
                                                           form == MomentumForm::ema ? 1.0 - beta : 1.0);
    check_launch("k_muon_input");
    download(u, du, n);
  }

  void muon_apply(float* w, const float* o, int64_t n, double lr, double wd) override {
    if (n <= 0) return;
    bind();
    float* dw = stage(b0_, w, n);
    const float* d_o = stage(b1_, o, n);
    k_muon_apply<<<blocks_for(n), kThreads, 0, stream_>>>(dw, d_o, n, lr, 1.0 - lr * wd);
    check_launch("k_muon_apply");
    download(w, dw, n);
  }

  void adamw_update(float* w, float* m, float* v, const float* g, int64_t n, const AdamConfig& c, int t, double lr,
                    double wd) override {
    if (n <= 0) return;
    bind();
    float* dw = stage(b0_, w, n);
    float* dm = stage(b1_, m, n);
    float* dv = stage(b2_, v, n);
    const float* dg = stage(b3_, g, n);
    const double bc1 = 1.0 - std::pow(c.beta1, t), bc2 = 1.0 - std::pow(c.beta2, t);   // as optim.cpp
    k_adamw<<<blocks_for(n), kThreads, 0, stream_>>>(dw, dm, dv, dg, n, c.beta1, c.beta2, c.eps, bc1, bc2, lr,
                                                      1.0 - lr * wd);
    check_launch("k_adamw");
    download(w, dw, n);
    download(m, dm, n);
    download(v, dv, n);
  }

  double sum_squares(const float* x, int64_t n) override {
    if (n <= 0) return 0.0;
    bind();
    const float* dx = stage(b0_, x, n);
    const int64_t chunk = 64 * 1024;
    const int64_t parts = (n + chunk - 1) / chunk;
    auto* partial = static_cast<double*>(scratch_.reserve(sizeof(double) * parts));
    k_sum_squares<<<static_cast<unsigned>(parts), kThreads, 0, stream_>>>(dx, n, chunk, partial);
    check_launch("k_sum_squares");
    std::vector<double> host(static_cast<size_t>(parts));
    download(host.data(), partial, parts);
    double s = 0.0;
    for (double p : host) s += p;
    return s;
  }

  bool all_finite(const float* x, int64_t n) override {
    if (n <= 0) return true;
    bind();
    const float* dx = stage(b0_, x, n);
    auto* flag = static_cast<int*>(scratch_.reserve(sizeof(int)));
    check(cudaMemsetAsync(flag, 0, sizeof(int), stream_), "cudaMemsetAsync");
    k_nonfinite<<<blocks_for(n), kThreads, 0, stream_>>>(dx, n, flag);
    check_launch("k_nonfinite");
    int host = 0;
    download(&host, flag, 1);
    return host == 0;
  }

  void scale_inplace(float* x, int64_t n, double factor) override {
    if (n <= 0) return;
    bind();
    float* dx = stage(b0_, x, n);
    k_scale<<<blocks_for(n), kThreads, 0, stream_>>>(dx, n, factor);
    check_launch("k_scale");
    download(x, dx, n);
  }

 private:
  void bind() const { check(cudaSetDevice(device_), "cudaSetDevice"); }

  template <class T>
  void upload(T* dst, const T* src, int64_t n) {
    check(cudaMemcpyAsync(dst, src, sizeof(T) * n, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync H2D");
  }
  // Synchronous with respect to the host: the stream's work (and any kernel error) is done.
  template <class T>
  void download(T* dst, const T* src, int64_t n) {
    check(cudaMemcpyAsync(dst, src, sizeof(T) * n, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync D2H");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  float* stage(DeviceBuffer& b, const float* host, int64_t n) {
    auto* d = static_cast<float*>(b.reserve(sizeof(float) * n));
    upload(d, host, n);
    return d;
  }

  int device_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  NsKernel kernel_ = NsKernel::by_shape;
  std::unique_ptr<cuda::NsDevice> ns_;
  DeviceBuffer b0_, b1_, b2_, b3_, scratch_;
};

}  // namespace

std::unique_ptr<Compute> make_cuda_compute(int device, NsKernel kernel) {
  return std::make_unique<CudaCompute>(device, kernel);
}

}  // namespace muoncheck::impl
