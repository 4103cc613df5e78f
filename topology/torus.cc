// 2D and 3D tori (and meshes, the same without wrap-around): device ids are row-major over the
// dims (last dimension fastest); each dimension has its own link spec. Routes go dimension by
// dimension (dimension 0 first), the shorter way round on a torus (ties in the + direction).

#include "reference/error.h"
#include "topology/topology_checks.h"

namespace spmd::topology {
namespace {

std::string dims_text(const std::vector<int>& dims) {
  std::string text;
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? "x" : "") + std::to_string(dims[i]);
  return text;
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
      const bool go_plus = wrap_ ? forward <= size - forward : target > c;
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
    if (rows % 2 == 0 && columns > 1) return cycle(rows, columns, [&](int r, int c) {
      return device_at(r, inner[static_cast<std::size_t>(c)]);
    });
    if (columns % 2 == 0 && rows > 1) return cycle(columns, rows, [&](int p, int c0) {
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
    const std::string dim = "dim " + std::to_string(k);
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
  std::vector<std::vector<int>> plus_;   // [dimension][device] -> link, -1 if none
  std::vector<std::vector<int>> minus_;
};

}  // namespace

std::unique_ptr<Topology> make_torus(std::vector<int> dims, std::vector<LinkSpec> links,
                                     bool wrap) {
  const char* what = wrap ? "make_torus" : "make_mesh";
  if (dims.size() != 2 && dims.size() != 3) {
    throw Error(std::string(what) + ": dims has " + std::to_string(dims.size()) +
                " entries, expected 2 or 3");
  }
  if (links.size() == 1) links.assign(dims.size(), links.front());
  if (links.size() != dims.size()) {
    throw Error(std::string(what) + ": " + std::to_string(links.size()) + " link specs for " +
                std::to_string(dims.size()) + " dims, expected one per dimension");
  }
  int devices = 1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    check_count(dims[k], std::string(what) + ": dims[" + std::to_string(k) + "]", 1);
    check_link_spec(links[k], std::string(what) + ": links[" + std::to_string(k) + "]");
    devices *= dims[k];
  }
  return std::make_unique<Torus>(std::move(dims), links, wrap, devices);
}

}  // namespace spmd::topology
