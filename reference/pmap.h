#pragma once
// pmap: map a per-device function over one named axis (jax.pmap, which JAX now implements as
// jit(shard_map(...)) with check_vma=False). Mapped inputs are split along their in_axis and
// the axis is removed (squeezed); outputs get it back at out_axis and are stacked. in_axes None
// replicates an input; out_axes None returns device 0's value.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "reference/backend.h"
#include "reference/jax_version.h"

namespace spmd {

struct PmapOptions {
  std::string axis_name = "_internal_pmap_axis_name";  // JAX's name when axis_name=None
  // One entry per positional argument (by original index, static ones included); empty means
  // every argument is mapped on axis 0. std::nullopt replicates the argument.
  std::vector<std::optional<int>> in_axes;
  // One entry per output; empty means every output is stacked on axis 0.
  std::vector<std::optional<int>> out_axes;
  // Arguments passed to every device unchanged and not mapped.
  std::vector<int> static_broadcasted_argnums;
  // If given, must equal the mapped size (JAX: "Specified axis_size ... doesn't match").
  std::optional<int> axis_size;
  // If given, the backend devices to run on, in logical order (only the first n are used).
  std::optional<std::vector<int>> devices;
  // The JAX release whose collective checks the body's collectives make
  // (reference/jax_version.h): 0.12 unless 0.10 is asked for.
  JaxVersion jax_version = kDefaultJaxVersion;
};

Values run_pmap(Backend& backend, const DeviceFunction& function, const PmapOptions& options,
                const Values& args);

// pmap(f, options) as a callable: result(backend, args).
std::function<Values(Backend&, const Values&)> pmap(DeviceFunction function, PmapOptions options);

}  // namespace spmd
