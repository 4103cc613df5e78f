#pragma once
// The readers of machine files, workloads and conformance cases take a path, as users give them
// one: a fuzz input is written to a file of its own (one per process, in the system's temporary
// folder) so that the harness runs exactly the code a user's file runs through.

#include <cstddef>
#include <cstdint>
#include <string>

namespace spmd::fuzz {

// Writes `size` bytes to TMP/spmd-fuzz-PID/`file_name` (created once) and returns its path.
std::string write_fuzz_input(const std::uint8_t* data, std::size_t size, const std::string& file_name);

}  // namespace spmd::fuzz
