#include "backends/mpi/mpi_work_split.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "reference/error.h"

namespace spmd::mpi {
namespace {

void check(int code, const char* call) {
  if (code != MPI_SUCCESS) throw Error(fmt::format("{} failed with MPI error {}", call, code));
}

// Where every rank of the job runs on this host (Open MPI's mpirun says so before MPI starts:
// OMPI_COMM_WORLD_LOCAL_SIZE equals OMPI_COMM_WORLD_SIZE) and nobody chose a point-to-point
// layer, ob1 over shared memory: Open MPI's default choice, UCX, opens and probes the network
// devices first, which took 0.2 s of a 0.35 s two-rank plan on the development machine
// (docs/plan.md) and buys nothing between processes of one host. Across hosts, and wherever
// the user or the launcher set OMPI_MCA_pml, Open MPI chooses as it always does.
void prefer_shared_memory_on_one_host() {
  const char* ranks = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* local_ranks = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (ranks == nullptr || local_ranks == nullptr || std::string_view(ranks) != local_ranks) return;
  setenv("OMPI_MCA_pml", "ob1", /*overwrite=*/0);
}

}  // namespace

bool started_by_process_manager() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

std::int64_t RankShare::begin(std::int64_t items) const {
  const std::int64_t base = items / ranks;
  const std::int64_t extra = items % ranks;
  return rank * base + std::min<std::int64_t>(rank, extra);
}

std::int64_t RankShare::end(std::int64_t items) const {
  return begin(items) + items / ranks + (rank < items % ranks ? 1 : 0);
}

WorkSplit::WorkSplit() {
  prefer_shared_memory_on_one_host();
  int provided = MPI_THREAD_SINGLE;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  check(MPI_Comm_rank(MPI_COMM_WORLD, &share_.rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &share_.ranks), "MPI_Comm_size");
}

WorkSplit::~WorkSplit() { MPI_Finalize(); }

std::vector<std::string> WorkSplit::gather_on_rank_zero(const std::string& local) const {
  if (local.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw Error(fmt::format("rank {}'s results are {} bytes, expected at most {} (one MPI "
                            "message)",
                            share_.rank, local.size(), std::numeric_limits<int>::max()));
  }
  const int local_bytes = static_cast<int>(local.size());
  std::vector<int> bytes(share_.rank == 0 ? share_.ranks : 0);
  check(MPI_Gather(&local_bytes, 1, MPI_INT, bytes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD),
        "MPI_Gather");
  std::vector<int> offsets(bytes.size());
  std::int64_t total = 0;
  for (std::size_t r = 0; r < bytes.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += bytes[r];
    if (total > std::numeric_limits<int>::max()) {
      throw Error(fmt::format("the gathered results are over {} bytes, expected at most {} (one "
                              "MPI message); run fewer layouts per search",
                              total, std::numeric_limits<int>::max()));
    }
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  check(MPI_Gatherv(local.data(), local_bytes, MPI_CHAR, all.data(), bytes.data(),
                    offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::string> parts;
  for (std::size_t r = 0; r < bytes.size(); ++r) {
    parts.push_back(all.substr(static_cast<std::size_t>(offsets[r]),
                               static_cast<std::size_t>(bytes[r])));
  }
  return parts;
}

}  // namespace spmd::mpi
