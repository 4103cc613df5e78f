#include "reference/partition_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <ranges>

namespace spmd {
namespace {

const SpecEntry kNoneEntry;

std::string entry_to_string(const SpecEntry& entry) {
  if (entry.empty()) return "None";
  if (entry.size() == 1) return fmt::format("'{}'", entry[0]);
  return fmt::format("('{}')", fmt::join(entry, "', '"));
}

// Block indices of every dimension of a rank-`rank` array for the device at `coordinates`.
std::vector<std::int64_t> block_indices(const PartitionSpec& spec, const Mesh& mesh, int rank,
                                        const std::vector<int>& coordinates) {
  std::vector<std::int64_t> indices(static_cast<std::size_t>(rank));
  for (int d = 0; d < rank; ++d) {
    indices[static_cast<std::size_t>(d)] = block_index(spec, mesh, d, coordinates);
  }
  return indices;
}

// Concatenates the blocks of the grid cells that start with `prefix`, one dimension at a time.
Array assemble_from(const std::map<std::vector<std::int64_t>, const Array*>& blocks,
                    const std::vector<std::int64_t>& counts, std::vector<std::int64_t>& prefix) {
  const std::size_t d = prefix.size();
  if (d == counts.size()) return *blocks.at(prefix);
  std::vector<Array> parts;
  for (std::int64_t b = 0; b < counts[d]; ++b) {
    prefix.push_back(b);
    parts.push_back(assemble_from(blocks, counts, prefix));
    prefix.pop_back();
  }
  return parts.size() == 1 ? parts[0] : concatenate(parts, static_cast<int>(d));
}

}  // namespace

const SpecEntry& PartitionSpec::entry(int d) const {
  return d < length() ? entries_[static_cast<std::size_t>(d)] : kNoneEntry;
}

VaryingAxes PartitionSpec::named_axes_mask(const Mesh& mesh) const {
  VaryingAxes mask = 0;
  for (const SpecEntry& e : entries_) {
    for (const std::string& name : e) {
      const int k = mesh.find_axis(name);
      if (k >= 0) mask |= VaryingAxes{1} << k;
    }
  }
  return mask;
}

std::string PartitionSpec::to_string() const {
  // One tuple entry keeps Python's trailing comma: "P(('x', 'y'),)".
  const bool trailing_comma = entries_.size() == 1 && entries_[0].size() > 1;
  return fmt::format("P({}{})", fmt::join(entries_ | std::views::transform(entry_to_string), ", "),
                     trailing_comma ? "," : "");
}

void validate_spec(const PartitionSpec& spec, const Mesh& mesh, const std::string& field) {
  std::vector<std::string> seen;
  for (const SpecEntry& e : spec.entries()) {
    for (const std::string& name : e) {
      if (mesh.find_axis(name) < 0) {
        throw Error(fmt::format(
            "{0}: Resource axis: {1} of {2} is not found in mesh: {3} (unknown mesh axis '{1}')",
            field, name, spec.to_string(), mesh.names_string()));
      }
      for (const std::string& s : seen) {
        if (s == name) {
          throw Error(fmt::format(
              "{}: A single NamedSharding spec specification can map every mesh axis to at most "
              "one positional dimension, but {} has duplicate entries for `{}`",
              field, spec.to_string(), name));
        }
      }
      seen.push_back(name);
    }
  }
}

std::int64_t block_count(const PartitionSpec& spec, const Mesh& mesh, int d) {
  std::int64_t count = 1;
  for (const std::string& name : spec.entry(d)) count *= mesh.axis_size(name);
  return count;
}

std::int64_t block_index(const PartitionSpec& spec, const Mesh& mesh, int d,
                         const std::vector<int>& coordinates) {
  std::int64_t index = 0;
  for (const std::string& name : spec.entry(d)) {
    const int k = mesh.find_axis(name);
    index = index * mesh.shape()[static_cast<std::size_t>(k)] +
            coordinates[static_cast<std::size_t>(k)];
  }
  return index;
}

Array device_block(const Array& global, const PartitionSpec& spec, const Mesh& mesh, int device) {
  const std::vector<int> coords = mesh.coordinates(device);
  Array block = global;
  for (int d = 0; d < global.rank(); ++d) {
    const std::int64_t count = block_count(spec, mesh, d);
    if (count == 1) continue;
    const std::int64_t length = global.dim(d) / count;
    const std::int64_t start = block_index(spec, mesh, d, coords) * length;
    block = slice(block, d, start, start + length);
  }
  return block;
}

int replica_id(const PartitionSpec& spec, const Mesh& mesh, int device) {
  // Replicas differ only along the omitted axes; number them row-major over those, in mesh
  // order, which is the order of device ids among the replicas.
  const VaryingAxes named = spec.named_axes_mask(mesh);
  const std::vector<int> coords = mesh.coordinates(device);
  int id = 0;
  for (int k = 0; k < mesh.axis_count(); ++k) {
    if (named >> k & 1) continue;
    id = id * mesh.shape()[static_cast<std::size_t>(k)] + coords[static_cast<std::size_t>(k)];
  }
  return id;
}

Array assemble_global(const std::vector<Array>& per_device, const PartitionSpec& spec,
                      const Mesh& mesh) {
  const int rank = per_device.at(0).rank();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(rank));
  for (int d = 0; d < rank; ++d) counts[static_cast<std::size_t>(d)] = block_count(spec, mesh, d);
  std::map<std::vector<std::int64_t>, const Array*> first_holder;
  for (int device = 0; device < mesh.device_count(); ++device) {
    auto indices = block_indices(spec, mesh, rank, mesh.coordinates(device));
    first_holder.emplace(std::move(indices), &per_device[static_cast<std::size_t>(device)]);
  }
  std::vector<std::int64_t> prefix;
  return assemble_from(first_holder, counts, prefix);
}

}  // namespace spmd
