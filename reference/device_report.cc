#include "reference/device_report.h"

#include <algorithm>
#include <utility>

namespace spmd {

// "devices 0-2,5" for a sorted list of device ids.
std::string device_list(const std::vector<int>& devices) {
  std::string s = devices.size() == 1 ? "device " : "devices ";
  for (std::size_t i = 0; i < devices.size();) {
    std::size_t j = i;
    while (j + 1 < devices.size() && devices[j + 1] == devices[j] + 1) ++j;
    if (i > 0) s += ",";
    s += std::to_string(devices[i]);
    if (j > i) s += "-" + std::to_string(devices[j]);
    i = j + 1;
  }
  return s;
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
  std::string s;
  for (std::size_t i = 0; i < by_phrase.size(); ++i) {
    std::string phrase = by_phrase[i].first;
    if (by_phrase[i].second.size() > 1) {  // "device 3 waits in ...; devices 0-2 wait in ..."
      if (phrase.starts_with("waits ")) phrase.erase(4, 1);
      else if (phrase == "runs") phrase = "run";
    }
    if (i > 0) s += "; ";
    s += device_list(by_phrase[i].second) + " " + phrase;
  }
  return s;
}

}  // namespace spmd
