#include "refgate/runtime/huge_table_memory.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace refgate::runtime {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t mapped_size(std::size_t bytes) { return (bytes + kHugePage - 1) & ~(kHugePage - 1); }

}  // namespace

void* HugeTableMemory::allocate(std::size_t bytes) {
    if (bytes < kHugeTableBytes) return ::operator new(bytes);
    const std::size_t size = mapped_size(bytes);
    // One huge page more than needed, so that an aligned run of `size` bytes is surely inside;
    // the rest is unmapped again.
    void* mapped = ::mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) throw std::bad_alloc();
    auto* start = static_cast<char*>(mapped);
    const auto address = reinterpret_cast<std::uintptr_t>(start);
    char* aligned = start + ((kHugePage - address % kHugePage) % kHugePage);
    if (aligned != start) ::munmap(start, static_cast<std::size_t>(aligned - start));
    char* end = aligned + size;
    char* mapped_end = start + size + kHugePage;
    if (end != mapped_end) ::munmap(end, static_cast<std::size_t>(mapped_end - end));
    // Advice only: without transparent huge pages the table works the same, in small pages.
    ::madvise(aligned, size, MADV_HUGEPAGE);
    return aligned;
}

void HugeTableMemory::free(void* memory, std::size_t bytes) noexcept {
    if (memory == nullptr) return;
    if (bytes < kHugeTableBytes) {
        ::operator delete(memory);
        return;
    }
    ::munmap(memory, mapped_size(bytes));
}

void use_huge_table_memory() noexcept {
    static HugeTableMemory memory;
    domain::set_table_memory(&memory);
}

}  // namespace refgate::runtime
