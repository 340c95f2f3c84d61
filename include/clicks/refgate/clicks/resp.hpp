#pragma once

// Redis commands written in the RESP wire format into one reused buffer, so that sending a window
// of counts builds no argument vectors and no strings per value. The buffer keeps the capacity
// recent windows needed (runtime/recent_room.hpp); clear() empties it.

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "refgate/runtime/recent_room.hpp"

namespace refgate::clicks {

class RespWriter {
  public:
    void clear() {
        room_.note(out_.size());
        room_.fit(out_);
        commands_ = 0;
    }

    // Starts a command of `args` arguments (the command name included); exactly that many arg()
    // calls must follow.
    RespWriter& command(std::size_t args) {
        ++commands_;
        out_.push_back('*');
        append_number(args);
        out_.append("\r\n");
        return *this;
    }

    RespWriter& arg(std::string_view value) {
        out_.push_back('$');
        append_number(value.size());
        out_.append("\r\n");
        out_.append(value);
        out_.append("\r\n");
        return *this;
    }

    RespWriter& arg(std::uint64_t value) {
        char digits[24];
        auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
        return arg(std::string_view(digits, static_cast<std::size_t>(end - digits)));
    }

    RespWriter& arg(std::int64_t value) {
        char digits[24];
        auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
        return arg(std::string_view(digits, static_cast<std::size_t>(end - digits)));
    }

    std::string_view data() const { return out_; }
    std::size_t commands() const { return commands_; }
    bool empty() const { return commands_ == 0; }

  private:
    void append_number(std::size_t n) {
        char digits[24];
        auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
        out_.append(digits, static_cast<std::size_t>(end - digits));
    }

    std::string out_;
    std::size_t commands_ = 0;
    runtime::RecentRoom room_;
};

}  // namespace refgate::clicks
