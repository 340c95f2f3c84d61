#pragma once

// The RFC 4180 reader of the CSV imports (links, commissions): one record at a time, with the
// line it starts on.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace refgate::codec {

// Reads records one at a time, counting lines (a quoted line break is a line too).
class CsvReader {
  public:
    explicit CsvReader(std::string_view text) : text_(text) {}

    bool done() const { return pos_ >= text_.size(); }
    std::size_t line() const { return line_; }

    // The next record's fields; nullopt when a quote is not closed before the end.
    std::optional<std::vector<std::string>> next() {
        std::vector<std::string> fields(1);
        bool quoted = false;
        while (pos_ < text_.size()) {
            char c = text_[pos_++];
            if (quoted) {
                if (c == '"' && pos_ < text_.size() && text_[pos_] == '"') {
                    fields.back().push_back('"');
                    ++pos_;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    if (c == '\n') ++line_;
                    fields.back().push_back(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                fields.emplace_back();
            } else if (c == '\n' || (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n')) {
                if (c == '\r') ++pos_;
                ++line_;
                return fields;
            } else {
                fields.back().push_back(c);
            }
        }
        if (quoted) return std::nullopt;
        return fields;
    }

  private:
    std::string_view text_;
    std::size_t pos_ = 0;
    std::size_t line_ = 1;
};

}  // namespace refgate::codec
