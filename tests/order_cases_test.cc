// The public order cases (tests/conformance/order_cases, written by `spmdsim cases --order all`):
// each tells its order apart from every plausible wrong one, and backends that fold in a wrong
// order (a ring rotated by one, NCCL chunks off by one alignment unit) fail them while the
// reference passes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "backends/backend_registry.h"
#include "cli/cases_command.h"
#include "conformance/conformance_runner.h"
#include "conformance/order_case_data.h"
#include "conformance/order_field.h"
#include "conformance/order_variants.h"
#include "reference/collective_semantics.h"
#include "reference/device_threads.h"
#include "reference/fold_reduce.h"
#include "reference/reference_backend.h"
#include "tests/error_of.h"

namespace spmd::conformance {
namespace {

using test_errors::error_of;

const std::string kOrderCases = std::string(SPMD_SOURCE_DIR) + "/tests/conformance/order_cases";

std::vector<Case> order_cases() {
  std::vector<Case> cases;
  for (const std::string& file : find_case_files({kOrderCases})) cases.push_back(load_case(file));
  return cases;
}

int group_size(const Case& c) { return c.mesh.device_count(); }

// Device d's row of the case's [n, count] input.
std::vector<Array> contributions(const Case& c) {
  const Array& global = c.inputs.at(0);
  const std::int64_t count = global.dim(1);
  const std::size_t row_bytes = static_cast<std::size_t>(count) * dtype_size_bytes(global.dtype());
  std::vector<Array> rows;
  for (int d = 0; d < group_size(c); ++d) {
    const auto begin = global.bytes().begin() + static_cast<std::ptrdiff_t>(d * row_bytes);
    rows.push_back(Array::from_bytes(
        global.dtype(), {count},
        std::vector<std::byte>(begin, begin + static_cast<std::ptrdiff_t>(row_bytes))));
  }
  return rows;
}

std::vector<ChunkFold> case_plan(const Case& c) {
  return c.order.all_reduce_plan(group_size(c), c.inputs.at(0).dim(1), c.inputs.at(0).dtype());
}

TEST(OrderCases, CoverEveryOrderWithSeveralGroupSizesAndDtypes) {
  std::map<ReductionAlgorithm, std::set<int>> groups;
  std::map<ReductionAlgorithm, std::set<DType>> dtypes;
  for (const Case& c : order_cases()) {
    groups[c.order.algorithm].insert(group_size(c));
    dtypes[c.order.algorithm].insert(c.inputs.at(0).dtype());
  }
  for (ReductionAlgorithm algorithm : kAllReductionAlgorithms) {
    if (order_is_unspecified(algorithm)) continue;  // no data tell in_switch apart
    SCOPED_TRACE(reduction_algorithm_name(algorithm));
    EXPECT_GE(groups[algorithm].size(), 3u);
    EXPECT_EQ(dtypes[algorithm].size(), 3u);
  }
}

// Separation: in every case each wrong order of the case's order, evaluated on the case's inputs,
// differs from the expected output in some element; the case's own order gives it exactly.
TEST(OrderCases, EveryWrongOrderGivesOtherBitsThanExpected) {
  for (const Case& c : order_cases()) {
    SCOPED_TRACE(c.name);
    const std::vector<Array> inputs = contributions(c);
    const Array& expected = c.expected_outputs->at(0);
    EXPECT_TRUE(all_reduce(inputs, ReduceOp::sum, c.order).bitwise_equal(expected));
    const WrongOrders wrong =
        wrong_orders(c.order, group_size(c), expected.size(), expected.dtype());
    // Over two ranks every relabelling commutes; only XLA:CPU's has nothing else to tell apart.
    if (group_size(c) > 2) {
      EXPECT_FALSE(wrong.orders.empty());
    }
    for (const WrongOrder& order : wrong.orders) {
      EXPECT_FALSE(
          reduce_with_plan(inputs, ReduceOp::sum, order.plan, c.order).bitwise_equal(expected))
          << order.name << " gives the expected bits";
    }
  }
}

TEST(OrderCases, PassOnTheReferenceInTheirOwnOrder) {
  for (const Case& c : order_cases()) {
    const CaseResult result = run_case(c, RunOptions{.backend = "reference"});
    EXPECT_TRUE(result.passed) << c.name << ": " << result.failure;
  }
}

// ---- Wrong backends

// The ring rotated by one position: ring'[p] = ring[p + 1] (the identity ring when none is given).
ReductionOrder with_rotated_ring(ReductionOrder order, int group_size) {
  std::vector<int> ring = order.ring;
  if (ring.empty()) {
    for (int r = 0; r < group_size; ++r) ring.push_back(r);
  }
  std::rotate(ring.begin(), ring.begin() + 1, ring.end());
  order.ring = ring;
  return order;
}

// Folds psum with NCCL's chunk boundaries one alignment unit (16 bytes) later than the order's;
// everything else as the reference.
class MisalignedChunksBackend : public Backend {
 public:
  MisalignedChunksBackend(ReductionOrder order, int device_count)
      : order_(std::move(order)), device_count_(device_count) {}
  std::string name() const override { return "misaligned_chunks"; }
  int device_count() const override { return device_count_; }

  std::vector<Values> run(const Mesh& mesh, const std::vector<Values>& inputs,
                          const DeviceFunction& function, bool check_vma) override {
    Rendezvous rendezvous(mesh, [&](const CollectiveCall& call, const std::vector<Array>& in) {
      return evaluate(call, mesh, in);
    });
    return run_devices_on_threads(name(), mesh, inputs, function, check_vma, rendezvous,
                                  order_.numerics());
  }

 private:
  // A psum over the whole one-axis mesh (the order cases'): the misaligned plan.
  std::vector<Array> evaluate(const CollectiveCall& call, const Mesh& mesh,
                              const std::vector<Array>& inputs) const {
    std::vector<Array> results = evaluate_collective(call, mesh, inputs, order_);
    if (call.op != CollectiveOp::psum || call.axis_index_groups.has_value() ||
        mesh.axis_count() != 1 || !is_floating(inputs.front().dtype())) {
      return results;
    }
    const int n = static_cast<int>(inputs.size());
    const std::int64_t count = inputs.front().size();
    const DType dtype = inputs.front().dtype();
    const std::vector<ChunkFold> plan = chunk_boundaries_moved(
        order_.all_reduce_plan(n, count, dtype), chunk_alignment_elements(order_, n, dtype), count);
    const Array sum = reduce_with_plan(inputs, ReduceOp::sum, plan, order_)
                          .with_shape(results.front().shape())
                          .with_varying_axes(results.front().varying_axes());
    return std::vector<Array>(inputs.size(), sum);
  }

  ReductionOrder order_;
  int device_count_;
};

class WrongBackends : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    register_backend("rotated_ring", [](const ReductionOrder& order, int device_count) {
      return std::make_unique<ReferenceBackend>(with_rotated_ring(order, device_count),
                                                device_count);
    });
    register_backend("misaligned_chunks", [](const ReductionOrder& order, int device_count) {
      return std::make_unique<MisalignedChunksBackend>(order, device_count);
    });
  }
};

// Every case whose order the rotation changes (the orders that read the ring) fails.
TEST_F(WrongBackends, RotatedRingFailsEveryCaseOfARingOrder) {
  int affected = 0;
  for (const Case& c : order_cases()) {
    const ReductionOrder rotated = with_rotated_ring(c.order, group_size(c));
    const Array& expected = c.expected_outputs->at(0);
    if (same_folds(case_plan(c),
                   rotated.all_reduce_plan(group_size(c), expected.size(), expected.dtype()))) {
      continue;
    }
    ++affected;
    const CaseResult result = run_case(c, RunOptions{.backend = "rotated_ring"});
    EXPECT_FALSE(result.passed) << c.name << " passes with its ring rotated";
  }
  // nccl_ring, nccl_tree_chain, binary_tree and the two-way orders but on 2 devices; torus and
  // halving_doubling where they run a ring: 26 of the 96 cases.
  EXPECT_GE(affected, 26);
}

// Every case whose chunk boundaries the shift moves (NCCL's chunks) fails.
TEST_F(WrongBackends, MisalignedChunksFailEveryCaseWithNcclChunks) {
  int affected = 0;
  for (const Case& c : order_cases()) {
    const Array& expected = c.expected_outputs->at(0);
    const std::int64_t unit = chunk_alignment_elements(c.order, group_size(c), expected.dtype());
    const std::vector<ChunkFold> plan = case_plan(c);
    if (unit == 1 || same_folds(plan, chunk_boundaries_moved(plan, unit, expected.size())))
      continue;
    ++affected;
    const CaseResult result = run_case(c, RunOptions{.backend = "misaligned_chunks"});
    EXPECT_FALSE(result.passed) << c.name << " passes with misaligned chunks";
  }
  // nccl_ring and bidirectional_ring but on 2 devices, halving_doubling on 6: 11 of the 96 cases.
  EXPECT_GE(affected, 11);
}

// ---- The format's object form of `order`

TEST(OrderField, ObjectFormReadsBackWhatIsWritten) {
  const ReductionOrder order{
      .algorithm = ReductionAlgorithm::nccl_ring, .ring = {0, 2, 1, 3}, .nccl_chunk_bytes = 512};
  const std::string written = order_json(order).dump();
  EXPECT_EQ(written, R"({"algorithm":"nccl_ring","ring":[0,2,1,3],"nccl_chunk_bytes":512})");
  EXPECT_EQ(parse_order(JsonValue(nlohmann::json::parse(written), "order")), order);
  EXPECT_EQ(order_json(ReductionOrder{.algorithm = ReductionAlgorithm::mpi_ring}).dump(),
            R"("mpi_ring")");
}

TEST(OrderField, AFieldTheAlgorithmDoesNotUseIsAnError) {
  const auto json = nlohmann::json::parse(R"({"algorithm": "gloo_ring", "ring": [1, 0]})");
  EXPECT_EQ(error_of([&] { parse_order(JsonValue(json, "order")); }),
            "ring: not used by gloo_ring, expected only gloo_max_segment_bytes");
  const auto unknown = nlohmann::json::parse(R"({"algorithm": "nccl_ring", "rings": [1, 0]})");
  EXPECT_THAT(error_of([&] { parse_order(JsonValue(unknown, "order")); }),
              ::testing::HasSubstr("rings: unknown field, expected one of algorithm, ring"));
}

// ---- Wrong orders

TEST(WrongOrders, AreSkippedWhenNoDataCanTellThemApart) {
  // xla_cpu is its own rank-order fold and has one chunk: nothing to move or exchange.
  const WrongOrders wrong = wrong_orders(ReductionOrder{}, 4, 100, DType::float32);
  std::vector<std::string> skipped;
  for (const auto& s : wrong.skipped) skipped.push_back(s.name);
  EXPECT_THAT(skipped, ::testing::ElementsAre("chunk_boundaries_later", "chunk_boundaries_earlier",
                                              "chunk_trees_reversed", "rank_order"));
}

TEST(WrongOrders, MovedBoundariesShiftEveryInnerBoundary) {
  const std::vector<ChunkFold> plan = {
      {0, 8, FoldTree{}}, {8, 16, FoldTree{}}, {16, 20, FoldTree{}}};
  const std::vector<ChunkFold> moved = chunk_boundaries_moved(plan, 4, 20);
  ASSERT_EQ(moved.size(), 2u);  // the last chunk becomes empty
  EXPECT_EQ(moved[0].end, 12);
  EXPECT_EQ(moved[1].begin, 12);
  EXPECT_EQ(moved[1].end, 20);
}

TEST(OrderCaseData, SearchIsDeterministic) {
  const ReductionOrder order = public_order(ReductionAlgorithm::nccl_ring, 4);
  const OrderCaseShape shape{4, DType::float16, SizeClass::below};
  const OrderCase a = make_order_case(order, shape, 7);
  const OrderCase b = make_order_case(order, shape, 7);
  EXPECT_TRUE(a.expected.bitwise_equal(b.expected));
  EXPECT_EQ(a.name, "nccl_ring_n4_float16_below_93");
}

// No data tell an unspecified order apart: in_switch has no order cases, and asking for them is
// an error before any file is written.
TEST(OrderCaseData, NoneForAnUnspecifiedOrder) {
  const ReductionOrder order{.algorithm = ReductionAlgorithm::in_switch};
  EXPECT_EQ(error_of([&] { make_order_case(order, {4, DType::float32, SizeClass::at}, 1); }),
            "order in_switch is unspecified: no data tell it apart from another order, expected "
            "an order with a defined fold");
  std::ostringstream out;
  const CasesOptions options{.order = "in_switch", .out_folder = "never_written"};
  EXPECT_EQ(error_of([&] { run_cases_command(options, out); }),
            "--order in_switch: its order is unspecified, so no data tell it apart from another "
            "order; expected an order with a defined fold");
  EXPECT_FALSE(std::filesystem::exists("never_written"));
}

}  // namespace
}  // namespace spmd::conformance
