#pragma once

// Memory for the large tables a redirect reads at random: the slug table and the link entries
// of the snapshot, the click counters of each I/O thread. Where it comes from is the process's
// choice: operator new unless serve installed another source (runtime/huge_table_memory.hpp,
// which maps large tables in 2 MiB pages). The domain only names the seam.

#include <cstddef>
#include <new>
#include <type_traits>

namespace refgate::domain {

// A source of table memory. free() receives the size given to allocate().
class TableMemory {
  public:
    virtual ~TableMemory() = default;
    // Throws std::bad_alloc.
    virtual void* allocate(std::size_t bytes) = 0;
    virtual void free(void* memory, std::size_t bytes) noexcept = 0;
};

// The source new tables take their memory from: the one installed last, operator new before.
TableMemory& table_memory() noexcept;
// Installs `memory` (kept by the caller for the life of the process) for tables made from now
// on; nullptr goes back to operator new. Tables made before keep theirs: each table remembers
// its source. Called before the threads that make tables start (serve does it first), as the
// source is a plain pointer: the domain has no atomics.
void set_table_memory(TableMemory* memory) noexcept;

// A vector's allocator over table memory; the source is taken when the table is made and stays
// with it through copies and moves.
template <class T>
struct TableAllocator {
    using value_type = T;
    using propagate_on_container_copy_assignment = std::true_type;
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_swap = std::true_type;

    TableAllocator() noexcept : memory(&table_memory()) {}
    template <class U>
    TableAllocator(const TableAllocator<U>& other) noexcept : memory(other.memory) {}

    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
        return static_cast<T*>(memory->allocate(n * sizeof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept { memory->free(p, n * sizeof(T)); }
    template <class U>
    bool operator==(const TableAllocator<U>& other) const noexcept {
        return memory == other.memory;
    }

    TableMemory* memory;
};

}  // namespace refgate::domain
