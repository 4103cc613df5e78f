#include "cli/cases_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "conformance/order_case_data.h"
#include "conformance/order_case_files.h"
#include "conformance/order_field.h"
#include "reference/error.h"

namespace spmd {

namespace {
// The cases' data holds a few pipeline units per rank: larger chunks than real libraries use
// (NCCL's and Gloo's are at most a few MiB) would only make files nobody can hold.
constexpr std::int64_t kMostChunkBytes = std::int64_t{16} << 20;
}  // namespace

void add_cases_flags(CLI::App& command, CasesOptions& options) {
  command
      .add_option("--order", options.order,
                  "Reduction order whose cases to write (xla_cpu, nccl_ring, gloo_ring, ...), or "
                  "all for the public set")
      ->required();
  command.add_option("--out", options.out_folder, "Folder for the cases (created if missing)")
      ->required();
  command.add_option("--seed", options.seed, "Seed of the data search")->capture_default_str();
  command
      .add_option("--ring", options.ring,
                  "Ring order (group ranks), e.g. 0,2,1,3; sets the group size")
      ->delimiter(',');
  command
      .add_option("--nccl-chunk-bytes", options.nccl_chunk_bytes,
                  "NCCL Simple chunk in bytes, up to 16 MiB (default: the public set's 64)")
      ->check(CLI::Range(std::int64_t{1}, kMostChunkBytes));
  command
      .add_option("--gloo-max-segment-bytes", options.gloo_max_segment_bytes,
                  "Gloo ring maxSegmentSize in bytes, up to 16 MiB (default: the public set's 64)")
      ->check(CLI::Range(std::int64_t{1}, kMostChunkBytes));
  command
      .add_option("--torus-dims", options.torus_dims, "Torus dims, e.g. 2,3; sets the group size")
      ->delimiter(',');
}

namespace {

using conformance::OrderCaseShape;

struct Parameter {
  std::string_view flag;
  std::string_view field;
  bool given;
};

// Each given parameter must be one the order reads; with --order all none may be given.
void check_parameters(const CasesOptions& options, const std::vector<ReductionAlgorithm>& orders) {
  const Parameter parameters[] = {
      {"--ring", "ring", !options.ring.empty()},
      {"--nccl-chunk-bytes", "nccl_chunk_bytes", options.nccl_chunk_bytes > 0},
      {"--gloo-max-segment-bytes", "gloo_max_segment_bytes", options.gloo_max_segment_bytes > 0},
      {"--torus-dims", "torus_dims", !options.torus_dims.empty()}};
  for (const Parameter& parameter : parameters) {
    if (!parameter.given) continue;
    if (orders.size() != 1) {
      throw Error(fmt::format("{} with --order all, expected one order", parameter.flag));
    }
    const std::vector<std::string_view> used = conformance::order_parameters_used(orders[0]);
    if (std::find(used.begin(), used.end(), parameter.field) == used.end()) {
      throw Error(fmt::format("{} with --order {}, which does not use it", parameter.flag,
                              reduction_algorithm_name(orders[0])));
    }
  }
}

// The group size the ring or torus dims fix, or 0 when neither is given.
int fixed_group_size(const CasesOptions& options) {
  int product = 1;
  for (int d : options.torus_dims) product *= d;
  const int ring_size = static_cast<int>(options.ring.size());
  if (!options.ring.empty() && !options.torus_dims.empty() && ring_size != product) {
    throw Error(fmt::format("--ring has {} ranks and --torus-dims cover {}, expected the same",
                            ring_size, product));
  }
  if (!options.ring.empty()) return ring_size;
  return options.torus_dims.empty() ? 0 : product;
}

std::vector<OrderCaseShape> shapes_for(ReductionAlgorithm algorithm, int group_size) {
  if (group_size == 0) return conformance::public_shapes(algorithm);
  using conformance::SizeClass;
  return {{group_size, DType::float32, SizeClass::below},
          {group_size, DType::bfloat16, SizeClass::at},
          {group_size, DType::float16, SizeClass::above}};
}

ReductionOrder order_for(const CasesOptions& options, ReductionAlgorithm algorithm,
                         int group_size) {
  ReductionOrder order = conformance::public_order(algorithm, group_size);
  if (!options.ring.empty()) order.ring = options.ring;
  if (!options.torus_dims.empty()) order.torus_dims = options.torus_dims;
  if (options.nccl_chunk_bytes > 0) order.nccl_chunk_bytes = options.nccl_chunk_bytes;
  if (options.gloo_max_segment_bytes > 0) {
    order.gloo_max_segment_bytes = options.gloo_max_segment_bytes;
  }
  return order;
}

std::string skipped_text(const conformance::WrongOrders& wrong) {
  std::string text;
  for (const auto& skipped : wrong.skipped) {
    text += fmt::format("{}{} ({})", text.empty() ? "" : ", ", skipped.name, skipped.reason);
  }
  return text;
}

}  // namespace

int run_cases_command(const CasesOptions& options, std::ostream& out) {
  std::vector<ReductionAlgorithm> orders;
  if (options.order == "all") {  // every order with a defined fold: no data tell in_switch apart
    for (ReductionAlgorithm algorithm : kAllReductionAlgorithms) {
      if (!order_is_unspecified(algorithm)) orders.push_back(algorithm);
    }
  } else {
    orders.push_back(reduction_algorithm_from_name(options.order));
    if (order_is_unspecified(orders.back())) {
      throw Error(fmt::format(
          "--order {}: its order is unspecified, so no data tell it apart from another order; "
          "expected an order with a defined fold",
          options.order));
    }
  }
  check_parameters(options, orders);
  const int group_size = fixed_group_size(options);
  std::filesystem::create_directories(options.out_folder);
  int written = 0;
  for (ReductionAlgorithm algorithm : orders) {
    for (const OrderCaseShape& shape : shapes_for(algorithm, group_size)) {
      const ReductionOrder order = order_for(options, algorithm, shape.group_size);
      const conformance::OrderCase c = conformance::make_order_case(order, shape, options.seed);
      conformance::write_order_case(c, options.out_folder);
      out << c.name << ": " << c.wrong.orders.size() << " wrong orders told apart";
      if (!c.wrong.skipped.empty()) out << "; no data tells apart " << skipped_text(c.wrong);
      out << "\n";
      ++written;
    }
  }
  out << written << " cases written to " << options.out_folder << "\n";
  return 0;
}

}  // namespace spmd
