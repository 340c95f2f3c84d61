#pragma once

// The answer a per-thread handler last worked out for a request path. A handler is told a
// request's path at its request line and its header's end (Handler::prepare) and then handles
// it: with this it works its answer out once. The path's bytes are compared, never its address
// (a connection reads each request into the same buffer), so an answer is never stale. Paths
// longer than kMaxPath are not remembered, so that remembering never allocates.

#include <cstddef>
#include <cstring>
#include <string_view>

namespace refgate::http {

template <typename Value>
class PathMemo {
  public:
    static constexpr std::size_t kMaxPath = 256;

    // The value remembered for exactly this path, or null.
    const Value* find(std::string_view path) const {
        if (!known_ || path.size() != size_) return nullptr;
        if (size_ != 0 && std::memcmp(path.data(), bytes_, size_) != 0) return nullptr;
        return &value_;
    }
    void remember(std::string_view path, const Value& value) {
        known_ = path.size() <= kMaxPath;
        if (!known_) return;
        if (!path.empty()) std::memcpy(bytes_, path.data(), path.size());
        size_ = path.size();
        value_ = value;
    }
    void forget() { known_ = false; }

  private:
    char bytes_[kMaxPath];
    std::size_t size_ = 0;
    Value value_{};
    bool known_ = false;
};

}  // namespace refgate::http
