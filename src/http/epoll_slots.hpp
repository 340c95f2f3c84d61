#pragma once

// What IdleParking and ConnectionPoller share: an epoll set of the thread's own that Asio's
// reactor watches as one descriptor, and the slots its events name. An event carries a token, a
// slot's index and generation, so that one fetched for a slot freed (and maybe reused) since is
// recognised as stale and skipped.

#include <sys/epoll.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <vector>

namespace refgate::http {

// Opens the set once; false (errno set) when it cannot be made or Asio cannot watch it (no
// memory or descriptors, max_user_watches): the caller fails what it was adding, and the next
// call tries again.
inline bool open_epoll_set(boost::asio::io_context& ioc,
                           std::optional<boost::asio::posix::stream_descriptor>& set) {
    if (set) return true;
    int fd = ::epoll_create1(EPOLL_CLOEXEC);
    if (fd < 0) return false;
    boost::system::error_code ec;
    set.emplace(ioc);
    set->assign(fd, ec);
    if (ec) {
        ::close(fd);
        set.reset();
        errno = ec.value();
        return false;
    }
    return true;
}

template <class T>
class EpollSlots {
  public:
    // A free slot (a new generation), its value reset.
    std::uint32_t acquire() {
        std::uint32_t index;
        if (!free_.empty()) {
            index = free_.back();
            free_.pop_back();
        } else {
            index = static_cast<std::uint32_t>(slots_.size());
            slots_.emplace_back();
        }
        Slot& slot = slots_[index];
        slot.value = T{};
        slot.used = true;
        ++slot.generation;
        return index;
    }
    void release(std::uint32_t index) {
        slots_[index].used = false;
        free_.push_back(index);
    }
    std::uint64_t token(std::uint32_t index) const {
        return (std::uint64_t{slots_[index].generation} << 32) | index;
    }
    static constexpr std::uint32_t kStale = UINT32_MAX;
    // The index of the slot a token names, or kStale when that slot was released since.
    std::uint32_t find(std::uint64_t token) const {
        auto index = static_cast<std::uint32_t>(token);
        if (index >= slots_.size()) return kStale;
        const Slot& slot = slots_[index];
        if (!slot.used || slot.generation != static_cast<std::uint32_t>(token >> 32)) return kStale;
        return index;
    }
    T& operator[](std::uint32_t index) { return slots_[index].value; }
    // Calls f(index, value) for every slot in use.
    template <class F>
    void for_each(F&& f) {
        for (std::uint32_t i = 0; i < slots_.size(); ++i) {
            if (slots_[i].used) f(i, slots_[i].value);
        }
    }

  private:
    struct Slot {
        T value{};
        std::uint32_t generation = 0;
        bool used = false;
    };
    std::vector<Slot> slots_;
    std::vector<std::uint32_t> free_;
};

}  // namespace refgate::http
