#pragma once
// Writing the files spmdsim produces (traces, reports, CSVs, plots' data): a file that cannot be
// written in full, down to its last flush (a full disk, a path in a read-only place), is an
// spmd::Error naming it, never a run that reports success.

#include <filesystem>
#include <string_view>

namespace spmd {

// Creates or replaces `path` with `text`.
void write_output_file(const std::filesystem::path& path, std::string_view text);

}  // namespace spmd
