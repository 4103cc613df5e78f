// The HLO importer (docs/hlo-import.md): the parser, the three replica-group encodings and what
// channel_id / use_global_device_ids make of them, while trip counts, the five programs JAX
// compiled (tests/hlo/programs, made by tests/hlo/make_hlo_programs.py) against the collectives
// that script counted in their text and their compiled.memory_analysis(), each collective's time
// against the same call alone (what `spmdsim perf` times), asynchronous overlap, and the errors.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "hlo/hlo_cost.h"
#include "hlo/hlo_memory.h"
#include "hlo/hlo_module.h"
#include "hlo/hlo_program.h"
#include "hlo/replica_groups.h"
#include "hlo/while_trip_count.h"
#include "reference/error.h"
#include "sim/machine.h"
#include "sim/machine_spec.h"
#include "spmdsim_binary.h"
#include "workloads/workload.h"

namespace spmd::hlo {
namespace {

using ::testing::HasSubstr;

const std::string kPrograms = std::string(SPMD_SOURCE_DIR) + "/tests/hlo/programs/";
const char* const kProgramNames[] = {"data_parallel_mlp", "fsdp", "megatron_sequence_parallel",
                                     "scan_transformer", "pipeline_stages"};

nlohmann::json summary_of(const std::string& program) {
  std::ifstream in(kPrograms + program + ".json");
  return nlohmann::json::parse(in);
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// ---- Shapes and the parser

TEST(HloShape, ReadsArraysTuplesAndLayouts) {
  std::string_view text = "(f32[16,32]{1,0}, bf16[4]{0}, s32[]) tail";
  const HloShape shape = read_hlo_shape(text);
  ASSERT_TRUE(shape.is_tuple);
  ASSERT_EQ(shape.elements.size(), 3u);
  EXPECT_EQ(shape.elements[0].dims, (std::vector<std::int64_t>{16, 32}));
  EXPECT_EQ(shape.bytes(), 16 * 32 * 4 + 4 * 2 + 4);
  EXPECT_EQ(tuple_table_bytes(shape), 24);
  EXPECT_EQ(text, " tail");
}

constexpr std::string_view kSmallModule = R"(HloModule small, replica_count=2, num_partitions=4

FileNames
1 "x.py"

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(%x, %y)
}

ENTRY %main (p: f32[8,16]) -> f32[8,16] {
  %p = f32[8,16]{1,0} parameter(0), sharding={replicated}
  %c = f32[] constant(0.5)
  ROOT %ar = f32[8,16]{1,0} all-reduce(%p), channel_id=1, replica_groups=mesh['r'=2,'p'=4] {'p'}, use_global_device_ids=true, to_apply=%add, metadata={op_name="a, b"}
}
)";

TEST(HloModule, ReadsTheHeaderComputationsAndAttributes) {
  const HloModule module = parse_hlo_module(kSmallModule, "small.hlo");
  EXPECT_EQ(module.name, "small");
  EXPECT_EQ(module.replica_count, 2);
  EXPECT_EQ(module.num_partitions, 4);
  EXPECT_EQ(module.device_count(), 8);
  ASSERT_EQ(module.computations.size(), 2u);
  const HloComputation& entry = module.entry_computation();
  EXPECT_EQ(entry.name, "main");
  const HloInstruction& root = entry.root();
  EXPECT_EQ(root.opcode, "all-reduce");
  EXPECT_EQ(root.line, 15);
  EXPECT_EQ(root.operands, std::vector<std::string>{"p"});
  EXPECT_EQ(*root.attribute("replica_groups"), "mesh['r'=2,'p'=4] {'p'}");
  EXPECT_EQ(*root.attribute("to_apply"), "%add");
  EXPECT_EQ(*root.attribute("metadata"), "{op_name=\"a, b\"}");
  EXPECT_EQ(*entry.find("c")->attribute("literal"), "0.5");
}

TEST(HloModule, BadTextIsAnErrorNamingTheLine) {
  EXPECT_THAT(error_of([] { parse_hlo_module("HloModule m\nENTRY e {\n  %x = f33[2] parameter(0)\n}\n", "m.hlo"); }),
              HasSubstr("m.hlo:3: x: shape at 'f33[2]"));
  EXPECT_THAT(error_of([] { parse_hlo_module("HloModule m\nENTRY e {\n  oops\n}\n", "m.hlo"); }),
              HasSubstr("m.hlo:3: 'oops', expected an instruction"));
  EXPECT_THAT(error_of([] { parse_hlo_module("ENTRY e {\n}\n", "m.hlo"); }),
              HasSubstr("m.hlo:2: computation 'e' has no instructions"));
  EXPECT_THAT(error_of([] { parse_hlo_module("HloModule m, num_partitions=x\n", "m.hlo"); }),
              HasSubstr("m.hlo:1: num_partitions: 'x', expected a positive integer"));
}

TEST(HloModule, AnUnknownOpcodeIsAnErrorNamingTheLine) {
  const HloModule module = parse_hlo_module(
      "HloModule m\nENTRY e {\n  %x = f32[2] parameter(0)\n  ROOT %y = f32[2] frobnicate(%x)\n}\n",
      "m.hlo");
  EXPECT_THAT(error_of([&] { step_collectives(module); }),
              HasSubstr("m.hlo:4: y: opcode 'frobnicate', expected an XLA opcode"));
}

// ---- Replica groups: three encodings, four meanings

TEST(ReplicaGroups, ExplicitLists) {
  EXPECT_EQ(parse_replica_groups("{{0,1,2,3},{4,5,6,7}}"), (DeviceGroups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(parse_replica_groups("{}"), DeviceGroups{});
}

// XLA prints iota groups when they are a reshaped, transposed iota (IotaReplicaGroupList);
// the JAX 0.10.2 programs here print explicit lists and mesh axes, so these are written by hand.
TEST(ReplicaGroups, IotaWithAndWithoutTranspose) {
  EXPECT_EQ(parse_replica_groups("[2,4]<=[8]"), (DeviceGroups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(parse_replica_groups("[4,2]<=[2,4]T(1,0)"),
            (DeviceGroups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(parse_replica_groups("[2,4]<=[2,2,2]T(2,1,0)"),  // iota(8) as [2,2,2] reversed
            (DeviceGroups{{0, 4, 2, 6}, {1, 5, 3, 7}}));
}

// As JAX 0.10.2 prints them (tests/hlo/programs/data_parallel_mlp.hlo: mesh['axis_0'=8,'axis_1'=1]
// {'axis_0'}); sub-axes and device_ids follow xla/hlo/ir/mesh_and_axis.cc's printing.
TEST(ReplicaGroups, MeshAxes) {
  EXPECT_EQ(parse_replica_groups("mesh['axis_0'=8,'axis_1'=1] {'axis_0'}"),
            (DeviceGroups{{0, 1, 2, 3, 4, 5, 6, 7}}));
  EXPECT_EQ(parse_replica_groups("mesh['x'=2,'y'=4] {'y'}"), (DeviceGroups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(parse_replica_groups("mesh['x'=2,'y'=4] {'x'}"),
            (DeviceGroups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(parse_replica_groups("mesh['x'=2,'y'=4] {'y','x'}"), (DeviceGroups{{0, 4, 1, 5, 2, 6, 3, 7}}));
  EXPECT_EQ(parse_replica_groups("mesh['x'=2,'y'=4] {}"),
            (DeviceGroups{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}));
  // Sub-axis a:(1)2 of a=8: a split as [2,4], groups along the 2 (XLA's comment: [8]->[1,2,4]).
  EXPECT_EQ(parse_replica_groups("mesh['a'=8] {'a':(1)2}"), (DeviceGroups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(parse_replica_groups("mesh['a'=8] {'a':(2)2}"), (DeviceGroups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(parse_replica_groups("mesh['x'=2,'y'=2], device_ids=(3,2,1,0) {'y'}"),
            (DeviceGroups{{3, 2}, {1, 0}}));
  EXPECT_EQ(parse_replica_groups("mesh['x'=2,'y'=2], device_ids=([2,2]<=[2,2]T(1,0)) {'y'}"),
            (DeviceGroups{{0, 2}, {1, 3}}));
}

TEST(ReplicaGroups, BadTextSaysWhatWasExpected) {
  EXPECT_THAT(error_of([] { parse_replica_groups("mesh['x'=2] {'z'}"); }),
              HasSubstr("expected an axis of the mesh, not 'z'"));
  EXPECT_THAT(error_of([] { parse_replica_groups("<<>>"); }), HasSubstr("expected {{...}}"));
  EXPECT_THAT(error_of([] { parse_replica_groups("[2,4]<=[6]"); }), HasSubstr("as many ids"));
}

// xla GetCollectiveOpGroupMode's table.
TEST(ReplicaGroups, ChannelIdAndUseGlobalDeviceIdsDecideWhatIdsMean) {
  EXPECT_EQ(collective_group_mode(false, std::nullopt), GroupMode::cross_replica);
  EXPECT_EQ(collective_group_mode(false, false), GroupMode::cross_replica);
  EXPECT_THAT(error_of([] { collective_group_mode(false, true); }), HasSubstr("without channel_id"));
  EXPECT_EQ(collective_group_mode(true, std::nullopt), GroupMode::cross_partition);
  EXPECT_EQ(collective_group_mode(true, false), GroupMode::cross_replica_and_partition);
  EXPECT_EQ(collective_group_mode(true, true), GroupMode::flattened_id);
}

TEST(ReplicaGroups, GlobalDeviceIdsAreReplicaTimesPartitionsPlusPartition) {
  const DeviceGroups pairs = {{0, 1}};  // 2 replicas, 2 partitions: devices 0..3
  EXPECT_EQ(global_device_groups(pairs, GroupMode::cross_replica, 2, 2), (DeviceGroups{{0, 2}, {1, 3}}));
  EXPECT_EQ(global_device_groups(pairs, GroupMode::cross_partition, 2, 2), (DeviceGroups{{0, 1}, {2, 3}}));
  EXPECT_EQ(global_device_groups(pairs, GroupMode::cross_replica_and_partition, 2, 2),
            (DeviceGroups{{0, 1, 2, 3}}));
  EXPECT_EQ(global_device_groups({{0, 3}, {1, 2}}, GroupMode::flattened_id, 2, 2),
            (DeviceGroups{{0, 3}, {1, 2}}));
  EXPECT_EQ(global_device_groups({}, GroupMode::cross_partition, 1, 4), (DeviceGroups{{0, 1, 2, 3}}));
  EXPECT_THAT(error_of([] { global_device_groups({{0, 2}}, GroupMode::cross_partition, 2, 2); }),
              HasSubstr("id 2 is not a partition id"));
  EXPECT_EQ(global_source_target_pairs("{{0,1},{1,0}}", true, 2, 2),
            (std::vector<std::pair<int, int>>{{0, 1}, {1, 0}, {2, 3}, {3, 2}}));
  EXPECT_EQ(global_source_target_pairs("{{0,1}}", false, 2, 2),
            (std::vector<std::pair<int, int>>{{0, 2}, {1, 3}}));
}

// ---- While loops

TEST(WhileTripCount, ReadsKnownTripCountFromJaxScan) {
  const HloModule module = load_hlo_file(kPrograms + "scan_transformer.hlo");
  const HloComputation& entry = module.entry_computation();
  const auto loop = std::find_if(entry.instructions.begin(), entry.instructions.end(),
                                 [](const HloInstruction& i) { return i.opcode == "while"; });
  ASSERT_NE(loop, entry.instructions.end());
  EXPECT_EQ(while_trip_count(module, entry, *loop), 4);  // the scan's 4 layers
}

// A counted loop as XLA's own tests write them, without backend_config (hand-made).
constexpr std::string_view kCountedLoop = R"(HloModule counted, num_partitions=2
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
%cond (p: (s32[], f32[64])) -> pred[] {
  %p = (s32[], f32[64]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(7)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (p: (s32[], f32[64])) -> (s32[], f32[64]) {
  %p = (s32[], f32[64]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %x = f32[64] get-tuple-element(%p), index=1
  %r = f32[64] all-reduce(%x), replica_groups={}, channel_id=3, use_global_device_ids=true, to_apply=%add
  ROOT %t = (s32[], f32[64]) tuple(%next, %r)
}
ENTRY %main (a: f32[64]) -> f32[64] {
  %a = f32[64] parameter(0)
  %zero = s32[] constant(2)
  %init = (s32[], f32[64]) tuple(%zero, %a)
  %loop = (s32[], f32[64]) while(%init), condition=%cond, body=%body
  ROOT %out = f32[64] get-tuple-element(%loop), index=1
}
)";

TEST(WhileTripCount, RecognisesTheCountedLoopPattern) {
  const HloModule module = parse_hlo_module(kCountedLoop, "counted.hlo");
  const HloComputation& entry = module.entry_computation();
  EXPECT_EQ(while_trip_count(module, entry, *entry.find("loop")), 5);  // from 2 while < 7
  EXPECT_EQ(step_collectives(module).size(), 5u);
}

TEST(WhileTripCount, AnUncountedLoopIsAnErrorNamingTheLine) {
  std::string text(kCountedLoop);
  text.replace(text.find("direction=LT"), 12, "direction=NE");
  const HloModule module = parse_hlo_module(text, "loop.hlo");
  EXPECT_THAT(error_of([&] { step_collectives(module); }),
              HasSubstr("loop.hlo:26: loop (while): no trip count, expected backend_config"));
}

// ---- The five programs JAX compiled

using CollectiveKey = std::tuple<std::string, std::int64_t, nlohmann::json>;

// The importer's collectives of one step, counted as the script counts them: in the types the
// HLO text writes (XLA:CPU's promotion kept).
std::map<CollectiveKey, int> imported_counts(const HloModule& module) {
  std::map<CollectiveKey, int> counts;
  for (const ImportedCollective& c : step_collectives(module, CpuPromotion::keep)) {
    nlohmann::json who = c.hlo_opcode == "collective-permute"
                             ? nlohmann::json{{"source_target_pairs", c.source_target_pairs}}
                             : nlohmann::json{{"groups", c.groups}};
    ++counts[{c.hlo_opcode, c.bytes, who}];
  }
  return counts;
}

std::map<CollectiveKey, int> summary_counts(const nlohmann::json& summary) {
  std::map<CollectiveKey, int> counts;
  for (const nlohmann::json& c : summary["collectives"]) {
    nlohmann::json who;
    if (c.contains("groups")) who["groups"] = c["groups"];
    else who["source_target_pairs"] = c["source_target_pairs"];
    counts[{c["op"], c["bytes"], who}] += c["count"].get<int>();
  }
  return counts;
}

TEST(HloPrograms, ImportedCollectivesAreThoseTheHloSays) {
  for (const char* name : kProgramNames) {
    SCOPED_TRACE(name);
    const HloModule module = load_hlo_file(kPrograms + name + ".hlo");
    const nlohmann::json summary = summary_of(name);
    EXPECT_EQ(module.device_count(), summary["devices"].get<int>());
    EXPECT_EQ(imported_counts(module), summary_counts(summary));
  }
}

sim::Machine dgx_h100();

// The bf16 program compiled for CPU (tests/hlo/make_hlo_programs.py): XLA:CPU moves every
// collective as f32 (the summary's bytes, counted from the text); the import times each in bf16,
// half those bytes, unless told to keep the promotion. The f32 programs have none.
TEST(HloPrograms, Bf16CollectivesXlaCpuPromotedAreTimedInBf16) {
  const HloModule module = load_hlo_file(kPrograms + std::string("bf16_tensor_data_parallel.hlo"));
  const std::vector<ImportedCollective> as_program = step_collectives(module);
  const std::vector<ImportedCollective> as_compiled = step_collectives(module, CpuPromotion::keep);
  ASSERT_EQ(as_program.size(), 5u);
  ASSERT_EQ(as_compiled.size(), 5u);
  std::int64_t program_bytes = 0, compiled_bytes = 0;
  for (std::size_t k = 0; k < as_program.size(); ++k) {
    SCOPED_TRACE(as_program[k].line);
    EXPECT_EQ(as_program[k].cpu_promoted_from, "bf16");
    EXPECT_EQ(as_program[k].dtype, DType::bfloat16);
    EXPECT_EQ(as_compiled[k].dtype, DType::float32);
    EXPECT_EQ(as_program[k].bytes * 2, as_compiled[k].bytes);
    EXPECT_EQ(as_program[k].shape, as_compiled[k].shape);
    program_bytes += as_program[k].bytes;
    compiled_bytes += as_compiled[k].bytes;
  }
  const nlohmann::json summary = summary_of("bf16_tensor_data_parallel");
  EXPECT_EQ(imported_counts(module), summary_counts(summary));  // as the text writes them: f32
  std::int64_t summary_bytes = 0;
  for (const nlohmann::json& c : summary["collectives"]) {
    summary_bytes += c["bytes"].get<std::int64_t>() * c["count"].get<std::int64_t>();
  }
  EXPECT_EQ(compiled_bytes, summary_bytes);
  EXPECT_EQ(program_bytes * 2, summary_bytes);
  // The activations' psum over model: bf16[8,64] per device, 1 KiB (f32 in the text, 2 KiB).
  EXPECT_EQ(as_program[1].hlo_opcode, "all-reduce");
  EXPECT_EQ(as_program[1].bytes, 8 * 64 * 2);
  // The run's records carry the program's type and bytes too.
  sim::Machine machine = dgx_h100();
  const sim::CollectiveRecord record = run_hlo_module(machine, module).collectives.at(1);
  EXPECT_EQ(record.dtype, "bfloat16");
  EXPECT_EQ(record.bytes, 8 * 64 * 2);
  for (const char* name : kProgramNames) {
    for (const ImportedCollective& c : step_collectives(load_hlo_file(kPrograms + name + ".hlo"))) {
      EXPECT_EQ(c.cpu_promoted_from, "") << name << ":" << c.line;
    }
  }
}

// An f32 all-gather of a value converted from bf16 is the program's own f32 unless its result
// goes back to bf16; an all-reduce whose reduction is no promoted clone is f32 as written.
TEST(HloCollectives, OnlyThePromotionPatternIsTimedInBf16) {
  const HloModule module = parse_hlo_module(R"(HloModule m, num_partitions=2

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%add_promoted (c: f32[], d: f32[]) -> f32[] {
  %c = f32[] parameter(0)
  %d = f32[] parameter(1)
  ROOT %t = f32[] add(%c, %d)
}

ENTRY %main (p: bf16[4]) -> (f32[8], bf16[4], bf16[4]) {
  %p = bf16[4]{0} parameter(0)
  %up = f32[4]{0} convert(%p)
  %gathered = f32[8]{0} all-gather(%up), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %plain = f32[4]{0} all-reduce(%up), channel_id=2, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%add
  %plain_down = bf16[4]{0} convert(%plain)
  %promoted = f32[4]{0} all-reduce(%up), channel_id=3, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%add_promoted
  %down = bf16[4]{0} convert(%promoted)
  ROOT %r = (f32[8], bf16[4], bf16[4]) tuple(%gathered, %plain_down, %down)
}
)", "pattern.hlo");
  const std::vector<ImportedCollective> c = step_collectives(module);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].dtype, DType::float32);  // gathered: not converted back
  EXPECT_EQ(c[0].bytes, 32);
  EXPECT_EQ(c[1].dtype, DType::float32);  // plain: no promoted reduction
  EXPECT_EQ(c[1].bytes, 16);
  EXPECT_EQ(c[2].dtype, DType::bfloat16);  // promoted
  EXPECT_EQ(c[2].bytes, 8);
  EXPECT_EQ(c[2].cpu_promoted_from, "bf16");
}

sim::Machine dgx_h100() { return sim::Machine(sim::load_machine_file("dgx-h100"), {.cost_only = true}); }

// The time of `call` alone on the machine: for a collective over every device without groups,
// `spmdsim perf`'s own measurement (run_workload of one collective); with groups, the same call
// as the only collective of a run.
std::int64_t alone_ps(sim::Machine& machine, const ImportedCollective& c) {
  static const std::map<std::string, std::string, std::less<>> perf_ops = {
      {"all-reduce", "all_reduce"}, {"all-gather", "all_gather"},
      {"reduce-scatter", "reduce_scatter"}, {"collective-permute", "ppermute"}};
  const bool ring_permute = c.call.perm == collective_call_for({"ppermute", 1, c.dtype}, machine.device_count()).perm;
  if (!c.call.axis_index_groups && perf_ops.contains(c.hlo_opcode) && c.shape.size() == 1 &&
      (c.hlo_opcode != "collective-permute" || ring_permute)) {
    Workload perf;
    perf.kind = WorkloadKind::collectives;
    perf.calls = {{perf_ops.at(c.hlo_opcode), c.bytes, c.dtype}};
    const sim::CollectiveRecord r = run_workload(machine, perf).collectives.at(0);
    return r.end_ps - r.start_ps;
  }
  machine.run(Mesh({machine.device_count()}, {kDevicesAxis}),
              std::vector<Values>(static_cast<std::size_t>(machine.device_count())),
              [&](Context& ctx, const Values&) {
                ctx.collective_cost(c.call, c.dtype, c.shape);
                return Values{};
              },
              false);
  const sim::CollectiveRecord& r = machine.cost_log().collectives.at(0);
  return r.end_ps - r.start_ps;
}

TEST(HloPrograms, EachCollectiveTakesTheTimeOfTheSameCallAlone) {
  for (const char* name : kProgramNames) {
    SCOPED_TRACE(name);
    const HloModule module = load_hlo_file(kPrograms + name + ".hlo");
    sim::Machine machine = dgx_h100();
    const sim::CostLog log = run_hlo_module(machine, module);
    const std::vector<ImportedCollective> expected = step_collectives(module);
    ASSERT_EQ(log.collectives.size(), expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
      SCOPED_TRACE(expected[k].call.to_string());
      EXPECT_EQ(log.collectives[k].bytes, expected[k].bytes);
      EXPECT_EQ(log.collectives[k].end_ps - log.collectives[k].start_ps, alone_ps(machine, expected[k]));
    }
  }
}

// A flattened all-reduce of the whole data-parallel gradient (12288 bytes on 8 devices) is the
// call `spmdsim perf --op all_reduce -b 12288 -e 12288` times: its record equals perf's row.
TEST(HloPrograms, DataParallelGradientAllReduceIsPerfsAllReduce) {
  const HloModule module = load_hlo_file(kPrograms + std::string("data_parallel_mlp.hlo"));
  sim::Machine machine = dgx_h100();
  const sim::CollectiveRecord imported = run_hlo_module(machine, module).collectives.at(0);
  Workload perf;
  perf.kind = WorkloadKind::collectives;
  perf.calls = {{"all_reduce", 12288, DType::float32}};
  const sim::CollectiveRecord alone = run_workload(machine, perf).collectives.at(0);
  EXPECT_EQ(imported.bytes, 12288);
  EXPECT_EQ(imported.algorithm, alone.algorithm);
  EXPECT_EQ(imported.end_ps - imported.start_ps, alone.end_ps - alone.start_ps);
}

// XLA's memory_analysis: arguments + outputs + temporaries, where the temporaries are the
// allocations buffer assignment packs live ranges into. The live-range peak holds the arguments
// and the output at least, and no more than XLA's three together (its allocations hold every
// temporary live at once); the test states both bounds, and a tolerance: the peak is within 25%
// of XLA's total (XLA pads allocations and keeps some buffers apart that a live-range count
// overlaps).
TEST(HloPrograms, MemoryPeakAgreesWithMemoryAnalysis) {
  for (const char* name : kProgramNames) {
    SCOPED_TRACE(name);
    const HloModule module = load_hlo_file(kPrograms + name + ".hlo");
    const nlohmann::json xla = summary_of(name)["memory_analysis"];
    const MemoryEstimate estimate = module_memory(module);
    EXPECT_EQ(estimate.argument_bytes, xla["argument_size_in_bytes"].get<std::int64_t>());
    EXPECT_EQ(estimate.output_bytes, xla["output_size_in_bytes"].get<std::int64_t>());
    const std::int64_t total = xla["argument_size_in_bytes"].get<std::int64_t>() +
                               xla["output_size_in_bytes"].get<std::int64_t>() +
                               xla["temp_size_in_bytes"].get<std::int64_t>() -
                               xla["alias_size_in_bytes"].get<std::int64_t>();
    EXPECT_GE(estimate.peak_bytes, estimate.argument_bytes + estimate.output_bytes);
    EXPECT_LE(estimate.peak_bytes, total);
    EXPECT_GE(static_cast<double>(estimate.peak_bytes), 0.75 * static_cast<double>(total))
        << "peak " << estimate.peak_bytes << " vs XLA's " << total;
  }
}

TEST(HloPrograms, TheRunHoldsThePeakOnEveryDevice) {
  const HloModule module = load_hlo_file(kPrograms + std::string("fsdp.hlo"));
  sim::Machine machine = dgx_h100();
  const sim::CostLog log = run_hlo_module(machine, module);
  for (const sim::DeviceMemory& device : log.memory) {
    EXPECT_GE(device.peak_bytes, module_memory(module).peak_bytes);
  }
}

TEST(HloPrograms, TheMachineMustHaveTheModulesDevices) {
  const HloModule module = load_hlo_file(kPrograms + std::string("fsdp.hlo"));
  sim::MachineSpec spec = sim::load_machine_file("dgx-h100-x4");
  sim::Machine machine(spec, {.cost_only = true});
  EXPECT_THAT(error_of([&] { run_hlo_module(machine, module); }),
              HasSubstr("replica_count 1 × num_partitions 8 = 8 devices, expected the machine's 32"));
}

// ---- Compute costs and asynchronous overlap (hand-made, as XLA:GPU schedules them)

constexpr std::string_view kAsync = R"(HloModule overlap, num_partitions=8
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %main (g: f32[4194304], a: f32[2048,2048], b: f32[2048,2048]) -> (f32[4194304], f32[2048,2048]) {
  %g = f32[4194304]{0} parameter(0)
  %a = f32[2048,2048]{1,0} parameter(1)
  %b = f32[2048,2048]{1,0} parameter(2)
  %start = f32[4194304]{0} all-reduce-start(%g), channel_id=1, replica_groups=[1,8]<=[8], use_global_device_ids=true, to_apply=%add
  %d = f32[2048,2048]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %done = f32[4194304]{0} all-reduce-done(%start)
  ROOT %out = (f32[4194304]{0}, f32[2048,2048]{1,0}) tuple(%done, %d)
}
)";

TEST(HloCost, DotsAreTwiceTheirMultiplyAdds) {
  const HloModule module = parse_hlo_module(kAsync, "overlap.hlo");
  const HloComputation& entry = module.entry_computation();
  const ComputeCost cost = compute_cost(module, entry, *entry.find("d"));
  EXPECT_EQ(cost.flops, 2.0 * 2048 * 2048 * 2048);
  EXPECT_EQ(cost.bytes, 3 * 2048 * 2048 * 4);
}

TEST(HloCost, ConvolutionsCountKernelElementsPerOutputFeature) {
  const HloModule module = parse_hlo_module(R"(HloModule conv
ENTRY %main (x: f32[8,32,32,16], k: f32[3,3,16,64]) -> f32[8,32,32,64] {
  %x = f32[8,32,32,16]{3,2,1,0} parameter(0)
  %k = f32[3,3,16,64]{3,2,1,0} parameter(1)
  ROOT %c = f32[8,32,32,64]{3,2,1,0} convolution(%x, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
)", "conv.hlo");
  const HloComputation& entry = module.entry_computation();
  EXPECT_EQ(compute_cost(module, entry, entry.root()).flops, 2.0 * (8 * 32 * 32 * 64) * (3 * 3 * 16));
}

TEST(HloPrograms, AsyncAllReduceOverlapsTheComputeBetweenStartAndDone) {
  const HloModule module = parse_hlo_module(kAsync, "overlap.hlo");
  sim::Machine machine = dgx_h100();
  const sim::CostLog log = run_hlo_module(machine, module);
  ASSERT_EQ(log.collectives.size(), 1u);
  const std::int64_t communication_ps = log.collectives[0].end_ps - log.collectives[0].start_ps;
  const std::int64_t compute_ps = log.compute_ps.at(0);
  EXPECT_GT(communication_ps, 0);
  EXPECT_GT(compute_ps, 0);
  EXPECT_LT(log.end_ps, communication_ps + compute_ps);  // less than one after the other
  EXPECT_GE(log.end_ps, std::max(communication_ps, compute_ps));
  EXPECT_GT(log.overlapped_communication_ps.at(0), 0);

  // The blocking form of the same program takes their sum.
  std::string blocking(kAsync);
  blocking.replace(blocking.find("all-reduce-start"), 16, "all-reduce");
  blocking.replace(blocking.find("all-reduce-done(%start)"), 23, "copy(%start)");
  const sim::CostLog serial = run_hlo_module(machine, parse_hlo_module(blocking, "blocking.hlo"));
  EXPECT_GT(serial.end_ps, log.end_ps);
}

TEST(HloPrograms, ADoneWithoutAStartIsAnErrorNamingTheLine) {
  std::string text(kAsync);
  text.replace(text.find("all-reduce-done(%start)"), 23, "all-reduce-done(%d)");
  sim::Machine machine = dgx_h100();
  EXPECT_THAT(error_of([&] { run_hlo_module(machine, parse_hlo_module(text, "bad.hlo")); }),
              HasSubstr("bad.hlo:13: done (all-reduce-done): operand 'd', expected a started collective"));
}

TEST(HloPrograms, UseGlobalDeviceIdsWithoutChannelIdIsAnErrorNamingTheLine) {
  std::string text(kAsync);
  text.replace(text.find("channel_id=1, "), 14, "");
  EXPECT_THAT(error_of([&] { step_collectives(parse_hlo_module(text, "bad.hlo")); }),
              HasSubstr("bad.hlo:11: start (all-reduce-start): use_global_device_ids=true without channel_id"));
}

// ---- Every collective opcode (hand-made: the CPU programs above have no all-to-all, broadcast
// or asynchronous wrappers)

constexpr std::string_view kEveryCollective = R"(HloModule every, num_partitions=8
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
%max (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %m = f32[] maximum(%x, %y)
}
%wrapped (w: f32[64,16]) -> f32[8,16] {
  %w = f32[64,16]{1,0} parameter(0)
  ROOT %rs = f32[8,16]{1,0} reduce-scatter(%w), channel_id=7, replica_groups=[1,8]<=[8], use_global_device_ids=true, dimensions={0}, to_apply=%add
}
ENTRY %main (a: f32[64,16], b: bf16[32]) -> f32[64,16] {
  %a = f32[64,16]{1,0} parameter(0)
  %b = bf16[32]{0} parameter(1)
  %mx = f32[64,16]{1,0} all-reduce(%a), channel_id=1, replica_groups=[4,2]<=[2,4]T(1,0), use_global_device_ids=true, to_apply=%max
  %a2a = f32[64,16]{1,0} all-to-all(%a), channel_id=2, replica_groups={{0,1,2,3},{4,5,6,7}}, dimensions={0}
  %bc = bf16[32]{0} collective-broadcast(%b), channel_id=3, replica_groups={{0,1,2,3,4,5,6,7}}
  %ag = (f32[64,16]{1,0}, f32[512,16]{1,0}) all-gather-start(%a), channel_id=4, replica_groups={}, dimensions={0}, use_global_device_ids=true
  %agd = f32[512,16]{1,0} all-gather-done(%ag)
  %rss = ((f32[64,16]{1,0}), f32[8,16]{1,0}) async-start(%a), calls=%wrapped
  %rsd = f32[8,16]{1,0} async-done(%rss)
  %cp = f32[64,16]{1,0} collective-permute(%a), channel_id=5, source_target_pairs={{0,1},{1,0}}
  ROOT %r = f32[64,16]{1,0} copy(%a)
}
)";

TEST(HloCollectives, EveryOpcodeIsTheJaxCallThatMovesItsData) {
  const HloModule module = parse_hlo_module(kEveryCollective, "every.hlo");
  const std::vector<ImportedCollective> c = step_collectives(module);
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(c[0].call.op, CollectiveOp::pmax);
  EXPECT_EQ(c[0].call.axis_index_groups, (AxisIndexGroups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(c[1].call.op, CollectiveOp::all_to_all);  // channel_id: partition ids
  EXPECT_EQ(c[1].call.axis_index_groups, (AxisIndexGroups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(c[1].bytes, 64 * 16 * 4);
  EXPECT_EQ(c[2].hlo_opcode, "collective-broadcast");
  EXPECT_EQ(c[2].call.op, CollectiveOp::all_gather);
  EXPECT_EQ(c[2].shape, Shape{4});  // 32 bf16 elements gathered from 8 devices
  EXPECT_EQ(c[2].dtype, DType::bfloat16);
  EXPECT_EQ(c[3].call.op, CollectiveOp::all_gather);
  EXPECT_EQ(c[3].bytes, 512 * 16 * 4);  // the gathered result
  EXPECT_FALSE(c[3].call.axis_index_groups.has_value());
  EXPECT_EQ(c[4].call.op, CollectiveOp::psum_scatter);  // inside async-start
  EXPECT_EQ(c[4].shape, (Shape{64, 16}));
  EXPECT_EQ(c[5].source_target_pairs, (std::vector<std::pair<int, int>>{{0, 1}, {1, 0}}));
  sim::Machine machine = dgx_h100();
  EXPECT_EQ(run_hlo_module(machine, module).collectives.size(), 6u);
  // Without channel_id the pairs are replica ids, and this module has one replica.
  std::string text(kEveryCollective);
  text.replace(text.find("channel_id=5, "), 14, "");
  EXPECT_THAT(error_of([&] { step_collectives(parse_hlo_module(text, "every.hlo")); }),
              HasSubstr("every.hlo:26: cp (collective-permute): replica groups: id 1 is not a replica id"));
}

// ---- The command line

TEST(HloRunCommand, RunsAModuleFileAsAWorkload) {
  const std::string out = ::testing::TempDir() + "hlo_run";
  const CommandResult result =
      run_binary("run dgx-h100 " + kPrograms + "pipeline_stages.hlo --out " + out);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("spmdsim run: jit_pipeline (1 step) on dgx-h100"));
  EXPECT_THAT(result.output, HasSubstr("collectives: 3"));
  EXPECT_THAT(result.output, HasSubstr("ppermute('devices', perm=[(0, 1), (1, 2)"));
}

TEST(HloRunCommand, AnUnknownOpcodeExitsWithCode2AndTheLine) {
  const std::string path = ::testing::TempDir() + "unknown_op.hlo";
  std::ofstream(path) << "HloModule m, num_partitions=8\nENTRY e {\n  %x = f32[2] parameter(0)\n"
                         "  ROOT %y = f32[2] frobnicate(%x)\n}\n";
  const CommandResult result = run_binary("run dgx-h100 " + path + " --out " + ::testing::TempDir() + "hlo_bad");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_THAT(result.output, HasSubstr("unknown_op.hlo:4: y: opcode 'frobnicate'"));
}

}  // namespace
}  // namespace spmd::hlo
