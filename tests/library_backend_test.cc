// The library layer (backends/library_backend.h): a library whose five group operations are the
// reference's own folds must give every conformance case's outputs, and a library that moves
// data wrongly must be caught. The real libraries (Open MPI, Gloo, plugins) are run through the
// same layer by their own tests.

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "backends/backend_registry.h"
#include "backends/library_backend.h"
#include "backends/reduce_scatter_placement.h"
#include "conformance/conformance_runner.h"
#include "reference/fold_reduce.h"
#include "support/random_array.h"

namespace spmd {
namespace {

// The five operations computed by the reference, folding sums in `order` (ring in device ids).
class ReferenceGroupCollectives : public GroupCollectives {
 public:
  explicit ReferenceGroupCollectives(ReductionOrder order) : order_(std::move(order)) {}

  std::vector<Array> all_reduce(const GroupBuffers& group, ReduceOp op) override {
    return std::vector<Array>(group.inputs.size(),
                              spmd::all_reduce(group.inputs, op, order_.for_group(group.devices)));
  }
  std::vector<Array> all_gather(const GroupBuffers& group) override {
    return std::vector<Array>(group.inputs.size(), concatenate(group.inputs, 0));
  }
  std::vector<Array> reduce_scatter(const GroupBuffers& group, ReduceOp op) override {
    const ReductionOrder order = order_.for_group(group.devices);
    std::vector<Array> results;
    for (int r = 0; r < group.size(); ++r) {
      std::vector<Array> blocks;
      for (const Array& input : group.inputs) blocks.push_back(block(input, group.size(), r));
      results.push_back(
          reduce_with_tree(blocks, op, order.reduce_scatter_fold(group.size(), r), order));
    }
    return results;
  }
  std::vector<Array> all_to_all(const GroupBuffers& group) override {
    std::vector<Array> results;
    for (int r = 0; r < group.size(); ++r) {
      std::vector<Array> pieces;
      for (const Array& input : group.inputs) pieces.push_back(block(input, group.size(), r));
      results.push_back(concatenate(pieces, 0));
    }
    return results;
  }
  std::vector<Array> permute(const GroupBuffers& group,
                             const std::vector<std::pair<int, int>>& pairs) override {
    std::vector<Array> results;
    for (const Array& input : group.inputs) results.push_back(zeros_like(input));
    for (auto [source, destination] : pairs) {
      results[static_cast<std::size_t>(destination)] = group.inputs[static_cast<std::size_t>(source)];
    }
    return results;
  }

 protected:
  static Array block(const Array& buffer, int parts, int k) {
    const std::int64_t size = buffer.size() / parts;
    return slice(buffer, 0, k * size, (k + 1) * size);
  }

 private:
  ReductionOrder order_;
};

// A library bug: all-gather concatenates the buffers in reverse rank order.
class ReversedAllGather : public ReferenceGroupCollectives {
 public:
  using ReferenceGroupCollectives::ReferenceGroupCollectives;
  std::vector<Array> all_gather(const GroupBuffers& group) override {
    std::vector<Array> reversed(group.inputs.rbegin(), group.inputs.rend());
    return std::vector<Array>(group.inputs.size(), concatenate(reversed, 0));
  }
};

template <typename Library>
void register_library(const std::string& name) {
  register_backend(name, [name](const ReductionOrder& order, int device_count) {
    return std::make_unique<LibraryBackend>(name, device_count,
                                            std::make_shared<Library>(order), order.numerics());
  });
}

std::vector<conformance::Case> cases_in(const std::string& folder) {
  std::vector<conformance::Case> cases;
  for (const std::string& file :
       conformance::find_case_files({std::string(SPMD_SOURCE_DIR) + "/tests/conformance/" + folder})) {
    cases.push_back(conformance::load_case(file));
  }
  return cases;
}

TEST(LibraryBackend, reference_folds_through_the_library_layer_pass_every_case) {
  register_library<ReferenceGroupCollectives>("library-reference");
  int cases_run = 0;
  for (const std::string folder : {"cases", "order_cases"}) {
    for (const conformance::Case& c : cases_in(folder)) {
      const conformance::CaseResult result =
          conformance::run_case(c, {.backend = "library-reference"});
      EXPECT_TRUE(result.passed) << c.name << ": " << result.failure;
      ++cases_run;
    }
  }
  EXPECT_GT(cases_run, 100);  // both folders were found
}

TEST(LibraryBackend, a_library_that_gathers_in_the_wrong_order_fails_with_the_first_difference) {
  register_library<ReversedAllGather>("library-reversed-gather");
  int gather_cases = 0;
  for (const conformance::Case& c : cases_in("cases")) {
    if (c.expected_error || c.name.find("all_gather") == std::string::npos) continue;
    ++gather_cases;
    const conformance::CaseResult result =
        conformance::run_case(c, {.backend = "library-reversed-gather"});
    EXPECT_FALSE(result.passed) << c.name;
    EXPECT_NE(result.failure.find("element"), std::string::npos) << result.failure;
  }
  EXPECT_GT(gather_cases, 0);
}

// Reduce-scatter as a phase of the all-reduce: with the blocks placed where the placement says,
// the all-reduce's fold of block d is the order's reduce-scatter fold for rank d, bit for bit.
RC_GTEST_PROP(ReduceScatterPlacement, all_reduce_of_placed_blocks_folds_each_as_its_reduce_scatter,
              ()) {
  const auto algorithm = *rc::gen::element(ReductionAlgorithm::gloo_ring,
                                           ReductionAlgorithm::gloo_ring_chunked,
                                           ReductionAlgorithm::mpi_ring, ReductionAlgorithm::nccl_ring,
                                           ReductionAlgorithm::xla_cpu);
  const ReductionOrder order{.algorithm = algorithm};
  const int n = *rc::gen::inRange(1, 9);
  const std::int64_t block = *rc::gen::oneOf(rc::gen::inRange<std::int64_t>(1, 700),
                                             rc::gen::inRange<std::int64_t>(60000, 120000));
  const DType dtype = *rc::gen::element(DType::float32, DType::float16, DType::bfloat16);
  const auto placement = reduce_scatter_placement(order, n, block, dtype);
  RC_ASSERT(placement.has_value());
  const std::vector<Array> buffers = random_per_device(
      dtype, {placement->buffer_elements}, n, *rc::gen::arbitrary<std::uint64_t>());
  const Array reduced = all_reduce(buffers, ReduceOp::sum, order);
  for (int d = 0; d < n; ++d) {
    const std::int64_t offset = placement->block_offsets[static_cast<std::size_t>(d)];
    std::vector<Array> blocks;
    for (const Array& buffer : buffers) blocks.push_back(slice(buffer, 0, offset, offset + block));
    const Array expected =
        reduce_with_tree(blocks, ReduceOp::sum, order.reduce_scatter_fold(n, d), order);
    RC_ASSERT(slice(reduced, 0, offset, offset + block).bitwise_equal(expected));
  }
}

}  // namespace
}  // namespace spmd
