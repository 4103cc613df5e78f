#include "cost_model/collective_timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "cost_model/library_tuner.h"
#include "reference/error.h"
#include "support/name_table.h"

namespace spmd::cost_model {
namespace {

// Every constant below is documented, with where it comes from, in docs/collective-timing.md.
// Times are in microseconds and rates in GB/s (1e9 B/s) while the formula is evaluated, as
// NCCL's tuner writes them; the result is rounded once to integer picoseconds.

constexpr std::array<Protocol, 3> kProtocols = {Protocol::ll, Protocol::ll128, Protocol::simple};

std::size_t index(Protocol protocol) { return static_cast<std::size_t>(protocol); }

// A step's synchronization over NVLink 3 and the second-generation NVSwitch (A100) takes about
// twice Hopper's; so does the GPU's own start and finish of a collective. Volta (NVLink 2, the
// first NVSwitch) has no published floor here: taken as Ampere's.
double synchronization_factor(GpuGeneration generation) {
  return generation == GpuGeneration::ampere || generation == GpuGeneration::volta ? 2.0 : 1.0;
}

// The GPU's fixed part of a collective: starting the kernel and learning it finished, beyond
// its hops. Fitted to the published small-message floors (docs/collective-timing.md). On AMD
// most of it is the host's launch, which a graph replays without: MI300X's floor falls from
// 13 to 7.5 us under rccl-tests -G 1 (ROCm's xGMI blog, docs/collective-timing.md).
constexpr double kAmdFixedUs = 7.1;
constexpr double kAmdGraphFixedUs = 1.5;
double documented_gpu_fixed_us(const Fabric& fabric) {
  if (is_amd(fabric.generation)) return fabric.graph_launch ? kAmdGraphFixedUs : kAmdFixedUs;
  const double hopper_us = fabric.host == HostKind::grace ? 5.5 : 11.0;
  return hopper_us * synchronization_factor(fabric.generation);
}

double us_of_ps(std::int64_t ps) { return static_cast<double>(ps) / 1e6; }

double gpu_fixed_us(const Fabric& fabric) {
  const std::optional<std::int64_t> measured = fabric.measured.launch_latency_ps;
  return measured ? us_of_ps(*measured) : documented_gpu_fixed_us(fabric);
}

// The GPUs of the group that one process drives (check_request keeps gpus_per_process >= 1).
int gpus_of_one_process(const Fabric& fabric, int per_node) {
  return std::min(fabric.gpus_per_process, per_node);
}

// ROCm serializes the kernel launches of the GPUs one process drives, and the collective waits
// for the last of them: the published single-process MI300X runs (rccl-tests -g 8) take about
// 26 us longer than one process per GPU at every size up to 32 MiB, not hidden behind the
// transfer. Graph replay launches them together. NCCL's cost of a single process shows instead
// as the host's issue interval below, fitted on such runs.
constexpr double kRcclSerialLaunchUs = 3.7;
double launch_stagger_us(const Fabric& fabric, int per_node) {
  if (!is_amd(fabric.generation) || fabric.graph_launch) return 0.0;
  return (gpus_of_one_process(fabric, per_node) - 1) * kRcclSerialLaunchUs;
}

// The host's interval between issuing two collectives. nccl-tests, like a framework, issues
// collectives back to back, so this overlaps the previous collective's transfer: a collective
// costs the larger of the interval and the GPU's fixed part plus its transfer. NCCL on x86
// hosts is the only host whose interval shows in the published floors (the 4-GPU H100 slice's
// all-reduce stays flat from 128 KiB to 2 MiB); elsewhere the GPU's part is longer.
double host_issue_us(const Fabric& fabric) {
  if (fabric.graph_launch) return 0.0;  // the graph issues every kernel at once
  return !is_amd(fabric.generation) && fabric.host == HostKind::x86 ? 22.0 : 0.0;
}

double launched_us(const Fabric& fabric, double device_us) {
  return std::max(host_issue_us(fabric), gpu_fixed_us(fabric) + device_us);
}

// Per protocol: a fixed start, the latency of one hop inside the scale-up domain and of one
// hop over the network, and the share of a link's rate that carries data.
constexpr std::array<double, 3> kProtocolBaseUs = {0.0, 2.0, 1.1};
// Over NVLink the hop is NCCL's own NVLink ring hwLat (library_tuner.h).
constexpr std::array<double, 3> kScaleUpHopUs = kNcclRingNvlinkHopUs;
// The same over xGMI (RCCL on MI300X and later): LL's and Simple's fitted on MI300X's ring rows
// (below 1 KiB and from 32 MiB; MSCCL's all-pairs runs between them), LL128's NCCL's NVLink value,
// as no published row shows RCCL's LL128.
constexpr std::array<double, 3> kXgmiHopUs = {0.8, 1.9, 3.8};
// LL sends 4 bytes of flag with every 4 of data; LL128 keeps 120 of every 128 bytes.
constexpr std::array<double, 3> kProtocolPayloadShare = {0.5, 120.0 / 128.0, 1.0};

// LL's rate is also bounded by how fast one block can poll its flags (NCCL's llMaxBw), per
// generation. Across nodes LL's own path through the network bounds the bytes a node moves,
// whatever the algorithm (NetworkPath::ll_gbps): NCCL keeps LL's network buffers in host memory,
// where the GPU writes and polls them and the proxy sends from them.
double ll_cap_gbps(GpuGeneration generation) {
  switch (generation) {
    case GpuGeneration::volta: return 39.0;  // NCCL's llMaxBws for Volta on one node
    case GpuGeneration::ampere: return 90.0;
    case GpuGeneration::hopper: return 141.0;
    case GpuGeneration::blackwell: return 282.0;
    case GpuGeneration::cdna2:
    case GpuGeneration::cdna3:
    case GpuGeneration::cdna4: return 120.0;
  }
  return 90.0;
}

// The share of the scale-up links' rate a ring's data reaches with every channel busy.
double documented_scale_up_efficiency(GpuGeneration generation) {
  return is_amd(generation) ? 0.705 : 0.76;
}
constexpr double kNetworkEfficiency = 0.93;
double scale_up_efficiency(const Fabric& fabric) {
  return fabric.measured.scale_up_efficiency.value_or(
      documented_scale_up_efficiency(fabric.generation));
}
double network_efficiency(const Fabric& fabric) {
  return fabric.measured.network_efficiency.value_or(kNetworkEfficiency);
}

// The tree moves every byte up and down: half the bus rate inside a node. Across more than two
// nodes a double binary tree sends each byte through a node's NICs twice each way (up in one
// tree, down in the other), about as often as a ring: half the bus rate again, the rate NCCL's
// tuner assumes. The published trees over Slingshot on 16 to 512 nodes reach half that of the
// NICs' rate (NetworkPath::tree_share). LL's rate across nodes is its own path's, not the NICs'
// (NetworkPath::ll_gbps), which the tree uses as often as a ring: half the bus rate on every
// network. Between two nodes the double binary tree is one exchange: each byte crosses a node's
// NICs once each way (see tree_share).
constexpr double kTreeShareInNode = 0.5;
constexpr double kTreeShareAcrossNodes = 0.5;

// Across nodes the tree pipelines chunks level by level, so the first chunk (or the whole
// message, when smaller) crosses the 2 * depth - 1 network levels one after another at one
// channel's rate: LL's chunks are smaller and its rate per channel much lower than the others'.
// With LL128 and Simple each of the tree's channels takes its share of the buffer, so a
// channel's chunk grows with the buffer up to NCCL's Simple step (its 4 MiB buffer in 8 steps).
// The least chunk and the number of channels are fitted (docs/collective-timing.md).
constexpr double kTreeLlChunkBytes = 10240;
constexpr double kTreeMinChunkBytes = 131072;
constexpr double kTreeMaxChunkBytes = 524288;
constexpr double kTreeChannels = 16;

double tree_chunk_bytes(Protocol protocol, double bytes) {
  if (protocol == Protocol::ll) return std::min(bytes, kTreeLlChunkBytes);
  const double channel_share = std::min(bytes / kTreeChannels, kTreeMaxChunkBytes);
  return std::min(bytes, std::max(channel_share, kTreeMinChunkBytes));
}

// What the network's path costs NCCL across nodes, per kind of network: per protocol LL, LL128,
// Simple the latency of a hop and the rate at which the tree's first chunk crosses a level; LL's
// rate per node; and the share of the NICs' rate a Simple or LL128 tree reaches beyond two nodes.
// docs/collective-timing.md says where each value comes from.
struct NetworkPath {
  std::array<double, 3> hop_us;
  std::array<double, 3> tree_level_gbps;
  double ll_gbps;
  double tree_share;
};

const NetworkPath& network_path(NetworkKind network) {
  // InfiniBand and RoCE: verbs with GPUDirect RDMA, the NICs on the GPUs' PCIe switches.
  static constexpr NetworkPath kVerbs{
      {6.2, 5.5, 14.0}, {8.0, 15.0, 15.0}, 20.0, kTreeShareAcrossNodes};
  // Slingshot through libfabric's CXI provider, the NIC behind the Grace CPU (GH200).
  static constexpr NetworkPath kSlingshot{{6.2, 5.5, 9.0}, {0.56, 5.4, 5.4}, 1.6, 0.35};
  // AWS EFA (libfabric's SRD) and TCP's GPUDirect (TCPX, TCPXO): a proxy's round trip per hop.
  static constexpr NetworkPath kEfa{
      {40.0, 40.0, 60.0}, {8.0, 2.0, 2.0}, 20.0, kTreeShareAcrossNodes};
  static constexpr NetworkPath kTcp{
      {55.0, 55.0, 60.0}, {8.0, 2.0, 2.0}, 20.0, kTreeShareAcrossNodes};
  switch (network) {
    case NetworkKind::infiniband:
    case NetworkKind::roce: return kVerbs;
    case NetworkKind::slingshot: return kSlingshot;
    case NetworkKind::efa: return kEfa;
    case NetworkKind::ethernet: return kTcp;
  }
  return kVerbs;
}

// RCCL crosses the network more slowly than NCCL: its tuner's latency for a tree's network hop
// (tuning model 5, which it applies to MI300X-class nodes) is 10.5 us with LL and 25 with Simple,
// where NCCL's is 5.0 and 14. The network path's hops scale by those ratios on AMD GPUs (RCCL
// has no LL128 latency there, and runs no LL128 across nodes).
constexpr std::array<double, 3> kRcclNetworkHopRatio = {10.5 / kNcclTreeNetHopUs[0], 1.0,
                                                        25.0 / kNcclTreeNetHopUs[2]};

double documented_network_hop_us(const Fabric& fabric, Protocol protocol) {
  const double hop_us = network_path(fabric.network).hop_us[index(protocol)];
  return is_amd(fabric.generation) ? hop_us * kRcclNetworkHopRatio[index(protocol)] : hop_us;
}

// A measured Simple hop scales every protocol's hop alike.
double network_hop_us(const Fabric& fabric, Protocol protocol) {
  const double documented_us = documented_network_hop_us(fabric, protocol);
  const std::optional<std::int64_t> measured = fabric.measured.network_latency_ps;
  if (!measured) return documented_us;
  return documented_us * us_of_ps(*measured) / documented_network_hop_us(fabric, Protocol::simple);
}

// NVLS: the switch reduces, so each byte crosses a GPU's links once each way; its rate is a
// share of the scale-up rate per generation. Its fixed cost does not follow the host: on Grace
// hosts, where a ring starts in 6.5 us, NVLS still takes about as long as on x86 hosts (the
// switch's multicast barriers, not the launch, set it), so it is one constant.
constexpr double kNvlsFixedUs = 31.0;
double nvls_share(GpuGeneration generation) {
  return generation == GpuGeneration::blackwell ? 0.8 : 0.88;
}

// NVLS moves the buffer in chunks spread over its channels (CTAs), and every chunk costs its
// channel one synchronization round through the switch, longer on Blackwell's NVLink 5 switches
// than on Hopper's. NCCL shrinks the chunk for smaller buffers (src/enqueue.cc,
// calcCollChunking), which is why NVLS reaches its full rate only on buffers of hundreds of MiB.
double nvls_chunk_sync_us(GpuGeneration generation) {
  return generation == GpuGeneration::blackwell ? 2.0 : 1.5;
}
constexpr double kNvlsMaxChunkBytes = 131072;

// NCCL's NVLS channels (src/transport/nvls.cc): 16 on Hopper; on Blackwell 24 inside one
// NVLink domain and 32 across nodes.
double nvls_channels(GpuGeneration generation, bool across_nodes) {
  if (generation != GpuGeneration::blackwell) return 16;
  return across_nodes ? 32 : 24;
}

// The chunk of an NVLS all-reduce of `bytes` whose channels and heads (GPUs) make
// `concurrent_ops` chunks in flight.
double nvls_chunk_bytes(double bytes, double concurrent_ops) {
  double chunk = kNvlsMaxChunkBytes;
  if (bytes < 64 * concurrent_ops * chunk) chunk = 65536;
  if (bytes < 8 * concurrent_ops * chunk) chunk = 32768;
  if (bytes < 2 * concurrent_ops * chunk) chunk = 16384;
  return chunk;
}

// NVLS-tree's round through the network per chunk and channel, fitted on the rate two-node H100
// and H200 runs over InfiniBand settle at (docs/collective-timing.md).
constexpr double kNvlsTreeNetworkChunkUs = 0.9;

// NVLS-tree's chunk: at most 64 KiB from four nodes on, and smaller for small buffers.
double nvls_tree_chunk_bytes(double bytes, double concurrent_ops, int nodes) {
  double chunk = nodes >= 4 ? 65536 : kNvlsMaxChunkBytes;
  if (bytes < 4 * concurrent_ops * chunk && chunk > 65536) chunk = 65536;
  if (bytes < concurrent_ops * chunk && chunk > 32768) chunk = 32768;
  return chunk;
}

struct Layout {
  int ranks = 1;
  int nodes = 1;
  int per_node = 1;
  // The share of a node's NICs, and of a GPU's scale-up rate, that the group has (1: all).
  double nic_share = 1.0;
  double scale_up_share = 1.0;
};

Layout layout_of(const Fabric& fabric, const TimingRequest& request) {
  const int per_node = request.ranks_per_node > 0
                           ? std::min(request.ranks_per_node, request.ranks)
                           : std::min(request.ranks, fabric.devices_per_node);
  Layout layout{request.ranks, (request.ranks + per_node - 1) / per_node, per_node};
  if (request.ranks_per_node > 0 && per_node < fabric.devices_per_node) {
    layout.nic_share = static_cast<double>(per_node) / fabric.devices_per_node;
    // One link to each peer: a GPU reaches only its group's per_node - 1 peers.
    if (fabric.scale_up == ScaleUpKind::full_mesh && fabric.devices_per_node > 1) {
      layout.scale_up_share =
          static_cast<double>(std::max(per_node - 1, 1)) / (fabric.devices_per_node - 1);
    }
  }
  return layout;
}

double gbps(std::int64_t bytes_per_s) { return static_cast<double>(bytes_per_s) / 1e9; }

// The levels of a binary tree over the group's nodes: ceil(log2 nodes), 0 for one node.
double tree_depth(const Layout& layout) {
  return std::ceil(std::log2(static_cast<double>(layout.nodes)));
}

// A GPU's scale-up links, and its group's NICs on a node, at their efficiencies: the group's
// share of them (Layout).
double scale_up_gbps(const Fabric& fabric, const Layout& layout) {
  return gbps(fabric.scale_up_bytes_per_s) * scale_up_efficiency(fabric) * layout.scale_up_share;
}
double node_nics_gbps(const Fabric& fabric, const Layout& layout) {
  return fabric.nics_per_node * gbps(fabric.nic_bytes_per_s) * network_efficiency(fabric) *
         layout.nic_share;
}

// The bus rate a protocol reaches: the scale-up links, or the group's NICs when it spans nodes,
// whichever is slower, times the protocol's payload share and caps. `scale_up_relief` says how
// much less than the bus the scale-up links carry (ring_scale_up_relief).
double bus_gbps(const Fabric& fabric, const Layout& layout, Protocol protocol,
                double scale_up_relief = 1.0) {
  double rate = scale_up_gbps(fabric, layout) * scale_up_relief;
  if (layout.nodes > 1) rate = std::min(rate, node_nics_gbps(fabric, layout));
  rate *= kProtocolPayloadShare[index(protocol)];
  if (protocol == Protocol::ll) {
    rate = std::min(rate, ll_cap_gbps(fabric.generation));
    if (layout.nodes > 1) rate = std::min(rate, network_path(fabric.network).ll_gbps);
  }
  return rate;
}

// LL128 needs the 128-byte stores of NVLink to arrive in order: NCCL runs it inside the
// scale-up domain and over InfiniBand, not over other networks.
bool protocol_runs(const Fabric& fabric, const Layout& layout, Protocol protocol) {
  return protocol != Protocol::ll128 || layout.nodes == 1 ||
         fabric.network == NetworkKind::infiniband;
}

// GPUDirect-TCPX and TCPXO, the TCP networks of GPU clusters, run NCCL with their provider's
// profile, which leaves NVLS off across nodes: TCPX takes only Ring with Simple, and TCPXO's
// profile sets NCCL_ALGO=Ring,Tree and NCCL_NVLS_ENABLE=0 (docs/collective-timing.md).
bool nvls_tree_runs(const Fabric& fabric) { return fabric.network != NetworkKind::ethernet; }

double scale_up_hop_us(GpuGeneration generation, Protocol protocol) {
  if (is_amd(generation)) return kXgmiHopUs[index(protocol)];
  return synchronization_factor(generation) * kScaleUpHopUs[index(protocol)];
}

double hops_us(const Fabric& fabric, Protocol protocol, double scale_up_hops,
               double network_hops) {
  return scale_up_hops * scale_up_hop_us(fabric.generation, protocol) +
         network_hops * network_hop_us(fabric, protocol);
}

// A ring across nodes enters and leaves each node through its NICs: of a GPU's sends, averaged
// over the channels, only (per_node - 1) / per_node go to a peer over its scale-up links, so
// those bound the ring's bus rate at per_node / (per_node - 1) times their own.
double ring_scale_up_relief(const Layout& layout) {
  if (layout.nodes == 1 || layout.per_node == 1) return 1.0;
  return static_cast<double>(layout.per_node) / (layout.per_node - 1);
}

// Ring: `steps` hops around the ring, of which each node boundary is crossed `passes` times
// per node; the bus carries `bus_bytes`.
double ring_us(const Fabric& fabric, const Layout& layout, Protocol protocol, double steps,
               double passes, double bus_bytes) {
  const double network_hops = passes * (layout.nodes - 1);
  const double rate_gbps = bus_gbps(fabric, layout, protocol, ring_scale_up_relief(layout));
  return launched_us(fabric, kProtocolBaseUs[index(protocol)] +
                                 hops_us(fabric, protocol, steps - network_hops, network_hops) +
                                 bus_bytes / (rate_gbps * 1e3));
}

// A tree across nodes fills its pipeline level by level: the first chunk crosses the
// 2 * depth - 1 network levels one after another.
double tree_fill_us(const Fabric& fabric, const Layout& layout, Protocol protocol,
                    double chunk_bytes) {
  if (layout.nodes < 2) return 0.0;
  const double depth = tree_depth(layout);
  return (2 * depth - 1) * chunk_bytes /
         (network_path(fabric.network).tree_level_gbps[index(protocol)] * 1e3);
}

// The tree's rate as a share of the bus rate (bus_gbps). Between two nodes the NICs carry each
// byte once each way, at the full bus rate, unless the chain inside each node, which moves every
// byte up and down over the scale-up links, is slower.
double tree_share(const Fabric& fabric, const Layout& layout, Protocol protocol) {
  if (layout.nodes == 1) return kTreeShareInNode;
  if (layout.nodes > 2) {
    return protocol == Protocol::ll ? kTreeShareAcrossNodes
                                    : network_path(fabric.network).tree_share;
  }
  const double chain_gbps =
      scale_up_gbps(fabric, layout) * kTreeShareInNode * kProtocolPayloadShare[index(protocol)];
  return std::min(1.0, chain_gbps / bus_gbps(fabric, layout, protocol));
}

double tree_us(const Fabric& fabric, const Layout& layout, Protocol protocol, double bytes) {
  const double depth = tree_depth(layout);
  double share = tree_share(fabric, layout, protocol);
  // Inside one node the tree's time is NCCL's own model of it, so NCCL's correction for the
  // medium sizes where measured trees run below that model applies, smoothed between its powers
  // of two (across nodes the pipeline fill, tree_fill_us, accounts for them).
  if (layout.nodes == 1) share *= smooth_tree_rate_correction(protocol, bytes);
  return launched_us(fabric,
                     kProtocolBaseUs[index(protocol)] +
                         2.0 * hops_us(fabric, protocol, layout.per_node - 1, depth) +
                         bytes / (bus_gbps(fabric, layout, protocol) * share * 1e3) +
                         tree_fill_us(fabric, layout, protocol, tree_chunk_bytes(protocol, bytes)));
}

// NVLS's rate over `gpus` GPUs reducing in the switches, in chunks of `chunk_bytes` over
// `channels` channels. Each GPU sends its whole buffer into the switch for the reduction and its
// share (1/gpus) for the broadcast, and receives the same, so its links move (1 + 1/gpus) times
// the buffer each way; each chunk adds a channel's synchronization round.
double nvls_gbps(const Fabric& fabric, double gpus, double channels, double chunk_bytes) {
  const double links_gbps =
      gbps(fabric.scale_up_bytes_per_s) * nvls_share(fabric.generation) * gpus / (gpus + 1);
  const double us_per_byte =
      1.0 / (links_gbps * 1e3) + nvls_chunk_sync_us(fabric.generation) / (channels * chunk_bytes);
  return 1.0 / (us_per_byte * 1e3);
}

double nvls_us(const Fabric& fabric, const Layout& layout, double bytes) {
  const double channels = nvls_channels(fabric.generation, false);
  const double chunk = nvls_chunk_bytes(bytes, channels * layout.ranks);
  return kNvlsFixedUs + bytes / (nvls_gbps(fabric, layout.ranks, channels, chunk) * 1e3);
}

// NVLS-tree's pipeline fill. The tree between nodes runs on the tree's channels, which start
// their first chunks at once, so each chunk moves at its channel's share of the GPU's NIC, and it
// crosses the switch's reduction, the tree's 2·depth − 1 network levels and the switch's
// broadcast one after another before the pipeline runs at its rate. A small buffer's chunks are
// its share per channel and GPU.
double nvls_tree_fill_us(const Fabric& fabric, const Layout& layout, double chunk, double bytes) {
  const double stages = 2.0 + (2.0 * tree_depth(layout) - 1.0);
  const double first_chunk = std::min(chunk, bytes / (kTreeChannels * layout.per_node));
  const double channel_gbps = node_nics_gbps(fabric, layout) / layout.per_node / kTreeChannels;
  return stages * first_chunk / (channel_gbps * 1e3);
}

// NVLS-tree all-reduce: the switches reduce inside each node (NVLS), each GPU's share of the
// node's sum goes through a tree of nodes over its NICs, and NVLS broadcasts the result. Between
// two nodes the tree is one exchange, each byte crossing the NICs once each way; in a deeper
// (double binary) tree each node sends each byte twice, once up and once down.
double nvls_tree_us(const Fabric& fabric, const Layout& layout, double bytes) {
  const double depth = tree_depth(layout);
  const double network_share = layout.nodes <= 2 ? 1.0 : 0.5;
  const double channels = nvls_channels(fabric.generation, true);
  const double chunk = nvls_tree_chunk_bytes(bytes, channels * layout.per_node, layout.nodes);
  // Each chunk of a channel also goes through the network's proxy (posted, sent, completed)
  // before the switches broadcast it, a round that adds to the switches' own.
  const double ns_per_byte = 1.0 / nvls_gbps(fabric, layout.per_node, channels, chunk) +
                             kNvlsTreeNetworkChunkUs * 1e3 / (channels * chunk);
  const double rate_gbps =
      std::min(1.0 / ns_per_byte, node_nics_gbps(fabric, layout) * network_share);
  return kNvlsFixedUs + 2.0 * depth * network_hop_us(fabric, Protocol::simple) +
         bytes / (rate_gbps * 1e3) + nvls_tree_fill_us(fabric, layout, chunk, bytes);
}

// PAT (Parallel Aggregated Trees) all-gather / reduce-scatter, which NCCL runs with one GPU per
// node: NCCL's tuner model (library_tuner.h), a latency logarithmic in the nodes plus a part per
// rank, at a share of the ring's bus rate.
double pat_us(const Fabric& fabric, const Layout& layout, double bus_bytes) {
  const double depth = tree_depth(layout);
  return launched_us(
      fabric,
      kProtocolBaseUs[index(Protocol::simple)] +
          depth * network_hop_us(fabric, Protocol::simple) * kNcclPatLevelShareOfHop +
          kNcclPatPerRankUs * layout.ranks +
          bus_bytes / (bus_gbps(fabric, layout, Protocol::simple) * kNcclPatRateShare * 1e3));
}

// RCCL runs an all-reduce on the eight GPUs of an MI300X-class node (gfx942: MI300X, MI325X)
// through MSCCL's all-pairs schedules (tools/msccl-algorithms/allreduce-allpairs-8n-*.xml), which
// RCCL enables for that node's xGMI mesh: each GPU sends each peer its share of the buffer over
// their direct link and sums the shares it receives, then sends the sum back to all peers. Two
// steps instead of a ring's 2 (n - 1), over every link at once. The schedules split the buffer
// into 256 chunks of whole elements and cover it up to 16 MiB: LL below 512 KiB, Simple from
// there; elsewhere RCCL runs its own ring and tree.
constexpr std::int64_t kAllPairsMaxBytes = 16 << 20;
constexpr std::int64_t kAllPairsSimpleFromBytes = 512 << 10;
constexpr std::int64_t kAllPairsChunks = 256;
// RCCL's MSCCL refuses a communicator with several GPUs in one process (src/misc/msccl/
// msccl_lifecycle.cc, mscclInit: "MSCCL doesn't support multiple GPUs in one process").
// Inside graph capture RCCL runs MSCCL++'s kernels instead, up to its threshold (1 MiB), on any
// buffer of a non-zero multiple of 32 bytes (RCCL's usage tips): the same exchange with every
// peer, so the all-pairs timing stands for them. ROCm's xGMI blog shows it on MI300X under
// rccl-tests -G 1: from 32 B on the all-reduce takes the 1 KiB buffer's time, where 8 and 16 B
// take the ring's.
constexpr std::int64_t kMscclppMaxBytes = 1 << 20;
constexpr std::int64_t kMscclppBytesMultiple = 32;
bool all_pairs_runs(const Fabric& fabric, const Layout& layout, const TimingRequest& request) {
  if (fabric.generation != GpuGeneration::cdna3 || layout.nodes != 1 || layout.ranks != 8 ||
      gpus_of_one_process(fabric, layout.per_node) != 1 || request.bytes <= 0) {
    return false;
  }
  if (fabric.graph_launch && request.bytes <= kMscclppMaxBytes &&
      request.bytes % kMscclppBytesMultiple == 0) {
    return true;
  }
  return request.bytes <= kAllPairsMaxBytes && request.element_bytes > 0 &&
         request.bytes % (kAllPairsChunks * request.element_bytes) == 0;
}
Protocol all_pairs_protocol(std::int64_t bytes) {
  return bytes < kAllPairsSimpleFromBytes ? Protocol::ll : Protocol::simple;
}
// Fitted on MI300X's 1 KiB to 16 MiB rows: a step of 3.0 us with LL and 5.3 us with Simple; LL
// at its usual rate, Simple's eight channels at 0.716 of the ring's rate over the mesh.
constexpr std::array<double, 3> kAllPairsStepUs = {3.0, 3.0, 5.3};
constexpr double kAllPairsSimpleRateShare = 0.716;
double all_pairs_us(const Fabric& fabric, const Layout& layout, Protocol protocol, double bytes) {
  const double n = layout.ranks;
  const double rate_gbps = protocol == Protocol::simple
                               ? scale_up_gbps(fabric, layout) * kAllPairsSimpleRateShare
                               : bus_gbps(fabric, layout, protocol);
  return launched_us(fabric, kProtocolBaseUs[index(protocol)] +
                                 2 * kAllPairsStepUs[index(protocol)] +
                                 bytes * 2 * (n - 1) / n / (rate_gbps * 1e3));
}

// CollNet Direct all-reduce: the GPUs of a node reduce-scatter among themselves over the
// scale-up links, each sends its share of the node's sum to the network, whose switches reduce
// across nodes (SHARP) and send the result back once, and the node all-gathers it. The network
// carries each byte once each way; inside the node a GPU sends and receives 2 (g - 1) / g of the
// buffer. NCCL's tuner takes a share of that rate and a serialization per local rank
// (library_tuner.h).
double collnet_us(const Fabric& fabric, const Layout& layout, double bytes) {
  const double g = layout.per_node;
  const double in_node_bytes = bytes * 2.0 * (g - 1) / g;
  const double bandwidth_us = std::max(in_node_bytes / (scale_up_gbps(fabric, layout) * 1e3),
                                       bytes / (node_nics_gbps(fabric, layout) * 1e3)) /
                              kNcclCollNetRateShare;
  return launched_us(fabric, kProtocolBaseUs[index(Protocol::simple)] +
                                 2.0 * (scale_up_hop_us(fabric.generation, Protocol::simple) +
                                        (g - 1) * kNcclCollNetPerLocalRankUs) +
                                 2.0 * network_hop_us(fabric, Protocol::simple) + bandwidth_us);
}

// All-to-all and permute send straight to their peers: the slower of the bytes a GPU sends
// inside its node over the scale-up links and those it sends out through its share of the NICs.
double direct_us(const Fabric& fabric, const Layout& layout, Protocol protocol,
                 double in_node_bytes, double off_node_bytes) {
  const double payload = kProtocolPayloadShare[index(protocol)];
  double time_us = in_node_bytes / (scale_up_gbps(fabric, layout) * payload * 1e3);
  if (off_node_bytes > 0) {
    const double per_gpu_nic_gbps = node_nics_gbps(fabric, layout) * payload / layout.per_node;
    time_us = std::max(time_us, off_node_bytes / (per_gpu_nic_gbps * 1e3));
  }
  const double network_hops = layout.nodes > 1 ? 1.0 : 0.0;
  return launched_us(fabric, kProtocolBaseUs[index(protocol)] +
                                 hops_us(fabric, protocol, 1.0 - network_hops, network_hops) +
                                 time_us);
}

std::int64_t to_ps(double time_us) {
  const double ps = std::ceil(time_us * 1e6);
  if (!(ps < static_cast<double>(std::numeric_limits<std::int64_t>::max()))) {
    throw Error(fmt::format("a collective of {:.3g} us is beyond the simulator's clock", time_us));
  }
  return static_cast<std::int64_t>(ps);
}

void check_measured(const MeasuredTiming& measured) {
  for (const auto& [name, value] : {std::pair{"launch_latency", measured.launch_latency_ps},
                                    std::pair{"network_latency", measured.network_latency_ps}}) {
    if (value && *value < 0) {
      throw Error(
          fmt::format("collective timing: measured {} {} ps, expected 0 or more", name, *value));
    }
  }
  for (const auto& [name, value] :
       {std::pair{"network_efficiency", measured.network_efficiency},
        std::pair{"scale_up_efficiency", measured.scale_up_efficiency}}) {
    if (value && !(*value > 0 && *value <= 1)) {
      throw Error(fmt::format("collective timing: measured {} {}, expected above 0 and at most 1",
                              name, *value));
    }
  }
}

void check_request(const Fabric& fabric, const TimingRequest& request) {
  check_measured(fabric.measured);
  if (request.ranks < 1) {
    throw Error(fmt::format("collective timing: {} ranks, expected at least 1", request.ranks));
  }
  if (request.bytes < 0) {
    throw Error(fmt::format("collective timing: {} bytes, expected 0 or more", request.bytes));
  }
  if (fabric.devices_per_node < 1 || fabric.scale_up_bytes_per_s <= 0) {
    throw Error("fabric: devices_per_node and scale_up_bandwidth must be positive");
  }
  if (fabric.gpus_per_process < 1) {
    throw Error(fmt::format("fabric: gpus_per_process {}, expected at least 1",
                            fabric.gpus_per_process));
  }
  if (request.ranks_per_node < 0) {
    throw Error(fmt::format("collective timing: {} ranks per node, expected 0 (consecutive) or more",
                            request.ranks_per_node));
  }
  if (layout_of(fabric, request).nodes > 1 &&
      (fabric.nics_per_node < 1 || fabric.nic_bytes_per_s <= 0)) {
    throw Error(fmt::format(
        "collective timing: {} ranks span nodes of {} devices, but the fabric has no NICs; "
        "expected nics_per_node and nic_bandwidth",
        request.ranks, fabric.devices_per_node));
  }
}

// One protocol's candidates for the request, in the order ring, tree, nvls, nvlstree, collnet
// (all-reduce) or ring, pat (all-gather, reduce-scatter).
void add_choices(const Fabric& fabric, const TimingRequest& request, const Layout& layout,
                 Protocol protocol, std::vector<TimedChoice>& out) {
  if (!protocol_runs(fabric, layout, protocol)) return;
  const double n = layout.ranks;
  const double bytes = static_cast<double>(request.bytes);
  const double stagger_us = launch_stagger_us(fabric, layout.per_node);
  const auto add = [&](LibraryAlgorithm algorithm, double time_us) {
    out.push_back({algorithm, protocol, to_ps(time_us + stagger_us), ""});
  };
  switch (request.op) {
    case TimedOp::all_reduce:
      add(LibraryAlgorithm::ring,
          ring_us(fabric, layout, protocol, 2 * (n - 1), 2, bytes * 2 * (n - 1) / n));
      if (layout.ranks > 2) add(LibraryAlgorithm::tree, tree_us(fabric, layout, protocol, bytes));
      if (all_pairs_runs(fabric, layout, request) &&
          protocol == all_pairs_protocol(request.bytes)) {
        add(LibraryAlgorithm::allpairs, all_pairs_us(fabric, layout, protocol, bytes));
      }
      if (protocol != Protocol::simple) return;
      if (fabric.in_switch_reduction && layout.nodes == 1 && layout.ranks > 1) {
        add(LibraryAlgorithm::nvls, nvls_us(fabric, layout, bytes));
      }
      if (fabric.in_switch_reduction && nvls_tree_runs(fabric) && layout.nodes > 1 &&
          layout.per_node > 1) {
        add(LibraryAlgorithm::nvlstree, nvls_tree_us(fabric, layout, bytes));
      }
      if (fabric.in_network_reduction && layout.nodes > 1) {
        add(LibraryAlgorithm::collnet, collnet_us(fabric, layout, bytes));
      }
      return;
    case TimedOp::all_gather:
    case TimedOp::reduce_scatter:
      add(LibraryAlgorithm::ring, ring_us(fabric, layout, protocol, n - 1, 1, bytes * (n - 1) / n));
      if (protocol == Protocol::simple && layout.per_node == 1 && layout.nodes > 1) {
        add(LibraryAlgorithm::pat, pat_us(fabric, layout, bytes * (n - 1) / n));
      }
      return;
    case TimedOp::broadcast:
      add(LibraryAlgorithm::ring, ring_us(fabric, layout, protocol, n - 1, 1, bytes));
      return;
    case TimedOp::all_to_all: {
      const double in_node = bytes * (layout.per_node - 1) / n;
      add(LibraryAlgorithm::ring,
          direct_us(fabric, layout, protocol, in_node, bytes * (n - layout.per_node) / n));
      return;
    }
    case TimedOp::permute:
      add(LibraryAlgorithm::ring, layout.nodes > 1
                                      ? direct_us(fabric, layout, protocol, 0, bytes)
                                      : direct_us(fabric, layout, protocol, bytes, 0));
      return;
  }
}

// What NCCL's tuner knows of the request's group (library_tuner.h).
TunerGroup tuner_group(const Fabric& fabric, const Layout& layout) {
  return {fabric.generation,
          layout.ranks,
          layout.nodes,
          layout.per_node,
          gbps(fabric.scale_up_bytes_per_s) * layout.scale_up_share,
          fabric.nics_per_node * gbps(fabric.nic_bytes_per_s) * layout.nic_share,
          fabric.nics_per_node >= fabric.devices_per_node};
}

// The candidate the library runs: RCCL's MSCCL all-pairs wherever its schedule applies (MSCCL
// takes the call before RCCL's own choice), else the one NCCL's tuner estimates fastest where its
// estimate decides (library_tuner.h), else the fastest. The first of equals wins, so the order of
// add_choices breaks ties.
const TimedChoice& library_pick(const Fabric& fabric, const TimingRequest& request,
                                const std::vector<TimedChoice>& choices) {
  const auto all_pairs = std::find_if(choices.begin(), choices.end(), [](const TimedChoice& c) {
    return c.algorithm == LibraryAlgorithm::allpairs;
  });
  if (all_pairs != choices.end()) return *all_pairs;
  if (!library_estimates(fabric.generation, request.op)) {
    return *std::min_element(
        choices.begin(), choices.end(),
        [](const TimedChoice& a, const TimedChoice& b) { return a.time_ps < b.time_ps; });
  }
  const TunerGroup group = tuner_group(fabric, layout_of(fabric, request));
  const double bytes = static_cast<double>(request.bytes);
  std::size_t best = 0;
  double best_us = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    const double estimate_us =
        library_estimate_us(group, request.op, choices[i].algorithm, choices[i].protocol, bytes);
    if (estimate_us < best_us) {
      best = i;
      best_us = estimate_us;
    }
  }
  return choices[best];
}

// Each enum's names, in the enum's order. They match in any case ("simple", "LL128"), as
// NCCL_ALGO and NCCL_PROTO take them.
constexpr NameTable<TimedOp, 6> kOpNames = {{{TimedOp::all_reduce, "all_reduce"},
                                             {TimedOp::all_gather, "all_gather"},
                                             {TimedOp::reduce_scatter, "reduce_scatter"},
                                             {TimedOp::broadcast, "broadcast"},
                                             {TimedOp::all_to_all, "all_to_all"},
                                             {TimedOp::permute, "permute"}}};
constexpr NameTable<LibraryAlgorithm, 7> kAlgorithmNames = {
    {{LibraryAlgorithm::ring, "ring"},
     {LibraryAlgorithm::tree, "tree"},
     {LibraryAlgorithm::nvls, "nvls"},
     {LibraryAlgorithm::nvlstree, "nvlstree"},
     {LibraryAlgorithm::pat, "pat"},
     {LibraryAlgorithm::collnet, "collnet"},
     {LibraryAlgorithm::allpairs, "allpairs"}}};
constexpr NameTable<Protocol, 3> kProtocolNames = {
    {{Protocol::ll, "LL"}, {Protocol::ll128, "LL128"}, {Protocol::simple, "Simple"}}};

}  // namespace

bool reduces_in_switches(LibraryAlgorithm algorithm) {
  return algorithm == LibraryAlgorithm::nvls || algorithm == LibraryAlgorithm::nvlstree;
}

std::string_view timed_op_name(TimedOp op) { return name_in(kOpNames, op); }
std::string_view library_algorithm_name(LibraryAlgorithm algorithm) {
  return name_in(kAlgorithmNames, algorithm);
}
std::string_view protocol_name(Protocol protocol) { return name_in(kProtocolNames, protocol); }

TimedOp timed_op_from_name(std::string_view name) {
  return value_in(kOpNames, name, "collective", NameCase::any);
}
LibraryAlgorithm library_algorithm_from_name(std::string_view name) {
  return value_in(kAlgorithmNames, name, "library algorithm", NameCase::any);
}
Protocol protocol_from_name(std::string_view name) {
  return value_in(kProtocolNames, name, "protocol", NameCase::any);
}

std::string TimedChoice::label() const {
  return fmt::format("{}/{}", library_algorithm_name(algorithm), protocol_name(protocol));
}

DocumentedTiming documented_timing(const Fabric& fabric) {
  return {
      .launch_latency_ps = std::llround(documented_gpu_fixed_us(fabric) * 1e6),
      .network_latency_ps = std::llround(documented_network_hop_us(fabric, Protocol::simple) * 1e6),
      .network_efficiency = kNetworkEfficiency,
      .scale_up_efficiency = documented_scale_up_efficiency(fabric.generation)};
}

std::vector<TimedChoice> timed_choices(const Fabric& fabric, const TimingRequest& request) {
  check_request(fabric, request);
  std::vector<TimedChoice> choices;
  const Layout layout = layout_of(fabric, request);
  for (Protocol protocol : kProtocols) add_choices(fabric, request, layout, protocol, choices);
  return choices;
}

TimedChoice time_collective(const Fabric& fabric, const TimingRequest& request) {
  const std::vector<TimedChoice> all = timed_choices(fabric, request);
  std::vector<TimedChoice> allowed;
  for (const TimedChoice& choice : all) {
    if ((!request.algorithm || choice.algorithm == *request.algorithm) &&
        (!request.protocol || choice.protocol == *request.protocol)) {
      allowed.push_back(choice);
    }
  }
  if (!allowed.empty()) return library_pick(fabric, request, allowed);
  TimedChoice chosen = library_pick(fabric, request, all);
  const std::string wanted = fmt::format(
      "{}{}{}", request.algorithm ? library_algorithm_name(*request.algorithm) : "",
      request.algorithm && request.protocol ? "/" : "",
      request.protocol ? protocol_name(*request.protocol) : "");
  chosen.fallback = fmt::format("{} cannot run {} of {} ranks on this fabric; {} is used",
                                wanted, timed_op_name(request.op), request.ranks, chosen.label());
  return chosen;
}

}  // namespace spmd::cost_model
