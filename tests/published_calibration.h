#pragma once
// The public sets beside the checkout, which tests read where they lie: the calibration set
// (../shared/calibration/measurements.csv, docs/validation.md) and the published training runs
// (../shared/training/published_steps.csv). The project keeps no copy of them, not even of their
// header lines.

#include <fstream>
#include <stdexcept>
#include <string>

namespace spmd::test_calibration {

// The first line of `path` with its line end: a format's columns, for the made-up rows the tests
// write under it. `what` names the set in the error when it is missing.
inline std::string header_line_of(const std::string& path, const std::string& what) {
  std::ifstream file(path);
  std::string header;
  if (!std::getline(file, header) || header.empty()) {
    throw std::runtime_error("missing " + path + ": " + what + " is not beside this checkout");
  }
  if (header.back() == '\r') header.pop_back();
  return header + "\n";
}

inline std::string published_calibration_path() {
  return std::string(SPMD_SOURCE_DIR) + "/../shared/calibration/measurements.csv";
}

// The calibration set's header line with its line end.
inline std::string published_calibration_header() {
  return header_line_of(published_calibration_path(), "the public calibration set");
}

inline std::string published_training_path() {
  return std::string(SPMD_SOURCE_DIR) + "/../shared/training/published_steps.csv";
}

// The published training runs' header line with its line end, read once.
inline const std::string& published_training_header() {
  static const std::string header =
      header_line_of(published_training_path(), "the published training set");
  return header;
}

}  // namespace spmd::test_calibration
