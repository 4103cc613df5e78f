#pragma once
// Max-min fair sharing of link bandwidth between flows (docs/link-sharing.md): progressive
// filling, the rule SimGrid's flow model solves for (its LMM solver, without the TCP
// corrections). Every link splits the bandwidth that flows bottlenecked elsewhere leave over
// equally between the flows still unbounded; the tightest link fixes its flows' rates first,
// then the next, until every flow has a rate. The rates depend only on which flows cross which
// links, never on the order they are listed in.
//
// Exact integer arithmetic, in share units:
//   a flow's work:  bytes * 10^12 * kShareScale   (1 / kShareScale of a picobyte)
//   a rate:         bytes_per_s * kShareScale     (1 / kShareScale of a picobyte per ps)
// so a rate times picoseconds is work, with no rounding. kShareScale = 720720 = lcm(1..16): a
// link's bandwidth splits exactly between up to 16 flows (and any count dividing 720720);
// otherwise each share rounds down, and the link idles less than one byte/s in total. A flow
// alone on its route gets exactly its slowest link's bandwidth, so it takes exactly
// serialization_ps (cost_model/link_time.h).

#include <cstdint>
#include <span>
#include <vector>

#include "support/wide_int.h"

namespace spmd::cost_model {

inline constexpr std::int64_t kShareScale = 720'720;

// A flow's work: its bytes in share units (< 2^123 for any int64 byte count).
inline WideInt share_work(std::int64_t bytes) {
  return static_cast<WideInt>(bytes) * 1'000'000'000'000 * kShareScale;
}

// A link's bandwidth as a rate in share units.
inline WideInt share_rate(std::int64_t bandwidth_bytes_per_s) {
  return static_cast<WideInt>(bandwidth_bytes_per_s) * kShareScale;
}

// The whole picoseconds `rate` (> 0) takes to carry `work` (>= 0), rounded up.
inline std::int64_t ps_to_carry(WideInt work, WideInt rate) {
  return static_cast<std::int64_t>((work + rate - 1) / rate);
}

// Progressive filling over the flows of one moment. Holds the links' capacities and scratch
// space, reused from one solve to the next.
class MaxMinFairShare {
 public:
  explicit MaxMinFairShare(std::span<const std::int64_t> link_bandwidths_bytes_per_s);

  // routes[f]: the links flow f crosses (at least one). Writes each flow's rate (share units)
  // to rates[f]. Links whose share ties with the smallest are filled in the same round.
  void solve(std::span<const std::span<const int>> routes, std::span<WideInt> rates);
  // The link's bandwidth from the next solve on.
  void set_bandwidth(int link, std::int64_t bytes_per_s) {
    capacity_[static_cast<std::size_t>(link)] = share_rate(bytes_per_s);
  }

 private:
  void alone(std::span<const std::span<const int>> routes, std::span<WideInt> rates);
  int tightest_link() const;
  bool ties_with(int link, int tightest) const;
  int fix_round(std::span<const std::span<const int>> routes, std::span<WideInt> rates,
                WideInt share);

  std::vector<WideInt> capacity_;   // by link: its bandwidth, in share units
  std::vector<WideInt> left_;       // by link: capacity not yet given to a flow
  std::vector<int> unfixed_;        // by link: its flows still without a rate
  std::vector<char> tight_;         // by link: fixes its flows' rates this round
  std::vector<int> used_;           // the links some flow crosses, in first-seen order
  std::vector<char> fixed_;         // by flow
};

}  // namespace spmd::cost_model
