#include "refgate/domain/table_memory.hpp"

#include <atomic>

namespace refgate {
namespace {

class HeapTableMemory final : public TableMemory {
  public:
    void* allocate(std::size_t bytes) override { return ::operator new(bytes); }
    void free(void* memory, std::size_t) noexcept override { ::operator delete(memory); }
};

HeapTableMemory heap;
std::atomic<TableMemory*> installed{&heap};

}  // namespace

TableMemory& table_memory() noexcept { return *installed.load(std::memory_order_acquire); }

void set_table_memory(TableMemory* memory) noexcept {
    installed.store(memory != nullptr ? memory : &heap, std::memory_order_release);
}

}  // namespace refgate
