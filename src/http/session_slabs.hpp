#pragma once

// Where an I/O thread's Sessions and their pending operations live: slabs of their own, apart
// from the rest of the heap.
//
// A Session and its read and timer waits are freed when its connection parks, but the heap
// around them stays in use: Asio keeps each released socket's reactor state in a free list for
// the next socket, and connections that arrive together have their Sessions, operations and
// reactor states side by side. malloc_trim can only hand back pages that hold nothing, so 10,000
// parked connections kept 1.2 KiB each of anonymous memory where 0.3 KiB was live. From slabs,
// parked connections leave whole slabs empty; an empty slab beyond one spare per size is freed.
//
// One thread allocates and frees (Sessions are created and destroyed on their I/O thread, and
// so are their operations), so there is no lock.

#include <cstddef>
#include <cstdint>
#include <new>

namespace refgate::http {

// Slabs of one slot size, set by the first allocation; a larger request goes to operator new.
class SessionSlabs {
  public:
    // 16 KiB: about twenty Sessions, so that few live ones pin little.
    static constexpr std::size_t kSlabBytes = 16 * 1024;

    SessionSlabs() = default;
    ~SessionSlabs();
    SessionSlabs(const SessionSlabs&) = delete;
    SessionSlabs& operator=(const SessionSlabs&) = delete;

    void* allocate(std::size_t bytes);
    void deallocate(void* p, std::size_t bytes) noexcept;

    // Slabs held, and slots in use (for tests and the curious).
    std::size_t slabs() const noexcept { return slabs_; }
    std::size_t used() const noexcept { return used_; }

  private:
    struct Slot {
        Slot* next;
    };
    struct Slab {
        Slab* prev = nullptr;  // in the list of slabs with a free slot
        Slab* next = nullptr;
        Slot* free = nullptr;
        std::uint32_t used = 0;
        bool listed = false;
    };
    static constexpr std::size_t kAlign = 64;
    static constexpr std::size_t kHeader = (sizeof(Slab) + kAlign - 1) / kAlign * kAlign;

    Slab* new_slab();
    void list(Slab& slab) noexcept;
    void unlist(Slab& slab) noexcept;
    static Slab& slab_of(void* p) noexcept;

    std::size_t slot_bytes_ = 0;
    std::size_t per_slab_ = 0;
    Slab* open_ = nullptr;  // slabs with a free slot, the one to take from first
    std::size_t slabs_ = 0;
    std::size_t empty_ = 0;  // slabs with no slot in use (at most one is kept)
    std::size_t used_ = 0;
};

// Slabs per size, in steps of 64 bytes up to kLargest; larger blocks come from operator new.
class SessionHeap {
  public:
    static constexpr std::size_t kStep = 64;
    static constexpr std::size_t kLargest = 1024;

    void* allocate(std::size_t bytes) {
        return bytes == 0 || bytes > kLargest ? ::operator new(bytes)
                                              : classes_[(bytes - 1) / kStep].allocate(bytes);
    }
    void deallocate(void* p, std::size_t bytes) noexcept {
        if (bytes == 0 || bytes > kLargest) {
            ::operator delete(p);
        } else {
            classes_[(bytes - 1) / kStep].deallocate(p, bytes);
        }
    }
    std::size_t slabs() const noexcept {
        std::size_t n = 0;
        for (const auto& c : classes_) n += c.slabs();
        return n;
    }
    std::size_t used() const noexcept {
        std::size_t n = 0;
        for (const auto& c : classes_) n += c.used();
        return n;
    }

  private:
    SessionSlabs classes_[kLargest / kStep];
};

// allocate_shared's (and Asio's handlers') allocator over a thread's SessionHeap.
template <typename T>
struct SlabAllocator {
    using value_type = T;
    SessionHeap* slabs;

    explicit SlabAllocator(SessionHeap& s) noexcept : slabs(&s) {}
    template <typename U>
    SlabAllocator(const SlabAllocator<U>& other) noexcept : slabs(other.slabs) {}

    T* allocate(std::size_t n) { return static_cast<T*>(slabs->allocate(n * sizeof(T))); }
    void deallocate(T* p, std::size_t n) noexcept { slabs->deallocate(p, n * sizeof(T)); }
    template <typename U>
    bool operator==(const SlabAllocator<U>& other) const noexcept {
        return slabs == other.slabs;
    }
};

}  // namespace refgate::http
