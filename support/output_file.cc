#include "support/output_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "reference/error.h"
#include "reference/input_file.h"

namespace spmd {

void write_output_file(const std::filesystem::path& path, std::string_view text) {
  const std::string name = path.string();
  std::FILE* file = std::fopen(name.c_str(), "wb");
  if (file == nullptr) {
    throw Error(fmt::format("{}: cannot write this file ({})", path_for_message(name),
                            std::strerror(errno)));
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int write_errno = errno;
  // fclose flushes: a full disk often shows only here.
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    throw Error(fmt::format("{}: cannot write this file ({})", path_for_message(name),
                            std::strerror(written ? errno : write_errno)));
  }
}

}  // namespace spmd
