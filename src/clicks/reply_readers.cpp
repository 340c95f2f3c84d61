#include "refgate/clicks/reply_readers.hpp"

#include <algorithm>
#include <charconv>

#include "refgate/domain/stats_report.hpp"

namespace refgate::clicks {
namespace {

using redis::Reply;

// Texts are built with append(): GCC 12 at -O3 takes "literal" + std::string for an overlapping
// copy (-Wrestrict, GCC bug 105651) and the Release build stops on it.
std::string quoted(std::string_view text) {
    std::string out = "'";
    return out.append(text).append("'");
}

std::string describe(const Reply& reply) {
    switch (reply.type) {
        case Reply::Type::nil:
            return "nil";
        case Reply::Type::error:
            return "error " + reply.str;
        case Reply::Type::integer:
            return "integer " + std::to_string(reply.integer);
        case Reply::Type::array:
            return "an array of " + std::to_string(reply.elements.size());
        default:
            return quoted(std::string_view(reply.str).substr(0, 64));
    }
}

ReplyProblem unexpected(std::string_view expected, const Reply& reply) {
    std::string text = "expected ";
    text.append(expected).append(", got ").append(describe(reply));
    return {std::move(text)};
}

// The whole text is one decimal number as Redis and our scripts write it: an optional '-', then
// digits without a leading zero; no blank, '+' or tail. "0897" would name another key than 897
// (a bucket id is part of its key), so it is refused rather than read as 897.
bool whole_int64(std::string_view text, std::int64_t& out) {
    std::string_view digits = text.starts_with('-') ? text.substr(1) : text;
    if (digits.empty() || digits.front() < '0' || digits.front() > '9' ||
        (digits.front() == '0' && (digits.size() > 1 || digits.size() != text.size())))
        return false;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && ptr == text.data() + text.size();
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

ReplyRead<std::int64_t> read_int64(const Reply& reply) {
    if (reply.type == Reply::Type::integer) return static_cast<std::int64_t>(reply.integer);
    std::int64_t value = 0;
    if ((reply.type == Reply::Type::string || reply.type == Reply::Type::status) &&
        whole_int64(reply.str, value))
        return value;
    return unexpected("a number", reply);
}

ReplyRead<std::uint64_t> read_count(const Reply& reply) {
    if (reply.type != Reply::Type::integer || reply.integer < 0)
        return unexpected("a count", reply);
    return static_cast<std::uint64_t>(reply.integer);
}

ReplyRead<ClosedBuckets> read_closed_buckets(const Reply& reply) {
    if (reply.type != Reply::Type::array || reply.elements.empty())
        return unexpected("the time and the closed buckets", reply);
    auto ids = read_bucket_ids(reply);
    if (auto* problem = std::get_if<ReplyProblem>(&ids)) return *problem;
    ClosedBuckets closed;
    closed.ids = std::move(std::get<std::vector<std::int64_t>>(ids));
    closed.store_now = closed.ids.front();
    closed.ids.erase(closed.ids.begin());
    std::sort(closed.ids.begin(), closed.ids.end());
    return closed;
}

ReplyRead<std::vector<std::int64_t>> read_bucket_ids(const Reply& reply) {
    if (reply.type != Reply::Type::array) return unexpected("bucket ids", reply);
    std::vector<std::int64_t> ids;
    ids.reserve(reply.elements.size());
    for (const auto& element : reply.elements) {
        auto id = read_int64(element);
        auto* value = std::get_if<std::int64_t>(&id);
        if (value == nullptr || *value < 0) return unexpected("a bucket id", element);
        ids.push_back(*value);
    }
    return ids;
}

ReplyRead<SaltKey> read_salt(const Reply& reply) {
    if (reply.type != Reply::Type::string || reply.str.size() != 32)
        return unexpected("a salt of 32 hex digits", reply);
    SaltKey salt;
    for (std::size_t i = 0; i < salt.size(); ++i) {
        int high = hex_digit(reply.str[2 * i]), low = hex_digit(reply.str[2 * i + 1]);
        if (high < 0 || low < 0) return unexpected("a salt of 32 hex digits", reply);
        salt[i] = static_cast<std::uint8_t>(high * 16 + low);
    }
    return salt;
}

ReplyRead<std::string> read_config_value(const Reply& reply, std::string_view name) {
    if (reply.type != Reply::Type::array || reply.elements.size() != 2 ||
        reply.elements[0].type != Reply::Type::string || reply.elements[0].str != name ||
        reply.elements[1].type != Reply::Type::string)
        return unexpected(std::string("[").append(name).append(", value]"), reply);
    return reply.elements[1].str;
}

ReplyRead<std::vector<UniqueEstimate>> read_changed_members(const Reply& reply) {
    if (reply.type != Reply::Type::array) return unexpected("changed estimates", reply);
    std::vector<UniqueEstimate> out;
    out.reserve(reply.elements.size());
    for (const auto& member : reply.elements) {
        if (member.type != Reply::Type::string) return unexpected("a member", member);
        UniqueEstimate e;
        if (parse_hll_member(member.str, e)) out.push_back(e);
    }
    return out;
}

bool parse_hll_member(std::string_view member, UniqueEstimate& out) {
    auto colon = member.find(':');
    if (colon == std::string_view::npos) return false;
    auto day = domain::parse_day(member.substr(0, colon));
    std::int64_t link = 0;
    if (!day || !whole_int64(member.substr(colon + 1), link) || link < 0) return false;
    out.day = *day;
    out.link_id = link;
    return true;
}

}  // namespace refgate::clicks
