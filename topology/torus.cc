// 2D and 3D tori (and meshes, the same without wrap-around): device ids are row-major over the
// dims (last dimension fastest); each dimension has its own link spec. Routes go dimension by
// dimension (dimension 0 first), the shorter way round on a torus (half way round:
// goes_forward_round).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "reference/error.h"
#include "topology/topology_checks.h"
#include "topology/topology_spec.h"

namespace spmd::topology {
namespace {

std::string dims_text(const std::vector<int>& dims) {
  return fmt::format("{}", fmt::join(dims, "x"));
}

class Torus : public Topology {
 public:
  Torus(std::vector<int> dims, const std::vector<LinkSpec>& links, bool wrap, int devices)
      : Topology(devices, devices), dims_(std::move(dims)), wrap_(wrap) {
    for (std::size_t k = 0; k < dims_.size(); ++k) {
      plus_.emplace_back(static_cast<std::size_t>(devices), -1);
      minus_.emplace_back(static_cast<std::size_t>(devices), -1);
      for (int d = 0; d < devices; ++d) add_links(d, k, links[k]);
    }
  }

  std::string name() const override {
    return std::string(wrap_ ? "torus(" : "mesh(") + dims_text(dims_) + ")";
  }
  std::string_view kind() const override { return wrap_ ? "torus" : "mesh"; }
  std::vector<int> dims() const override { return dims_; }
  TopologyTraits traits() const override { return {.grid = true, .wrap_around = wrap_}; }

  std::vector<int> route(int from, int to) const override {
    check_device(*this, from, "from");
    check_device(*this, to, "to");
    std::vector<int> links;
    int at = from;
    for (std::size_t k = 0; k < dims_.size(); ++k) {
      const int size = dims_[k];
      const int target = coordinate(to, k);
      int c = coordinate(at, k);
      const int forward = ((target - c) % size + size) % size;
      const bool go_plus = wrap_ ? goes_forward_round(c, forward, size) : target > c;
      while (c != target) {
        const int link = (go_plus ? plus_ : minus_)[k][static_cast<std::size_t>(at)];
        links.push_back(link);
        at = this->links()[static_cast<std::size_t>(link)].to;
        c = coordinate(at, k);
      }
    }
    return links;
  }

  // A snake whose neighbours are linked: a Hamiltonian cycle when some dimension has an even
  // size (or, on a torus, the first has); otherwise a Hamiltonian path whose closing step takes
  // more than one hop.
  std::vector<int> ring_order() const override {
    const std::vector<int> inner = snake_path(1);
    const int rows = dims_[0];
    const int columns = static_cast<int>(inner.size());
    std::vector<int> order;
    if (rows % 2 == 0 && columns > 1)
      return cycle(rows, columns,
                   [&](int r, int c) { return device_at(r, inner[static_cast<std::size_t>(c)]); });
    if (columns % 2 == 0 && rows > 1)
      return cycle(columns, rows, [&](int p, int c0) {
        return device_at(c0, inner[static_cast<std::size_t>(p)]);
      });
    return snake_path(0);
  }

 private:
  int stride(std::size_t k) const {
    int s = 1;
    for (std::size_t j = k + 1; j < dims_.size(); ++j) s *= dims_[j];
    return s;
  }
  int coordinate(int device, std::size_t k) const { return device / stride(k) % dims_[k]; }
  // The device with dimension-0 coordinate `row` and inner offset `inner` (a device id of the
  // inner dimensions, i.e. below stride(0)).
  int device_at(int row, int inner) const { return row * stride(0) + inner; }

  void add_links(int device, std::size_t k, const LinkSpec& spec) {
    const int size = dims_[k];
    const int c = coordinate(device, k);
    const int step = stride(k);
    const std::string dim = fmt::format("dim {}", k);
    const auto neighbour = [&](int offset) {
      return device + (((c + offset) % size + size) % size - c) * step;
    };
    if (size == 1) return;
    if (wrap_ || c + 1 < size) {
      plus_[k][static_cast<std::size_t>(device)] =
          add_link(device, neighbour(+1), spec, (wrap_ ? "torus " : "mesh ") + dim + " +");
    }
    if (size == 2 && wrap_) {  // the + links already join both ways: one link each way
      minus_[k][static_cast<std::size_t>(device)] = plus_[k][static_cast<std::size_t>(device)];
      return;
    }
    if (wrap_ || c > 0) {
      minus_[k][static_cast<std::size_t>(device)] =
          add_link(device, neighbour(-1), spec, (wrap_ ? "torus " : "mesh ") + dim + " -");
    }
  }

  // Boustrophedon over dimensions first..end, as offsets below stride(first - 1).
  std::vector<int> snake_path(std::size_t first) const {
    if (first == dims_.size()) return {0};
    const std::vector<int> rest = snake_path(first + 1);
    std::vector<int> path;
    for (int i = 0; i < dims_[first]; ++i) {
      for (std::size_t j = 0; j < rest.size(); ++j) {
        const int r = i % 2 == 0 ? rest[j] : rest[rest.size() - 1 - j];
        path.push_back(i * stride(first) + r);
      }
    }
    return path;
  }

  // Rows 0..rows-1 (an even count) snake over columns 1..columns-1, then column 0 leads back up.
  template <class At>
  static std::vector<int> cycle(int rows, int columns, At at) {
    std::vector<int> order;
    for (int r = 0; r < rows; ++r) {
      for (int j = 1; j < columns; ++j) order.push_back(at(r, r % 2 == 0 ? j : columns - j));
    }
    for (int r = rows - 1; r >= 0; --r) order.push_back(at(r, 0));
    return order;
  }

  std::vector<int> dims_;
  bool wrap_;
  std::vector<std::vector<int>> plus_;  // [dimension][device] -> link, -1 if none
  std::vector<std::vector<int>> minus_;
};

}  // namespace

std::unique_ptr<Topology> make_torus(std::vector<int> dims, std::vector<LinkSpec> links,
                                     bool wrap) {
  const char* what = wrap ? "make_torus" : "make_mesh";
  if (dims.size() != 2 && dims.size() != 3) {
    throw Error(fmt::format("{}: dims has {} entries, expected 2 or 3", what, dims.size()));
  }
  if (links.size() == 1) links.assign(dims.size(), links.front());
  if (links.size() != dims.size()) {
    throw Error(fmt::format("{}: {} link specs for {} dims, expected one per dimension", what,
                            links.size(), dims.size()));
  }
  int devices = 1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    check_count(dims[k], fmt::format("{}: dims[{}]", what, k), 1);
    check_link_spec(links[k], fmt::format("{}: links[{}]", what, k));
    devices *= dims[k];
  }
  return std::make_unique<Torus>(std::move(dims), links, wrap, devices);
}

// ---- Specs

namespace {

constexpr std::string_view kDimsExpected = "an array of 2 or 3 sizes like [4, 4]";

// "4x2" or "2x2x2" after "KIND:"; spmd::Error naming --topology otherwise.
std::vector<int> dims_from_text(std::string_view kind, std::string_view text) {
  std::vector<int> dims;
  std::size_t start = 0;
  while (true) {
    const std::size_t x = text.find('x', start);
    const std::string_view part = text.substr(start, x == std::string_view::npos ? x : x - start);
    int size = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), size);
    if (part.empty() || error != std::errc() || end != part.data() + part.size() || size < 1) {
      throw Error(fmt::format("--topology: '{}:{}', expected sizes like {}:4x2 or {}:2x2x2", kind,
                              text, kind, kind));
    }
    dims.push_back(size);
    if (x == std::string_view::npos) return dims;
    start = x + 1;
  }
}

// The factor pair a x b = n with a <= b and a as large as possible.
std::vector<int> near_square(int n) {
  int a = static_cast<int>(std::sqrt(static_cast<double>(n)));
  while (a > 1 && n % a != 0) --a;
  return {a, n / a};
}

std::vector<LinkSpec> dim_links_from_json(const JsonValue& object, std::size_t dim_count) {
  const std::optional<JsonValue> link = object.optional("link");
  const std::optional<JsonValue> links = object.optional("links");
  if (link && links)
    links->fail(fmt::format("given together with {}, expected only one", link->path()));
  if (link) return std::vector<LinkSpec>(dim_count, link_from_json(*link));
  if (!links) {
    object.required("link", "a link for every dimension or \"links\" with one per dimension");
  }
  const std::vector<JsonValue> entries = links->elements("an array with one link per dimension");
  if (entries.size() != dim_count) {
    links->fail(
        fmt::format("{} links, expected one per dimension ({})", entries.size(), dim_count));
  }
  std::vector<LinkSpec> out;
  for (const JsonValue& entry : entries) out.push_back(link_from_json(entry));
  return out;
}

}  // namespace

GridSpec GridSpec::grid_from_json(const JsonValue& object, int devices) {
  object.require_object({"kind", "dims", "link", "links"});
  const JsonValue dims = object.required("dims", kDimsExpected);
  const std::vector<JsonValue> sizes = dims.elements(kDimsExpected);
  if (sizes.size() != 2 && sizes.size() != 3) {
    dims.fail_value("2 or 3 sizes like [4, 4] or [4, 4, 4]");
  }
  GridSpec spec{.devices = devices};
  std::int64_t product = 1;
  for (const JsonValue& size : sizes) {
    spec.dims.push_back(size.positive_int32());
    product *= spec.dims.back();
  }
  if (product != devices) {
    dims.fail(fmt::format("{} has {} devices, expected a product equal to devices ({})",
                          dims.shown(), product, devices));
  }
  spec.dim_links = dim_links_from_json(object, spec.dims.size());
  return spec;
}

GridSpec GridSpec::grid_from_text(std::string_view kind, std::string_view args, int devices,
                                  const CommandLineLinks& links) {
  GridSpec spec{.devices = devices,
                .dims = args.empty() ? near_square(devices) : dims_from_text(kind, args)};
  std::int64_t product = 1;
  for (int size : spec.dims) product *= size;
  if ((spec.dims.size() != 2 && spec.dims.size() != 3) || product != devices) {
    throw Error(
        fmt::format("--topology: '{}:{}' for {} devices, expected 2 or 3 sizes whose product "
                    "is the device count",
                    kind, args, devices));
  }
  spec.dim_links.assign(spec.dims.size(), links.link);
  return spec;
}

nlohmann::json GridSpec::grid_to_json(std::string_view kind) const {
  nlohmann::json out = {{"kind", kind}, {"dims", dims}};
  bool uniform = !dim_links.empty();
  for (const LinkSpec& link : dim_links) uniform = uniform && link == dim_links.front();
  if (uniform) {
    out["link"] = link_to_json(dim_links.front());
    return out;
  }
  out["links"] = nlohmann::json::array();
  for (const LinkSpec& link : dim_links) out["links"].push_back(link_to_json(link));
  return out;
}

GridSpec GridSpec::grid_rescaled(int new_devices) const {
  const LinkSpec first_link = dim_links.empty() ? LinkSpec{} : dim_links.front();
  return grid_from_text("", "", new_devices, {.link = first_link});
}

TorusSpec TorusSpec::from_json(const JsonValue& object, int devices) {
  return {grid_from_json(object, devices)};
}

std::optional<TorusSpec> TorusSpec::from_text(std::string_view name, std::string_view args,
                                              int devices, const CommandLineLinks& links) {
  if (name != kKind) return std::nullopt;
  return TorusSpec{grid_from_text(kKind, args, devices, links)};
}

nlohmann::json TorusSpec::to_json() const { return grid_to_json(kKind); }
std::unique_ptr<Topology> TorusSpec::make() const { return make_torus(dims, dim_links, true); }

MeshSpec MeshSpec::from_json(const JsonValue& object, int devices) {
  return {grid_from_json(object, devices)};
}

std::optional<MeshSpec> MeshSpec::from_text(std::string_view name, std::string_view args,
                                            int devices, const CommandLineLinks& links) {
  if (name != kKind) return std::nullopt;
  return MeshSpec{grid_from_text(kKind, args, devices, links)};
}

nlohmann::json MeshSpec::to_json() const { return grid_to_json(kKind); }
std::unique_ptr<Topology> MeshSpec::make() const { return make_torus(dims, dim_links, false); }

}  // namespace spmd::topology
