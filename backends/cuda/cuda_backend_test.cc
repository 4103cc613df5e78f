// The CUDA backend against the reference: the public conformance cases pass on it for every
// algorithm, compared with the reference folding in that algorithm's order; and psum / pmean /
// psum_scatter of over 1 Mi random elements on 8 virtual devices give the reference's bits for
// float32, float16, bfloat16 and int32; in XLA:CPU's order the backend computes with its numerics
// (subnormals flushed, bfloat16 excess precision), as JAX on CPU does. GPU tests skip, naming what
// is missing, without a GPU.

#include "backends/cuda/cuda_backend.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend_registry.h"
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/near_subnormal_test_data.h"
#include "backends/sim_backend.h"
#include "conformance/conformance_runner.h"
#include "reference/array_difference.h"
#include "reference/elementwise.h"
#include "reference/reference_backend.h"
#include "tests/generators.h"

namespace spmd::cuda {
namespace {

using collectives::Algorithm;

// Torus is left out: the conformance runner cannot give the reference each group's grid
// (tools/sim_backend.h); cuda_schedule_test covers it.
constexpr Algorithm kAlgorithms[] = {
    Algorithm::direct,           Algorithm::ring,        Algorithm::bidirectional_ring,
    Algorithm::halving_doubling, Algorithm::binary_tree, Algorithm::double_binary_tree};

// The public cases: the environment's SPMD_CONFORMANCE_DIR where it is set (a checkout other than
// the one that built this binary; tools/check-gpu-build.sh sets it), else the building checkout's.
std::string conformance_dir() {
  const char* from_environment = std::getenv("SPMD_CONFORMANCE_DIR");
  return from_environment != nullptr ? from_environment : SPMD_CONFORMANCE_DIR;
}

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = missing_cuda_device()) GTEST_SKIP() << *reason;
  }
};

TEST_F(CudaBackendTest, cuda_backend_passes_public_conformance_cases_in_every_algorithms_order) {
  register_cuda_backend();
  const std::vector<std::string> files = conformance::find_case_files({conformance_dir()});
  ASSERT_FALSE(files.empty());
  for (Algorithm algorithm : kAlgorithms) {
    conformance::RunOptions options{.backend = "cuda", .order = order_for_algorithm(algorithm)};
    for (const std::string& file : files) {
      const conformance::CaseResult result =
          conformance::run_case(conformance::load_case(file), options);
      EXPECT_TRUE(result.passed) << collectives::algorithm_name(algorithm) << " " << result.name
                                 << ": " << result.failure;
    }
  }
}

// One reduction of large random data on 8 devices, on the GPU and in the reference.
void expect_reduction_matches_reference(Algorithm algorithm, DType dtype, CollectiveOp op) {
  const Mesh mesh({8}, {"i"});
  const std::int64_t count = 8 * ((std::int64_t{1} << 17) + 1);  // over 1 Mi, odd per block
  std::vector<Values> args;
  for (const Array& a : random_per_device(dtype, {count}, 8, 42)) args.push_back({a});
  const test_gen::PerDeviceBody body = [op](Context& ctx, const Values& x) -> Values {
    switch (op) {
      case CollectiveOp::pmean: return {ctx.pmean(x[0], {"i"})};
      case CollectiveOp::psum_scatter: return {ctx.psum_scatter(x[0], {"i"}, 0, true)};
      default: return {ctx.psum(x[0], {"i"})};
    }
  };
  CudaBackend gpu(algorithm);
  ReferenceBackend reference(order_for_algorithm(algorithm));
  const auto got = test_gen::run_per_device(gpu, mesh, args, 1, body);
  const auto expected = test_gen::run_per_device(reference, mesh, args, 1, body);
  for (std::size_t d = 0; d < got.size(); ++d) {
    const auto difference = first_difference(got[d][0], expected[d][0]);
    EXPECT_FALSE(difference.has_value())
        << collectives::algorithm_name(algorithm) << " " << collective_op_name(op) << " of "
        << dtype_name(dtype) << "[" << count << "], device " << d << ": " << *difference;
  }
}

TEST_F(CudaBackendTest, cuda_reductions_match_reference_in_algorithms_order_on_large_data) {
  for (Algorithm algorithm : kAlgorithms) {
    for (DType dtype : {DType::float32, DType::float16, DType::bfloat16, DType::int32}) {
      for (CollectiveOp op :
           {CollectiveOp::psum, CollectiveOp::pmean, CollectiveOp::psum_scatter}) {
        expect_reduction_matches_reference(algorithm, dtype, op);
      }
    }
  }
}

// XLA:CPU's order: the backend takes its numerics, so subnormals are flushed in every reduction and
// a bfloat16 product feeding psum keeps its float32 value, as the reference (and JAX) compute.
TEST_F(CudaBackendTest, cuda_backend_computes_with_the_numerics_of_xla_cpus_order) {
  const ReductionOrder order{.algorithm = ReductionAlgorithm::xla_cpu};
  CudaBackend gpu(algorithm_for_order(order), order.numerics());
  ReferenceBackend reference(order);
  const Mesh mesh({8}, {"i"});
  for (DType dtype : {DType::float32, DType::bfloat16, DType::float64}) {
    // x around the smallest normal, most of it subnormal; y ordinary.
    const std::vector<Array> xs = near_subnormal_per_device(dtype, 1001, 8, 9);
    const std::vector<Array> ys = random_per_device(dtype, {1001}, 8, 10);
    std::vector<Values> args;
    for (std::size_t d = 0; d < xs.size(); ++d) args.push_back({xs[d], ys[d]});
    const test_gen::PerDeviceBody body = [](Context& ctx, const Values& x) -> Values {
      const Array product = mul(x[1], x[1], ctx.numerics());
      return {ctx.psum(x[0], {"i"}), ctx.pmax(x[0], {"i"}), ctx.pmin(x[0], {"i"}),
              ctx.psum(product, {"i"})};
    };
    const auto got = test_gen::run_per_device(gpu, mesh, args, 4, body);
    const auto expected = test_gen::run_per_device(reference, mesh, args, 4, body);
    for (std::size_t d = 0; d < got.size(); ++d) {
      for (std::size_t out = 0; out < got[d].size(); ++out) {
        const auto difference = first_difference(got[d][out], expected[d][out]);
        EXPECT_FALSE(difference.has_value()) << dtype_name(dtype) << " output " << out
                                             << ", device " << d << ": " << *difference;
      }
    }
  }
}

// Runs without a GPU: a backend of no devices is refused before any CUDA call.
TEST(CudaBackendArguments, cuda_backend_rejects_a_device_count_below_one) {
  try {
    CudaBackend backend(Algorithm::ring, kIeeeNumerics, 0);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "CudaBackend: device_count 0, expected at least 1");
  }
}

}  // namespace
}  // namespace spmd::cuda
