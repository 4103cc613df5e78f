#pragma once
// Reading the files a user names (machine, workload and conformance case files, .npy arrays):
// every way a path can be wrong is one spmd::Error naming the path and what was expected, never
// a stream or filesystem exception: no such file, a folder, a device or other special file, a
// path too long or looping through symbolic links, a read that fails, a file larger than its
// limit.

#include <cstdint>
#include <string>
#include <string_view>

namespace spmd {

// The largest text file spmdsim reads (docs/machine-format.md and the other format docs say so):
// far above any real machine, workload or case file, and small enough to hold in memory.
inline constexpr std::uintmax_t kMostInputFileBytes = std::uintmax_t{64} << 20;  // 64 MiB

// The largest .npy array file (docs/conformance-format.md): conformance arrays are small, and a
// run holds each several times.
inline constexpr std::uintmax_t kMostNpyFileBytes = std::uintmax_t{1} << 30;  // 1 GiB

// The whole file's bytes; `what` names the file's role in errors ("the workload file").
std::string read_input_file(const std::string& path, std::string_view what,
                            std::uintmax_t most_bytes = kMostInputFileBytes);

// A path cut to a readable length for messages (long paths keep their start and end).
std::string path_for_message(const std::string& path);

}  // namespace spmd
