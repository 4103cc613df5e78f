#include "cli/plan_mpi.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>

#include "reference/check.h"

namespace spmd {

std::size_t MpiSearchShare::first() const {
  return static_cast<std::size_t>(split_.share().rank);
}

std::size_t MpiSearchShare::stride() const {
  return static_cast<std::size_t>(split_.share().ranks);
}

namespace {

// The results travel as their bytes: the ranks run the same binary on the same kind of host,
// and a search's hundreds of thousands of results took seconds to write and read as JSON.
// Each: the fixed-size fields as they lie in memory, then the layout error's length and text.
template <typename T>
void put(std::string& bytes, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  bytes.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <typename T>
T take(std::string_view& bytes) {
  static_assert(std::is_trivially_copyable_v<T>);
  SPMD_CHECK(bytes.size() >= sizeof(T), "a gathered plan result is cut short");
  T value;
  std::memcpy(&value, bytes.data(), sizeof(T));
  bytes.remove_prefix(sizeof(T));
  return value;
}

// A result's fixed-size fields, in the order they travel: `visit` is called on each, for the
// writer and the reader alike.
template <typename Result, typename Visit>
void visit_fixed_fields(Result& r, Visit visit) {
  visit(r.index);
  visit(r.status);
  visit(r.candidate);
  visit(r.memory);
  visit(r.step);
  visit(r.range);
  visit(r.tokens_per_s_per_gpu);
  visit(r.model_flops_utilization);
}

void put_result(std::string& bytes, const training::PlanResult& r) {
  visit_fixed_fields(r, [&bytes](const auto& field) { put(bytes, field); });
  put(bytes, r.layout_error.size());
  bytes += r.layout_error;
}

training::PlanResult take_result(std::string_view& bytes) {
  training::PlanResult r;
  visit_fixed_fields(
      r, [&bytes](auto& field) { field = take<std::remove_reference_t<decltype(field)>>(bytes); });
  const auto length = take<std::string::size_type>(bytes);
  SPMD_CHECK(bytes.size() >= length, "a gathered plan result's layout error is cut short");
  r.layout_error = std::string(bytes.substr(0, length));
  bytes.remove_prefix(length);
  return r;
}

void put_optional(std::string& bytes, const std::optional<training::PlanResult>& r) {
  put(bytes, r.has_value());
  if (r) put_result(bytes, *r);
}

std::optional<training::PlanResult> take_optional(std::string_view& bytes) {
  if (!take<bool>(bytes)) return std::nullopt;
  return take_result(bytes);
}

// A summary: its counts, its two named results, then its kept ranked results.
std::string encoded(const training::ShareSummary& summary) {
  std::string bytes;
  put(bytes, summary.ranked_count);
  put(bytes, summary.not_fitting);
  put(bytes, summary.layout_errors);
  put_optional(bytes, summary.smallest_unfitting);
  put_optional(bytes, summary.first_refused);
  put(bytes, summary.ranked.size());
  for (const training::PlanResult& r : summary.ranked) put_result(bytes, r);
  return bytes;
}

training::ShareSummary decoded(std::string_view bytes) {
  training::ShareSummary summary;
  summary.ranked_count = take<std::int64_t>(bytes);
  summary.not_fitting = take<std::int64_t>(bytes);
  summary.layout_errors = take<std::int64_t>(bytes);
  summary.smallest_unfitting = take_optional(bytes);
  summary.first_refused = take_optional(bytes);
  const auto ranked = take<std::size_t>(bytes);
  // Each result takes more bytes than its candidate: a count the bytes cannot hold is not
  // reserved for (take_result's check names the cut).
  summary.ranked.reserve(std::min(ranked, bytes.size() / sizeof(training::Candidate)));
  for (std::size_t i = 0; i < ranked; ++i) summary.ranked.push_back(take_result(bytes));
  SPMD_CHECK(bytes.empty(), "a gathered plan summary has bytes after its last result");
  return summary;
}

}  // namespace

std::optional<training::ShareSummary> MpiSearchShare::gather(
    training::ShareSummary local, const training::KeptResults& kept) const {
  // Rank 0 keeps its own summary as it is and sends nothing.
  const bool printing = split_.share().rank == 0;
  const std::vector<std::string> parts =
      split_.gather_on_rank_zero(printing ? std::string() : encoded(local));
  if (!printing) return std::nullopt;
  std::vector<training::ShareSummary> shares;
  shares.push_back(std::move(local));
  for (std::size_t rank = 1; rank < parts.size(); ++rank) shares.push_back(decoded(parts[rank]));
  return training::combine_shares(std::move(shares), kept);
}

unsigned default_threads_per_rank() {
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  const char* local_ranks = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const int ranks = local_ranks ? std::atoi(local_ranks) : 1;
  return std::max(1U, cores / static_cast<unsigned>(std::max(1, ranks)));
}

}  // namespace spmd
