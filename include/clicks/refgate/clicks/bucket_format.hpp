#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "refgate/domain/counter_key.hpp"

namespace refgate::clicks {

// A Redis bucket hash holds one field per batch of counts: "batch:<batch id>" -> one line
// "<counter field> <clicks>\n" per count, so that adding a batch costs Redis one HSET whatever its
// size. Buckets written by refgate before this form hold one field per counter
// ("<counter field>" -> clicks); both forms are read.
constexpr std::string_view kBatchFieldPrefix = "batch:";
void append_batch_line(std::string& blob, const domain::CounterKey& key, std::uint64_t clicks);
// Calls `add(counter field, clicks)` for each count in one field of a bucket hash, in either form.
// False (after passing on the lines before it) at the first malformed line or count; the counter
// fields themselves are checked by the caller. A template: the flusher calls `add` for every line
// of every batch, hundreds of thousands per flush under load.
bool parse_bucket_count(std::string_view text, std::uint64_t& out);
template <typename Add>
bool decode_bucket_field(std::string_view name, std::string_view value, Add&& add) {
    std::uint64_t clicks = 0;
    if (!name.starts_with(kBatchFieldPrefix)) {
        if (!parse_bucket_count(value, clicks)) return false;
        add(name, clicks);
        return true;
    }
    while (!value.empty()) {
        auto eol = value.find('\n');
        if (eol == std::string_view::npos) return false;
        auto line = value.substr(0, eol);
        value.remove_prefix(eol + 1);
        auto space = line.rfind(' ');
        if (space == std::string_view::npos || !parse_bucket_count(line.substr(space + 1), clicks))
            return false;
        add(line.substr(0, space), clicks);
    }
    return true;
}

}  // namespace refgate::clicks
