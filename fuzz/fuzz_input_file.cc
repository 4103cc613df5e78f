// See fuzz_input_file.h.
#include "fuzz/fuzz_input_file.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace spmd::fuzz {

std::string write_fuzz_input(const std::uint8_t* data, std::size_t size, const std::string& file_name) {
  static const std::filesystem::path folder = [] {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("spmd-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
    return path;
  }();
  const std::filesystem::path path = folder / file_name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) std::abort();  // the harness itself failed, not the reader: stop loudly
  return path.string();
}

}  // namespace spmd::fuzz
