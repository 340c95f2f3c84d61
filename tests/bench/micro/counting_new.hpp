#pragma once

// A replacement of the global allocation functions for refgate_micro_bench only: every
// operator new (all forms) adds one to a counter, so that a test can show how many allocations a
// code path makes. Free functions are forwarded to malloc/free.

#include <cstdint>

namespace refgate::bench {

// Allocations made by this process so far (all threads; the benchmark is single-threaded).
std::uint64_t allocation_count() noexcept;
// Bytes currently allocated through operator new (as malloc_usable_size counts them).
std::int64_t live_bytes() noexcept;

}  // namespace refgate::bench
