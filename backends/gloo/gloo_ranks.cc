#include "backends/gloo/gloo_ranks.h"

#include <fmt/format.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/transport/tcp/device.h>

#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "reference/error.h"

namespace spmd::gloo_backend {

namespace {

// Runs `per_rank(rank)` on one thread per rank and rethrows the first rank's exception.
template <class PerRank>
void on_rank_threads(int ranks, PerRank per_rank) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        per_rank(rank);
      } catch (...) {
        errors[static_cast<std::size_t>(rank)] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace

std::vector<ContextPtr> connect_gloo_ranks(int ranks) {
  if (ranks < 1) throw Error(fmt::format("Gloo ranks {}, expected >= 1", ranks));
  gloo::rendezvous::HashStore store;
  std::vector<ContextPtr> contexts(static_cast<std::size_t>(ranks));
  on_rank_threads(ranks, [&](int rank) {
    gloo::transport::tcp::attr loopback;
    loopback.hostname = "127.0.0.1";
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, ranks);
    auto device = gloo::transport::tcp::CreateDevice(loopback);
    context->connectFullMesh(store, device);
    contexts[static_cast<std::size_t>(rank)] = std::move(context);
  });
  return contexts;
}

void run_on_gloo_contexts(const std::vector<ContextPtr>& contexts, const RankBody& body) {
  on_rank_threads(static_cast<int>(contexts.size()),
                  [&](int rank) { body(contexts[static_cast<std::size_t>(rank)]); });
}

void run_gloo_ranks(int ranks, const RankBody& body) {
  run_on_gloo_contexts(connect_gloo_ranks(ranks), body);
}

}  // namespace spmd::gloo_backend
