#pragma once
// What spmdsim's own property tests add to the testing kit's generators (testing/generators.h):
// how RapidCheck prints the simulator's algorithms, a harness that runs one function per device
// through shard_map and hands back each device's results, and collective groups written from
// JAX's rule independently of reference/collective_groups.h.

#include <rapidcheck.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "reference/backend.h"
#include "reference/shard_map.h"
#include "testing/generators.h"

namespace spmd::collectives {
inline void showValue(Algorithm algorithm, std::ostream& os) { os << algorithm_name(algorithm); }
inline void showValue(CollectiveKind kind, std::ostream& os) { os << collective_kind_name(kind); }
}  // namespace spmd::collectives

namespace spmd::test_gen {

// ---- Running one function per device

// Device d's input arguments in, device d's outputs out.
using PerDeviceBody = std::function<Values(Context&, const Values&)>;

// Runs `body` on every device of `mesh` with shard_map: argument j of device d is
// per_device_args[d][j]. Each argument travels as a global array stacked on a new leading axis
// split over all mesh axes in mesh order (block index = device id), and each of the
// `output_count` results comes back the same way. Returns results[d][j].
inline std::vector<Values> run_per_device(Backend& backend, const Mesh& mesh,
                                          const std::vector<Values>& per_device_args,
                                          int output_count, const PerDeviceBody& body,
                                          bool check_vma = true) {
  const PartitionSpec all_axes({SpecEntry(mesh.axis_names())});
  const std::size_t arg_count = per_device_args.empty() ? 0 : per_device_args.front().size();
  Values globals;
  for (std::size_t j = 0; j < arg_count; ++j) {
    std::vector<Array> column;
    for (const Values& args : per_device_args) column.push_back(args.at(j));
    globals.push_back(stack(column, 0));
  }
  ShardMapOptions options;
  options.in_specs.assign(arg_count, all_axes);
  options.out_specs.assign(static_cast<std::size_t>(output_count), all_axes);
  options.check_vma = check_vma;
  const DeviceFunction function = [&](Context& ctx, const Values& blocks) {
    Values locals;
    for (const Array& b : blocks) locals.push_back(take(b, 0, 0));
    Values outputs;
    for (const Array& y : body(ctx, locals)) outputs.push_back(expand_dims(y, 0));
    return outputs;
  };
  const Values out = run_shard_map(backend, mesh, function, options, globals);
  std::vector<Values> results(static_cast<std::size_t>(mesh.device_count()));
  for (int d = 0; d < mesh.device_count(); ++d) {
    for (const Array& o : out) results[static_cast<std::size_t>(d)].push_back(take(o, 0, d));
  }
  return results;
}

// The devices of the group of `device` for a collective over `names`, in rank order: the
// combined index over the named axes, first-named axis major (JAX pxla.py _axis_groups), the
// other coordinates those of `device`. Written from the rule, independently of collective_groups.
inline std::vector<int> group_members(const Mesh& mesh, const std::vector<std::string>& names,
                                      int device) {
  const int n = testkit::group_size(mesh, names);
  std::vector<int> members;
  for (int r = 0; r < n; ++r) {
    std::vector<int> coords = mesh.coordinates(device);
    int rest = r;
    for (std::size_t i = names.size(); i-- > 0;) {
      const int k = mesh.find_axis(names[i]);
      const int size = mesh.shape()[static_cast<std::size_t>(k)];
      coords[static_cast<std::size_t>(k)] = rest % size;
      rest /= size;
    }
    members.push_back(mesh.device_at(coords));
  }
  return members;
}

// The combined index of `device` over `names`, first-named axis major.
inline int combined_index(const Mesh& mesh, const std::vector<std::string>& names, int device) {
  const std::vector<int> coords = mesh.coordinates(device);
  int index = 0;
  for (const std::string& name : names) {
    const int k = mesh.find_axis(name);
    index = index * mesh.shape()[static_cast<std::size_t>(k)] + coords[static_cast<std::size_t>(k)];
  }
  return index;
}

}  // namespace spmd::test_gen
