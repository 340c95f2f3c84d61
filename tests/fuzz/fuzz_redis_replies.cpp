// The Redis reply readers (refgate/clicks/reply_readers.hpp, refgate/redis/reply_readers.hpp):
// the input is raw RESP bytes, read by hiredis's own reader (redisReaderFeed / GetReply) into the
// reply trees the client gets from a server, then handed to every reader. Invariants: no reader
// throws or reads outside the reply; copying a reply out of hiredis and writing it back as RESP
// gives the same reply; a value a reader accepts, written back as the reply Redis would send for
// it, reads back as the same value (so nothing was read out of text that holds more).
//
// hiredis 0.14 allocates an array's element table as soon as it reads "*<count>" (1.0 added a
// limit): a count above 4096 would only measure that, so such inputs are skipped. Redis is a
// trusted peer; the readers' job is to refuse a reply of the wrong shape, not a hostile one.

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>

#include "fuzz_check.hpp"
#include "refgate/clicks/reply_readers.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/redis/reply_readers.hpp"

namespace {

using refgate::redis::Reply;
namespace clicks = refgate::clicks;
namespace redis = refgate::redis;

struct FreeReply {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using RawReply = std::unique_ptr<redisReply, FreeReply>;

constexpr std::size_t kMaxArray = 4096;
constexpr std::size_t kMaxReplies = 64;

bool huge_array(std::string_view bytes) {
    for (std::size_t at = bytes.find('*'); at != std::string_view::npos;
         at = bytes.find('*', at + 1)) {
        std::size_t count = 0, i = at + 1;
        while (i < bytes.size() && std::isdigit(static_cast<unsigned char>(bytes[i])) &&
               count <= kMaxArray)
            count = count * 10 + static_cast<std::size_t>(bytes[i++] - '0');
        if (count > kMaxArray) return true;
    }
    return false;
}

std::vector<RawReply> read_all(std::string_view bytes) {
    std::unique_ptr<redisReader, void (*)(redisReader*)> reader(redisReaderCreate(),
                                                                redisReaderFree);
    std::vector<RawReply> out;
    if (redisReaderFeed(reader.get(), bytes.data(), bytes.size()) != REDIS_OK) return out;
    while (out.size() < kMaxReplies) {
        void* raw = nullptr;
        if (redisReaderGetReply(reader.get(), &raw) != REDIS_OK || raw == nullptr) break;
        out.emplace_back(static_cast<redisReply*>(raw));
    }
    return out;
}

void encode(const Reply& r, std::string& out) {
    switch (r.type) {
        case Reply::Type::nil:
            out += "$-1\r\n";
            break;
        case Reply::Type::status:
            out += "+" + r.str + "\r\n";
            break;
        case Reply::Type::error:
            out += "-" + r.str + "\r\n";
            break;
        case Reply::Type::integer:
            out += ":" + std::to_string(r.integer) + "\r\n";
            break;
        case Reply::Type::string:
            out += "$" + std::to_string(r.str.size()) + "\r\n" + r.str + "\r\n";
            break;
        case Reply::Type::array:
            out += "*" + std::to_string(r.elements.size()) + "\r\n";
            for (const auto& e : r.elements) encode(e, out);
            break;
    }
}

// `r` sent by a server and read by hiredis again.
RawReply resend_raw(const Reply& r) {
    std::string bytes;
    encode(r, bytes);
    auto replies = read_all(bytes);
    FUZZ_CHECK(replies.size() == 1);
    return std::move(replies.front());
}
Reply resend(const Reply& r) { return redis::copy_reply(resend_raw(r).get()); }

Reply bulk(std::string text) { return {Reply::Type::string, std::move(text), 0, {}}; }
Reply array(std::vector<Reply> elements) {
    return {Reply::Type::array, {}, 0, std::move(elements)};
}

// A copy of what a reader read: the reads below are temporaries.
template <typename T>
std::optional<T> ok(const refgate::clicks::ReplyRead<T>& read) {
    if (const T* value = std::get_if<T>(&read)) return *value;
    return std::nullopt;
}

void check_numbers(const Reply& r) {
    if (auto v = ok(refgate::clicks::read_int64(r))) {
        FUZZ_CHECK(*ok(refgate::clicks::read_int64(resend(bulk(std::to_string(*v))))) == *v);
        FUZZ_CHECK(r.type != Reply::Type::string || r.str == std::to_string(*v));
    }
    if (auto n = ok(refgate::clicks::read_count(r)))
        FUZZ_CHECK(r.type == Reply::Type::integer && static_cast<long long>(*n) == r.integer);
    if (auto closed = ok(refgate::clicks::read_closed_buckets(r))) {
        FUZZ_CHECK(closed->ids.size() + 1 == r.elements.size());
        FUZZ_CHECK(std::is_sorted(closed->ids.begin(), closed->ids.end()));
        std::vector<Reply> again{bulk(std::to_string(closed->store_now))};
        for (auto id : closed->ids) again.push_back(bulk(std::to_string(id)));
        auto read = ok(refgate::clicks::read_closed_buckets(resend(array(again))));
        FUZZ_CHECK(read && read->store_now == closed->store_now && read->ids == closed->ids);
    }
    if (auto ids = ok(refgate::clicks::read_bucket_ids(r))) {
        FUZZ_CHECK(ids->size() == r.elements.size());
        std::vector<Reply> again;
        for (auto id : *ids) {
            FUZZ_CHECK(id >= 0);
            again.push_back(bulk(std::to_string(id)));
        }
        FUZZ_CHECK(*ok(refgate::clicks::read_bucket_ids(resend(array(again)))) == *ids);
    }
}

void check_texts(const Reply& r) {
    if (auto salt = ok(refgate::clicks::read_salt(r))) {
        std::string hex;
        for (auto byte : *salt) {
            const char* digits = "0123456789abcdef";
            hex += digits[byte >> 4];
            hex += digits[byte & 15];
        }
        FUZZ_CHECK(std::equal(hex.begin(), hex.end(), r.str.begin(), r.str.end(),
                              [](char a, char b) { return a == std::tolower(b); }));
        FUZZ_CHECK(*ok(refgate::clicks::read_salt(resend(bulk(hex)))) == *salt);
    }
    if (auto value = ok(refgate::clicks::read_config_value(r, "appendonly")))
        FUZZ_CHECK(*ok(refgate::clicks::read_config_value(
                       resend(array({bulk("appendonly"), bulk(*value)})), "appendonly")) == *value);
    if (auto members = ok(refgate::clicks::read_changed_members(r))) {
        FUZZ_CHECK(members->size() <= r.elements.size());
        std::vector<Reply> again;
        for (const auto& e : *members) {
            FUZZ_CHECK(e.link_id >= 0);
            again.push_back(
                bulk(refgate::domain::format_day(e.day) + ":" + std::to_string(e.link_id)));
        }
        auto read = ok(refgate::clicks::read_changed_members(resend(array(again))));
        FUZZ_CHECK(read && read->size() == members->size());
        for (std::size_t i = 0; i < read->size(); ++i)
            FUZZ_CHECK((*read)[i].day == (*members)[i].day &&
                       (*read)[i].link_id == (*members)[i].link_id);
    }
}

void check_client_readers(const redisReply* raw, const Reply& r) {
    (void)redis::reply_text(raw);
    if (auto role = redis::read_role(raw)) FUZZ_CHECK(*role == r.elements.at(0).str);
    auto page = redis::read_hscan_page(raw);
    if (const auto* p = std::get_if<redis::HscanPage>(&page)) {
        FUZZ_CHECK(!p->cursor.empty() &&
                   std::all_of(p->cursor.begin(), p->cursor.end(), ::isdigit));
        const auto& entries = r.elements.at(1).elements;
        FUZZ_CHECK(p->entries.size() * 2 == entries.size());
        for (std::size_t i = 0; i < p->entries.size(); ++i)
            FUZZ_CHECK(p->entries[i].first == entries[2 * i].str &&
                       p->entries[i].second == entries[2 * i + 1].str);
    }
    auto master = redis::read_master_address(raw, "mymaster");
    if (const auto* m = std::get_if<redis::MasterAddress>(&master)) {
        FUZZ_CHECK(m->port >= 1 && m->port <= 65535 && !m->host.empty());
        auto again = resend_raw(array({bulk(m->host), bulk(std::to_string(m->port))}));
        auto read = redis::read_master_address(again.get(), "mymaster");
        FUZZ_CHECK(std::get<redis::MasterAddress>(read).text() == m->text());
    }
    std::string name, to;
    if (redis::read_switch_message(raw, name, to)) {
        FUZZ_CHECK(!name.empty() && to.find(':') != std::string::npos);
        FUZZ_CHECK(r.elements.at(2).str.starts_with(name + " "));
        FUZZ_CHECK(r.elements.at(2).str.ends_with(" " + to.substr(0, to.rfind(':')) + " " +
                                                  to.substr(to.rfind(':') + 1)));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto bytes = refgate::fuzz::as_text(data, size);
    if (huge_array(bytes)) return 0;
    for (const auto& raw : read_all(bytes)) {
        Reply r = redis::copy_reply(raw.get());
        FUZZ_CHECK(resend(r) == r);
        check_numbers(r);
        check_texts(r);
        check_client_readers(raw.get(), r);
    }
    return 0;
}
