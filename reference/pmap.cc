#include "reference/pmap.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace spmd {
namespace {

bool is_static(const PmapOptions& options, std::size_t argument) {
  const auto& argnums = options.static_broadcasted_argnums;
  return std::find(argnums.begin(), argnums.end(), static_cast<int>(argument)) != argnums.end();
}

std::optional<int> in_axis_of(const PmapOptions& options, std::size_t argument) {
  return options.in_axes.empty() ? std::optional<int>(0) : options.in_axes[argument];
}

void check_options(const PmapOptions& options, const Values& args, int backend_devices) {
  for (int argnum : options.static_broadcasted_argnums) {
    if (argnum < 0 || static_cast<std::size_t>(argnum) >= args.size()) {
      // JAX quotes the whole tuple as Python prints it: "(1,)", "(0, 3)".
      const auto& argnums = options.static_broadcasted_argnums;
      const std::size_t n = args.size();
      throw Error(fmt::format(
          "pmapped function has static_broadcasted_argnums=({}{}) but was called with only {} "
          "positional argument{}. All static broadcasted arguments must be passed positionally.",
          fmt::join(argnums, ", "), argnums.size() == 1 ? "," : "", n, n > 1 ? "s" : ""));
    }
  }
  if (!options.in_axes.empty() && options.in_axes.size() != args.size()) {
    throw Error(fmt::format(
        "pmap in_axes has {} entries but the function was called with {} positional arguments: "
        "in_axes must be a tree prefix of the tuple of arguments passed positionally to the "
        "pmapped function",
        options.in_axes.size(), args.size()));
  }
  if (options.devices) {
    if (options.devices->empty()) {
      throw Error("'devices' argument to pmap must be non-empty, or None.");
    }
    std::set<int> seen;
    for (int device : *options.devices) {
      if (device < 0 || device >= backend_devices || !seen.insert(device).second) {
        throw Error(fmt::format("pmap devices contains {}, expected distinct device ids in [0, {})",
                                device, backend_devices));
      }
    }
  }
}

// The mapped size: that of the first mapped argument; every other mapped argument must agree.
int mapped_size(const PmapOptions& options, const Values& args) {
  std::optional<std::size_t> first;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::optional<int> axis = in_axis_of(options, i);
    if (is_static(options, i) || !axis) continue;
    if (*axis < 0 || *axis >= args[i].rank()) {
      throw Error(fmt::format(
          "pmap in_axes[{0}] = {1} does not fit argument {0} of type {2}, expected 0 <= axis < {3} "
          "(negative pmap axes are not supported)",
          i, *axis, args[i].type_string(), args[i].rank()));
    }
    if (!first) {
      first = i;
      continue;
    }
    const int first_axis = *in_axis_of(options, *first);
    if (args[i].dim(*axis) != args[*first].dim(first_axis)) {
      throw Error(fmt::format(
          "pmap got inconsistent sizes for array axes to be mapped (mapped axis sizes differ): "
          "argument {} has size {} on axis {}, argument {} of type {} has size {} on axis {}",
          *first, args[*first].dim(first_axis), first_axis, i, args[i].type_string(),
          args[i].dim(*axis), *axis));
    }
  }
  if (!first) throw Error("pmap requires at least one argument with a mapped axis.");
  return static_cast<int>(args[*first].dim(*in_axis_of(options, *first)));
}

std::vector<Values> split_by_axes(const PmapOptions& options, const Values& args, int n) {
  std::vector<Values> per_device(static_cast<std::size_t>(n));
  for (int device = 0; device < n; ++device) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::optional<int> axis = in_axis_of(options, i);
      per_device[static_cast<std::size_t>(device)].push_back(
          is_static(options, i) || !axis ? args[i].with_varying_axes(0)
                                         : take(args[i], *axis, device).with_varying_axes(1));
    }
  }
  return per_device;
}

Values stack_by_axes(const PmapOptions& options, const std::vector<Values>& per_device) {
  const std::size_t count = per_device.front().size();
  if (!options.out_axes.empty() && options.out_axes.size() != count) {
    throw Error(fmt::format(
        "pmap out_axes has {} entries but the function returned {} values (pytree structure "
        "error: different lengths of tuple)",
        options.out_axes.size(), count));
  }
  Values outputs;
  for (std::size_t j = 0; j < count; ++j) {
    const std::optional<int> axis = options.out_axes.empty() ? 0 : options.out_axes[j];
    if (!axis) {  // device 0's buffer, as np.asarray reads an out_axes=None result
      outputs.push_back(per_device.front()[j].with_varying_axes(0));
      continue;
    }
    std::vector<Array> pieces;
    for (const Values& device_outputs : per_device) {
      const Array& piece = device_outputs.at(j);
      if (piece.dtype() != per_device.front()[j].dtype() ||
          piece.shape() != per_device.front()[j].shape()) {
        throw Error(fmt::format("pmap: output {} differs in type between devices ({} vs {})", j,
                                piece.type_string(), per_device.front()[j].type_string()));
      }
      pieces.push_back(piece);
    }
    const int rank = pieces.front().rank();
    if (*axis < 0 || *axis > rank) {
      throw Error(fmt::format(
          "pmap out_axes[{0}] = {1} does not fit output {0} of type {2}, expected 0 <= axis <= {3}",
          j, *axis, pieces.front().type_string(), rank));
    }
    outputs.push_back(stack(pieces, *axis).with_varying_axes(0));
  }
  return outputs;
}

}  // namespace

Values run_pmap(Backend& backend, const DeviceFunction& function, const PmapOptions& options,
                const Values& args) {
  if (DeviceScope::active()) {
    throw Error(
        "pmap called inside a pmap or shard_map body: nested pmap is not supported (JAX "
        "0.8+ raises \"The context mesh ... should match the mesh passed to shard_map\")");
  }
  check_options(options, args, backend.device_count());
  const int n = mapped_size(options, args);
  if (options.axis_size && *options.axis_size != n) {
    throw Error(fmt::format("Specified axis_size {} doesn't match received axis_size {}.",
                            *options.axis_size, n));
  }
  const int available =
      options.devices ? static_cast<int>(options.devices->size()) : backend.device_count();
  if (n > available) {
    throw Error(fmt::format(
        "pmap: mapped axis size {0} needs {0} devices but only {1} are available on backend '{2}' "
        "(JAX raises IndivisibleError or ValueError here)",
        n, available, backend.name()));
  }
  const Mesh mesh({n}, {options.axis_name});
  const std::vector<Values> outputs =
      backend.run(mesh, split_by_axes(options, args, n),
                  with_jax_version(function, options.jax_version), /*check_vma=*/false);
  return stack_by_axes(options, outputs);
}

std::function<Values(Backend&, const Values&)> pmap(DeviceFunction function, PmapOptions options) {
  return [function = std::move(function), options = std::move(options)](Backend& backend,
                                                                        const Values& args) {
    return run_pmap(backend, function, options, args);
  };
}

}  // namespace spmd
