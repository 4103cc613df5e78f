#include "sim/intervals.h"

#include <algorithm>

namespace spmd::sim {

std::vector<Interval> merged(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

std::int64_t total_length(const std::vector<Interval>& intervals) {
  std::int64_t length = 0;
  for (const Interval& i : intervals) length += i.second - i.first;
  return length;
}

std::int64_t overlap_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::int64_t length = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t start = std::max(a[i].first, b[j].first);
    const std::int64_t end = std::min(a[i].second, b[j].second);
    if (end > start) length += end - start;
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return length;
}

}  // namespace spmd::sim
