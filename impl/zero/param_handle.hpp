// A parameter as a rank holds it: the layer shape (DeepSpeed's ds_shape) kept beside
// the local tensor, whose shape is the full layer shape when the param is materialized
// and a flat (k,) partition slice — possibly (0,) — when it is a ZeRO-3 placeholder.
// Anything that asks "what kind of layer is this" must read ds_shape, never local_shape.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace muoncheck::impl {

struct ParamHandle {
  int index = 0;                         // position in the model's parameter list
  std::string name;
  std::vector<int64_t> ds_shape;         // the layer shape
  std::vector<int64_t> local_shape;      // the shape of the tensor this rank holds
  int64_t flat_offset = 0;               // first element in the flat buffer
  int64_t numel = 0;                     // elements of the layer shape
  std::optional<int> explicit_heads;     // num_heads given in the scenario file
  bool is_placeholder() const { return local_shape.size() == 1 && local_shape != ds_shape; }
};

}  // namespace muoncheck::impl
