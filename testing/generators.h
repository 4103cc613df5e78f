#pragma once
// RapidCheck generators for SPMD programs (docs/testing.md): meshes, axis subsets, PartitionSpecs,
// dtypes, shapes, arrays whose float sums depend on the order of addition, and reduction orders;
// testing/collective_call_generator.h adds valid collective calls and
// testing/program_generator.h whole programs. Array data comes from a generated 64-bit seed,
// each element a hash of the seed and its index (support/random_array.h), so a case stays cheap
// to generate and is still fully determined by RapidCheck's reproduce string.
//
// The namespace is spmd::testkit rather than spmd::testing: inside namespace spmd, the latter
// would hide GoogleTest's ::testing.

#include <rapidcheck.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "reference/array.h"
#include "reference/collective_call.h"
#include "reference/mesh.h"
#include "reference/partition_spec.h"
#include "reference/reduction_order.h"
#include "support/random_array.h"

namespace spmd {

// How RapidCheck prints our values in a counterexample (found by argument-dependent lookup).
inline void showValue(const Mesh& mesh, std::ostream& os) { os << mesh.to_string(); }
inline void showValue(DType dtype, std::ostream& os) { os << dtype_name(dtype); }
inline void showValue(const PartitionSpec& spec, std::ostream& os) { os << spec.to_string(); }
inline void showValue(ReductionAlgorithm algorithm, std::ostream& os) {
  os << reduction_algorithm_name(algorithm);
}
inline void showValue(const ReductionOrder& order, std::ostream& os) { os << order.describe(); }
inline void showValue(const CollectiveCall& call, std::ostream& os) { os << call.to_string(); }
inline void showValue(const Array& array, std::ostream& os) {
  os << array.type_string() << " " << array.values_string(16);
}

namespace testkit {

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

// `names` in the mesh's order: JAX 0.12 refuses ppermute / pshuffle over names out of mesh order
// (where that changes a group; docs/jax-differences.md), so property tests name them so.
inline std::vector<std::string> in_mesh_order(const Mesh& mesh,
                                              const std::vector<std::string>& names) {
  std::vector<std::string> ordered;
  for (const std::string& name : mesh.axis_names()) {
    if (std::find(names.begin(), names.end(), name) != names.end()) ordered.push_back(name);
  }
  return ordered;
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

// ---- PartitionSpecs

// A PartitionSpec for an array of `rank` dimensions on `mesh`: each mesh axis is left out or
// split one dimension (several axes on one dimension in random order, the first-listed major);
// trailing None entries are written or left out at random (they mean the same).
inline rc::Gen<PartitionSpec> partition_spec(const Mesh& mesh, int rank) {
  return rc::gen::exec([=] {
    std::vector<SpecEntry> entries(static_cast<std::size_t>(rank));
    for (const std::string& name :
         pick_in_random_order(mesh.axis_names(), mesh.axis_names().size())) {
      const int dimension = *rc::gen::inRange(-1, rank);  // -1: the axis splits nothing
      if (dimension >= 0) entries[static_cast<std::size_t>(dimension)].push_back(name);
    }
    std::size_t written = 0;
    for (std::size_t d = 0; d < entries.size(); ++d) {
      if (!entries[d].empty()) written = d + 1;
    }
    entries.resize(*rc::gen::inRange(written, entries.size() + 1));
    return PartitionSpec(std::move(entries));
  });
}

// The global shape whose blocks under `spec` on `mesh` have shape `block`.
inline Shape global_shape(const Shape& block, const PartitionSpec& spec, const Mesh& mesh) {
  Shape global = block;
  for (std::size_t d = 0; d < global.size(); ++d) {
    global[d] *= block_count(spec, mesh, static_cast<int>(d));
  }
  return global;
}

// ---- Arrays

inline rc::Gen<std::uint64_t> seed() { return rc::gen::arbitrary<std::uint64_t>(); }

// An array of `dtype` and `shape` from a generated seed (support/random_array.h): floats are
// m * 2^k with k spread over [-12, options.max_exponent], so a sum folded in another order gives
// other bits; ints and bool are uniform bit patterns (full range: sums wrap); with
// options.special_in > 0, NaN and infinities too.
inline rc::Gen<Array> order_sensitive_array(DType dtype, Shape shape,
                                            RandomArrayOptions options = {}) {
  return rc::gen::map(seed(),
                      [=](std::uint64_t s) { return random_array(dtype, shape, s, options); });
}

// ---- Reduction orders

// An algorithm whose order is modelled for a group of n (gloo_bcube: powers of two and 3; not
// in_switch, whose order nobody knows), with a random ring and small chunk / segment sizes, so
// that small arrays still split into chunks.
inline rc::Gen<ReductionOrder> reduction_order(int n) {
  return rc::gen::exec([=] {
    std::vector<ReductionAlgorithm> algorithms;
    for (ReductionAlgorithm a : kAllReductionAlgorithms) {
      if (order_is_unspecified(a)) continue;
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

}  // namespace testkit
}  // namespace spmd
