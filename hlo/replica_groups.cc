#include "hlo/replica_groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <numeric>
#include <string>

#include "reference/error.h"

namespace spmd::hlo {
namespace {

// A cursor over the attribute's text with the few tokens the encodings use.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  void spaces() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_])) != 0) ++at_;
  }
  bool done() {
    spaces();
    return at_ == text_.size();
  }
  bool accept(std::string_view token) {
    spaces();
    if (text_.substr(at_).starts_with(token)) {
      at_ += token.size();
      return true;
    }
    return false;
  }
  void expect(std::string_view token) {
    if (!accept(token)) fail(fmt::format("'{}'", token));
  }
  bool next_is(char c) {
    spaces();
    return at_ < text_.size() && text_[at_] == c;
  }
  int integer() {
    spaces();
    std::size_t digits = 0;
    long long value = 0;
    while (at_ + digits < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_ + digits])) != 0) {
      value = value * 10 + (text_[at_ + digits] - '0');
      if (value > 1'000'000'000) fail("a device id below 10^9");
      ++digits;
    }
    if (digits == 0) fail("an integer");
    at_ += digits;
    return static_cast<int>(value);
  }
  // 'name' or name.
  std::string name() {
    spaces();
    if (accept("'")) {
      const std::size_t close = text_.find('\'', at_);
      if (close == std::string_view::npos) fail("a closing quote");
      std::string result(text_.substr(at_, close - at_));
      at_ = close + 1;
      return result;
    }
    std::size_t end = at_;
    while (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) != 0 || text_[end] == '_')) ++end;
    if (end == at_) fail("an axis name");
    std::string result(text_.substr(at_, end - at_));
    at_ = end;
    return result;
  }
  // "{1,2,3}" or "[1,2,3]" or "(1,2,3)".
  std::vector<int> integers(char open, char close) {
    expect(std::string(1, open));
    std::vector<int> values;
    while (!accept(std::string(1, close))) {
      if (!values.empty()) expect(",");
      values.push_back(integer());
    }
    return values;
  }
  [[noreturn]] void fail(std::string_view expected) const {
    throw Error(fmt::format("replica groups '{}': at '{}', expected {}", text_,
                            text_.substr(std::min(at_, text_.size()), 20), expected));
  }

 private:
  std::string_view text_;
  std::size_t at_ = 0;
};

int product(const std::vector<int>& dims) {
  return std::accumulate(dims.begin(), dims.end(), 1, [](int a, int b) { return a * b; });
}

// Row-major coordinates of `flat` in `dims`.
std::vector<int> coordinates(int flat, const std::vector<int>& dims) {
  std::vector<int> result(dims.size());
  for (std::size_t i = dims.size(); i-- > 0;) {
    result[i] = flat % dims[i];
    flat /= dims[i];
  }
  return result;
}

int flat_index(const std::vector<int>& coords, const std::vector<int>& dims) {
  int flat = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) flat = flat * dims[i] + coords[i];
  return flat;
}

// iota(reshape) transposed by perm, flattened (XLA's IotaTileAssignment).
std::vector<int> iota_values(Reader& reader, const std::vector<int>& reshape,
                             const std::vector<int>& perm) {
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> identity(reshape.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity) reader.fail("T(...) to be a permutation of the iota's dimensions");
  std::vector<int> transposed_dims;
  for (int p : perm) transposed_dims.push_back(reshape[static_cast<std::size_t>(p)]);
  std::vector<int> values;
  const int n = product(reshape);
  for (int k = 0; k < n; ++k) {
    const std::vector<int> t = coordinates(k, transposed_dims);
    std::vector<int> original(reshape.size());
    for (std::size_t j = 0; j < perm.size(); ++j) original[static_cast<std::size_t>(perm[j])] = t[j];
    values.push_back(flat_index(original, reshape));
  }
  return values;
}

// "<=[d...]" and an optional "T(p...)", after the shape has been read.
std::vector<int> iota_tail(Reader& reader) {
  reader.expect("<=");
  const std::vector<int> reshape = reader.integers('[', ']');
  std::vector<int> perm(reshape.size());
  std::iota(perm.begin(), perm.end(), 0);
  if (reader.accept("T")) perm = reader.integers('(', ')');
  return iota_values(reader, reshape, perm);
}

DeviceGroups iota_groups(Reader& reader) {
  const std::vector<int> shape = reader.integers('[', ']');
  if (shape.size() != 2) reader.fail("an iota of two dimensions [groups,group_size]");
  const std::vector<int> values = iota_tail(reader);
  if (static_cast<int>(values.size()) != shape[0] * shape[1]) {
    reader.fail("as many ids after '<=' as [groups,group_size] holds");
  }
  DeviceGroups groups(static_cast<std::size_t>(shape[0]));
  for (std::size_t k = 0; k < values.size(); ++k) {
    groups[k / static_cast<std::size_t>(shape[1])].push_back(values[k]);
  }
  return groups;
}

DeviceGroups explicit_groups(Reader& reader) {
  reader.expect("{");
  DeviceGroups groups;
  while (!reader.accept("}")) {
    if (!groups.empty()) reader.expect(",");
    groups.push_back(reader.integers('{', '}'));
  }
  return groups;
}

struct AxisRef {
  int axis = 0;
  int pre_size = 1;  // sub-axis "name:(pre)size": the product of the sizes before it in the axis
  int size = 0;
};

// Pieces of one mesh axis, major to minor, and which of them the group takes (by listed order).
struct AxisPieces {
  std::vector<int> sizes;
  std::vector<int> grouped_piece;  // per listed AxisRef of this axis: its piece
};

AxisPieces split_axis(Reader& reader, int full_size, std::vector<std::pair<int, AxisRef>> refs) {
  AxisPieces pieces;
  if (refs.size() == 1 && refs[0].second.size == full_size && refs[0].second.pre_size == 1) {
    pieces.sizes = {full_size};
    pieces.grouped_piece = {0};
    return pieces;
  }
  // Sub-axes from major (small pre_size) to minor, with the gaps between them as pieces too.
  std::vector<std::size_t> order(refs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return refs[a].second.pre_size < refs[b].second.pre_size;
  });
  pieces.grouped_piece.resize(refs.size());
  int prefix = 1;
  for (std::size_t k : order) {
    const AxisRef& ref = refs[k].second;
    if (ref.pre_size % prefix != 0) reader.fail("sub-axes that do not overlap");
    if (ref.pre_size != prefix) {
      pieces.sizes.push_back(ref.pre_size / prefix);
      prefix = ref.pre_size;
    }
    pieces.grouped_piece[k] = static_cast<int>(pieces.sizes.size());
    pieces.sizes.push_back(ref.size);
    prefix *= ref.size;
  }
  if (full_size % prefix != 0) reader.fail("sub-axes whose sizes divide the axis");
  if (prefix != full_size) pieces.sizes.push_back(full_size / prefix);
  return pieces;
}

DeviceGroups mesh_groups(Reader& reader) {
  reader.expect("mesh");
  reader.expect("[");
  std::vector<std::string> names;
  std::vector<int> sizes;
  while (!reader.accept("]")) {
    if (!names.empty()) reader.expect(",");
    names.push_back(reader.name());
    reader.expect("=");
    sizes.push_back(reader.integer());
    if (sizes.back() < 1) reader.fail("a positive axis size");
  }
  if (names.empty()) reader.fail("at least one mesh axis");
  const int devices = product(sizes);
  std::vector<int> device_ids(static_cast<std::size_t>(devices));
  std::iota(device_ids.begin(), device_ids.end(), 0);
  if (reader.accept(",")) {
    reader.expect("device_ids=");
    reader.expect("(");
    if (reader.next_is('[')) {
      const std::vector<int> shape = reader.integers('[', ']');
      device_ids = iota_tail(reader);
      if (product(shape) != devices) reader.fail("device_ids for every device of the mesh");
    } else {
      device_ids.clear();
      while (!reader.next_is(')')) {
        if (!device_ids.empty()) reader.expect(",");
        device_ids.push_back(reader.integer());
      }
    }
    reader.expect(")");
    if (static_cast<int>(device_ids.size()) != devices) reader.fail("one device id per mesh device");
  }
  // The grouped axes: "{'x'}", "{'x','y'}", "{'x':(1)2}", "{}".
  reader.expect("{");
  std::vector<AxisRef> refs;
  while (!reader.accept("}")) {
    if (!refs.empty()) reader.expect(",");
    const std::string name = reader.name();
    const auto found = std::find(names.begin(), names.end(), name);
    if (found == names.end()) reader.fail(fmt::format("an axis of the mesh, not '{}'", name));
    AxisRef ref;
    ref.axis = static_cast<int>(found - names.begin());
    ref.size = sizes[static_cast<std::size_t>(ref.axis)];
    if (reader.accept(":")) {
      reader.expect("(");
      ref.pre_size = reader.integer();
      reader.expect(")");
      ref.size = reader.integer();
      if (ref.pre_size < 1 || ref.size < 1) reader.fail("a positive sub-axis");
    }
    refs.push_back(ref);
  }
  if (!reader.done()) reader.fail("the end of the replica groups");

  // The mesh reshaped into its pieces (row-major order is unchanged by the split).
  std::vector<int> piece_dims;
  std::vector<int> grouped_dims;      // positions in piece_dims, in listed order
  std::vector<bool> is_grouped;
  std::vector<int> listed_position(refs.size());
  for (int axis = 0; axis < static_cast<int>(names.size()); ++axis) {
    std::vector<std::pair<int, AxisRef>> axis_refs;
    for (std::size_t k = 0; k < refs.size(); ++k) {
      if (refs[k].axis == axis) axis_refs.emplace_back(static_cast<int>(k), refs[k]);
    }
    const int base = static_cast<int>(piece_dims.size());
    if (axis_refs.empty()) {
      piece_dims.push_back(sizes[static_cast<std::size_t>(axis)]);
      continue;
    }
    const AxisPieces pieces = split_axis(reader, sizes[static_cast<std::size_t>(axis)], axis_refs);
    for (int s : pieces.sizes) piece_dims.push_back(s);
    for (std::size_t j = 0; j < axis_refs.size(); ++j) {
      listed_position[static_cast<std::size_t>(axis_refs[j].first)] = base + pieces.grouped_piece[j];
    }
  }
  is_grouped.assign(piece_dims.size(), false);
  for (int position : listed_position) {
    if (is_grouped[static_cast<std::size_t>(position)]) reader.fail("axes that do not overlap");
    is_grouped[static_cast<std::size_t>(position)] = true;
    grouped_dims.push_back(position);
  }
  std::vector<int> outer_dims;  // the other pieces, in mesh order
  for (std::size_t d = 0; d < piece_dims.size(); ++d) {
    if (!is_grouped[d]) outer_dims.push_back(static_cast<int>(d));
  }
  const auto sizes_of = [&](const std::vector<int>& positions) {
    std::vector<int> result;
    for (int p : positions) result.push_back(piece_dims[static_cast<std::size_t>(p)]);
    return result;
  };
  const std::vector<int> outer_sizes = sizes_of(outer_dims), inner_sizes = sizes_of(grouped_dims);
  DeviceGroups groups;
  for (int g = 0; g < product(outer_sizes); ++g) {
    std::vector<int> coords(piece_dims.size());
    const std::vector<int> outer = coordinates(g, outer_sizes);
    for (std::size_t j = 0; j < outer_dims.size(); ++j) coords[static_cast<std::size_t>(outer_dims[j])] = outer[j];
    std::vector<int> group;
    for (int r = 0; r < product(inner_sizes); ++r) {
      const std::vector<int> inner = coordinates(r, inner_sizes);
      for (std::size_t j = 0; j < grouped_dims.size(); ++j) coords[static_cast<std::size_t>(grouped_dims[j])] = inner[j];
      group.push_back(device_ids[static_cast<std::size_t>(flat_index(coords, piece_dims))]);
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

void check_id(int id, int limit, std::string_view what) {
  if (id < 0 || id >= limit) {
    throw Error(fmt::format("replica groups: id {} is not a {} (expected 0..{})", id, what, limit - 1));
  }
}

}  // namespace

GroupMode collective_group_mode(bool has_channel_id, std::optional<bool> use_global_device_ids) {
  if (!has_channel_id) {
    if (use_global_device_ids.value_or(false)) {
      throw Error("use_global_device_ids=true without channel_id, expected a channel_id with it "
                  "(XLA rejects the combination)");
    }
    return GroupMode::cross_replica;
  }
  if (!use_global_device_ids) return GroupMode::cross_partition;
  return *use_global_device_ids ? GroupMode::flattened_id : GroupMode::cross_replica_and_partition;
}

DeviceGroups parse_replica_groups(std::string_view text) {
  Reader reader(text);
  DeviceGroups groups;
  if (reader.next_is('{')) groups = explicit_groups(reader);
  else if (reader.next_is('[')) groups = iota_groups(reader);
  else if (reader.next_is('m')) return mesh_groups(reader);
  else reader.fail("{{...}}, [groups,size]<=[...] or mesh[...] {...}");
  if (!reader.done()) reader.fail("the end of the replica groups");
  return groups;
}

DeviceGroups global_device_groups(const DeviceGroups& groups, GroupMode mode, int replica_count,
                                  int num_partitions) {
  const int partitions = num_partitions, replicas = replica_count;
  const bool ids_are_partitions = mode == GroupMode::cross_partition;
  const int space = mode == GroupMode::flattened_id ? replicas * partitions
                    : ids_are_partitions            ? partitions
                                                    : replicas;
  DeviceGroups written = groups;
  if (written.empty()) {
    written.emplace_back(static_cast<std::size_t>(space));
    std::iota(written[0].begin(), written[0].end(), 0);
  }
  const std::string_view what = mode == GroupMode::flattened_id ? "global device id"
                                : ids_are_partitions            ? "partition id"
                                                                : "replica id";
  for (const auto& group : written) {
    for (int id : group) check_id(id, space, what);
  }
  DeviceGroups result;
  switch (mode) {
    case GroupMode::flattened_id: return written;
    case GroupMode::cross_replica:  // the same replica groups in every partition
      for (int p = 0; p < partitions; ++p) {
        for (const auto& group : written) {
          std::vector<int> devices;
          for (int r : group) devices.push_back(r * partitions + p);
          result.push_back(std::move(devices));
        }
      }
      return result;
    case GroupMode::cross_partition:  // the same partition groups in every replica
      for (int r = 0; r < replicas; ++r) {
        for (const auto& group : written) {
          std::vector<int> devices;
          for (int p : group) devices.push_back(r * partitions + p);
          result.push_back(std::move(devices));
        }
      }
      return result;
    case GroupMode::cross_replica_and_partition:  // every partition of the group's replicas
      for (const auto& group : written) {
        std::vector<int> devices;
        for (int r : group) {
          for (int p = 0; p < partitions; ++p) devices.push_back(r * partitions + p);
        }
        result.push_back(std::move(devices));
      }
      return result;
  }
  return result;
}

std::vector<std::pair<int, int>> global_source_target_pairs(std::string_view text,
                                                            bool has_channel_id,
                                                            int replica_count, int num_partitions) {
  Reader reader(text);
  const DeviceGroups pairs = explicit_groups(reader);
  if (!reader.done()) reader.fail("the end of the source_target_pairs");
  const int space = has_channel_id ? num_partitions : replica_count;
  const int copies = has_channel_id ? replica_count : num_partitions;
  std::vector<std::pair<int, int>> result;
  for (int copy = 0; copy < copies; ++copy) {
    for (const auto& pair : pairs) {
      if (pair.size() != 2) reader.fail("pairs {source,target}");
      check_id(pair[0], space, has_channel_id ? "partition id" : "replica id");
      check_id(pair[1], space, has_channel_id ? "partition id" : "replica id");
      const auto device = [&](int id) {
        return has_channel_id ? copy * num_partitions + id : id * num_partitions + copy;
      };
      result.emplace_back(device(pair[0]), device(pair[1]));
    }
  }
  return result;
}

}  // namespace spmd::hlo
