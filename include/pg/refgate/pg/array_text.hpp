#pragma once

// The text form of a one-dimensional PostgreSQL array ('{1,2,3}', '{"a","b"}'), built element by
// element, for a `$1::bigint[]` or `$1::text[]` parameter. Text elements are always quoted, so
// that a value spelled "null" stays a string.

#include <charconv>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace refgate::pg {

class ArrayText {
  public:
    explicit ArrayText(std::size_t reserve = 0) {
        text_.reserve(reserve);
        text_.push_back('{');
    }
    void add(std::string_view value) {
        separate();
        text_.push_back('"');
        for (char c : value) {
            if (c == '"' || c == '\\') text_.push_back('\\');
            text_.push_back(c);
        }
        text_.push_back('"');
    }
    template <typename Integer>
    void add_number(Integer value) {
        separate();
        char digits[24];
        text_.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
    }
    std::size_t size() const { return size_; }
    std::string finish() {
        text_.push_back('}');
        return std::move(text_);
    }

  private:
    void separate() {
        if (size_++ > 0) text_.push_back(',');
    }
    std::string text_;
    std::size_t size_ = 0;
};

inline std::string bigint_array(std::span<const std::int64_t> values) {
    ArrayText text(values.size() * 8);
    for (auto v : values) text.add_number(v);
    return text.finish();
}

template <typename Strings>
std::string text_array(const Strings& values) {
    ArrayText text;
    for (const auto& v : values) text.add(v);
    return text.finish();
}

}  // namespace refgate::pg
