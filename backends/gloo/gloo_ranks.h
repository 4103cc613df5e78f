#pragma once
// Gloo ranks as threads of one process, as Gloo's own tests do it
// (docs/reduction-orders.md#ranks-in-one-process): one shared HashStore, one TCP device on
// loopback per rank, connectFullMesh.

#include <gloo/context.h>

#include <functional>
#include <memory>

namespace spmd::gloo_backend {

using RankBody = std::function<void(const std::shared_ptr<gloo::Context>& context)>;

// Runs `body` once per rank, each on its own thread with its own connected context, and returns
// when all are done. Every context stays alive until every rank has finished (tearing one down
// early breaks its peers' connections). The first rank's exception, if any, is rethrown.
void run_gloo_ranks(int ranks, const RankBody& body);

}  // namespace spmd::gloo_backend
