#pragma once

// Memory for the large tables a redirect reads at random: the slug table and the link entries
// of the snapshot, the click counters of each I/O thread. At thousands of links the page of each
// lookup is seldom in the TLB, and a TLB miss costs a page walk (under a hypervisor, a nested
// one) before the load, or the prefetch meant to hide it, can even start: perf put about half of
// the click counter's wait on the prefetch instruction itself. In 2 MiB pages such a table needs
// a few TLB entries instead of hundreds.
//
// A table of at least kHugeTableBytes gets its own mapping, aligned to 2 MiB and advised
// MADV_HUGEPAGE: transparent huge pages where the kernel's setting is "madvise" (Debian's
// default) or "always", ordinary pages where it is "never". A smaller one comes from operator new.

#include <cstddef>
#include <new>

namespace refgate {

inline constexpr std::size_t kHugeTableBytes = std::size_t{1} << 20;

// Memory for `bytes` (a mapping of its own when at least kHugeTableBytes); throws
// std::bad_alloc.
void* allocate_table(std::size_t bytes);
void free_table(void* memory, std::size_t bytes) noexcept;

template <class T>
struct TableAllocator {
    using value_type = T;
    TableAllocator() = default;
    template <class U>
    TableAllocator(const TableAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
        return static_cast<T*>(allocate_table(n * sizeof(T)));
    }
    void deallocate(T* memory, std::size_t n) noexcept { free_table(memory, n * sizeof(T)); }
    template <class U>
    bool operator==(const TableAllocator<U>&) const noexcept {
        return true;
    }
};

}  // namespace refgate
