#pragma once

// Table memory in 2 MiB pages. At thousands of links the page of each lookup is seldom in the
// TLB, and a TLB miss costs a page walk (under a hypervisor, a nested one) before the load, or
// the prefetch meant to hide it, can even start: perf put about half of the click counter's wait
// on the prefetch instruction itself. In 2 MiB pages such a table needs a few TLB entries
// instead of hundreds.
//
// A table of at least kHugeTableBytes gets its own mapping, aligned to 2 MiB and advised
// MADV_HUGEPAGE: transparent huge pages where the kernel's setting is "madvise" (Debian's
// default) or "always", ordinary pages where it is "never". A smaller one comes from operator new.

#include <cstddef>

#include "refgate/domain/table_memory.hpp"

namespace refgate::runtime {

inline constexpr std::size_t kHugeTableBytes = std::size_t{1} << 20;

class HugeTableMemory final : public domain::TableMemory {
  public:
    void* allocate(std::size_t bytes) override;
    void free(void* memory, std::size_t bytes) noexcept override;
};

// Installs one HugeTableMemory for the tables made from now on (serve does, first thing).
void use_huge_table_memory() noexcept;

}  // namespace refgate::runtime
