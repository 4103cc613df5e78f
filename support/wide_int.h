#pragma once
// 128-bit integers, for exact integer arithmetic whose intermediate products overflow 64 bits
// (bytes * 1e12 in link times, digits * unit multipliers in unit parsing).

namespace spmd {

// __extension__: -Wpedantic otherwise warns that __int128 (a GNU extension) is not ISO C++.
__extension__ typedef __int128 WideInt;
__extension__ typedef unsigned __int128 UnsignedWideInt;

}  // namespace spmd
