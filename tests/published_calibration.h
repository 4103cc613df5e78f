#pragma once
// The public calibration set beside the checkout (../shared/calibration/measurements.csv,
// docs/validation.md), which tests read where it lies: the project keeps no copy of it, not even
// of its header line.

#include <fstream>
#include <stdexcept>
#include <string>

namespace spmd::test_calibration {

inline std::string published_calibration_path() {
  return std::string(SPMD_SOURCE_DIR) + "/../shared/calibration/measurements.csv";
}

// The set's header line with its line end: the calibration format's columns, for the made-up
// rows the tests write under it.
inline std::string published_calibration_header() {
  std::ifstream file(published_calibration_path());
  std::string header;
  if (!std::getline(file, header) || header.empty()) {
    throw std::runtime_error("missing " + published_calibration_path() +
                             ": the public calibration set is not beside this checkout");
  }
  if (header.back() == '\r') header.pop_back();
  return header + "\n";
}

}  // namespace spmd::test_calibration
