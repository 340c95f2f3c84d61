#include "session_slabs.hpp"

#include <cstdlib>

namespace refgate::http {

SessionSlabs::~SessionSlabs() {
    // Only slabs with a free slot are listed; by now every Session is gone, so every slab is.
    while (open_ != nullptr) {
        Slab* slab = open_;
        unlist(*slab);
        slab->~Slab();
        std::free(slab);
    }
}

SessionSlabs::Slab& SessionSlabs::slab_of(void* p) noexcept {
    return *reinterpret_cast<Slab*>(reinterpret_cast<std::uintptr_t>(p) & ~(kSlabBytes - 1));
}

void* SessionSlabs::allocate(std::size_t bytes) {
    if (slot_bytes_ == 0) {
        slot_bytes_ = (bytes + kAlign - 1) / kAlign * kAlign;
        per_slab_ = (kSlabBytes - kHeader) / slot_bytes_;
    }
    if (bytes > slot_bytes_ || per_slab_ == 0) return ::operator new(bytes);
    Slab* slab = open_ != nullptr ? open_ : new_slab();
    Slot* slot = slab->free;
    slab->free = slot->next;
    if (slab->used++ == 0) --empty_;
    if (slab->free == nullptr) unlist(*slab);
    ++used_;
    return slot;
}

void SessionSlabs::deallocate(void* p, std::size_t bytes) noexcept {
    if (bytes > slot_bytes_ || per_slab_ == 0) {
        ::operator delete(p);
        return;
    }
    Slab& slab = slab_of(p);
    auto* slot = static_cast<Slot*>(p);
    slot->next = slab.free;
    slab.free = slot;
    if (!slab.listed) list(slab);
    --used_;
    if (--slab.used > 0) return;
    // Empty: one such slab is kept for the next connections, the others are freed.
    if (empty_ == 0) {
        ++empty_;
        return;
    }
    unlist(slab);
    slab.~Slab();
    std::free(&slab);
    --slabs_;
}

SessionSlabs::Slab* SessionSlabs::new_slab() {
    void* memory = std::aligned_alloc(kSlabBytes, kSlabBytes);
    if (memory == nullptr) throw std::bad_alloc();
    auto* slab = new (memory) Slab;
    auto* first = static_cast<char*>(memory) + kHeader;
    for (std::size_t i = per_slab_; i-- > 0;) {
        auto* slot = reinterpret_cast<Slot*>(first + i * slot_bytes_);
        slot->next = slab->free;
        slab->free = slot;
    }
    ++slabs_;
    ++empty_;
    list(*slab);
    return slab;
}

// A slab that has a free slot again goes to the back: slots are taken from the slabs that had
// one longest, so that recently emptied ones can drain and be freed.
void SessionSlabs::list(Slab& slab) noexcept {
    slab.listed = true;
    slab.next = nullptr;
    if (open_ == nullptr) {
        slab.prev = &slab;  // the head's prev is the tail
        open_ = &slab;
        return;
    }
    Slab* tail = open_->prev;
    slab.prev = tail;
    tail->next = &slab;
    open_->prev = &slab;
}

void SessionSlabs::unlist(Slab& slab) noexcept {
    slab.listed = false;
    if (&slab == open_) {
        open_ = slab.next;
        if (open_ != nullptr) open_->prev = slab.prev;
    } else {
        slab.prev->next = slab.next;
        if (slab.next != nullptr) {
            slab.next->prev = slab.prev;
        } else {
            open_->prev = slab.prev;  // it was the tail
        }
    }
    slab.prev = slab.next = nullptr;
}

}  // namespace refgate::http
