#pragma once

// Immutable strings kept together: each is copied once into the arena's current block and never
// moves, so a string_view of it stays valid for the arena's life. A snapshot keeps its links'
// destinations, Locations and fallbacks here: at 100,000 links a std::string each cost a heap
// block with its 16-byte header and rounding (16.5 MiB), and 32 bytes in the entry.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace refgate::domain {

class StringArena {
  public:
    // Blocks of 1 MiB: a few per 100,000 links, each a mapping of its own under serve's mmap
    // threshold (given back whole when the snapshot goes), only its used pages resident.
    static constexpr std::size_t kBlockBytes = std::size_t{1} << 20;

    StringArena() = default;
    StringArena(const StringArena&) = delete;
    StringArena& operator=(const StringArena&) = delete;
    StringArena(StringArena&&) noexcept = default;
    StringArena& operator=(StringArena&&) noexcept = default;

    // A copy of `text` in the arena (an empty view for an empty text). A text longer than a
    // block gets a block of its own size.
    std::string_view add(std::string_view text) {
        if (text.empty()) return {};
        if (text.size() > room_) {
            std::size_t size = std::max(kBlockBytes, text.size());
            blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
            next_ = blocks_.back().get();
            room_ = size;
            reserved_ += size;
        }
        std::memcpy(next_, text.data(), text.size());
        std::string_view copy(next_, text.size());
        next_ += text.size();
        room_ -= text.size();
        used_ += text.size();
        return copy;
    }

    std::size_t used_bytes() const noexcept { return used_; }
    std::size_t reserved_bytes() const noexcept { return reserved_; }

  private:
    std::vector<std::unique_ptr<char[]>> blocks_;
    char* next_ = nullptr;
    std::size_t room_ = 0;
    std::size_t used_ = 0;
    std::size_t reserved_ = 0;
};

}  // namespace refgate::domain
