// The CPU Compute: a thin forward to the reference kernels in optim.cpp and
// newton_schulz.cpp, and the backend factory.
#include "core/error.hpp"
#include "impl/math/compute.hpp"
#include "impl/math/optim.hpp"

#ifdef MUONCHECK_HAVE_CUDA
#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/cuda_compute.hpp"
#endif

namespace muoncheck::impl {

std::string compute_backend_name(ComputeBackend b) { return b == ComputeBackend::cuda ? "cuda" : "cpu"; }  // CHECK_EXCL_BR_LINE: another build's backend

// The command line's --backend; `check` passes the default, so only one name is parsed there.
bool parse_compute_backend(const std::string& s, ComputeBackend& out) {
  if (s == "cpu") out = ComputeBackend::cpu;
  else if (s == "cuda") out = ComputeBackend::cuda;
  else return false;
  return true;
}

std::string ns_kernel_name(NsKernel k) {
  return k == NsKernel::resident ? "resident" : k == NsKernel::gemms ? "gemms" : "default";
}

bool parse_ns_kernel(const std::string& s, NsKernel& out) {
  if (s == "default") out = NsKernel::by_shape;
  else if (s == "resident") out = NsKernel::resident;
  else if (s == "gemms") out = NsKernel::gemms;
  else return false;
  return true;
}


namespace {

class CpuCompute final : public Compute {
 public:
  std::string name() const override { return "cpu"; }
  Mat orthogonalize_scaled(const Mat& u, int heads, const NsConfig& cfg, ScaleRule rule) override {
    return impl::orthogonalize_scaled(u, heads, cfg, rule);
  }
  void momentum_update(float* m, const float* g, int64_t n, double beta, MomentumForm form) override {
    impl::momentum_update(m, g, n, beta, form);
  }
  void muon_input(float* u, const float* g, const float* m, int64_t n, double beta, MomentumForm form,
                  bool nesterov) override {
    impl::muon_input(u, g, m, n, beta, form, nesterov);
  }
  void muon_apply(float* w, const float* o, int64_t n, double lr, double wd) override {
    impl::muon_apply(w, o, n, lr, wd);
  }
  void adamw_update(float* w, float* m, float* v, const float* g, int64_t n, const AdamConfig& c, int t, double lr,
                    double wd) override {
    impl::adamw_update(w, m, v, g, n, c, t, lr, wd);
  }
  double sum_squares(const float* x, int64_t n) override { return impl::sum_squares(x, n); }
  bool all_finite(const float* x, int64_t n) override { return impl::all_finite(x, n); }
  void scale_inplace(float* x, int64_t n, double factor) override { impl::scale_inplace(x, n, factor); }
};

}  // namespace

std::unique_ptr<Compute> make_cpu_compute() { return std::make_unique<CpuCompute>(); }

// CHECK_EXCL_START: another build's backend
int cuda_device_count() {
#ifdef MUONCHECK_HAVE_CUDA
  return cuda::device_count();
#else
  return 0;
#endif
}
// CHECK_EXCL_STOP

std::unique_ptr<Compute> make_compute(ComputeBackend b, int device, NsKernel kernel) {
  if (b == ComputeBackend::cpu) return make_cpu_compute();  // CHECK_EXCL_BR_LINE: another build's backend
#ifdef MUONCHECK_HAVE_CUDA
  return make_cuda_compute(device, kernel);
#else
  (void)device;
  (void)kernel;
  throw Error(ErrorKind::Unsupported, "backend cuda: this muoncheck was built without CUDA (-DMUONCHECK_CUDA=OFF)");  // CHECK_EXCL_LINE: another build's backend
#endif
}

}  // namespace muoncheck::impl
