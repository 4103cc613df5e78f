#pragma once
// NumPy .npy files (format 1.0 written; 1.0, 2.0 and 3.0 read): little-endian, C order, the
// dtypes of spmd::DType. bfloat16 has no NumPy descr of its own, so it is stored as its uint16
// bit patterns ('<u2'); a reader knows to take '<u2' as bfloat16 only from the dtype the case's
// JSON declares. Files are untrusted input: every malformed one gives an spmd::Error of one line
// naming the file, the field, the value and what was expected.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reference/array.h"
#include "reference/dtype.h"

namespace spmd {

// Reads the file at `path`. With `declared`, the file's dtype must be that dtype ('<u2' is
// accepted, and required, for bfloat16).
Array read_npy(const std::string& path, std::optional<DType> declared = std::nullopt);

// Parses the bytes of a whole .npy file; `source_name` starts every error message.
Array parse_npy(std::span<const std::byte> bytes, const std::string& source_name,
                std::optional<DType> declared);

// Writes `array` as np.save would (format 1.0, header padded to 64 bytes, byte-identical to
// NumPy 2.x output for the same array); bfloat16 goes out as '<u2'.
void write_npy(const std::string& path, const Array& array);
std::vector<std::byte> serialize_npy(const Array& array);

}  // namespace spmd
