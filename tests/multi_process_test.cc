// Multi-process programs (reference/multi_process.h, docs/multi-process.md): process layouts,
// JAX's ways of making a global array from each host's data and back, a program over hosts that
// loaded the wrong rows, and the errors for bad layouts and local data, in the C++ API and as
// `spmdsim conform` reports them (one line, exit code 2).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "reference/multi_process.h"
#include "reference/npy.h"
#include "reference/reference_backend.h"
#include "sim/node_processes.h"
#include "tests/test_machines.h"
#include "tests/error_of.h"
#include "tests/spmdsim_binary.h"

namespace spmd {
namespace {

using test_errors::error_of;
using ::testing::HasSubstr;

Array iota(Shape shape, int offset = 0) {
  std::vector<std::int32_t> values(static_cast<std::size_t>(element_count(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i) + offset;
  return Array::from_values<std::int32_t>(std::move(shape), values);
}

std::vector<std::int32_t> values_of(const Array& a) {
  auto v = a.values<std::int32_t>();
  return {v.begin(), v.end()};
}

PartitionSpec spec(std::vector<SpecEntry> entries) { return PartitionSpec(std::move(entries)); }

TEST(ProcessLayout, KnowsEachDevicesProcess) {
  const ProcessLayout layout({{3, 1}, {0, 2}}, 4);
  EXPECT_EQ(layout.process_count(), 2);
  EXPECT_EQ(layout.process_index(1), 0);
  EXPECT_EQ(layout.process_index(0), 1);
  EXPECT_EQ(layout.local_devices(0), (std::vector<int>{1, 3}));  // ascending, as local_devices()
  EXPECT_EQ(ProcessLayout::contiguous(2, 4), ProcessLayout({{0, 1}, {2, 3}}, 4));
}

TEST(ProcessLayout, BadLayoutsNameTheFieldAndValue) {
  EXPECT_EQ(error_of([] { ProcessLayout({{0, 1}, {1, 2, 3}}, 4); }),
            "processes[1].devices: device 1 is also in processes[0].devices, expected each device "
            "in one process");
  EXPECT_EQ(error_of([] { ProcessLayout({{0, 1, 2, 3}, {}}, 4); }),
            "processes[1].devices: [], expected at least one device: every process has local "
            "devices");
  EXPECT_EQ(error_of([] { ProcessLayout({{0, 1}, {2, 4}}, 4); }),
            "processes[1].devices: device 4, expected a device id of the mesh, 0 to 3");
  EXPECT_THAT(error_of([] { ProcessLayout({{0, 1}, {3}}, 4); }),
              HasSubstr("processes: mesh device 2 is in no process"));
}

TEST(LocalMesh, IsTheSubcubeOfTheProcesssDevices) {
  const Mesh mesh({2, 4}, {"x", "y"});
  const ProcessLayout layout({{0, 1, 4, 5}, {2, 3, 6, 7}}, 8);
  const LocalMesh local = local_mesh(mesh, layout, 1);
  EXPECT_EQ(local.mesh.shape(), (std::vector<int>{2, 2}));
  EXPECT_EQ(local.global_device(mesh, 1), 3);
  EXPECT_EQ(local.global_device(mesh, 2), 6);
  const ProcessLayout interleaved({{0, 2}, {1, 3}}, 4);
  EXPECT_THAT(error_of([&] { local_mesh(Mesh({4}, {"x"}), interleaved, 0); }),
              HasSubstr("must form a contiguous subcube of the global device mesh"));
}

TEST(MakeArrayFromProcessLocalData, EachHostsRowsMakeTheGlobalArray) {
  const Mesh mesh({4}, {"x"});
  const ProcessLayout layout = ProcessLayout::contiguous(2, 4);
  const Array global = iota({8, 3});
  const std::vector<Array> local = {slice(global, 0, 0, 4), slice(global, 0, 4, 8)};
  const GlobalArray array = make_array_from_process_local_data(mesh, layout, spec({{"x"}}), local);
  EXPECT_EQ(array.shape, (Shape{8, 3}));  // inferred: 2 processes hold distinct rows
  EXPECT_TRUE(array.value(mesh).bitwise_equal(global));
  // The reverse gives each host its rows back.
  const std::vector<Array> back = global_array_to_host_local_array(mesh, layout, spec({{"x"}}), array);
  EXPECT_TRUE(back[0].bitwise_equal(local[0]));
  EXPECT_TRUE(back[1].bitwise_equal(local[1]));
}

TEST(MakeArrayFromProcessLocalData, FullDimensionsAreSlicedByTheGlobalIndex) {
  // Processes own the mesh's columns: each holds every row and its own columns.
  const Mesh mesh({2, 2}, {"x", "y"});
  const ProcessLayout layout({{0, 2}, {1, 3}}, 4);
  const Array global = iota({4, 4});
  const std::vector<Array> local = {slice(global, 1, 0, 2), slice(global, 1, 2, 4)};
  const GlobalArray array =
      make_array_from_process_local_data(mesh, layout, spec({{"x"}, {"y"}}), local, Shape{4, 4});
  EXPECT_TRUE(array.value(mesh).bitwise_equal(global));
  EXPECT_EQ(values_of(array.blocks[2]), (std::vector<std::int32_t>{8, 9, 12, 13}));
}

TEST(MakeArrayFromProcessLocalData, LocalDataOfTheWrongShapeIsNamed) {
  const Mesh mesh({4}, {"x"});
  const ProcessLayout layout = ProcessLayout::contiguous(2, 4);
  const std::vector<Array> local = {iota({4, 3}), iota({3, 3})};
  EXPECT_EQ(error_of([&] {
              make_array_from_process_local_data(mesh, layout, spec({{"x"}}), local, Shape{8, 3});
            }),
            "local_data[1]: shape (3, 3), expected 8 or 4 in dimension 0 (ValueError: Invalid "
            "host data, each dimension should match either global or process shape. In dimension "
            "0, the process data has 3 elements. Process addresses 4 elements and "
            "global_shape=(8, 3))");
  EXPECT_THAT(error_of([&] {
                make_array_from_process_local_data(mesh, layout, spec({{"x"}}), local);
              }),
              HasSubstr("local_data[1]: gives a global array int32[6,3], expected int32[8,3]"));
}

TEST(MakeArrayFromProcessLocalData, HostsLoadingTheFirstRowsChangeThePsum) {
  // The data-loading bug the JAX differential test runs: every host loads rows 0-3.
  const Mesh mesh({4}, {"x"});
  const ProcessLayout layout = ProcessLayout::contiguous(2, 4);
  const Array global = iota({8, 1});
  const std::vector<Array> right = {slice(global, 0, 0, 4), slice(global, 0, 4, 8)};
  const std::vector<Array> wrong = {slice(global, 0, 0, 4), slice(global, 0, 0, 4)};
  ShardMapOptions options;
  options.in_specs = {spec({{"x"}})};
  options.out_specs = {spec({})};
  const DeviceFunction psum = [](Context& ctx, const Values& in) {
    return Values{ctx.psum(in[0], AxisNames("x"))};
  };
  ReferenceBackend backend;
  auto run = [&](const std::vector<Array>& local) {
    const GlobalArray x = make_array_from_process_local_data(mesh, layout, options.in_specs[0].value(), local);
    return run_shard_map_global(backend, mesh, psum, options, {x})[0].value(mesh);
  };
  EXPECT_EQ(values_of(run(right)), (std::vector<std::int32_t>{12, 16}));  // 0+2+4+6, 1+3+5+7
  EXPECT_EQ(values_of(run(wrong)), (std::vector<std::int32_t>{4, 8}));    // 0+2+0+2, 1+3+1+3
}

TEST(HostLocalArrayToGlobalArray, RoundTripsThroughGlobalArrayToHostLocalArray) {
  const Mesh mesh({2, 2, 2}, {"a", "b", "c"});
  const ProcessLayout layout = ProcessLayout::contiguous(2, 8);  // process = coordinate a
  for (const PartitionSpec& s : {spec({{"a"}}), spec({{"a", "b"}, {"c"}}), spec({{}, {"b"}}),
                                 spec({{"c"}, {"a"}}), spec({})}) {
    const std::vector<Array> local = {iota({4, 4}), iota({4, 4}, 100)};
    const GlobalArray global = host_local_array_to_global_array(mesh, layout, s, local);
    const std::vector<Array> back = global_array_to_host_local_array(mesh, layout, s, global);
    EXPECT_TRUE(back[0].bitwise_equal(local[0])) << s.to_string();
    EXPECT_TRUE(back[1].bitwise_equal(local[1])) << s.to_string();
  }
  // Global shape: the local shape times the local meshes along each sharded dimension.
  const GlobalArray global = host_local_array_to_global_array(
      mesh, layout, spec({{"a", "b"}, {"c"}}), std::vector<Array>{iota({4, 4}), iota({4, 4})});
  EXPECT_EQ(global.shape, (Shape{8, 4}));
}

TEST(MakeArrayFromCallback, EachProcessFillsItsOwnDevicesBlocks) {
  const Mesh mesh({4}, {"x"});
  const ProcessLayout layout({{0, 2}, {1, 3}}, 4);
  const BlockCallback callback = [](int process, const BlockIndex& index) {
    return slice(iota({8}, process * 100), 0, index[0].start, index[0].stop);
  };
  const GlobalArray array = make_array_from_callback(mesh, layout, {8}, spec({{"x"}}), callback);
  EXPECT_EQ(values_of(array.value(mesh)),
            (std::vector<std::int32_t>{0, 1, 102, 103, 4, 5, 106, 107}));
  const BlockCallback wrong_shape = [](int, const BlockIndex&) { return iota({3}); };
  EXPECT_THAT(error_of([&] { make_array_from_callback(mesh, layout, {8}, spec({{"x"}}), wrong_shape); }),
              HasSubstr("local_data[0]: block [0:2] for device 0 has shape (3,), expected the "
                        "shard shape (2,)"));
}

TEST(ProcessAllgather, StacksOrConcatenatesTheHostsValues) {
  const ProcessLayout layout = ProcessLayout::contiguous(2, 4);
  const std::vector<Array> values = {iota({2}), iota({2}, 10)};
  EXPECT_EQ(process_allgather(layout, values, false).shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of(process_allgather(layout, values, true)),
            (std::vector<std::int32_t>{0, 1, 10, 11}));
  const Mesh mesh({4}, {"x"});
  const GlobalArray global = GlobalArray::from_value(iota({4}), spec({{"x"}}), mesh);
  EXPECT_THAT(error_of([&] { process_allgather(mesh, layout, global, false); }),
              HasSubstr("only supports tiled=True"));
}

// On a machine of 2 nodes of 2 devices, one process per node; the program over the hosts' data
// runs on the simulator and gives the reference's bits (element 0: 0 + 4 + 50 + 54).
TEST(NodeProcesses, OneProcessPerNodeRunOnTheSimulator) {
  sim::Machine machine(test_machines::machine_for("hierarchical:2", 4));
  const Mesh mesh({2, 2}, {"node", "gpu"});
  const ProcessLayout layout = sim::node_processes(machine, mesh);
  EXPECT_EQ(layout, ProcessLayout({{0, 1}, {2, 3}}, 4));
  EXPECT_EQ(sim::node_processes(sim::Machine(test_machines::machine_for("ring", 4)), mesh)
                .process_count(),
            1);
  ShardMapOptions options;
  options.in_specs = {spec({{"node", "gpu"}})};
  options.out_specs = {spec({})};
  const DeviceFunction psum = [](Context& ctx, const Values& in) {
    return Values{ctx.psum(in[0], AxisNames(std::vector<std::string>{"node", "gpu"}))};
  };
  const std::vector<Array> local = {iota({4, 2}), iota({4, 2}, 50)};
  const GlobalArray x =
      make_array_from_process_local_data(mesh, layout, options.in_specs[0].value(), local);
  ReferenceBackend reference;
  const Array on_sim = run_shard_map_global(machine, mesh, psum, options, {x})[0].value(mesh);
  EXPECT_TRUE(
      on_sim.bitwise_equal(run_shard_map_global(reference, mesh, psum, options, {x})[0].value(mesh)));
  EXPECT_EQ(values_of(on_sim), (std::vector<std::int32_t>{108, 112, 116, 120}));
}

// A multi-process case whose process 1 lists device 1 again: spmdsim conform says which field,
// in one line, and exits with 2.
TEST(MultiProcessCase, BadProcessesStopConformWithExitCode2) {
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / "spmd_multi_process_case_test";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  write_npy((folder / "x0.npy").string(), iota({2}));
  write_npy((folder / "x1.npy").string(), iota({2}));
  std::ofstream(folder / "bad.json") << R"({
    "format": 1, "name": "bad",
    "mesh": {"shape": [4], "axis_names": ["x"]},
    "map": {"kind": "shard_map", "in_specs": [["x"]], "out_specs": [["x"]]},
    "processes": [{"devices": [0, 1], "inputs": [{"file": "x0.npy"}]},
                  {"devices": [1, 2, 3], "inputs": [{"file": "x1.npy"}]}],
    "body": [], "outputs": ["in0"], "expected": {"outputs": [{"file": "x0.npy"}]}})";
  const CommandResult result = run_binary("conform " + (folder / "bad.json").string());
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_THAT(result.output,
              HasSubstr("bad.json: processes[1].devices: device 1 is also in "
                        "processes[0].devices, expected each device in one process\n"));
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace spmd
