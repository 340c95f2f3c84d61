#include "refgate/domain/table_memory.hpp"

namespace refgate::domain {
namespace {

class HeapTableMemory final : public TableMemory {
  public:
    void* allocate(std::size_t bytes) override { return ::operator new(bytes); }
    void free(void* memory, std::size_t) noexcept override { ::operator delete(memory); }
};

HeapTableMemory heap;
// Set before the threads that make tables start (set_table_memory()): a plain pointer, no
// atomics in the domain.
TableMemory* installed = &heap;

}  // namespace

TableMemory& table_memory() noexcept { return *installed; }

void set_table_memory(TableMemory* memory) noexcept {
    installed = memory != nullptr ? memory : &heap;
}

}  // namespace refgate::domain
