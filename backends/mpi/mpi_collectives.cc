#include "backends/mpi/mpi_collectives.h"

#include <fmt/format.h>

#include <string>

#include "reference/error.h"

namespace spmd::mpi {
namespace {

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) {
    throw Error(fmt::format("{} returned MPI error {}, expected MPI_SUCCESS", call, status));
  }
}

int element_count_int(std::int64_t count) {
  if (count > std::int64_t{1} << 30) {
    throw Error(fmt::format("MPI element count {}, expected at most 2^30", count));
  }
  return static_cast<int>(count);
}

std::int64_t block_elements(const Array& x, MPI_Comm comm, const char* what) {
  const int n = size_of(comm);
  if (x.size() % n != 0) {
    throw Error(fmt::format("{} of {} elements, expected a multiple of the group size {}", what,
                            x.size(), n));
  }
  return x.size() / n;
}

}  // namespace

MPI_Datatype datatype_of(DType dtype) {
  switch (dtype) {
    case DType::float64: return MPI_DOUBLE;
    case DType::float32: return MPI_FLOAT;
    case DType::int64: return MPI_INT64_T;
    case DType::int32: return MPI_INT32_T;
    case DType::int8: return MPI_INT8_T;
    case DType::uint8: return MPI_UINT8_T;
    default: break;
  }
  throw Error("MPI dtype " + std::string(dtype_name(dtype)) +
              ", expected one of float64, float32, int64, int32, int8, uint8");
}

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

Array all_reduce_sum(const Array& x, MPI_Comm comm) {
  Array out(x.dtype(), x.shape());
  check(MPI_Allreduce(x.bytes().data(), out.mutable_bytes().data(), element_count_int(x.size()),
                      datatype_of(x.dtype()), MPI_SUM, comm),
        "MPI_Allreduce");
  return out;
}

Array all_gather(const Array& x, MPI_Comm comm) {
  Array out(x.dtype(), {x.size() * size_of(comm)});
  const int count = element_count_int(x.size());
  check(MPI_Allgather(x.bytes().data(), count, datatype_of(x.dtype()), out.mutable_bytes().data(),
                      count, datatype_of(x.dtype()), comm),
        "MPI_Allgather");
  return out;
}

Array reduce_scatter_block_sum(const Array& x, MPI_Comm comm) {
  const std::int64_t block = block_elements(x, comm, "reduce_scatter_block");
  Array out(x.dtype(), {block});
  check(MPI_Reduce_scatter_block(x.bytes().data(), out.mutable_bytes().data(),
                                 element_count_int(block), datatype_of(x.dtype()), MPI_SUM, comm),
        "MPI_Reduce_scatter_block");
  return out;
}

Array all_to_all(const Array& x, MPI_Comm comm) {
  const int block = element_count_int(block_elements(x, comm, "all_to_all"));
  Array out(x.dtype(), x.shape());
  check(MPI_Alltoall(x.bytes().data(), block, datatype_of(x.dtype()), out.mutable_bytes().data(),
                     block, datatype_of(x.dtype()), comm),
        "MPI_Alltoall");
  return out;
}

Array ppermute(const Array& x, const std::vector<std::pair<int, int>>& perm, MPI_Comm comm) {
  const int rank = rank_of(comm);
  const int count = element_count_int(x.size());
  Array out(x.dtype(), x.shape());  // zeros unless a source sends here
  std::vector<MPI_Request> requests;
  constexpr int kTag = 5;
  for (const auto& [source, destination] : perm) {
    MPI_Request request;
    if (destination == rank) {
      check(MPI_Irecv(out.mutable_bytes().data(), count, datatype_of(x.dtype()), source, kTag, comm,
                      &request),
            "MPI_Irecv");
      requests.push_back(request);
    }
    if (source == rank) {
      check(MPI_Isend(x.bytes().data(), count, datatype_of(x.dtype()), destination, kTag, comm,
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
  check(MPI_Bcast(out.mutable_bytes().data(), element_count_int(x.size()), datatype_of(x.dtype()),
                  root, comm),
        "MPI_Bcast");
  return out;
}

}  // namespace spmd::mpi
