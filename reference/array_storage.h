#pragma once
// spmd::ArrayStorage: the bytes behind an Array, which Arrays share until one of them writes.
// The bytes are held in memory, or generated: computed from each element's index by an
// ElementGenerator when first read, so that large seeded inputs (`spmdsim perf` with data: 8 ×
// 64 MiB) need not be written out and paged in before a collective reads them. A reader that can
// take elements a tile at a time (collectives/schedule_data.cc) asks pending_generator() and
// computes them where it needs them; every other reader sees the bytes, made once.
//
// Memory comes from calloc / malloc, not std::vector: a zero-filled storage of fresh pages costs
// no pass over them (the kernel's pages are zero already), and a generated one is written once.

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace spmd {

// Writes the bytes of `count` elements starting at element `first_element` to `out`; the same
// elements for the same indices on every call, whatever range is asked.
using ElementGenerator =
    std::function<void(std::int64_t first_element, std::int64_t count, std::byte* out)>;

class ArrayStorage {
 public:
  // `size_bytes` zero bytes.
  explicit ArrayStorage(std::size_t size_bytes);
  // The given bytes, taken without a copy.
  explicit ArrayStorage(std::vector<std::byte> bytes);
  // `element_count` elements of `element_bytes` each, from `generate` when first read.
  ArrayStorage(std::int64_t element_count, std::size_t element_bytes, ElementGenerator generate);

  ArrayStorage(const ArrayStorage&) = delete;
  ArrayStorage& operator=(const ArrayStorage&) = delete;

  std::size_t size_bytes() const { return size_bytes_; }

  // The bytes; a generated storage makes them on the first call (once, whichever thread asks).
  std::span<const std::byte> bytes() const;
  // The bytes to write: for the only owner of this storage (Array copies first when shared).
  std::span<std::byte> mutable_bytes();
  // A storage of the same bytes that the caller owns alone (copy on write). A generated storage
  // not yet made is generated straight into the copy.
  std::shared_ptr<ArrayStorage> copy() const;

  // The generator while the bytes have not been made (null after, and for held bytes). A reader
  // that calls it for the ranges it needs gets the bytes bytes() would give.
  const ElementGenerator* pending_generator() const;

 private:
  struct ZeroFill {
    bool zeroed;
  };
  ArrayStorage(std::size_t size_bytes, ZeroFill fill);

  struct FreeDeleter {
    void operator()(std::byte* p) const;
  };

  void make_bytes() const;

  std::size_t size_bytes_ = 0;
  std::vector<std::byte> vector_;  // bytes given as a vector (from_bytes)
  mutable std::unique_ptr<std::byte, FreeDeleter> buffer_;  // bytes from calloc / malloc
  mutable std::byte* data_ = nullptr;                       // vector_'s or buffer_'s
  // Generated storage: the generator and its element count; `made_` guards the first bytes().
  ElementGenerator generate_;
  std::int64_t element_count_ = 0;
  mutable std::once_flag make_once_;
  mutable std::atomic<bool> made_{true};
};

}  // namespace spmd
