#include "cli/mpi_conform.h"

#include <mpi.h>

#include <algorithm>
#include <optional>
#include <string>

#include "backends/backend_registry.h"
#include "backends/mpi/mpi_collectives.h"
#include "backends/mpi/mpi_session.h"
#include "cli/conform_backends.h"
#include "reference/check.h"
#include "reference/error.h"

namespace spmd {
namespace {

// The order to pin: --order, or the backend's native order (the registry's).
ReductionAlgorithm mpi_order(const ConformOptions& options) {
  if (!options.order.empty()) return reduction_algorithm_from_name(options.order);
  register_conform_backends();
  return backend_native_order("mpi")->algorithm;
}

}  // namespace

int run_mpi_conform_command(const ConformOptions& options, std::ostream& out, std::ostream& err) {
  // A bad order or conflicting pins are reported after MPI_Init, once, by rank 0.
  std::optional<std::string> pin_error;
  try {
    mpi::pin_coll_tuned(mpi::order_pin(mpi_order(options)));
  } catch (const Error& e) {
    pin_error = e.what();
  }
  mpi::MpiSession session;
  const bool prints = mpi::rank_of(MPI_COMM_WORLD) == 0;
  std::ostream discarded(nullptr);  // no buffer: what other ranks would print goes nowhere
  int code = 0;
  try {
    if (pin_error) throw Error(*pin_error);
    code = run_conform_command(options, prints ? out : discarded);
  } catch (const Error& e) {
    if (prints) err << "error: " << e.what() << "\n";
    code = 2;
  } catch (const InternalError& e) {
    if (prints) err << "spmdsim: internal error: " << e.what() << "\n";
    code = 3;
  }
  // Every process ran the same program, so the codes agree; the maximum makes sure of it.
  int agreed_code = code;
  MPI_Allreduce(&code, &agreed_code, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return agreed_code;
}

}  // namespace spmd
