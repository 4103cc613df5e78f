#include "cost_model/fair_share.h"

#include <algorithm>

namespace spmd::cost_model {

MaxMinFairShare::MaxMinFairShare(std::span<const std::int64_t> link_bandwidths_bytes_per_s)
    : left_(link_bandwidths_bytes_per_s.size(), 0),
      unfixed_(link_bandwidths_bytes_per_s.size(), 0),
      tight_(link_bandwidths_bytes_per_s.size(), 0) {
  for (std::int64_t bandwidth : link_bandwidths_bytes_per_s) {
    capacity_.push_back(share_rate(bandwidth));
  }
}

void MaxMinFairShare::solve(std::span<const std::span<const int>> routes,
                            std::span<WideInt> rates) {
  used_.clear();
  fixed_.assign(routes.size(), 0);
  bool shared = false;
  for (std::span<const int> route : routes) {
    for (int link : route) {
      if (unfixed_[static_cast<std::size_t>(link)]++ == 0) {
        used_.push_back(link);
        left_[static_cast<std::size_t>(link)] = capacity_[static_cast<std::size_t>(link)];
      } else {
        shared = true;
      }
    }
  }
  if (!shared) return alone(routes, rates);
  std::size_t unfixed_flows = routes.size();
  while (unfixed_flows > 0) {
    const int tightest = tightest_link();
    const WideInt share = left_[static_cast<std::size_t>(tightest)] /
                          unfixed_[static_cast<std::size_t>(tightest)];
    for (int link : used_) tight_[static_cast<std::size_t>(link)] = ties_with(link, tightest);
    unfixed_flows -= static_cast<std::size_t>(fix_round(routes, rates, share));
    for (int link : used_) tight_[static_cast<std::size_t>(link)] = 0;
  }
}

// No link carries two flows: each flow gets its slowest link's bandwidth (what the rounds would
// give, without them).
void MaxMinFairShare::alone(std::span<const std::span<const int>> routes,
                            std::span<WideInt> rates) {
  for (std::size_t f = 0; f < routes.size(); ++f) {
    WideInt rate = capacity_[static_cast<std::size_t>(routes[f].front())];
    for (int link : routes[f]) {
      rate = std::min(rate, capacity_[static_cast<std::size_t>(link)]);
      unfixed_[static_cast<std::size_t>(link)] = 0;
    }
    rates[f] = rate;
  }
}

// The link with the smallest share left[l] / unfixed[l] among those with unfixed flows.
int MaxMinFairShare::tightest_link() const {
  int best = -1;
  for (int link : used_) {
    const auto l = static_cast<std::size_t>(link);
    if (unfixed_[l] == 0) continue;
    if (best < 0) {
      best = link;
      continue;
    }
    const auto b = static_cast<std::size_t>(best);
    // left[l] / unfixed[l] < left[b] / unfixed[b], without rounding: < 2^83 * 2^31 each side.
    const bool smaller = unfixed_[l] == unfixed_[b]
                             ? left_[l] < left_[b]
                             : left_[l] * unfixed_[b] < left_[b] * unfixed_[l];
    if (smaller) best = link;
  }
  return best;
}

bool MaxMinFairShare::ties_with(int link, int tightest) const {
  const auto l = static_cast<std::size_t>(link);
  const auto t = static_cast<std::size_t>(tightest);
  return unfixed_[l] > 0 && left_[l] * unfixed_[t] == left_[t] * unfixed_[l];
}

// Gives `share` to every unfixed flow crossing a tight link, and takes it from each link the
// flow crosses. A link never goes below zero: its flows fixed this round number at most its
// unfixed flows, each taking at most its own share, since `share` is the smallest share, rounded
// down. Returns how many flows it fixed.
int MaxMinFairShare::fix_round(std::span<const std::span<const int>> routes,
                               std::span<WideInt> rates, WideInt share) {
  int fixed_now = 0;
  for (std::size_t f = 0; f < routes.size(); ++f) {
    if (fixed_[f]) continue;
    bool crosses_tight = false;
    for (int link : routes[f]) crosses_tight |= tight_[static_cast<std::size_t>(link)] != 0;
    if (!crosses_tight) continue;
    fixed_[f] = 1;
    rates[f] = share;
    ++fixed_now;
    for (int link : routes[f]) {
      left_[static_cast<std::size_t>(link)] -= share;
      --unfixed_[static_cast<std::size_t>(link)];
    }
  }
  return fixed_now;
}

}  // namespace spmd::cost_model
