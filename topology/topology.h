#pragma once
// Who is wired to whom. A topology has `device_count()` devices (ids 0..n-1) and possibly extra
// switch nodes (ids n..), joined by directed links, each with its own bandwidth and latency and
// one FIFO per direction (a bidirectional cable is two links). Routes are fixed, deterministic
// sequences of links (shortest path; dimension order on tori).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace spmd::topology {

struct LinkSpec {
  std::int64_t bandwidth_bytes_per_s = 100'000'000'000;  // 100 GB/s
  std::int64_t latency_ps = 1'000'000;                   // 1 us
  friend bool operator==(const LinkSpec&, const LinkSpec&) = default;
};

struct Link {
  int from = 0;  // node id (device or switch)
  int to = 0;
  LinkSpec spec;
  std::string label;  // "ring", "torus dim 1 +", "nvlink", "ib", ... for traces
};

// What collective algorithm choice needs to know of a topology, whatever its kind.
struct TopologyTraits {
  // Devices lie on a grid (dims()) whose dimensions collectives can run along one after
  // another: tori, meshes, and nodes x devices per node.
  bool grid = false;
  // The grid's lines close into rings of links (a torus, not a mesh): a hop to either neighbour
  // along any dimension, the last to the first included, is one link, one each way.
  bool wrap_around = false;
  // Every link carries only messages from one device or to one device: a device's own links to
  // a switch, or a direct link between two devices. Groups of different devices then never
  // share a link.
  bool private_routes = false;
};

class Topology {
 public:
  virtual ~Topology() = default;

  virtual std::string name() const = 0;  // "ring(8, bidirectional)", "torus(4x4)", ...
  // The kind's name, as in machine files: "ring", "torus", "mesh", "fully_connected", ...
  virtual std::string_view kind() const = 0;
  // The grid: torus / mesh sizes per dimension, {nodes, devices per node} for hierarchical;
  // empty for the others.
  virtual std::vector<int> dims() const { return {}; }
  virtual TopologyTraits traits() const { return {}; }
  int device_count() const { return device_count_; }
  int node_count() const { return node_count_; }  // devices + switches
  const std::vector<Link>& links() const { return links_; }

  // The links a message from device `from` to device `to` crosses, in order; empty if equal.
  virtual std::vector<int> route(int from, int to) const = 0;
  int hop_count(int from, int to) const { return static_cast<int>(route(from, to).size()); }

  // A ring over all devices (position -> device id) whose neighbours are directly linked where
  // the topology allows it; ring algorithms run along it.
  virtual std::vector<int> ring_order() const = 0;

 protected:
  Topology(int device_count, int node_count)
      : device_count_(device_count), node_count_(node_count) {}
  int add_link(int from, int to, LinkSpec spec, std::string label);

 private:
  int device_count_;
  int node_count_;
  std::vector<Link> links_;
};

// Constructors; invalid arguments raise spmd::Error naming the argument.
std::unique_ptr<Topology> make_ring(int devices, LinkSpec link, bool bidirectional);
// dims: sizes per dimension (2 or 3 of them), one LinkSpec per dimension; wrap: torus, else mesh.
std::unique_ptr<Topology> make_torus(std::vector<int> dims, std::vector<LinkSpec> links, bool wrap);
std::unique_ptr<Topology> make_fully_connected(int devices, LinkSpec link);
// A star: every device linked both ways to one switch node.
std::unique_ptr<Topology> make_switch(int devices, LinkSpec link);
// Nodes of `devices_per_node` devices on a fast switch each (intra), every device also linked
// to one network switch (inter), like 8-GPU NVLink boxes joined by one InfiniBand NIC per GPU.
std::unique_ptr<Topology> make_hierarchical(int nodes, int devices_per_node, LinkSpec intra,
                                            LinkSpec inter);

}  // namespace spmd::topology
