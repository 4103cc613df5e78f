#include "backends/mpi/mpi_session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <cstdlib>

#include "backends/mpi/mpi_reduction.h"
#include "reference/error.h"

namespace spmd::mpi {

void pin_coll_tuned(const OrderPin& pin) {
  const std::vector<McaParameter> parameters = mca_parameters(pin);
  const std::vector<std::string> conflicts = conflicting_mca_parameters(parameters);
  if (!conflicts.empty()) {
    throw Error(fmt::format("--order {} with --backend mpi: MCA parameter {}; leave them to "
                            "spmdsim (it pins them) or set them as expected",
                            reduction_algorithm_name(pin.order), fmt::join(conflicts, ", ")));
  }
  for (const McaParameter& parameter : parameters) {
    setenv(("OMPI_MCA_" + parameter.name).c_str(), fmt::format("{}", parameter.value).c_str(),
           /*overwrite=*/1);
  }
}

void check_coll_tuned_pinned(const OrderPin& pin) {
  for (const McaParameter& parameter : mca_parameters(pin)) {
    const char* value = std::getenv(("OMPI_MCA_" + parameter.name).c_str());
    if (value == nullptr || value != fmt::format("{}", parameter.value)) {
      throw Error(fmt::format("--backend mpi in {} order: MCA parameter {} is {}, expected {}",
                              reduction_algorithm_name(pin.order), parameter.name,
                              value ? value : "unset", parameter.value));
    }
  }
}

MpiSession::MpiSession() {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw Error(fmt::format("MPI_Init_thread provided thread level {}, expected at least "
                            "MPI_THREAD_SERIALIZED ({})",
                            provided, MPI_THREAD_SERIALIZED));
  }
}

MpiSession::~MpiSession() {
  free_reductions();
  MPI_Finalize();
}

}  // namespace spmd::mpi
