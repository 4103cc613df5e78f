#pragma once
// PartitionSpec: for each array dimension, the mesh axes it is split over, in listed order (the
// first-listed axis is the most significant). An empty entry is None (not split). Missing
// trailing entries mean None.

#include <initializer_list>
#include <string>
#include <vector>

#include "reference/array.h"
#include "reference/mesh.h"

namespace spmd {

using SpecEntry = std::vector<std::string>;  // {} = None, {"x"} = 'x', {"x","y"} = ('x','y')

class PartitionSpec {
 public:
  PartitionSpec() = default;
  explicit PartitionSpec(std::vector<SpecEntry> entries) : entries_(std::move(entries)) {}

  const std::vector<SpecEntry>& entries() const { return entries_; }
  int length() const { return static_cast<int>(entries_.size()); }
  // The entry for dimension d; None beyond the written length.
  const SpecEntry& entry(int d) const;

  // Every mesh axis named anywhere in the spec, as a bit mask over mesh axes.
  VaryingAxes named_axes_mask(const Mesh& mesh) const;

  // "P('x', None)", "P(('x', 'y'),)", "P()", as JAX prints specs.
  std::string to_string() const;

  friend bool operator==(const PartitionSpec&, const PartitionSpec&) = default;

 private:
  std::vector<SpecEntry> entries_;
};

// Checks a spec against a mesh: every axis exists and appears once. `field` names the spec in
// the error ("in_specs[0]").
void validate_spec(const PartitionSpec& spec, const Mesh& mesh, const std::string& field);

// Number of blocks dimension d is split into: the product of its axes' sizes.
std::int64_t block_count(const PartitionSpec& spec, const Mesh& mesh, int d);

// The block index along dimension d held by the device at `coordinates`: the combined index of
// its coordinates along the entry's axes, first-listed axis major.
std::int64_t block_index(const PartitionSpec& spec, const Mesh& mesh, int d,
                         const std::vector<int>& coordinates);

// The block of `global` that `device` holds under `spec` (shape: each dim divided by its block
// count). The caller has checked rank and divisibility.
Array device_block(const Array& global, const PartitionSpec& spec, const Mesh& mesh, int device);

// Which replica of its block `device` holds: replicas of a block (devices that differ only along
// axes the spec omits) are numbered 0, 1, ... in device id order (sharding_impls.py replica_id).
int replica_id(const PartitionSpec& spec, const Mesh& mesh, int device);

// The global array whose blocks are `per_device` (indexed by device id) under `spec`. For a
// block held by several devices (replicas along axes the spec omits), the first device in id
// order that holds it is read, as np.asarray reads a JAX array (array.py).
Array assemble_global(const std::vector<Array>& per_device, const PartitionSpec& spec,
                      const Mesh& mesh);

}  // namespace spmd
