#pragma once

// Reused buffers of the background rounds (a send round's batch vectors, the RESP text of a
// window's commands) keep their capacity so that a steady window allocates nothing. Kept
// forever, that capacity is the busiest window's since the start: one burst over 100,000 links
// left about 25 MiB of such buffers resident for the life of the process. RecentRoom remembers
// what recent rounds needed (the most of them, decaying by an eighth a round, so a few seconds of
// rounds after a burst) and fit() gives back a buffer's capacity beyond twice that.

#include <algorithm>
#include <cstddef>

namespace refgate::runtime {

class RecentRoom {
  public:
    // Below this many bytes a buffer is never given back: not worth an allocation.
    static constexpr std::size_t kKeptBytes = std::size_t{256} << 10;

    // Once per round, with what the round needed (elements, the unit of fit()'s buffers).
    void note(std::size_t used) { recent_ = std::max(used, recent_ - recent_ / 8); }
    std::size_t recent() const { return recent_; }

    // Whether `buffer` (a vector or a string) holds no more room than recent rounds needed.
    template <class Buffer>
    bool fits(const Buffer& buffer) const {
        const std::size_t element = sizeof(typename Buffer::value_type);
        return buffer.capacity() * element <= kKeptBytes || buffer.capacity() <= 2 * recent_;
    }
    // Empties `buffer`, and frees its storage when it does not fit.
    template <class Buffer>
    void fit(Buffer& buffer) const {
        if (fits(buffer)) {
            buffer.clear();
        } else {
            Buffer().swap(buffer);
        }
    }

  private:
    std::size_t recent_ = 0;
};

}  // namespace refgate::runtime
