#include "refgate/redis/reply_readers.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>

namespace refgate::redis {
namespace {

std::string_view text_of(const redisReply* r) { return {r->str, r->len}; }

bool is_string(const redisReply* r) { return r != nullptr && r->type == REDIS_REPLY_STRING; }

bool all_digits(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A host as a sentinel names it: no blank, control or byte a connect or a log line would trip on.
bool plain_host(std::string_view host) {
    return !host.empty() && std::all_of(host.begin(), host.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u > 0x20 && u < 0x7f;
    });
}

// "+switch-master" payload: "<name> <old ip> <old port> <new ip> <new port>", single spaces.
bool parse_switch(std::string_view payload, std::string& name, std::string& to) {
    std::vector<std::string_view> parts;
    while (parts.size() < 6) {
        auto space = payload.find(' ');
        parts.push_back(payload.substr(0, space));
        if (space == std::string_view::npos) break;
        payload.remove_prefix(space + 1);
    }
    if (parts.size() != 5) return false;
    std::string_view port_text = parts[4];
    int port = 0;
    auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (parts[0].empty() || !plain_host(parts[3]) || !all_digits(port_text) || ec != std::errc{} ||
        ptr != port_text.data() + port_text.size() || port < 1 || port > 65535)
        return false;
    name = parts[0];
    to = std::string(parts[3]) + ":" + std::string(port_text);
    return true;
}

}  // namespace

Reply copy_reply(const redisReply* r) {
    Reply out;
    switch (r->type) {
        case REDIS_REPLY_STATUS:
            out.type = Reply::Type::status;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_ERROR:
            out.type = Reply::Type::error;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_INTEGER:
            out.type = Reply::Type::integer;
            out.integer = r->integer;
            break;
        case REDIS_REPLY_STRING:
            out.type = Reply::Type::string;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_ARRAY:
            out.type = Reply::Type::array;
            out.elements.reserve(r->elements);
            for (std::size_t i = 0; i < r->elements; ++i)
                out.elements.push_back(copy_reply(r->element[i]));
            break;
        default:
            out.type = Reply::Type::nil;
    }
    return out;
}

std::string reply_text(const redisReply* r) {
    if (r == nullptr) return "no reply";
    if (r->type == REDIS_REPLY_ERROR || r->type == REDIS_REPLY_STATUS ||
        r->type == REDIS_REPLY_STRING)
        return std::string(text_of(r));
    if (r->type == REDIS_REPLY_NIL) return "nil";
    return "an unexpected reply";
}

std::variant<MasterAddress, std::string> read_master_address(const redisReply* r,
                                                             const std::string& master_name) {
    if (r->type == REDIS_REPLY_NIL) return "no master named '" + master_name + "'";
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !is_string(r->element[0]) ||
        !is_string(r->element[1]))
        return reply_text(r);
    MasterAddress out;
    out.host = text_of(r->element[0]);
    if (!plain_host(out.host)) return "a bad master host '" + out.host + "'";
    std::string_view port = text_of(r->element[1]);
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
    if (!all_digits(port) || ec != std::errc{} || ptr != port.data() + port.size() ||
        out.port < 1 || out.port > 65535)
        return "a bad port '" + std::string(port) + "'";
    return out;
}

std::optional<std::string> read_role(const redisReply* r) {
    if (r->type != REDIS_REPLY_ARRAY || r->elements == 0 || !is_string(r->element[0]))
        return std::nullopt;
    return std::string(text_of(r->element[0]));
}

bool read_switch_message(const redisReply* r, std::string& name, std::string& to) {
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3) return false;
    for (std::size_t i = 0; i < 3; ++i) {
        if (!is_string(r->element[i])) return false;
    }
    if (text_of(r->element[0]) != "message") return false;
    return parse_switch(text_of(r->element[2]), name, to);
}

std::variant<HscanPage, std::string> read_hscan_page(const redisReply* r) {
    if (r->type == REDIS_REPLY_ERROR) return std::string(text_of(r));
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !is_string(r->element[0]) ||
        r->element[1]->type != REDIS_REPLY_ARRAY)
        return "unexpected reply (" + reply_text(r) + ")";
    HscanPage page;
    page.cursor = text_of(r->element[0]);
    if (!all_digits(page.cursor)) return "a bad cursor '" + page.cursor + "'";
    const redisReply* entries = r->element[1];
    if (entries->elements % 2 != 0) return "an odd number of fields and values";
    page.entries.reserve(entries->elements / 2);
    for (std::size_t i = 0; i < entries->elements; i += 2) {
        const redisReply* field = entries->element[i];
        const redisReply* value = entries->element[i + 1];
        if (!is_string(field) || !is_string(value)) return "a field or value that is no string";
        page.entries.emplace_back(text_of(field), text_of(value));
    }
    return page;
}

}  // namespace refgate::redis
