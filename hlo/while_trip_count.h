#pragma once
// How many times an HLO while loop runs its body, without data: the trip count XLA proved and
// wrote into the loop's backend_config ({"known_trip_count":{"n":"4"}}, which jax.lax.scan and
// fori_loop loops carry); otherwise the canonical counted loop, recognised as
//   condition: ROOT compare(get-tuple-element(param, i), constant(N)), direction=LT
//   body:      element i of the ROOT tuple is add(get-tuple-element(param, i), constant(1))
//   init:      element i of the while's operand tuple is constant(K)
// giving max(0, N - K) trips. Anything else is an spmd::Error naming the while's line.

#include <cstdint>

#include "hlo/hlo_module.h"

namespace spmd::hlo {

std::int64_t while_trip_count(const HloModule& module, const HloComputation& computation,
                              const HloInstruction& while_loop);

}  // namespace spmd::hlo
