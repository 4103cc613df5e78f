#include "reference/array_storage.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "reference/check.h"

namespace spmd {
namespace {

// calloc / malloc of at least one byte (a null pointer is then only ever out of memory).
std::byte* allocate(std::size_t size_bytes, bool zeroed) {
  const std::size_t size = size_bytes == 0 ? 1 : size_bytes;
  void* p = zeroed ? std::calloc(size, 1) : std::malloc(size);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<std::byte*>(p);
}

}  // namespace

void ArrayStorage::FreeDeleter::operator()(std::byte* p) const { std::free(p); }

ArrayStorage::ArrayStorage(std::size_t size_bytes) : ArrayStorage(size_bytes, ZeroFill{true}) {}

ArrayStorage::ArrayStorage(std::size_t size_bytes, ZeroFill fill)
    : size_bytes_(size_bytes), buffer_(allocate(size_bytes, fill.zeroed)) {
  data_ = buffer_.get();
}

ArrayStorage::ArrayStorage(std::vector<std::byte> bytes)
    : size_bytes_(bytes.size()), vector_(std::move(bytes)) {
  data_ = vector_.data();
}

ArrayStorage::ArrayStorage(std::int64_t element_count, std::size_t element_bytes,
                           ElementGenerator generate)
    : size_bytes_(static_cast<std::size_t>(element_count) * element_bytes),
      generate_(std::move(generate)),
      element_count_(element_count),
      made_(false) {
  SPMD_CHECK(element_count >= 0 && generate_ != nullptr,
             "ArrayStorage: a generated storage needs a generator and a count of at least 0");
}

void ArrayStorage::make_bytes() const {
  std::call_once(make_once_, [this] {
    buffer_.reset(allocate(size_bytes_, /*zeroed=*/false));
    generate_(0, element_count_, buffer_.get());
    data_ = buffer_.get();
    made_.store(true, std::memory_order_release);
  });
}

std::span<const std::byte> ArrayStorage::bytes() const {
  if (!made_.load(std::memory_order_acquire)) make_bytes();
  return {data_, size_bytes_};
}

std::span<std::byte> ArrayStorage::mutable_bytes() {
  if (!made_.load(std::memory_order_acquire)) make_bytes();
  return {data_, size_bytes_};
}

std::shared_ptr<ArrayStorage> ArrayStorage::copy() const {
  // Every byte is written below: no zero fill.
  std::shared_ptr<ArrayStorage> out(new ArrayStorage(size_bytes_, ZeroFill{false}));
  if (const ElementGenerator* generate = pending_generator()) {
    (*generate)(0, element_count_, out->data_);
  } else if (size_bytes_ > 0) {
    std::memcpy(out->data_, data_, size_bytes_);
  }
  return out;
}

const ElementGenerator* ArrayStorage::pending_generator() const {
  return made_.load(std::memory_order_acquire) ? nullptr : &generate_;
}

}  // namespace spmd
