#include "hlo/hlo_sharding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <optional>

#include "reference/error.h"
#include "reference/sharding_grid.h"

namespace spmd::hlo {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// The integers of "8,1" (no brackets).
std::optional<std::vector<std::int64_t>> integers(std::string_view text) {
  std::vector<std::int64_t> values;
  while (!text.empty()) {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || value < 0) return std::nullopt;
    values.push_back(value);
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    if (!text.empty()) {
      if (text.front() != ',') return std::nullopt;
      text.remove_prefix(1);
    }
  }
  return values;
}

// The bracketed list at the start of `text` ("[8,1]..."), consuming it.
std::optional<std::vector<std::int64_t>> bracketed(std::string_view& text, char open, char close) {
  if (text.empty() || text.front() != open) return std::nullopt;
  const std::size_t end = text.find(close);
  if (end == std::string_view::npos) return std::nullopt;
  auto values = integers(text.substr(1, end - 1));
  text.remove_prefix(end + 1);
  return values;
}

std::int64_t product(const std::vector<std::int64_t>& values) {
  return std::accumulate(values.begin(), values.end(), std::int64_t{1}, std::multiplies<>());
}

// iota(n) reshaped to `dims`, transposed by `permutation`, flattened (XLA's IotaTileAssignment).
std::vector<std::int64_t> transposed_iota(const std::vector<std::int64_t>& dims,
                                          const std::vector<std::int64_t>& permutation) {
  const std::size_t rank = dims.size();
  std::vector<std::int64_t> out_dims(rank), strides(rank, 1);
  for (std::size_t k = rank; k-- > 1;) strides[k - 1] = strides[k] * dims[k];
  for (std::size_t k = 0; k < rank; ++k) {
    out_dims[k] = dims[static_cast<std::size_t>(permutation[k])];
  }
  std::vector<std::int64_t> flat;
  std::vector<std::int64_t> coords(rank, 0);
  for (std::int64_t i = 0; i < product(dims); ++i) {
    std::int64_t value = 0;
    for (std::size_t k = 0; k < rank; ++k) {
      value += coords[k] * strides[static_cast<std::size_t>(permutation[k])];
    }
    flat.push_back(value);
    for (std::size_t k = rank; k-- > 0;) {  // the next coordinate, row-major
      if (++coords[k] < out_dims[k]) break;
      coords[k] = 0;
    }
  }
  return flat;
}

// The top-level elements of a tuple sharding "{{a}, {b}}" ("{a}", "{b}").
std::vector<std::string_view> tuple_elements(std::string_view text) {
  std::vector<std::string_view> elements;
  text = trim(text);
  text = text.substr(1, text.size() - 2);
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '{') ++depth;
    if (text[i] == '}') --depth;
    if (depth == 0 && text[i] == ',') {
      elements.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  elements.push_back(trim(text.substr(start)));
  return elements;
}

bool is_tuple_sharding(std::string_view text) {
  text = trim(text);
  return text.size() > 2 && text[0] == '{' && trim(text.substr(1)).front() == '{';
}

std::string argument_name(const HloInstruction& parameter) {
  const std::string* metadata = parameter.attribute("metadata");
  if (metadata == nullptr) return parameter.name;
  const std::size_t at = metadata->find("op_name=\"");
  if (at == std::string::npos) return parameter.name;
  const std::size_t start = at + 9;
  return metadata->substr(start, metadata->find('"', start) - start);
}

// One array's line and grid: `sharding` is its attribute text, or nullopt for none.
std::string array_text(const std::string& title, const HloShape& local,
                       const std::optional<std::string_view>& sharding, const HloModule& module,
                       const std::string& field) {
  if (local.is_tuple) return fmt::format("{}: {}: a tuple, not drawn\n", title, local.to_string());
  const int rank = static_cast<int>(local.dims.size());
  const bool pmap = module.replica_count > 1 && module.num_partitions == 1;
  TileSharding tiles;
  std::vector<std::int64_t> global = local.dims;
  std::string how;
  if (sharding) {
    tiles = parse_tile_sharding(*sharding, rank, module.num_partitions, field);
    for (int d = 0; d < rank; ++d) {
      global[static_cast<std::size_t>(d)] *= tiles.tile_counts[static_cast<std::size_t>(d)];
    }
    how = std::string(*sharding);
  } else if (pmap) {
    // pmap: replica r holds row r of an array stacked along a leading device axis.
    global.insert(global.begin(), module.replica_count);
    tiles.tile_counts.assign(global.size(), 1);
    tiles.tile_counts[0] = module.replica_count;
    for (int r = 0; r < module.replica_count; ++r) {
      std::vector<std::int64_t> tile(global.size(), 0);
      tile[0] = r;
      tiles.device_tiles.push_back(std::move(tile));
    }
    how = fmt::format("pmap: replica r holds [r] of a leading device axis of {}",
                      module.replica_count);
  } else {
    return fmt::format("{}: {} per device, no sharding in the module's text, not drawn\n", title,
                       local.to_string());
  }
  const std::string header =
      fmt::format("{}: {}[{}] {}", title, local.element_type, fmt::join(global, ","), how);
  if (global.size() < 1 || global.size() > 2) {
    return fmt::format("{}: rank {}, not drawn (the grid draws rank 1 and 2)\n", header,
                       global.size());
  }
  for (std::int64_t size : global) {
    if (size == 0) return fmt::format("{}: empty, not drawn\n", header);
  }
  return header + "\n" +
         sharding_grid_text(block_grid_from_tiles(global, tiles.tile_counts, tiles.device_tiles));
}

}  // namespace

TileSharding parse_tile_sharding(std::string_view text, int rank, int devices,
                                 const std::string& field) {
  auto fail = [&](std::string_view why) {
    return Error(fmt::format("{}: sharding={}: {}", field, text, why));
  };
  std::string_view body = trim(text);
  if (body.size() < 2 || body.front() != '{' || body.back() != '}') {
    throw fail("expected {...}");
  }
  body = trim(body.substr(1, body.size() - 2));
  TileSharding sharding;
  sharding.tile_counts.assign(static_cast<std::size_t>(rank), 1);
  const std::vector<std::int64_t> whole(static_cast<std::size_t>(rank), 0);
  if (body == "replicated" || body.starts_with("replicated ")) {
    sharding.device_tiles.assign(static_cast<std::size_t>(devices), whole);
    return sharding;
  }
  if (body.starts_with("maximal device=")) {
    int device = -1;
    const std::string_view number = body.substr(15);
    std::from_chars(number.data(), number.data() + number.size(), device);
    if (device < 0 || device >= devices) throw fail("expected a device of the module's");
    sharding.device_tiles.resize(static_cast<std::size_t>(devices));
    sharding.device_tiles[static_cast<std::size_t>(device)] = whole;
    return sharding;
  }
  if (!body.starts_with("devices=")) {
    throw fail("expected replicated, maximal or devices=[...] (manual shardings are not drawn)");
  }
  body.remove_prefix(8);
  const auto tile_dims = bracketed(body, '[', ']');
  if (!tile_dims) throw fail("expected devices=[tiles per dimension]");
  std::vector<std::int64_t> device_list;
  if (body.starts_with("<=")) {
    body.remove_prefix(2);
    const auto iota_dims = bracketed(body, '[', ']');
    if (!iota_dims) throw fail("expected <=[iota dimensions]");
    std::vector<std::int64_t> permutation(iota_dims->size());
    std::iota(permutation.begin(), permutation.end(), 0);
    if (body.starts_with("T")) {
      body.remove_prefix(1);
      const auto written = bracketed(body, '(', ')');
      if (!written || written->size() != iota_dims->size()) throw fail("expected T(permutation)");
      permutation = *written;
    }
    device_list = transposed_iota(*iota_dims, permutation);
  } else {
    const std::size_t end = std::min(body.find(' '), body.size());
    const auto listed = integers(body.substr(0, end));
    if (!listed) throw fail("expected <=[...] or a list of devices");
    device_list = *listed;
    body.remove_prefix(end);
  }
  body = trim(body);
  // Tile dimensions past the array's: replicas (last_tile_dim_replicate) or subgroups.
  std::size_t extra = 0;
  if (body.starts_with("last_tile_dim_replicate")) extra = 1;
  if (body.starts_with("last_tile_dims={")) {
    const std::string_view kinds = body.substr(16, body.find('}') - 16);
    extra = static_cast<std::size_t>(std::count(kinds.begin(), kinds.end(), ',')) + 1;
  }
  if (tile_dims->size() != static_cast<std::size_t>(rank) + extra) {
    throw fail(fmt::format("{} tile dimensions, expected {} for a rank-{} array", tile_dims->size(),
                           static_cast<std::size_t>(rank) + extra, rank));
  }
  if (static_cast<std::int64_t>(device_list.size()) != product(*tile_dims)) {
    throw fail(fmt::format("{} devices, expected the {} tiles", device_list.size(),
                           product(*tile_dims)));
  }
  sharding.tile_counts.assign(tile_dims->begin(), tile_dims->begin() + rank);
  sharding.device_tiles.resize(static_cast<std::size_t>(devices));
  std::vector<std::int64_t> coords(tile_dims->size(), 0);
  for (std::int64_t device : device_list) {
    if (device >= devices) throw fail(fmt::format("device {}, expected below {}", device, devices));
    sharding.device_tiles[static_cast<std::size_t>(device)].assign(coords.begin(),
                                                                   coords.begin() + rank);
    for (std::size_t k = coords.size(); k-- > 0;) {
      if (++coords[k] < (*tile_dims)[k]) break;
      coords[k] = 0;
    }
  }
  return sharding;
}

std::string module_sharding_text(const HloModule& module) {
  const HloComputation& entry = module.entry_computation();
  std::vector<const HloInstruction*> parameters;
  for (const HloInstruction& instruction : entry.instructions) {
    if (instruction.opcode == "parameter") parameters.push_back(&instruction);
  }
  auto number = [](const HloInstruction* p) { return std::stoi(*p->attribute("parameter_number")); };
  std::sort(parameters.begin(), parameters.end(),
            [&](auto* a, auto* b) { return number(a) < number(b); });
  std::string text = fmt::format(
      "sharding (device ids are {} ids):\n",
      module.replica_count > 1 && module.num_partitions == 1 ? "replica" : "partition");
  for (const HloInstruction* p : parameters) {
    const std::string* sharding = p->attribute("sharding");
    text += array_text(fmt::format("input {} ({})", number(p), argument_name(*p)), p->shape,
                       sharding ? std::optional<std::string_view>(*sharding) : std::nullopt,
                       module, fmt::format("{}:{}", module.file, p->line));
  }
  const HloInstruction& root = entry.root();
  const std::string* root_sharding = root.attribute("sharding");
  const std::string field = fmt::format("{}:{}", module.file, root.line);
  if (!root.shape.is_tuple) {
    return text + array_text("output 0", root.shape,
                             root_sharding ? std::optional<std::string_view>(*root_sharding)
                                           : std::nullopt,
                             module, field);
  }
  const std::vector<std::string_view> element_shardings =
      root_sharding && is_tuple_sharding(*root_sharding) ? tuple_elements(*root_sharding)
                                                         : std::vector<std::string_view>{};
  for (std::size_t i = 0; i < root.shape.elements.size(); ++i) {
    std::optional<std::string_view> sharding;
    if (i < element_shardings.size()) {
      sharding = element_shardings[i];
    } else if (root.opcode == "tuple" && i < root.operands.size()) {
      const HloInstruction* operand = entry.find(root.operands[i]);
      if (const std::string* own = operand ? operand->attribute("sharding") : nullptr) sharding = *own;
    }
    text += array_text(fmt::format("output {}", i), root.shape.elements[i], sharding, module, field);
  }
  return text;
}

}  // namespace spmd::hlo
