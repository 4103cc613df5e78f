#pragma once
// Gloo ranks as threads of one process, as Gloo's own tests do it
// (docs/reduction-orders.md#ranks-in-one-process): one shared HashStore, one TCP device on
// loopback per rank, connectFullMesh.

#include <gloo/context.h>

#include <functional>
#include <memory>
#include <vector>

namespace spmd::gloo_backend {

using ContextPtr = std::shared_ptr<gloo::Context>;
using RankBody = std::function<void(const ContextPtr& context)>;

// Contexts for `ranks` ranks, rank r's at index r, connected to each other (every rank connects
// on its own thread at once, as connectFullMesh needs). They can be used for any number of
// operations, one at a time; keep them all alive until every rank is done with its own (tearing
// one down early breaks its peers' connections).
std::vector<ContextPtr> connect_gloo_ranks(int ranks);

// Runs `body` once per rank, each on its own thread with contexts[rank], and returns when all
// are done. The first rank's exception, if any, is rethrown.
void run_on_gloo_contexts(const std::vector<ContextPtr>& contexts, const RankBody& body);

// Both: a fresh set of contexts for one run of `body`.
void run_gloo_ranks(int ranks, const RankBody& body);

}  // namespace spmd::gloo_backend
