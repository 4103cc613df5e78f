// Machine files (docs/machine-format.md): the documented example and the files in
// docs/machines/ read as the values they state, omitted fields take the documented defaults,
// machine_to_json round-trips, every bad input is one line naming its JSON path, and
// make_topology builds each kind with the right device count.

#include "sim/machine_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "reference/error.h"
#include "sim/machine_presets.h"
#include "tests/error_of.h"

namespace spmd::sim {
namespace {

using test_errors::error_of;

using nlohmann::json;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr std::int64_t kMiB = std::int64_t{1} << 20;

std::string machines_dir() { return std::string(SPMD_SOURCE_DIR) + "/docs/machines/"; }

// The example at the top of docs/machine-format.md.
const char* const kDocumentedExample = R"({
  "name": "8x H100 box",
  "devices": 8,
  "memory": "80GiB",
  "compute": {"peak_flops": "989TFLOP/s", "memory_bandwidth": "3.35TB/s"},
  "topology": {"kind": "switch", "link": {"bandwidth": "450GB/s", "latency": "1us"}},
  "algorithms": {"all_reduce": "ring"},
  "pipeline_chunk": "2MiB",
  "link_sharing": "fair"
})";

// A valid machine of `devices` devices with the given topology object.
json machine_with(int devices, json topology) {
  return {{"devices", devices}, {"topology", std::move(topology)}};
}

json link_json(const std::string& bandwidth, const std::string& latency) {
  return {{"bandwidth", bandwidth}, {"latency", latency}};
}

const json kLink = link_json("100GB/s", "1us");

std::string error_of(const json& machine) {
  return error_of([&] { machine_from_json(machine); });
}

// `machine` with `value` put at the JSON pointer `where` ("/topology/dims/1").
json with(json machine, const std::string& where, json value) {
  machine[json::json_pointer(where)] = std::move(value);
  return machine;
}

void expect_same_machine(const MachineSpec& a, const MachineSpec& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.devices, b.devices);
  EXPECT_EQ(a.memory_bytes, b.memory_bytes);
  EXPECT_EQ(a.peak_flops_per_s, b.peak_flops_per_s);
  EXPECT_EQ(a.memory_bandwidth_bytes_per_s, b.memory_bandwidth_bytes_per_s);
  EXPECT_EQ(a.algorithms, b.algorithms);
  EXPECT_EQ(a.pipeline_chunk_bytes, b.pipeline_chunk_bytes);
  EXPECT_EQ(a.link_sharing, b.link_sharing);
  EXPECT_EQ(topology::kind_of(a.topology), topology::kind_of(b.topology));
  EXPECT_TRUE(a.topology == b.topology)
      << machine_to_json(a).dump() << " vs " << machine_to_json(b).dump();
}

// ---------------------------------------------------------------------------------------------
// Reading

TEST(MachineFromJson, ReadsTheDocumentedExample) {
  const MachineSpec machine = machine_from_json(json::parse(kDocumentedExample));
  EXPECT_EQ(machine.name, "8x H100 box");
  EXPECT_EQ(machine.devices, 8);
  EXPECT_EQ(machine.memory_bytes, 80 * kGiB);
  EXPECT_EQ(machine.peak_flops_per_s, 989e12);
  EXPECT_EQ(machine.memory_bandwidth_bytes_per_s, 3'350'000'000'000);
  const auto& star = std::get<topology::SwitchSpec>(machine.topology);
  EXPECT_EQ(star.devices, 8);
  EXPECT_EQ(star.link.bandwidth_bytes_per_s, 450'000'000'000);
  EXPECT_EQ(star.link.latency_ps, 1'000'000);
  EXPECT_EQ(machine.algorithms, (std::map<std::string, collectives::Algorithm>{
                                    {"all_reduce", collectives::Algorithm::ring}}));
  EXPECT_EQ(machine.pipeline_chunk_bytes, 2 * kMiB);
  EXPECT_EQ(machine.link_sharing, LinkSharing::fair);
}

TEST(MachineFromJson, LinkSharingIsFairOrFifo) {
  json machine = machine_with(4, {{"kind", "switch"}, {"link", kLink}});
  EXPECT_EQ(machine_from_json(machine).link_sharing, LinkSharing::fair);
  machine["link_sharing"] = "fifo";
  EXPECT_EQ(machine_from_json(machine).link_sharing, LinkSharing::fifo);
}

TEST(MachineFromJson, OmittedFieldsTakeTheDocumentedDefaults) {
  const MachineSpec machine =
      machine_from_json(machine_with(4, {{"kind", "fully_connected"}, {"link", kLink}}));
  EXPECT_EQ(machine.name, "machine");
  EXPECT_EQ(machine.memory_bytes, 80 * kGiB);
  EXPECT_EQ(machine.peak_flops_per_s, 1e15);
  EXPECT_EQ(machine.memory_bandwidth_bytes_per_s, 3'000'000'000'000);
  EXPECT_TRUE(machine.algorithms.empty());
  EXPECT_EQ(machine.pipeline_chunk_bytes, 2 * kMiB);
  EXPECT_EQ(machine.link_sharing, LinkSharing::fair);
  EXPECT_EQ(topology::device_count_of(machine.topology), 4);
}

TEST(MachineFromJson, SizesAndBandwidthsMayBePlainJsonNumbers) {
  json machine = machine_with(4, {{"kind", "switch"}, {"link", link_json("1GB/s", "1us")}});
  machine["memory"] = 1073741824;
  machine["pipeline_chunk"] = 1048576.0;
  machine["compute"] = {{"peak_flops", 1.5e15}, {"memory_bandwidth", 3.35e12}};
  machine["topology"]["link"]["bandwidth"] = 25e9;
  const MachineSpec spec = machine_from_json(machine);
  EXPECT_EQ(spec.memory_bytes, kGiB);
  EXPECT_EQ(spec.pipeline_chunk_bytes, kMiB);
  EXPECT_EQ(spec.peak_flops_per_s, 1.5e15);
  EXPECT_EQ(spec.memory_bandwidth_bytes_per_s, 3'350'000'000'000);
  EXPECT_EQ(std::get<topology::SwitchSpec>(spec.topology).link.bandwidth_bytes_per_s,
            25'000'000'000);
}

TEST(MachineFromJson, RingIsBidirectionalUnlessSaidOtherwise) {
  const json ring = {{"kind", "ring"}, {"link", kLink}};
  EXPECT_TRUE(std::get<topology::RingSpec>(machine_from_json(machine_with(8, ring)).topology)
                  .bidirectional);
  EXPECT_FALSE(
      std::get<topology::RingSpec>(
          machine_from_json(with(machine_with(8, ring), "/topology/bidirectional", false)).topology)
          .bidirectional);
}

TEST(MachineFromJson, OneTorusLinkAppliesToEveryDimension) {
  const MachineSpec machine = machine_from_json(machine_with(
      24, {{"kind", "mesh"}, {"dims", {2, 3, 4}}, {"link", link_json("45GB/s", "1.5us")}}));
  const auto& mesh = std::get<topology::MeshSpec>(machine.topology);
  EXPECT_EQ(mesh.dims, (std::vector<int>{2, 3, 4}));
  ASSERT_EQ(mesh.dim_links.size(), 3u);
  for (const topology::LinkSpec& link : mesh.dim_links) {
    EXPECT_EQ(link.bandwidth_bytes_per_s, 45'000'000'000);
    EXPECT_EQ(link.latency_ps, 1'500'000);
  }
}

TEST(MachineFiles, RingOf8) {
  const MachineSpec machine = load_machine_file(machines_dir() + "ring8.json");
  EXPECT_EQ(machine.devices, 8);
  EXPECT_EQ(machine.memory_bytes, 16 * kGiB);
  EXPECT_EQ(machine.peak_flops_per_s, 100e12);
  EXPECT_EQ(machine.memory_bandwidth_bytes_per_s, 900'000'000'000);
  const auto& ring = std::get<topology::RingSpec>(machine.topology);
  EXPECT_FALSE(ring.bidirectional);
  EXPECT_EQ(ring.link.bandwidth_bytes_per_s, 50'000'000'000);
  EXPECT_EQ(ring.link.latency_ps, 2'000'000);
}

TEST(MachineFiles, Torus4x4WithALinkPerDimension) {
  const MachineSpec machine = load_machine_file(machines_dir() + "torus4x4.json");
  EXPECT_EQ(machine.devices, 16);
  EXPECT_EQ(machine.memory_bytes, 32 * kGiB);
  EXPECT_EQ(machine.memory_bandwidth_bytes_per_s, 1'200'000'000'000);
  const auto& torus = std::get<topology::TorusSpec>(machine.topology);
  EXPECT_EQ(torus.dims, (std::vector<int>{4, 4}));
  ASSERT_EQ(torus.dim_links.size(), 2u);
  EXPECT_EQ(torus.dim_links[0].latency_ps, 1'000'000);
  EXPECT_EQ(torus.dim_links[1].latency_ps, 1'500'000);
  EXPECT_EQ(torus.dim_links[1].bandwidth_bytes_per_s, 45'000'000'000);
  // "all_gather": "auto" is the same as leaving all_gather out.
  EXPECT_EQ(machine.algorithms, (std::map<std::string, collectives::Algorithm>{
                                    {"all_reduce", collectives::Algorithm::torus}}));
  EXPECT_EQ(machine.pipeline_chunk_bytes, kMiB);
}

TEST(MachineFiles, TwoBoxesOf8) {
  const MachineSpec machine = load_machine_file(machines_dir() + "two-boxes.json");
  EXPECT_EQ(machine.devices, 16);
  const auto& boxes = std::get<topology::HierarchicalSpec>(machine.topology);
  EXPECT_EQ(boxes.devices_per_node, 8);
  EXPECT_EQ(boxes.intra_node_link.bandwidth_bytes_per_s, 450'000'000'000);
  // 400 Gbit/s is 50 GB/s.
  EXPECT_EQ(boxes.inter_node_link.bandwidth_bytes_per_s, 50'000'000'000);
  EXPECT_EQ(boxes.inter_node_link.latency_ps, 5'000'000);
  EXPECT_EQ(machine.algorithms.size(), 3u);
}

// ---------------------------------------------------------------------------------------------
// Writing

TEST(MachineToJson, ReadsBackAsTheSameMachine) {
  std::vector<MachineSpec> machines = {machine_from_json(json::parse(kDocumentedExample))};
  for (const char* file : {"ring8.json", "torus4x4.json", "two-boxes.json"}) {
    machines.push_back(load_machine_file(machines_dir() + file));
  }
  MachineSpec odd = machine_from_json(machine_with(
      12, {{"kind", "torus"},
           {"dims", {3, 4}},
           {"links", {link_json("12345678B/s", "1234567ps"), link_json("1.1GB/s", "0.7us")}}}));
  odd.memory_bytes = 1'000'000'007;
  odd.peak_flops_per_s = 1.0 / 3.0;
  odd.memory_bandwidth_bytes_per_s = 3;
  odd.link_sharing = LinkSharing::fifo;
  machines.push_back(odd);
  for (const MachineSpec& machine : machines) {
    const json written = machine_to_json(machine);
    SCOPED_TRACE(written.dump());
    expect_same_machine(machine_from_json(written), machine);
    EXPECT_EQ(machine_to_json(machine_from_json(written)), written);
  }
}

TEST(MachineToJson, WritesUnitsPeopleRead) {
  EXPECT_EQ(machine_to_json(machine_from_json(json::parse(kDocumentedExample))),
            json::parse(kDocumentedExample));
}

// ---------------------------------------------------------------------------------------------
// Bad input: one line naming the JSON path, the value and what was expected.

class MachineErrors : public ::testing::Test {
 protected:
  const json ring_ = machine_with(8, {{"kind", "ring"}, {"link", kLink}});
  const json torus_ = machine_with(16, {{"kind", "torus"}, {"dims", {4, 4}}, {"link", kLink}});
  const json hierarchical_ = machine_with(16, {{"kind", "hierarchical"},
                                               {"devices_per_node", 8},
                                               {"intra_node_link", kLink},
                                               {"inter_node_link", kLink}});
};

TEST_F(MachineErrors, UnknownFieldsAreNamed) {
  EXPECT_EQ(error_of(with(ring_, "/memroy", "80GiB")),
            "memroy: unknown field, expected one of name, devices, memory, compute, topology, "
            "algorithms, pipeline_chunk, link_sharing, faults, fabric");
  EXPECT_EQ(error_of(with(ring_, "/topology/link/bandwith", "1GB/s")),
            "topology.link.bandwith: unknown field, expected one of bandwidth, latency");
  EXPECT_EQ(error_of(with(ring_, "/compute/flops", 1)),
            "compute.flops: unknown field, expected one of peak_flops, memory_bandwidth");
  // A field of another kind is as wrong as a typo.
  EXPECT_EQ(error_of(with(ring_, "/topology/dims", {2, 4})),
            "topology.dims: unknown field, expected one of kind, bidirectional, link");
  EXPECT_EQ(error_of(with(ring_, "/algorithms/allreduce", "ring")),
            "algorithms.allreduce: unknown field, expected one of all_reduce, reduce_scatter, "
            "all_gather, all_to_all, broadcast");
}

TEST_F(MachineErrors, WrongTypesAreNamed) {
  EXPECT_EQ(error_of(json::array({1, 2})),
            "machine: [1,2] is an array, expected an object with fields name, devices, memory, "
            "compute, topology, algorithms, pipeline_chunk, link_sharing, faults, fabric");
  EXPECT_EQ(error_of(with(ring_, "/devices", "8")),
            R"(devices: "8" is a string, expected a positive integer)");
  EXPECT_EQ(error_of(with(ring_, "/topology/bidirectional", "yes")),
            R"(topology.bidirectional: "yes" is a string, expected true or false)");
  EXPECT_EQ(error_of(with(ring_, "/topology/link/latency", 1000)),
            R"(topology.link.latency: 1000 is a number, expected a string with a unit like )"
            R"("1.5us" or "500ns")");
  EXPECT_EQ(error_of(with(ring_, "/name", 7)), "name: 7 is a number, expected a string");
  EXPECT_EQ(error_of(with(torus_, "/topology/dims", "4x4")),
            R"(topology.dims: "4x4" is a string, expected an array of 2 or 3 sizes like [4, 4])");
}

TEST_F(MachineErrors, BadValuesAreNamed) {
  EXPECT_EQ(error_of(with(torus_, "/topology/dims/1", 0)),
            "topology.dims[1]: 0, expected a positive integer");
  EXPECT_EQ(error_of(with(ring_, "/devices", 2.5)), "devices: 2.5, expected a positive integer");
  EXPECT_EQ(error_of(with(ring_, "/devices", 0)), "devices: 0, expected a positive integer");
  EXPECT_EQ(error_of(with(ring_, "/devices", -3)), "devices: -3, expected a positive integer");
  EXPECT_EQ(error_of(with(ring_, "/devices", 3'000'000'000)),
            "devices: 3000000000, expected a positive integer up to 2147483647");
  EXPECT_EQ(error_of(with(ring_, "/devices", json::parse("3000000000"))),  // held as unsigned
            "devices: 3000000000, expected a positive integer up to 2147483647");
  EXPECT_EQ(error_of(with(ring_, "/topology/kind", "hypercube")),
            R"(topology.kind: "hypercube", expected one of ring, torus, mesh, fully_connected, )"
            R"(switch, hierarchical)");
  EXPECT_EQ(error_of(with(ring_, "/topology/link/bandwidth", "100 parsecs")),
            R"(topology.link.bandwidth: "100 parsecs" is not a bandwidth, expected a number )"
            R"(with a unit like "100GB/s", "400Gb/s" or "25GiB/s")");
  EXPECT_EQ(error_of(with(ring_, "/memory", "0GiB")),
            R"(memory: "0GiB", expected a size > 0 like "80GiB")");
  EXPECT_EQ(error_of(with(ring_, "/compute/peak_flops", -1)),
            R"(compute.peak_flops: -1, expected a compute rate > 0 like "989TFLOP/s")");
  EXPECT_EQ(error_of(with(ring_, "/link_sharing", "maxmin")),
            R"(link_sharing: "maxmin", expected fair or fifo)");
  EXPECT_EQ(error_of(with(torus_, "/topology/dims", {16})),
            "topology.dims: [16], expected 2 or 3 sizes like [4, 4] or [4, 4, 4]");
}

TEST_F(MachineErrors, MissingFieldsAreNamed) {
  json no_devices = ring_;
  no_devices.erase("devices");
  EXPECT_EQ(error_of(no_devices), "devices: missing, expected a positive integer");
  json no_link = ring_;
  no_link["topology"].erase("link");
  EXPECT_EQ(error_of(no_link),
            R"(topology.link: missing, expected {"bandwidth": "100GB/s", "latency": "1us"})");
  json no_latency = ring_;
  no_latency["topology"]["link"].erase("latency");
  EXPECT_EQ(error_of(no_latency),
            R"(topology.link.latency: missing, expected a duration like "1us")");
}

TEST_F(MachineErrors, DeviceCountsMustAgreeWithTheTopology) {
  EXPECT_EQ(error_of(with(torus_, "/devices", 8)),
            "topology.dims: [4,4] has 16 devices, expected a product equal to devices (8)");
  EXPECT_EQ(error_of(with(hierarchical_, "/topology/devices_per_node", 3)),
            "topology.devices_per_node: 3, expected a divisor of devices (16)");
}

TEST_F(MachineErrors, TorusLinksAreOnePerDimension) {
  EXPECT_EQ(error_of(with(torus_, "/topology/links", {kLink, kLink})),
            "topology.links: given together with topology.link, expected only one");
  json three_links = torus_;
  three_links["topology"].erase("link");
  three_links["topology"]["links"] = {kLink, kLink, kLink};
  EXPECT_EQ(error_of(three_links), "topology.links: 3 links, expected one per dimension (2)");
}

TEST_F(MachineErrors, AlgorithmsAreNamedByTheirNames) {
  EXPECT_EQ(error_of(with(ring_, "/algorithms/all_reduce", "rng")),
            R"(algorithms.all_reduce: "rng", expected one of auto, direct, ring, )"
            R"(bidirectional_ring, halving_doubling, binary_tree, double_binary_tree, torus, )"
            R"(bidirectional_torus)");
}

// ---------------------------------------------------------------------------------------------
// Fabric: the collective library's view of the hardware (docs/machine-format.md, "Fabric")

// Two MI300X-like nodes: every field given, none at its default.
json with_full_fabric(json machine) {
  machine["fabric"] = {{"generation", "cdna3"},           {"host", "grace"},
                       {"devices_per_node", 4},           {"scale_up", "full_mesh"},
                       {"scale_up_bandwidth", "448GB/s"}, {"in_switch_reduction", true},
                       {"in_network_reduction", true},    {"nics_per_node", 2},
                       {"nic_bandwidth", "50GB/s"},       {"network", "roce"},
                       {"gpus_per_process", 4},           {"graph_launch", true},
                       {"launch_latency", "180us"},       {"network_latency", "12.5us"},
                       {"network_efficiency", 0.875},     {"scale_up_efficiency", 0.5}};
  return machine;
}

const json kTwoNodesOf4 = machine_with(8, {{"kind", "hierarchical"},
                                           {"devices_per_node", 4},
                                           {"intra_node_link", kLink},
                                           {"inter_node_link", kLink}});

TEST(MachineFabric, ReadsEveryField) {
  const MachineSpec machine =
      machine_from_json(with(with_full_fabric(kTwoNodesOf4), "/fabric/nic_bandwidth", "400Gb/s"));
  ASSERT_TRUE(machine.fabric.has_value());
  const cost_model::Fabric& fabric = *machine.fabric;
  EXPECT_EQ(fabric.generation, cost_model::GpuGeneration::cdna3);
  EXPECT_EQ(fabric.host, cost_model::HostKind::grace);
  EXPECT_EQ(fabric.devices_per_node, 4);
  EXPECT_EQ(fabric.scale_up, cost_model::ScaleUpKind::full_mesh);
  EXPECT_EQ(fabric.scale_up_bytes_per_s, 448'000'000'000);
  EXPECT_TRUE(fabric.in_switch_reduction);
  EXPECT_TRUE(fabric.in_network_reduction);
  EXPECT_EQ(fabric.nics_per_node, 2);
  EXPECT_EQ(fabric.nic_bytes_per_s, 50'000'000'000);  // 400 Gbit/s
  EXPECT_EQ(fabric.network, cost_model::NetworkKind::roce);
  EXPECT_EQ(fabric.gpus_per_process, 4);
  EXPECT_TRUE(fabric.graph_launch);
  EXPECT_EQ(fabric.measured.launch_latency_ps, 180'000'000);
  EXPECT_EQ(fabric.measured.network_latency_ps, 12'500'000);
  EXPECT_EQ(fabric.measured.network_efficiency, 0.875);
  EXPECT_EQ(fabric.measured.scale_up_efficiency, 0.5);
}

TEST(MachineFabric, OmittedFieldsTakeTheDocumentedDefaults) {
  json machine = machine_with(8, {{"kind", "switch"}, {"link", kLink}});
  EXPECT_FALSE(machine_from_json(machine).fabric.has_value());
  machine["fabric"] = json::object();
  const cost_model::Fabric fabric = machine_from_json(machine).fabric.value();
  EXPECT_EQ(fabric.generation, cost_model::GpuGeneration::hopper);
  EXPECT_EQ(fabric.host, cost_model::HostKind::x86);
  EXPECT_EQ(fabric.devices_per_node, 8);
  EXPECT_EQ(fabric.scale_up, cost_model::ScaleUpKind::nvswitch);
  EXPECT_EQ(fabric.scale_up_bytes_per_s, 450'000'000'000);
  EXPECT_FALSE(fabric.in_switch_reduction);
  EXPECT_FALSE(fabric.in_network_reduction);
  EXPECT_EQ(fabric.nics_per_node, 0);  // one node needs no NICs
  EXPECT_EQ(fabric.nic_bytes_per_s, 0);
  EXPECT_EQ(fabric.network, cost_model::NetworkKind::infiniband);
  EXPECT_EQ(fabric.gpus_per_process, 1);
  EXPECT_FALSE(fabric.graph_launch);
  EXPECT_EQ(fabric.measured, cost_model::MeasuredTiming{});  // the documented constants
}

// What a machine's owner measured (spmdsim calibrate): durations and shares in (0, 1].
TEST(MachineFabric, MeasuredValuesAreDurationsAndShares) {
  const json file = with_full_fabric(kTwoNodesOf4);
  EXPECT_EQ(error_of(with(file, "/fabric/network_efficiency", 1.5)),
            "fabric.network_efficiency: 1.5, expected a number above 0 and at most 1, like 0.9");
  EXPECT_EQ(error_of(with(file, "/fabric/scale_up_efficiency", 0)),
            "fabric.scale_up_efficiency: 0, expected a number above 0 and at most 1, like 0.9");
  EXPECT_EQ(error_of(with(file, "/fabric/scale_up_efficiency", "0.5")),
            "fabric.scale_up_efficiency: \"0.5\" is a string, expected a number above 0 and at "
            "most 1, like 0.9");
  EXPECT_THAT(error_of(with(file, "/fabric/launch_latency", 180)),
              testing::StartsWith("fabric.launch_latency: 180 is a number, expected a string"));
  EXPECT_THAT(error_of(with(file, "/fabric/network_latency", "fast")),
              testing::StartsWith("fabric.network_latency: "));
}

TEST(MachineFabric, OneProcessDrivesTheGpusOfOneNodeAtMost) {
  EXPECT_EQ(error_of(with(with_full_fabric(kTwoNodesOf4), "/fabric/gpus_per_process", 8)),
            "fabric.gpus_per_process: 8, expected 1 to devices_per_node (4): one process drives "
            "GPUs of one node");
  EXPECT_EQ(error_of(with(with_full_fabric(kTwoNodesOf4), "/fabric/graph_launch", 1)),
            "fabric.graph_launch: 1 is a number, expected true or false");
}

TEST(MachineFabric, RoundTripsAndIsWrittenOnlyWhenPresent) {
  const json file = with_full_fabric(kTwoNodesOf4);
  const json written = machine_to_json(machine_from_json(file));
  EXPECT_EQ(written["fabric"], file["fabric"]);
  EXPECT_EQ(machine_to_json(machine_from_json(written)), written);
  EXPECT_FALSE(machine_to_json(machine_from_json(kTwoNodesOf4)).contains("fabric"));
  // A fabric without NICs is written without a NIC bandwidth, which would not read back as 0.
  json one_node = machine_with(4, {{"kind", "switch"}, {"link", kLink}});
  one_node["fabric"] = json::object();
  const json one_node_written = machine_to_json(machine_from_json(one_node));
  EXPECT_FALSE(one_node_written["fabric"].contains("nic_bandwidth"));
  EXPECT_EQ(machine_to_json(machine_from_json(one_node_written)), one_node_written);
}

TEST(MachineFabric, NamesAreAcceptedBothWays) {
  for (auto g : {cost_model::GpuGeneration::volta, cost_model::GpuGeneration::ampere,
                 cost_model::GpuGeneration::hopper, cost_model::GpuGeneration::blackwell,
                 cost_model::GpuGeneration::cdna2, cost_model::GpuGeneration::cdna3,
                 cost_model::GpuGeneration::cdna4}) {
    EXPECT_EQ(cost_model::generation_from_name(cost_model::generation_name(g)), g);
  }
  for (auto h : {cost_model::HostKind::x86, cost_model::HostKind::grace}) {
    EXPECT_EQ(cost_model::host_kind_from_name(cost_model::host_kind_name(h)), h);
  }
  for (auto k : {cost_model::ScaleUpKind::nvswitch, cost_model::ScaleUpKind::full_mesh}) {
    EXPECT_EQ(cost_model::scale_up_kind_from_name(cost_model::scale_up_kind_name(k)), k);
  }
  for (auto n : {cost_model::NetworkKind::infiniband, cost_model::NetworkKind::roce,
                 cost_model::NetworkKind::slingshot, cost_model::NetworkKind::efa,
                 cost_model::NetworkKind::ethernet}) {
    EXPECT_EQ(cost_model::network_kind_from_name(cost_model::network_kind_name(n)), n);
  }
}

TEST(MachineFabric, EachBadFieldIsNamedByItsPath) {
  const json good = with_full_fabric(kTwoNodesOf4);
  const std::vector<std::pair<json, std::string>> cases = {
      {with(good, "/fabric/generation", "pascal"),
       R"(fabric.generation: "pascal" is no GPU generation, expected volta, ampere, hopper, )"
       R"(blackwell, cdna2, cdna3 or cdna4)"},
      {with(good, "/fabric/generation", 9),
       "fabric.generation: 9 is a number, expected a GPU generation"},
      {with(good, "/fabric/host", "arm"),
       R"(fabric.host: "arm" is no host kind, expected x86 or grace)"},
      {with(good, "/fabric/scale_up", "torus"),
       R"(fabric.scale_up: "torus" is no scale-up fabric, expected nvswitch or full_mesh)"},
      {with(good, "/fabric/network", "token_ring"),
       R"(fabric.network: "token_ring" is no network, expected infiniband, roce, slingshot, efa )"
       R"(or ethernet)"},
      {with(good, "/fabric/algorithm", "sharp"),
       R"(fabric.algorithm: "sharp" is no library algorithm, expected ring, tree, nvls, )"
       R"(nvlstree, pat, collnet or allpairs)"},
      {with(good, "/fabric/protocol", "LL256"),
       R"(fabric.protocol: "LL256" is no protocol, expected LL, LL128 or Simple)"},
      {with(good, "/fabric/devices_per_node", 0),
       "fabric.devices_per_node: 0, expected a positive integer"},
      {with(good, "/fabric/devices_per_node", 3),
       "fabric.devices_per_node: 3, expected devices (8) at most 3 (part of one node) or a "
       "multiple of 3 (whole nodes)"},
      {with(good, "/fabric/scale_up_bandwidth", "fast"),
       R"(fabric.scale_up_bandwidth: "fast" is not a bandwidth, expected a number with a unit )"
       R"(like "100GB/s", "400Gb/s" or "25GiB/s")"},
      {with(good, "/fabric/in_switch_reduction", "yes"),
       R"(fabric.in_switch_reduction: "yes" is a string, expected true or false)"},
      {with(good, "/fabric/in_network_reduction", 1),
       "fabric.in_network_reduction: 1 is a number, expected true or false"},
      {with(good, "/fabric/nics_per_node", -1),
       "fabric.nics_per_node: -1, expected an integer >= 0"},
      {with(good, "/fabric/nics_per_node", 0),
       "fabric.nics_per_node: 0, expected at least 1: the machine's devices are 2 nodes"},
      {with(good, "/fabric/nic_bandwidth", "0Gb/s"),
       R"(fabric.nic_bandwidth: "0Gb/s" is not positive, expected a bandwidth > 0 like )"
       R"("100GB/s", "400Gb/s" or "25GiB/s")"},
      {with(good, "/fabric/speed", 1),
       "fabric.speed: unknown field, expected one of generation, host, devices_per_node, "
       "scale_up, scale_up_bandwidth, in_switch_reduction, in_network_reduction, "
       "nics_per_node, nic_bandwidth, network, gpus_per_process, graph_launch, algorithm, "
       "protocol, launch_latency, network_latency, network_efficiency, scale_up_efficiency"},
      {with(good, "/fabric", "hopper"),
       R"(fabric: "hopper" is a string, expected an object with fields generation, host, )"
       R"(devices_per_node, scale_up, scale_up_bandwidth, in_switch_reduction, )"
       R"(in_network_reduction, nics_per_node, nic_bandwidth, network, gpus_per_process, )"
       R"(graph_launch, algorithm, protocol, launch_latency, network_latency, )"
       R"(network_efficiency, scale_up_efficiency)"},
  };
  for (const auto& [machine, expected] : cases) {
    EXPECT_EQ(error_of(machine), expected) << machine["fabric"].dump();
  }
}

TEST(MachineFabric, SeveralNodesNeedNics) {
  json no_nics = with_full_fabric(kTwoNodesOf4);
  no_nics["fabric"].erase("nics_per_node");
  EXPECT_EQ(error_of(no_nics),
            "fabric.nics_per_node: missing, expected at least 1: the machine's devices are 2 "
            "nodes");
  json no_bandwidth = with_full_fabric(kTwoNodesOf4);
  no_bandwidth["fabric"].erase("nic_bandwidth");
  EXPECT_EQ(error_of(no_bandwidth),
            R"(fabric.nic_bandwidth: missing, expected a bandwidth per NIC like "400Gb/s": the )"
            R"(machine's devices are 2 nodes)");
  // The default of 8 devices per node does not fit 12 devices.
  json twelve = machine_with(12, {{"kind", "switch"}, {"link", kLink}});
  twelve["fabric"] = json::object();
  EXPECT_EQ(error_of(twelve),
            "fabric: devices_per_node: 8 (the default), expected devices (12) at most 8 (part of "
            "one node) or a multiple of 8 (whole nodes)");
  // One node, or part of one, needs neither.
  json one_node = with(no_bandwidth, "/devices", 4);
  one_node["topology"] = {{"kind", "switch"}, {"link", kLink}};
  one_node["fabric"].erase("nics_per_node");
  EXPECT_EQ(machine_from_json(one_node).fabric->nics_per_node, 0);
}

// A temporary file unique to this process and test; removed by the destructor.
class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("machine_spec_test_" + std::to_string(::getpid()) + "_" + info->name() + ".json");
    std::ofstream(path_) << contents;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

TEST(LoadMachineFile, APresetsNameWhereNoFileIsGivesThePreset) {
  const MachineSpec machine = load_machine_file("tpu-v5e-256");
  EXPECT_EQ(machine.devices, 256);
  EXPECT_EQ(machine.name, machine_preset("tpu-v5e-256")->name);
}

TEST(LoadMachineFile, ErrorsArePrefixedWithThePath) {
  const TempFile bad_devices(R"({"devices": 0, "topology": {"kind": "switch"}})");
  EXPECT_EQ(error_of([&] { load_machine_file(bad_devices.str()); }),
            bad_devices.str() + ": devices: 0, expected a positive integer");
  const TempFile not_json("{\"devices\": 8,");
  EXPECT_EQ(error_of([&] {
              load_machine_file(not_json.str());
            }).rfind(not_json.str() + ": not valid JSON (", 0),
            0u);
  EXPECT_EQ(error_of([&] { load_machine_file("/nonexistent/machine.json"); }),
            "/nonexistent/machine.json: cannot read the machine file (no such file)");
}

// ---------------------------------------------------------------------------------------------
// Topologies

struct TopologyCase {
  json topology;
  int devices;
  std::string name;
};

TEST(MakeTopology, EachKindHasTheMachinesDevices) {
  const std::vector<TopologyCase> cases = {
      {{{"kind", "ring"}, {"link", kLink}}, 8, "ring(8, bidirectional)"},
      {{{"kind", "ring"}, {"bidirectional", false}, {"link", kLink}}, 8, "ring(8)"},
      {{{"kind", "torus"}, {"dims", {4, 4}}, {"link", kLink}}, 16, "torus(4x4)"},
      {{{"kind", "mesh"}, {"dims", {2, 3, 4}}, {"link", kLink}}, 24, "mesh(2x3x4)"},
      {{{"kind", "fully_connected"}, {"link", kLink}}, 6, "fully_connected(6)"},
      {{{"kind", "switch"}, {"link", kLink}}, 8, "switch(8)"},
      {{{"kind", "hierarchical"},
        {"devices_per_node", 4},
        {"intra_node_link", kLink},
        {"inter_node_link", kLink}},
       12,
       "hierarchical(3 nodes x 4)"},
  };
  for (const TopologyCase& c : cases) {
    SCOPED_TRACE(c.topology.dump());
    const MachineSpec machine = machine_from_json(machine_with(c.devices, c.topology));
    const std::unique_ptr<topology::Topology> topology = topology::make_topology(machine.topology);
    EXPECT_EQ(topology->device_count(), c.devices);
    EXPECT_EQ(topology->name(), c.name);
    EXPECT_EQ(topology->kind(), topology::kind_of(machine.topology));
  }
}

}  // namespace
}  // namespace spmd::sim
