#include "backends/mpi/mpi_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "backends/backend_registry.h"
#include "backends/library_backend.h"
#include "backends/mpi/mpi_pins.h"
#include "backends/mpi/mpi_session.h"
#include "reference/check.h"
#include "reference/error.h"

namespace spmd::mpi {
namespace {

std::optional<int> group_rank_of(const std::vector<int>& devices, int device) {
  const auto found = std::find(devices.begin(), devices.end(), device);
  if (found == devices.end()) return std::nullopt;
  return static_cast<int>(found - devices.begin());
}

// Checked in every process before any MPI call, so that a buffer too large for MPI's int counts
// is the same error everywhere rather than an error in the members while the others wait.
void check_mpi_count(std::int64_t bytes, const char* what) {
  if (bytes > std::int64_t{1} << 30) {
    throw Error(fmt::format("--backend mpi: {} of {} bytes, expected at most 2^30", what, bytes));
  }
}

}  // namespace

MpiGroupCollectives::~MpiGroupCollectives() {
  for (auto& [devices, comm] : communicators_) {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
}

MPI_Comm MpiGroupCollectives::communicator(const std::vector<int>& devices) {
  if (auto found = communicators_.find(devices); found != communicators_.end()) {
    return found->second;
  }
  const MPI_Comm comm = split(MPI_COMM_WORLD, group_rank_of(devices, rank_of(MPI_COMM_WORLD)));
  communicators_.emplace(devices, comm);
  return comm;
}

// Runs `call(own buffer, group communicator)` in the member process of each rank, then shares
// the members' results (`result_elements` each) so that every process returns all of them.
template <class Call>
std::vector<Array> MpiGroupCollectives::on_members(const GroupBuffers& group,
                                                   std::int64_t result_elements, Call call) {
  const DType dtype = group.inputs.front().dtype();
  const auto result_bytes =
      result_elements * static_cast<std::int64_t>(dtype_size_bytes(dtype));
  check_mpi_count(static_cast<std::int64_t>(group.inputs.front().size_bytes()), "a buffer");
  check_mpi_count(result_bytes * group.size(), "the group's results");
  const int world_rank = rank_of(MPI_COMM_WORLD);
  const MPI_Comm comm = communicator(group.devices);
  std::optional<Array> own_result;
  if (const auto rank = group_rank_of(group.devices, world_rank)) {
    own_result = call(group.inputs[static_cast<std::size_t>(*rank)], comm);
    SPMD_CHECK(own_result->size() == result_elements,
               fmt::format("--backend mpi: MPI returned {} elements, expected {}",
                           own_result->size(), result_elements));
  }
  std::vector<int> bytes_per_world_rank(static_cast<std::size_t>(size_of(MPI_COMM_WORLD)), 0);
  for (int device : group.devices) {
    bytes_per_world_rank[static_cast<std::size_t>(device)] = static_cast<int>(result_bytes);
  }
  const std::vector<std::byte> all = all_gather_bytes(
      own_result ? own_result->bytes() : std::span<const std::byte>{}, bytes_per_world_rank,
      MPI_COMM_WORLD);
  // Allgatherv lays the ranks' bytes end to end in world rank order.
  std::vector<std::int64_t> offset_of_world_rank(bytes_per_world_rank.size() + 1, 0);
  for (std::size_t rank = 0; rank < bytes_per_world_rank.size(); ++rank) {
    offset_of_world_rank[rank + 1] = offset_of_world_rank[rank] + bytes_per_world_rank[rank];
  }
  std::vector<Array> results;
  for (int device : group.devices) {
    const auto begin =
        all.begin() + static_cast<std::ptrdiff_t>(offset_of_world_rank[static_cast<std::size_t>(device)]);
    results.push_back(Array::from_bytes(dtype, {result_elements},
                                        {begin, begin + static_cast<std::ptrdiff_t>(result_bytes)}));
  }
  return results;
}

std::vector<Array> MpiGroupCollectives::all_reduce(const GroupBuffers& group, ReduceOp op) {
  // Open MPI's ring keeps its own data on the left of each step, except below one element per
  // rank, where it falls back to recursive doubling.
  const std::int64_t count = group.inputs.front().size();
  const LeftOperand left =
      ring_all_reduce_ && count >= group.size() ? LeftOperand::own : LeftOperand::received;
  return on_members(group, count, [op, left](const Array& own, MPI_Comm comm) {
    return mpi::all_reduce(own, op, comm, left);
  });
}

std::vector<Array> MpiGroupCollectives::all_gather(const GroupBuffers& group) {
  return on_members(group, group.inputs.front().size() * group.size(),
                    [](const Array& own, MPI_Comm comm) { return mpi::all_gather(own, comm); });
}

std::vector<Array> MpiGroupCollectives::reduce_scatter(const GroupBuffers& group, ReduceOp op) {
  return on_members(group, group.inputs.front().size() / group.size(),
                    [this, op](const Array& own, MPI_Comm comm) {
                      return mpi::reduce_scatter(own, op, reduce_scatter_call_, comm);
                    });
}

std::vector<Array> MpiGroupCollectives::all_to_all(const GroupBuffers& group) {
  return on_members(group, group.inputs.front().size(),
                    [](const Array& own, MPI_Comm comm) { return mpi::all_to_all(own, comm); });
}

std::vector<Array> MpiGroupCollectives::permute(const GroupBuffers& group,
                                                const std::vector<std::pair<int, int>>& pairs) {
  return on_members(group, group.inputs.front().size(), [&pairs](const Array& own, MPI_Comm comm) {
    return mpi::ppermute(own, pairs, comm);
  });
}

void register_mpi_backend() {
  const ReductionOrder native{.algorithm = ReductionAlgorithm::mpi_ring};
  register_backend(
      "mpi",
      [](const ReductionOrder& order, int device_count) -> std::unique_ptr<Backend> {
        int initialized = 0;
        MPI_Initialized(&initialized);
        if (!initialized) {
          throw Error(
              "--backend mpi: MPI is not initialized, expected the run to start from `spmdsim "
              "conform --backend mpi` (under mpirun -np N)");
        }
        const OrderPin& pin = order_pin(order.algorithm);
        check_coll_tuned_pinned(pin);
        order.check_device_ring(device_count);
        const int world_size = size_of(MPI_COMM_WORLD);
        if (device_count > world_size) {
          throw Error(fmt::format(
              "--backend mpi: the case needs {} devices, mpirun started {} ranks; expected "
              "mpirun -np {} or more",
              device_count, world_size, device_count));
        }
        return std::make_unique<LibraryBackend>(
            "mpi", device_count, std::make_shared<MpiGroupCollectives>(
                pin.reduce_scatter_call, order.algorithm == ReductionAlgorithm::mpi_ring));
      },
      native);
}

}  // namespace spmd::mpi
