#pragma once
// RapidCheck generators for spmdsim's property tests: meshes, axis subsets, dtypes, shapes, array
// data, and a harness that runs one function per device through shard_map and hands back each
// device's results. Array data comes from a generated 64-bit seed expanded by SplitMix64
// (support/random_array.h), so a case stays cheap to generate and is still fully determined by
// RapidCheck's reproduce string.

#include <rapidcheck.h>

#include <bit>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "reference/array.h"
#include "reference/backend.h"
#include "reference/mesh.h"
#include "reference/partition_spec.h"
#include "reference/reduction_order.h"
#include "reference/shard_map.h"
#include "support/random_array.h"

namespace spmd::collectives {
inline void showValue(Algorithm algorithm, std::ostream& os) { os << algorithm_name(algorithm); }
inline void showValue(CollectiveKind kind, std::ostream& os) { os << collective_kind_name(kind); }
}  // namespace spmd::collectives

namespace spmd {

// How RapidCheck prints our values in a counterexample (found by argument-dependent lookup).
inline void showValue(const Mesh& mesh, std::ostream& os) { os << mesh.to_string(); }
inline void showValue(DType dtype, std::ostream& os) { os << dtype_name(dtype); }
inline void showValue(const PartitionSpec& spec, std::ostream& os) { os << spec.to_string(); }
inline void showValue(ReductionAlgorithm algorithm, std::ostream& os) {
  os << reduction_algorithm_name(algorithm);
}
inline void showValue(const Array& array, std::ostream& os) {
  os << array.type_string() << " " << array.values_string(16);
}

namespace test_gen {

// ---- Meshes and axes

// 1..max_devices devices, a random factorization into min_axes..max_axes axes (axes of size 1
// included), axis names drawn without repetition from a pool of JAX-like names.
inline rc::Gen<Mesh> mesh(int min_axes = 1, int max_axes = 3, int max_devices = 16) {
  return rc::gen::exec([=] {
    const int axis_count = *rc::gen::inRange(min_axes, max_axes + 1);
    const int devices = *rc::gen::inRange(1, max_devices + 1);
    std::vector<int> shape;
    int rest = devices;
    for (int k = 0; k + 1 < axis_count; ++k) {
      std::vector<int> divisors;
      for (int f = 1; f <= rest; ++f) {
        if (rest % f == 0) divisors.push_back(f);
      }
      const int f = *rc::gen::elementOf(divisors);
      shape.push_back(f);
      rest /= f;
    }
    shape.push_back(rest);
    static const std::vector<std::string> kNames = {"i",    "j",     "k",    "x",     "y",  "z",
                                                    "data", "model", "pipe", "batch", "_a", "dev0"};
    std::vector<std::string> pool = kNames;
    std::vector<std::string> names;
    for (int k = 0; k < axis_count; ++k) {
      const auto pick = *rc::gen::inRange<std::size_t>(0, pool.size());
      names.push_back(pool[pick]);
      pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(pick));
    }
    return Mesh(std::move(shape), std::move(names));
  });
}

// A random arrangement of `count` distinct values from `values`.
template <class T>
std::vector<T> pick_in_random_order(std::vector<T> values, std::size_t count) {
  std::vector<T> picked;
  for (std::size_t k = 0; k < count; ++k) {
    const auto index = *rc::gen::inRange<std::size_t>(0, values.size());
    picked.push_back(values[index]);
    values.erase(values.begin() + static_cast<std::ptrdiff_t>(index));
  }
  return picked;
}

// A random permutation of 0..n-1.
inline rc::Gen<std::vector<int>> permutation(int n) {
  return rc::gen::exec([=] {
    std::vector<int> values;
    for (int i = 0; i < n; ++i) values.push_back(i);
    return pick_in_random_order(values, values.size());
  });
}

// A non-empty subset of the mesh's axis names, in random order.
inline rc::Gen<std::vector<std::string>> axis_subset(const Mesh& mesh, int min_count = 1) {
  return rc::gen::exec([=] {
    const auto count = *rc::gen::inRange<std::size_t>(static_cast<std::size_t>(min_count),
                                                      mesh.axis_names().size() + 1);
    return pick_in_random_order(mesh.axis_names(), count);
  });
}

// The number of devices in each group of a collective over `names` (product of their sizes).
inline int group_size(const Mesh& mesh, const std::vector<std::string>& names) {
  int n = 1;
  for (const std::string& name : names) n *= mesh.axis_size(name);
  return n;
}

// ---- Dtypes and shapes

inline const std::vector<DType>& float_dtypes() {
  static const std::vector<DType> v = {DType::float64, DType::float32, DType::float16,
                                       DType::bfloat16};
  return v;
}
inline const std::vector<DType>& integer_dtypes() {
  static const std::vector<DType> v = {DType::int64, DType::int32, DType::int8, DType::uint8};
  return v;
}
inline const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> v(std::begin(kAllDTypes), std::end(kAllDTypes));
  return v;
}
inline rc::Gen<DType> dtype_of(const std::vector<DType>& dtypes) {
  return rc::gen::elementOf(dtypes);
}

// A shape of rank min_rank..max_rank with dims 1..max_dim.
inline rc::Gen<Shape> shape(int min_rank = 0, int max_rank = 3, std::int64_t max_dim = 3) {
  return rc::gen::exec([=] {
    const int rank = *rc::gen::inRange(min_rank, max_rank + 1);
    Shape s;
    for (int d = 0; d < rank; ++d) s.push_back(*rc::gen::inRange<std::int64_t>(1, max_dim + 1));
    return s;
  });
}

// A shape of rank >= 1 whose dim `axis` is a multiple of `multiple` (1..max_multiple times it);
// the other dims are 1..max_dim.
inline Shape shape_with_multiple(int rank, int axis, std::int64_t multiple,
                                 std::int64_t max_multiple = 2, std::int64_t max_dim = 3) {
  Shape s = *shape(rank, rank, max_dim);
  s[static_cast<std::size_t>(axis)] =
      multiple * *rc::gen::inRange<std::int64_t>(1, max_multiple + 1);
  return s;
}

// ---- Data

// Array contents (support/random_array.h), under the names the property tests use.
using DataOptions = RandomArrayOptions;
using ::spmd::random_array;
using ::spmd::random_per_device;

inline rc::Gen<std::uint64_t> seed() { return rc::gen::arbitrary<std::uint64_t>(); }

// ---- Reduction orders

// An algorithm whose order is modelled for a group of n (gloo_bcube: powers of two and 3), with
// a random ring and small chunk / segment sizes, so that small arrays still split into chunks.
inline rc::Gen<ReductionOrder> reduction_order(int n) {
  return rc::gen::exec([=] {
    std::vector<ReductionAlgorithm> algorithms;
    for (ReductionAlgorithm a : kAllReductionAlgorithms) {
      if (a == ReductionAlgorithm::gloo_bcube && !std::has_single_bit(static_cast<unsigned>(n)) &&
          n != 3) {
        continue;
      }
      algorithms.push_back(a);
    }
    ReductionOrder order;
    order.algorithm = *rc::gen::elementOf(algorithms);
    if (*rc::gen::arbitrary<bool>()) order.ring = *permutation(n);
    order.nccl_chunk_bytes = *rc::gen::element<std::int64_t>(8, 16, 64, 2 * 1024 * 1024);
    order.gloo_max_segment_bytes = *rc::gen::element<std::int64_t>(1, 8, 24, 1024 * 1024);
    return order;
  });
}

// reduction_order(group_size) as a backend is given it: a ring, when there is one, over the
// mesh's device ids (each group folds along it restricted to its members, for_group).
inline rc::Gen<ReductionOrder> backend_reduction_order(int group_size, const Mesh& mesh) {
  return rc::gen::exec([=] {
    ReductionOrder order = *reduction_order(group_size);
    if (!order.ring.empty()) order.ring = *permutation(mesh.device_count());
    return order;
  });
}

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
  const int n = group_size(mesh, names);
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

}  // namespace test_gen
}  // namespace spmd
