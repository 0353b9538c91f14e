// The math a rank engine delegates to a backend: Newton–Schulz (the hot spot) and the
// elementwise optimizer kernels of docs/semantics.md §4. Buffers are host memory; a device backend
// stages them. The CPU backend (impl/math/*.cpp) is the default and the reference: the
// CUDA backend's elementwise kernels are bit-identical to it, its NS differs only by the
// accumulation order of cuBLAS (within the control's band). One Compute per rank thread.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "core/scenario.hpp"
#include "impl/math/newton_schulz.hpp"

namespace muoncheck::impl {

// What the next orthogonalize_scaled call is for: the optimizer step and the index of the
// Muon param whose whole update it orthogonalizes. One context labels one call; -1: unset.
struct NsContext {
  int step = -1;
  int param = -1;
};

enum class ComputeBackend { cpu, cuda };
std::string compute_backend_name(ComputeBackend b);
bool parse_compute_backend(const std::string& s, ComputeBackend& out);

// Which Newton–Schulz path a cuda backend takes (--ns-kernel): the default's rule by shape
// (by_shape, "default"), the resident kernel for every call (resident: a call it cannot run is
// Unsupported, so a run either used it throughout or says why not), or the GEMMs for every call
// (gemms). The cpu backend has one path.
enum class NsKernel { by_shape, resident, gemms };
std::string ns_kernel_name(NsKernel k);   // "default", "resident", "gemms"
bool parse_ns_kernel(const std::string& s, NsKernel& out);

class Compute {
 public:
  virtual ~Compute() = default;
  virtual std::string name() const = 0;   // "cpu", "cuda:0", ...

  // O = NS(U)·scale, per head when heads > 1 (one batched call over the heads).
  virtual Mat orthogonalize_scaled(const Mat& u, int heads, const NsConfig& cfg, ScaleRule rule) = 0;

  // The elementwise kernels; each has the contract of its namesake in impl/math/optim.hpp.
  virtual void momentum_update(float* m, const float* g, int64_t n, double beta, MomentumForm form) = 0;
  virtual void muon_input(float* u, const float* g, const float* m, int64_t n, double beta, MomentumForm form,
                          bool nesterov) = 0;
  virtual void muon_apply(float* w, const float* o, int64_t n, double lr, double wd) = 0;
  virtual void adamw_update(float* w, float* m, float* v, const float* g, int64_t n, const AdamConfig& c, int t,
                            double lr, double wd) = 0;
  virtual double sum_squares(const float* x, int64_t n) = 0;
  virtual bool all_finite(const float* x, int64_t n) = 0;
  virtual void scale_inplace(float* x, int64_t n, double factor) = 0;

  // Labels the next NS call; plain backends ignore it, the counting decorator
  // (counting_compute.hpp) records the call under it once the call has run.
  virtual void set_ns_context(const NsContext& ctx) { (void)ctx; }
};

std::unique_ptr<Compute> make_cpu_compute();

// CUDA devices visible to this process; 0 without CUDA (build or driver) or without a GPU.
int cuda_device_count();

// `device` is the CUDA ordinal a cuda backend binds to, `kernel` its NS path (both ignored for
// cpu). Throws Unsupported when this build has no CUDA, Infrastructure when the device is absent.
std::unique_ptr<Compute> make_compute(ComputeBackend b, int device, NsKernel kernel = NsKernel::by_shape);

}  // namespace muoncheck::impl
