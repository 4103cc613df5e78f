#pragma once
// Progress on stderr for commands that run longer than a second: "perf: 12/28 sizes". Uses the
// wall clock, which is fine here: it only decides when to print, never what a run computes.

#include <chrono>
#include <iostream>
#include <string>

namespace spmd {

class Progress {
 public:
  Progress(std::string what, int total) : what_(std::move(what)), total_(total) {}
  void done(int count) {
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    std::cerr << what_ << ": " << count << "/" << total_ << " done\n";
  }

 private:
  std::string what_;
  int total_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace spmd
