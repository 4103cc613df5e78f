#include "cli/plan_mpi.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
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

// Rank 0 needs every result's status (the counts), every ranked result whole, and of the rest
// only what require_ranked can name: the smallest layout that does not fit and the first one
// refused. Each rank sends those whole and its other unranked results as their index and
// status: most of a search does not fit, and sending them whole cost more than it saved.
enum class Record : std::uint8_t { whole, status_only };

std::vector<bool> kept_whole(const std::vector<training::PlanResult>& results) {
  std::vector<bool> whole(results.size(), false);
  for (std::size_t i = 0; i < results.size(); ++i) {
    whole[i] = results[i].status == training::PlanStatus::ranked;
  }
  const training::NamedUnranked named = training::named_unranked(results);
  for (const training::PlanResult* r : {named.smallest_unfitting, named.first_refused}) {
    if (r != nullptr) whole[static_cast<std::size_t>(r - results.data())] = true;
  }
  return whole;
}

std::string encoded(const std::vector<training::PlanResult>& results) {
  const std::vector<bool> whole = kept_whole(results);
  std::string bytes;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const training::PlanResult& r = results[i];
    put(bytes, whole[i] ? Record::whole : Record::status_only);
    put(bytes, r.index);
    put(bytes, r.status);
    if (!whole[i]) continue;
    put(bytes, r.candidate);
    put(bytes, r.memory);
    put(bytes, r.step);
    put(bytes, r.range);
    put(bytes, r.tokens_per_s_per_gpu);
    put(bytes, r.model_flops_utilization);
    put(bytes, r.layout_error.size());
    bytes += r.layout_error;
  }
  return bytes;
}

void decode_into(std::string_view bytes, std::vector<training::PlanResult>& results) {
  while (!bytes.empty()) {
    training::PlanResult r;
    const auto record = take<Record>(bytes);
    r.index = take<std::int64_t>(bytes);
    r.status = take<training::PlanStatus>(bytes);
    if (record == Record::status_only) {
      // Counted, never named: no memory could be smaller than a named one's.
      r.memory.weights_bytes = std::numeric_limits<double>::infinity();
      results.push_back(std::move(r));
      continue;
    }
    r.candidate = take<training::Candidate>(bytes);
    r.memory = take<training::TrainingMemory>(bytes);
    r.step = take<training::StepTime>(bytes);
    r.range = take<training::StepRange>(bytes);
    r.tokens_per_s_per_gpu = take<double>(bytes);
    r.model_flops_utilization = take<double>(bytes);
    const auto length = take<std::string::size_type>(bytes);
    SPMD_CHECK(bytes.size() >= length, "a gathered plan result's layout error is cut short");
    r.layout_error = std::string(bytes.substr(0, length));
    bytes.remove_prefix(length);
    results.push_back(std::move(r));
  }
}

}  // namespace

std::optional<std::vector<training::PlanResult>> MpiSearchShare::gather(
    std::vector<training::PlanResult> local) const {
  const std::vector<std::string> parts = split_.gather_on_rank_zero(encoded(local));
  if (split_.share().rank != 0) return std::nullopt;
  std::vector<training::PlanResult> all;
  for (const std::string& part : parts) decode_into(part, all);
  return all;
}

unsigned default_threads_per_rank() {
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  const char* local_ranks = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const int ranks = local_ranks ? std::atoi(local_ranks) : 1;
  return std::max(1U, cores / static_cast<unsigned>(std::max(1, ranks)));
}

}  // namespace spmd
