#include "backends/gloo/gloo_ranks.h"

#include <fmt/format.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/transport/tcp/device.h>

#include <barrier>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "reference/error.h"

namespace spmd::gloo_backend {

void run_gloo_ranks(int ranks, const RankBody& body) {
  if (ranks < 1) throw Error(fmt::format("Gloo ranks {}, expected >= 1", ranks));
  gloo::rendezvous::HashStore store;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks));
  std::barrier all_done(ranks);
  auto run_rank = [&](int rank) {
    try {
      gloo::transport::tcp::attr loopback;
      loopback.hostname = "127.0.0.1";
      auto device = gloo::transport::tcp::CreateDevice(loopback);
      auto context = std::make_shared<gloo::rendezvous::Context>(rank, ranks);
      context->connectFullMesh(store, device);
      try {
        body(context);
      } catch (...) {
        errors[static_cast<std::size_t>(rank)] = std::current_exception();
      }
      all_done.arrive_and_wait();  // keep this context alive until every rank is done
    } catch (...) {
      errors[static_cast<std::size_t>(rank)] = std::current_exception();
      all_done.arrive_and_drop();
    }
  };
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) threads.emplace_back(run_rank, rank);
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace spmd::gloo_backend
