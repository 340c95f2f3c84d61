#include "refgate/runtime/huge_table_memory.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace huge_table_memory_test {

TEST_CASE("a large table starts on a 2 MiB boundary and holds what is written to all of it",
          "[table_memory]") {
    // A table just over the threshold, and one over a huge page that does not end on one.
    for (std::size_t bytes : {refgate::runtime::kHugeTableBytes, (std::size_t{5} << 20) + 24}) {
        CAPTURE(bytes);
        refgate::runtime::HugeTableMemory tables;
        void* memory = tables.allocate(bytes);
        REQUIRE(memory != nullptr);
        CHECK(reinterpret_cast<std::uintptr_t>(memory) % (std::size_t{2} << 20) == 0);
        auto* bytes_at = static_cast<unsigned char*>(memory);
        for (std::size_t i = 0; i < bytes; i += 4096) bytes_at[i] = static_cast<unsigned char>(i);
        bytes_at[bytes - 1] = 0x5a;
        for (std::size_t i = 0; i < bytes; i += 4096)
            REQUIRE(bytes_at[i] == static_cast<unsigned char>(i));
        CHECK(bytes_at[bytes - 1] == 0x5a);
        tables.free(memory, bytes);
    }
}

TEST_CASE("a vector in table memory grows, copies and shrinks across the threshold",
          "[table_memory]") {
    refgate::runtime::use_huge_table_memory();
    std::vector<std::uint64_t, refgate::domain::TableAllocator<std::uint64_t>> table;
    const std::size_t large = refgate::runtime::kHugeTableBytes / sizeof(std::uint64_t) * 3;
    for (std::size_t i = 0; i < large; ++i) table.push_back(i * 7);
    auto copy = table;
    REQUIRE(copy.size() == large);
    CHECK(copy[large - 1] == (large - 1) * 7);
    CHECK(copy[12345] == 12345 * 7);
    copy.resize(10);
    copy.shrink_to_fit();  // back from a mapping to the heap
    CHECK(copy.back() == 63);
    table.clear();
    table.shrink_to_fit();
    CHECK(table.empty());
    refgate::domain::set_table_memory(nullptr);
}

TEST_CASE("a table keeps the memory it was made from after the process installs another",
          "[table_memory]") {
    std::vector<std::uint64_t, refgate::domain::TableAllocator<std::uint64_t>> heap_table(1000, 7);
    refgate::runtime::use_huge_table_memory();
    const std::size_t large = refgate::runtime::kHugeTableBytes / sizeof(std::uint64_t) * 2;
    std::vector<std::uint64_t, refgate::domain::TableAllocator<std::uint64_t>> huge_table(large, 9);
    CHECK(reinterpret_cast<std::uintptr_t>(huge_table.data()) % (std::size_t{2} << 20) == 0);
    heap_table.resize(large);  // from the heap still, and freed there
    CHECK(heap_table[999] == 7);
    refgate::domain::set_table_memory(nullptr);
    huge_table.resize(large * 2);  // from its own mapping, and unmapped
    CHECK(huge_table[large - 1] == 9);
}

}  // namespace huge_table_memory_test
