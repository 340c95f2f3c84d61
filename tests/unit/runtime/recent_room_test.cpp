#include "refgate/runtime/recent_room.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace recent_room_test {

using refgate::runtime::RecentRoom;

// A round as the click sender runs it: the buffer is emptied by fit(), filled with `used`
// elements, and the room notes what the round needed.
void round(RecentRoom& room, std::vector<std::uint64_t>& buffer, std::size_t used) {
    room.fit(buffer);
    buffer.resize(used);
    room.note(used);
}

TEST_CASE("a buffer keeps its room while rounds stay steady, and no round reallocates it",
          "[recent_room]") {
    RecentRoom room;
    std::vector<std::uint64_t> buffer;
    round(room, buffer, 100'000);
    const auto* storage = buffer.data();
    for (int i = 0; i < 200; ++i) round(room, buffer, 90'000 + (i % 3) * 5'000);
    CHECK(buffer.data() == storage);
}

TEST_CASE("after a burst the room is given back once recent rounds need far less",
          "[recent_room]") {
    RecentRoom room;
    std::vector<std::uint64_t> buffer;
    for (int i = 0; i < 10; ++i) round(room, buffer, 1'000);
    round(room, buffer, 1'000'000);  // 8 MB for one round
    const std::size_t burst = buffer.capacity();
    // A few rounds later it is still there: a window after a burst is often busy too.
    round(room, buffer, 1'000);
    CHECK(buffer.capacity() == burst);
    // Some seconds of quiet rounds (an eighth less memory of the burst a round) free it.
    int rounds = 0;
    while (buffer.capacity() == burst && rounds < 100) {
        round(room, buffer, 1'000);
        ++rounds;
    }
    CHECK(rounds < 40);
    CHECK(buffer.capacity() < 100'000);
}

TEST_CASE("small buffers are never given back", "[recent_room]") {
    RecentRoom room;
    std::string text(100'000, 'x');  // below 256 KiB
    room.note(0);
    room.fit(text);
    CHECK(text.empty());
    CHECK(text.capacity() >= 100'000);
}

}  // namespace recent_room_test
