#include "reference/device_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

namespace spmd {

// "devices 0-2,5" for a sorted list of device ids.
std::string device_list(const std::vector<int>& devices) {
  std::vector<std::string> runs;
  for (std::size_t i = 0; i < devices.size();) {
    std::size_t j = i;
    while (j + 1 < devices.size() && devices[j + 1] == devices[j] + 1) ++j;
    runs.push_back(j > i ? fmt::format("{}-{}", devices[i], devices[j])
                         : fmt::format("{}", devices[i]));
    i = j + 1;
  }
  return fmt::format("{} {}", devices.size() == 1 ? "device" : "devices", fmt::join(runs, ","));
}

std::string grouped_device_report(const std::vector<std::string>& phrases) {
  std::vector<std::pair<std::string, std::vector<int>>> by_phrase;
  for (int d = 0; d < static_cast<int>(phrases.size()); ++d) {
    const std::string& phrase = phrases[static_cast<std::size_t>(d)];
    auto it = std::find_if(by_phrase.begin(), by_phrase.end(),
                           [&](const auto& entry) { return entry.first == phrase; });
    if (it == by_phrase.end()) by_phrase.push_back({phrase, {d}});
    else it->second.push_back(d);
  }
  std::vector<std::string> reports;
  for (const auto& [first_phrase, devices] : by_phrase) {
    std::string phrase = first_phrase;
    if (devices.size() > 1) {  // "device 3 waits in ...; devices 0-2 wait in ..."
      if (phrase.starts_with("waits ")) phrase.erase(4, 1);
      else if (phrase == "runs") phrase = "run";
    }
    reports.push_back(fmt::format("{} {}", device_list(devices), phrase));
  }
  return fmt::format("{}", fmt::join(reports, "; "));
}

}  // namespace spmd
