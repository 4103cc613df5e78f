#include "reference/device_threads.h"

#include <fmt/format.h>

#include <exception>
#include <thread>

namespace spmd {
namespace {

class RendezvousContext : public Context {
 public:
  RendezvousContext(const Mesh& mesh, int device, bool check_vma, Rendezvous& rendezvous,
                    const FloatNumerics& numerics)
      : Context(mesh, device, check_vma, numerics), rendezvous_(rendezvous) {}

 protected:
  Array run_collective(const CollectiveCall& call, const Array& x) override {
    return rendezvous_.exchange(device(), call, x);
  }

 private:
  Rendezvous& rendezvous_;
};

// The error to report: the lowest-numbered device that failed on its own; a device released
// from a deadlock only when no device failed on its own.
std::exception_ptr first_error(const std::vector<std::exception_ptr>& errors,
                               const std::vector<bool>& released) {
  for (std::size_t d = 0; d < errors.size(); ++d) {
    if (errors[d] && !released[d]) return errors[d];
  }
  for (const auto& e : errors) {
    if (e) return e;
  }
  return nullptr;
}

}  // namespace

std::vector<Values> run_devices_on_threads(const std::string& backend, const Mesh& mesh,
                                           const std::vector<Values>& inputs,
                                           const DeviceFunction& function, bool check_vma,
                                           Rendezvous& rendezvous, const FloatNumerics& numerics) {
  const auto n = static_cast<std::size_t>(mesh.device_count());
  if (inputs.size() != n) {
    throw Error(
        fmt::format("{}::run: {} input lists for a mesh of {} devices", backend, inputs.size(), n));
  }
  std::vector<Values> outputs(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<bool> released(n, false);
  auto run_device = [&](int device) {
    const auto d = static_cast<std::size_t>(device);
    RendezvousContext context(mesh, device, check_vma, rendezvous, numerics);
    const DeviceScope scope;
    try {
      outputs[d] = function(context, inputs[d]);
      context.check_all_waited();
      rendezvous.device_finished(device);
    } catch (const DeadlockError&) {
      errors[d] = std::current_exception();
      released[d] = true;
      rendezvous.device_failed(device);
    } catch (...) {
      errors[d] = std::current_exception();
      rendezvous.device_failed(device);
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(n);
  try {
    for (std::size_t d = 0; d < n; ++d) threads.emplace_back(run_device, static_cast<int>(d));
  } catch (const std::exception& e) {  // std::system_error, or std::bad_alloc for its state
    // The devices that have no thread fail, which releases those that wait for them; the
    // threads must end before they are destroyed.
    const std::size_t started = threads.size();
    for (std::size_t d = started; d < n; ++d) rendezvous.device_failed(static_cast<int>(d));
    for (auto& t : threads) t.join();
    throw Error(fmt::format("{}::run: the host could not start a thread for each of the {} "
                            "devices (it stopped at device {}: {}); expected fewer devices",
                            backend, n, started, e.what()));
  }
  for (auto& t : threads) t.join();
  if (auto error = first_error(errors, released)) std::rethrow_exception(error);
  return outputs;
}

}  // namespace spmd
