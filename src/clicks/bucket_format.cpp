#include "refgate/clicks/bucket_format.hpp"

#include <charconv>

namespace refgate::clicks {

void append_batch_line(std::string& blob, const domain::CounterKey& key, std::uint64_t clicks) {
    char line[domain::CounterKey::kMaxFieldLength + 1 + 20 + 1];
    char* p = line + key.write_field(line);
    *p++ = ' ';
    p = std::to_chars(p, line + sizeof line, clicks).ptr;
    *p++ = '\n';
    blob.append(line, static_cast<std::size_t>(p - line));
}

bool parse_bucket_count(std::string_view text, std::uint64_t& out) {
    if (text.empty()) return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && end == text.data() + text.size();
}

}  // namespace refgate::clicks
