#include "refgate/domain/string_hash.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <unordered_set>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace string_hash_test {

using refgate::domain::quick_hash;

TEST_CASE("quick_hash tells apart texts that differ in one byte, at every length", "[hash]") {
    // Lengths around the 4-, 8- and 16-byte steps of its loads; one byte changed anywhere, the
    // text cut by one or grown by a NUL (its length is hashed too).
    std::set<std::uint64_t> seen;
    std::size_t texts = 0;
    for (std::size_t size = 0; size <= 40; ++size) {
        std::string base(size, 'a');
        for (std::size_t i = 0; i < size; ++i) base[i] = static_cast<char>('a' + (i * 7) % 26);
        seen.insert(quick_hash(base));
        ++texts;
        for (std::size_t at = 0; at < size; ++at) {
            std::string changed = base;
            changed[at] ^= 0x01;
            seen.insert(quick_hash(changed));
            ++texts;
        }
        seen.insert(quick_hash(base + '\0'));
        ++texts;
    }
    // Some texts recur (a grown one is the next length's base only if the bytes match: they do
    // not, as NUL is not a letter), so every one must have its own hash.
    CHECK(seen.size() == texts);
}

TEST_CASE("quick_hash spreads slugs over the low bits a table indexes by", "[hash]") {
    // Slugs like "pick-000123" differ in a few digits; a 1,024-slot table must see them spread:
    // no slot holds more than a handful of the 1,000.
    std::vector<int> slots(1024, 0);
    for (int i = 0; i < 1000; ++i) {
        std::string slug = "pick-" + std::to_string(100000 + i).substr(1);
        ++slots[quick_hash(slug) & 1023];
    }
    CHECK(*std::max_element(slots.begin(), slots.end()) <= 8);
    // And StringHash finds what it stored, from a string_view.
    std::unordered_set<std::string, refgate::domain::StringHash, std::equal_to<>> set{"alpha",
                                                                                      "beta"};
    CHECK(set.find(std::string_view("beta")) != set.end());
    CHECK(set.find(std::string_view("gamma")) == set.end());
}

}  // namespace string_hash_test
