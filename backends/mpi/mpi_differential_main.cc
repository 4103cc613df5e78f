// spmd_mpi_differential: run under `mpirun -n N` with an Open MPI all-reduce algorithm pinned by
// MCA parameters (see backends/mpi/CMakeLists.txt for the command lines CTest runs). Every rank
// makes its seeded random contribution and runs the real MPI collective; rank 0 compares what
// every rank got bit for bit with the reference (reference/collective_semantics.h) folding float
// sums in the pinned algorithm's order: by digest, gathering the results only to name the first
// difference. Prints one line per case; exit code 1 when
// any rank's bits differ, 2 for bad arguments or MCA parameters that do not pin the algorithm.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <ranges>
#include <string>
#include <thread>
#include <vector>

#include "backends/differential/differential_case.h"
#include "backends/differential/differential_data.h"
#include "backends/mpi/mpi_collectives.h"
#include "backends/mpi/mpi_pins.h"
#include "reference/error.h"
#include "reference/fold_reduce.h"

namespace spmd::mpi {
namespace {

constexpr DType kDTypes[] = {DType::float32, DType::float64, DType::int32};
constexpr std::uint64_t kSeed = 5;

const AllReducePin& pin_named(const std::string& name) {
  for (const AllReducePin& pin : kAllReducePins) {
    if (pin.name == name) return pin;
  }
  throw Error(
      fmt::format("--all-reduce {}, expected one of: {}", name,
                  fmt::join(kAllReducePins | std::views::transform(&AllReducePin::name), ", ")));
}

// The MCA parameters mpirun passed on (as OMPI_MCA_* variables) must pin what we compare with.
void check_mca_parameter(const std::string& parameter, int expected) {
  const char* value = std::getenv(("OMPI_MCA_" + parameter).c_str());
  const std::string wanted = fmt::format("{}", expected);
  if (value == nullptr || value != wanted) {
    throw Error(fmt::format("MCA parameter {} is {}, expected {} (mpirun --mca {} {})", parameter,
                            value ? value : "unset", wanted, parameter, wanted));
  }
}

void check_pins(const AllReducePin& pin) {
  check_mca_parameter("coll_tuned_use_dynamic_rules", 1);
  check_mca_parameter("coll_tuned_allreduce_algorithm", pin.coll_tuned_allreduce_algorithm);
  check_mca_parameter("coll_tuned_reduce_scatter_block_algorithm", kReduceScatterBlockLinear);
  check_mca_parameter("coll_tuned_reduce_algorithm", kReduceLinear);
}

// Every rank's result, gathered on rank 0 (empty elsewhere). All results have x's size.
std::vector<Array> gather_results(const Array& result, MPI_Comm comm) {
  const int n = size_of(comm);
  const bool root = rank_of(comm) == 0;
  std::vector<std::byte> all(root ? result.size_bytes() * static_cast<std::size_t>(n) : 0);
  const int bytes = static_cast<int>(result.size_bytes());
  MPI_Gather(result.bytes().data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, 0, comm);
  std::vector<Array> results;
  for (int r = 0; root && r < n; ++r) {
    const auto begin = all.begin() + static_cast<std::ptrdiff_t>(result.size_bytes()) * r;
    results.push_back(Array::from_bytes(result.dtype(), result.shape(),
                                        {begin, begin + static_cast<std::ptrdiff_t>(bytes)}));
  }
  return results;
}

// Rank 0's `value` on every rank, the waiting ranks sleeping: while rank 0 computes a case's
// reference, they would otherwise spin, and with 8 ranks on 2 cores take its CPU time.
void sleeping_broadcast(int& value, MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibcast(&value, 1, MPI_INT, 0, comm, &request);
  int done = 0;
  for (MPI_Test(&request, &done, MPI_STATUS_IGNORE); !done;
       MPI_Test(&request, &done, MPI_STATUS_IGNORE)) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

using MpiCase = differential::DifferentialCase<MPI_Comm>;
using differential::case_label;
using differential::reference_results;

class Checker {
 public:
  Checker(MPI_Comm comm, std::string sides) : comm_(comm), sides_(std::move(sides)) {}

  // Each rank's result is compared by digest (differential::bits_digest); the results move to
  // rank 0 only when one differs, for the message naming the first differing element. Moving
  // them every time (up to 8 x 64 MiB) took a third of the largest runs.
  void run(const MpiCase& c) {
    const int n = size_of(comm_);
    const int rank = rank_of(comm_);
    const Array own = differential::contribution(c.dtype, c.count, kSeed, rank);
    const Array result = c.run_library(own, comm_);
    const std::uint64_t digest = differential::bits_digest(result);
    std::vector<std::uint64_t> digests(rank == 0 ? static_cast<std::size_t>(n) : 0);
    MPI_Gather(&digest, 1, MPI_UINT64_T, digests.data(), 1, MPI_UINT64_T, 0, comm_);
    std::vector<Array> expected;
    int all_match = 1;
    if (rank == 0) {
      expected = c.run_reference(differential::contributions(c.dtype, c.count, kSeed, n));
      all_match = expected.size() == digests.size();
      for (std::size_t r = 0; all_match && r < digests.size(); ++r) {
        all_match = differential::bits_digest(expected[r]) == digests[r];
      }
    }
    sleeping_broadcast(all_match, comm_);
    std::string difference;
    if (!all_match) {
      const std::vector<Array> results = gather_results(result, comm_);
      if (rank == 0) difference = differential::first_rank_difference(results, expected);
      if (difference.empty()) difference = "the digests of the results differ";
    }
    if (rank == 0) report(c, n, difference);
  }

  int failures() const { return failures_; }
  int cases() const { return cases_; }

 private:
  void report(const MpiCase& c, int n, const std::string& difference) {
    std::cout << (difference.empty() ? "PASS " : "FAIL ") << c.label << " on " << n
              << " ranks: " << sides_ << (difference.empty() ? "" : ": " + difference) << "\n";
    failures_ += difference.empty() ? 0 : 1;
    ++cases_;
  }

  MPI_Comm comm_;
  std::string sides_;
  int failures_ = 0;
  int cases_ = 0;
};

// The data must tell orders apart, or a matching order proves nothing: from 3 ranks on (two
// addends commute), the pinned order's float sums must differ from those of XLA:CPU's rank order
// ((x0 + x1) + x2 ...) or of the right-nested linear order (x0 + (x1 + x2 ...)); an order may
// equal one of the two (recursive doubling on 3 ranks is the rank order), not both.
void check_data_is_order_sensitive(const ReductionOrder& order, int n) {
  if (n < 3 || rank_of(MPI_COMM_WORLD) != 0) return;
  const std::vector<Array> all = differential::contributions(DType::float32, 1000, kSeed, n);
  const Array pinned = all_reduce(all, ReduceOp::sum, order);
  const Array rank_order = all_reduce(all, ReduceOp::sum, ReductionOrder{});
  const Array right_nested =
      all_reduce(all, ReduceOp::sum, ReductionOrder{.algorithm = ReductionAlgorithm::mpi_linear});
  if (pinned.bitwise_equal(rank_order) && pinned.bitwise_equal(right_nested)) {
    throw Error("differential data: " + order.describe() +
                ", xla_cpu and mpi_linear give the "
                "same float32 sums, expected data whose sums depend on the order");
  }
}

void check_all_reduce(Checker& checker, const ReductionOrder& order, int n) {
  check_data_is_order_sensitive(order, n);
  for (DType dtype : kDTypes) {
    for (std::int64_t count : differential::element_counts(n)) {
      checker.run({case_label("all_reduce", dtype, count), dtype, count, all_reduce_sum,
                   [&](const std::vector<Array>& all) {
                     return std::vector<Array>(all.size(), all_reduce(all, ReduceOp::sum, order));
                   }});
    }
  }
}

// Data movement and the linear reduce-scatter, for block sizes from 1 to over 1 Mi elements in
// all (ppermute: a ring shift and a partial permutation, whose non-destinations get zeros).
void check_other_collectives(Checker& checker, int n) {
  const ReductionOrder linear{.algorithm = ReductionAlgorithm::mpi_linear};
  const std::vector<std::pair<int, int>> shift = [n] {
    std::vector<std::pair<int, int>> pairs;
    for (int r = 0; r < n; ++r) pairs.emplace_back(r, (r + 1) % n);
    return pairs;
  }();
  const std::vector<std::pair<int, int>> partial = {{n - 1, 0}, {0, n / 2}};
  for (DType dtype : kDTypes) {
    for (std::int64_t block : {std::int64_t{1}, std::int64_t{7}, std::int64_t{1000},
                               differential::kLargestCount / n + 1}) {
      const std::int64_t count = block * n;
      checker.run(
          {case_label("all_gather", dtype, count), dtype, count, all_gather, [&](const auto& all) {
             return reference_results({.op = CollectiveOp::all_gather, .axes = "i", .tiled = true},
                                      all, linear);
           }});
      checker.run({case_label("reduce_scatter_block (linear)", dtype, count), dtype, count,
                   reduce_scatter_block_sum, [&](const auto& all) {
                     return reference_results(
                         {.op = CollectiveOp::psum_scatter, .axes = "i", .tiled = true}, all,
                         linear);
                   }});
      checker.run(
          {case_label("all_to_all", dtype, count), dtype, count, all_to_all, [&](const auto& all) {
             return reference_results({.op = CollectiveOp::all_to_all, .axes = "i", .tiled = true},
                                      all, linear);
           }});
      for (const auto& perm : {shift, partial}) {
        const std::string kind = perm.size() == static_cast<std::size_t>(n) ? "shift" : "partial";
        checker.run({case_label("ppermute (" + kind + ")", dtype, count), dtype, count,
                     [&](const Array& own, MPI_Comm comm) { return ppermute(own, perm, comm); },
                     [&](const auto& all) {
                       return reference_results(
                           {.op = CollectiveOp::ppermute, .axes = "i", .perm = perm}, all, linear);
                     }});
      }
      checker.run({case_label(fmt::format("broadcast from rank {}", n - 1), dtype, count), dtype,
                   count,
                   [n](const Array& own, MPI_Comm comm) { return broadcast(own, n - 1, comm); },
                   [](const auto& all) { return std::vector<Array>(all.size(), all.back()); }});
    }
  }
}

int run(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "--all-reduce") {
    throw Error(
        "usage: spmd_mpi_differential --all-reduce linear|recursive_doubling|ring|"
        "rabenseifner (under mpirun with the matching MCA parameters)");
  }
  const AllReducePin& pin = pin_named(argv[2]);
  check_pins(pin);
  const ReductionOrder order{.algorithm = pin.order};
  const int n = size_of(MPI_COMM_WORLD);
  if (rank_of(MPI_COMM_WORLD) == 0) {
    std::cout << "Open MPI: " << n << " ranks launched by mpirun, coll_tuned_allreduce_algorithm "
              << pin.coll_tuned_allreduce_algorithm << " (" << pin.name << ")\n";
  }
  Checker all_reduce_checker(
      MPI_COMM_WORLD, "Open MPI " + std::string(pin.name) + " == reference " + order.describe());
  check_all_reduce(all_reduce_checker, order, n);
  // Data movement does not depend on the all-reduce pin: checked once per rank count, in the
  // ring launch, to keep CI short.
  Checker other_checker(MPI_COMM_WORLD, "Open MPI == reference");
  if (pin.order == ReductionAlgorithm::mpi_ring) check_other_collectives(other_checker, n);
  const int failures = all_reduce_checker.failures() + other_checker.failures();
  if (rank_of(MPI_COMM_WORLD) == 0) {
    std::cout << all_reduce_checker.cases() + other_checker.cases() - failures << " passed, "
              << failures << " failed\n";
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace spmd::mpi

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  try {
    const int code = spmd::mpi::run(argc, argv);
    MPI_Finalize();
    return code;
  } catch (const spmd::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    MPI_Abort(MPI_COMM_WORLD, 2);  // other ranks may wait in a collective: end them all
  }
  return 2;
}
