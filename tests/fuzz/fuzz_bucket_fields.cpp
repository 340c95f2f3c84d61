// The readers of what the flusher gets back from Redis: a bucket hash field ("batch:<id>" with
// lines "<counter field> <clicks>", or an older "<counter field>" -> clicks) and the counter field
// itself ("42|2026-11-29|newsletter|human"). Input: the hash field name, a newline, its value.
// Invariants: a counter field is accepted only in the canonical form the writer produces (so one
// counter is never read under two spellings); the lines passed on are exactly the value's lines;
// a batch written by append_batch_line reads back as written.

#include "fuzz_check.hpp"
#include "refgate/clicks/bucket_format.hpp"
#include "refgate/domain/counter_key.hpp"

namespace {

void check_counter(std::string_view field, std::uint64_t clicks) {
    refgate::domain::CounterKey key;
    if (!refgate::domain::CounterKey::parse_field(field, key)) return;
    FUZZ_CHECK(key.field() == field);
    FUZZ_CHECK(key.is_targeting() || refgate::domain::valid_channel(key.channel_view()));
    std::string blob;
    refgate::clicks::append_batch_line(blob, key, clicks);
    std::size_t lines = 0;
    bool ok = refgate::clicks::decode_bucket_field("batch:1", blob,
                                                   [&](std::string_view f, std::uint64_t n) {
                                                       FUZZ_CHECK(f == field);
                                                       FUZZ_CHECK(n == clicks);
                                                       ++lines;
                                                   });
    FUZZ_CHECK(ok && lines == 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto parts = refgate::fuzz::split_lines(refgate::fuzz::as_text(data, size), 2);
    std::size_t consumed = 0;
    bool batch = parts[0].starts_with(refgate::clicks::kBatchFieldPrefix);
    bool ok = refgate::clicks::decode_bucket_field(
        parts[0], parts[1], [&](std::string_view f, std::uint64_t n) {
            // Every field passed on lies inside the value (or is the name), in order.
            if (batch) {
                FUZZ_CHECK(f.data() >= parts[1].data() + consumed);
                FUZZ_CHECK(f.find('\n') == std::string_view::npos);
                consumed = static_cast<std::size_t>(f.data() + f.size() - parts[1].data());
            } else {
                FUZZ_CHECK(f == parts[0]);
            }
            check_counter(f, n);
        });
    if (ok && batch) FUZZ_CHECK(parts[1].empty() || parts[1].back() == '\n');
    return 0;
}
