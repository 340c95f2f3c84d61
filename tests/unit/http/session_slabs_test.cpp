// Where an I/O thread's Sessions and their operations live (src/http/session_slabs.hpp): slots
// come from slabs of their own, and the slabs that parked connections leave empty are freed, one
// spare kept per size.
#include "../../../src/http/session_slabs.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <utility>
#include <vector>

namespace session_slabs_test {

using refgate::http::SessionHeap;
using refgate::http::SessionSlabs;
using refgate::http::SlabAllocator;

constexpr std::size_t kSessionBytes = 700;  // about a Session with its shared_ptr counts

TEST_CASE("session slabs: a burst of sessions, all parked, leaves one slab", "[http][slabs]") {
    SessionSlabs slabs;
    std::vector<void*> sessions;
    std::set<std::uintptr_t> distinct;
    for (int i = 0; i < 1000; ++i) {
        void* p = slabs.allocate(kSessionBytes);
        std::memset(p, 0xab, kSessionBytes);  // the whole slot is ours (ASan would tell)
        CHECK(reinterpret_cast<std::uintptr_t>(p) % 64 == 0);
        distinct.insert(reinterpret_cast<std::uintptr_t>(p));
        sessions.push_back(p);
    }
    CHECK(distinct.size() == 1000);
    CHECK(slabs.used() == 1000);
    // Slots of 704 bytes (700 rounded up to 64), a slab's header before them.
    std::size_t per_slab = SessionSlabs::kSlabBytes / 704;
    CHECK(slabs.slabs() >= (1000 + per_slab - 1) / per_slab);
    CHECK(slabs.slabs() <= (1000 + per_slab - 2) / (per_slab - 1));
    for (void* p : sessions) slabs.deallocate(p, kSessionBytes);
    CHECK(slabs.used() == 0);
    CHECK(slabs.slabs() == 1);  // the spare, for the next connections
}

TEST_CASE("session slabs: a slab with one live session stays, the emptied ones go",
          "[http][slabs]") {
    SessionSlabs slabs;
    std::vector<void*> sessions;
    for (int i = 0; i < 200; ++i) sessions.push_back(slabs.allocate(kSessionBytes));
    std::size_t full = slabs.slabs();
    REQUIRE(full >= 9);
    // Every other session parks: every slab still holds live ones.
    for (std::size_t i = 0; i < sessions.size(); i += 2) slabs.deallocate(sessions[i], 700);
    CHECK(slabs.slabs() == full);
    // New sessions fill the holes before any new slab is made.
    std::vector<void*> again;
    for (int i = 0; i < 100; ++i) again.push_back(slabs.allocate(kSessionBytes));
    CHECK(slabs.slabs() == full);
    for (void* p : again) slabs.deallocate(p, kSessionBytes);
    for (std::size_t i = 1; i < sessions.size(); i += 2) slabs.deallocate(sessions[i], 700);
    CHECK(slabs.slabs() == 1);
    CHECK(slabs.used() == 0);
}

TEST_CASE("session slabs: allocate_shared puts a session and its counts in a slot",
          "[http][slabs]") {
    struct FakeSession {
        char bytes[600];
        int* destroyed;
        ~FakeSession() { ++*destroyed; }
    };
    SessionHeap slabs;
    int destroyed = 0;
    {
        auto a = std::allocate_shared<FakeSession>(SlabAllocator<FakeSession>(slabs),
                                                   FakeSession{{}, &destroyed});
        auto b = a;
        CHECK(slabs.used() == 1);
        a.reset();
        CHECK(slabs.used() == 1);  // b still holds it
    }
    CHECK(destroyed == 2);  // the temporary and the one in the slot
    CHECK(slabs.used() == 0);
}

TEST_CASE("session slabs: a block larger than the slot comes from operator new", "[http][slabs]") {
    SessionSlabs slabs;
    void* small = slabs.allocate(100);  // sets the slot size: 128
    void* large = slabs.allocate(4000);
    CHECK(slabs.used() == 1);
    std::memset(large, 0, 4000);
    slabs.deallocate(large, 4000);
    slabs.deallocate(small, 100);
    CHECK(slabs.used() == 0);
}

TEST_CASE("session slabs: each size has slabs of its own, and large blocks none", "[http][slabs]") {
    SessionHeap heap;
    void* wait = heap.allocate(96);      // an operation
    void* session = heap.allocate(700);  // a Session
    void* other = heap.allocate(120);    // the same 128-byte class as the operation
    void* large = heap.allocate(5000);   // operator new
    CHECK(heap.slabs() == 2);
    CHECK(heap.used() == 3);
    for (auto [p, n] : {std::pair{wait, 96}, {session, 700}, {other, 120}, {large, 5000}})
        heap.deallocate(p, static_cast<std::size_t>(n));
    CHECK(heap.used() == 0);
    CHECK(heap.slabs() == 2);  // a spare per size
}

}  // namespace session_slabs_test
