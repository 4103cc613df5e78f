#include "backends/mpi/mpi_collectives.h"

#include <fmt/format.h>

#include <string>

#include "backends/mpi/mpi_reduction.h"
#include "reference/error.h"

namespace spmd::mpi {
namespace {

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) {
    throw Error(fmt::format("{} returned MPI error {}, expected MPI_SUCCESS", call, status));
  }
}

int count_int(std::int64_t count) {
  if (count > std::int64_t{1} << 30) {
    throw Error(fmt::format("MPI count {}, expected at most 2^30", count));
  }
  return static_cast<int>(count);
}

int byte_count(const Array& x) { return count_int(static_cast<std::int64_t>(x.size_bytes())); }

std::int64_t block_elements(const Array& x, MPI_Comm comm, const char* what) {
  const int n = size_of(comm);
  if (x.size() % n != 0) {
    throw Error(fmt::format("{} of {} elements, expected a multiple of the group size {}", what,
                            x.size(), n));
  }
  return x.size() / n;
}

Array own_block(const Array& x, std::int64_t block, int rank) {
  const auto block_bytes = static_cast<std::size_t>(block) * dtype_size_bytes(x.dtype());
  const auto begin = x.bytes().begin() + static_cast<std::ptrdiff_t>(block_bytes) * rank;
  return Array::from_bytes(x.dtype(), {block},
                           {begin, begin + static_cast<std::ptrdiff_t>(block_bytes)});
}

}  // namespace

int rank_of(MPI_Comm comm) {
  int rank = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  return rank;
}

int size_of(MPI_Comm comm) {
  int size = 0;
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  return size;
}

Array all_reduce(const Array& x, ReduceOp op, MPI_Comm comm, LeftOperand left) {
  const Reduction reduction = reduction_for(x.dtype(), op, left);
  Array out(x.dtype(), x.shape());
  check(MPI_Allreduce(x.bytes().data(), out.mutable_bytes().data(), count_int(x.size()),
                      reduction.datatype, reduction.op, comm),
        "MPI_Allreduce");
  return out;
}

Array reduce_scatter(const Array& x, ReduceOp op, ReduceScatterCall call, MPI_Comm comm) {
  const std::int64_t block = block_elements(x, comm, "reduce_scatter");
  const Reduction reduction = reduction_for(x.dtype(), op);
  Array out(x.dtype(), {block});
  switch (call) {
    case ReduceScatterCall::reduce_scatter_block:
      check(MPI_Reduce_scatter_block(x.bytes().data(), out.mutable_bytes().data(),
                                     count_int(block), reduction.datatype, reduction.op, comm),
            "MPI_Reduce_scatter_block");
      return out;
    case ReduceScatterCall::reduce_scatter: {
      const std::vector<int> counts(static_cast<std::size_t>(size_of(comm)), count_int(block));
      check(MPI_Reduce_scatter(x.bytes().data(), out.mutable_bytes().data(), counts.data(),
                               reduction.datatype, reduction.op, comm),
            "MPI_Reduce_scatter");
      return out;
    }
    case ReduceScatterCall::all_reduce_own_block:
      return own_block(all_reduce(x, op, comm), block, rank_of(comm));
  }
  throw Error("reduce_scatter: unknown ReduceScatterCall");
}

Array all_gather(const Array& x, MPI_Comm comm) {
  Array out(x.dtype(), {x.size() * size_of(comm)});
  check(MPI_Allgather(x.bytes().data(), byte_count(x), MPI_BYTE, out.mutable_bytes().data(),
                      byte_count(x), MPI_BYTE, comm),
        "MPI_Allgather");
  return out;
}

Array all_to_all(const Array& x, MPI_Comm comm) {
  const auto block = block_elements(x, comm, "all_to_all");
  const int block_bytes =
      count_int(block * static_cast<std::int64_t>(dtype_size_bytes(x.dtype())));
  Array out(x.dtype(), x.shape());
  check(MPI_Alltoall(x.bytes().data(), block_bytes, MPI_BYTE, out.mutable_bytes().data(),
                     block_bytes, MPI_BYTE, comm),
        "MPI_Alltoall");
  return out;
}

Array ppermute(const Array& x, const std::vector<std::pair<int, int>>& perm, MPI_Comm comm) {
  const int rank = rank_of(comm);
  Array out(x.dtype(), x.shape());  // zeros unless a source sends here
  std::vector<MPI_Request> requests;
  constexpr int kTag = 5;
  for (const auto& [source, destination] : perm) {
    MPI_Request request;
    if (destination == rank) {
      check(MPI_Irecv(out.mutable_bytes().data(), byte_count(x), MPI_BYTE, source, kTag, comm,
                      &request),
            "MPI_Irecv");
      requests.push_back(request);
    }
    if (source == rank) {
      check(MPI_Isend(x.bytes().data(), byte_count(x), MPI_BYTE, destination, kTag, comm,
                      &request),
            "MPI_Isend");
      requests.push_back(request);
    }
  }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall");
  return out;
}

Array broadcast(const Array& x, int root, MPI_Comm comm) {
  Array out = x;
  check(MPI_Bcast(out.mutable_bytes().data(), byte_count(x), MPI_BYTE, root, comm), "MPI_Bcast");
  return out;
}

std::vector<std::byte> all_gather_bytes(std::span<const std::byte> own,
                                        const std::vector<int>& bytes_per_rank, MPI_Comm comm) {
  if (bytes_per_rank.size() != static_cast<std::size_t>(size_of(comm))) {
    throw Error(fmt::format("all_gather_bytes: {} byte counts, expected one per rank ({})",
                            bytes_per_rank.size(), size_of(comm)));
  }
  std::vector<int> displacements;
  std::int64_t total_bytes = 0;
  for (int bytes : bytes_per_rank) {
    displacements.push_back(count_int(total_bytes));
    total_bytes += bytes;
  }
  std::vector<std::byte> all(static_cast<std::size_t>(count_int(total_bytes)));
  check(MPI_Allgatherv(own.data(), count_int(static_cast<std::int64_t>(own.size())), MPI_BYTE,
                       all.data(), bytes_per_rank.data(), displacements.data(), MPI_BYTE, comm),
        "MPI_Allgatherv");
  return all;
}

MPI_Comm split(MPI_Comm comm, std::optional<int> key) {
  MPI_Comm part = MPI_COMM_NULL;
  check(MPI_Comm_split(comm, key ? 0 : MPI_UNDEFINED, key.value_or(0), &part), "MPI_Comm_split");
  return part;
}

}  // namespace spmd::mpi
