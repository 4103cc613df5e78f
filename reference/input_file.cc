#include "reference/input_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include "reference/error.h"

namespace spmd {
namespace {

constexpr std::size_t kMostPathCharsInMessages = 200;

[[noreturn]] void fail(const std::string& path, std::string_view what, std::string_view why) {
  throw Error(fmt::format("{}: cannot read {} ({})", path_for_message(path), what, why));
}

// A regular file of at most `most_bytes`, or the error saying what the path is instead.
void check_readable_file(const std::string& path, std::string_view what, std::uintmax_t most_bytes) {
  namespace fs = std::filesystem;
  if (path.empty()) fail(path, what, "an empty path, expected a file's path");
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error && status.type() != fs::file_type::not_found) fail(path, what, error.message());
  switch (status.type()) {
    case fs::file_type::regular: break;
    case fs::file_type::not_found: fail(path, what, "no such file");
    case fs::file_type::directory: fail(path, what, "a folder, expected a file");
    default: fail(path, what, "a device or special file, expected a regular file");
  }
  const std::uintmax_t bytes = fs::file_size(path, error);
  if (error) fail(path, what, error.message());
  if (bytes > most_bytes) {
    fail(path, what, fmt::format("{} bytes, expected at most {} bytes", bytes, most_bytes));
  }
}

}  // namespace

std::string path_for_message(const std::string& path) {
  if (path.size() <= kMostPathCharsInMessages) return path;
  const std::size_t half = kMostPathCharsInMessages / 2;
  return fmt::format("{}...{} ({} characters)", path.substr(0, half),
                     path.substr(path.size() - half), path.size());
}

std::string read_input_file(const std::string& path, std::string_view what,
                            std::uintmax_t most_bytes) {
  check_readable_file(path, what, most_bytes);
  using FilePtr = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;
  FilePtr file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) fail(path, what, std::strerror(errno));
  std::string text;
  char chunk[1 << 16];
  std::size_t got = 0;
  // A file in /proc reports size 0 and may be longer: the limit holds for what is read too.
  while ((got = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) {
    text.append(chunk, got);
    if (text.size() > most_bytes) fail(path, what, fmt::format("more than {} bytes", most_bytes));
  }
  if (std::ferror(file.get())) fail(path, what, std::strerror(errno));
  return text;
}

}  // namespace spmd
