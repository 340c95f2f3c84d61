#include "refgate/domain/location.hpp"

#include <algorithm>
#include <boost/url/parse_query.hpp>
#include <boost/url/url.hpp>
#include <boost/url/url_view.hpp>
#include <optional>
#include <vector>

#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/html.hpp"
#include "refgate/domain/placement.hpp"

namespace refgate::domain {
namespace {

constexpr std::size_t kMaxUtmKey = 64;
constexpr std::size_t kMaxUtmValue = 256;
constexpr std::size_t kMaxUtmParams = 8;

bool is_extra_key(const Partner& partner, std::string_view key) {
    for (const auto& [k, v] : partner.extra_params) {
        if (k == key) return true;
    }
    return false;
}

bool acceptable_utm(std::string_view key, std::string_view value) {
    if (!key.starts_with("utm_") || key.size() <= 4 || key.size() > kMaxUtmKey) return false;
    for (char c : key) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        if (!ok) return false;
    }
    if (value.size() > kMaxUtmValue) return false;
    for (unsigned char c : value) {
        if (c < 0x20 || c == 0x7f) return false;
    }
    return true;
}

bool unreserved(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

void append_escaped(std::string& out, unsigned char c) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    out.push_back('%');
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xf]);
}

// Everything but RFC 3986 unreserved characters is percent-encoded, so that '+', '&', '=' and
// '#' in a code or value reach the partner as themselves whatever decoder it uses.
std::string encode_component(std::string_view text) {
    std::string out;
    out.reserve(text.size() * 3);
    for (unsigned char c : text) {
        if (unreserved(c)) {
            out.push_back(static_cast<char>(c));
        } else {
            append_escaped(out, c);
        }
    }
    return out;
}

// A visitor's value, written again from its percent-encoded form: escapes are decoded and every
// byte but the unreserved ones is escaped, so that nothing in it can end the parameter or start
// another under any query parser ('&', ';', '=', '#'). A '+' stays a '+': form decoders read it
// as a space and others as a plus, exactly as they would have read the visitor's own query.
std::string reencode_value(std::string_view encoded) {
    std::string out;
    out.reserve(encoded.size() * 3);
    for (std::size_t i = 0; i < encoded.size(); ++i) {
        auto c = static_cast<unsigned char>(encoded[i]);
        if (c == '%' && i + 2 < encoded.size() && hex_digit(encoded[i + 1]) >= 0 &&
            hex_digit(encoded[i + 2]) >= 0) {
            c = static_cast<unsigned char>(hex_digit(encoded[i + 1]) * 16 +
                                           hex_digit(encoded[i + 2]));
            i += 2;
        } else if (c == '+') {
            out.push_back('+');
            continue;
        }
        if (unreserved(c)) {
            out.push_back(static_cast<char>(c));
        } else {
            append_escaped(out, c);
        }
    }
    return out;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

// The partner's sub-ID parameter, in any case: networks differ in how they compare names, so no
// spelling of it but the token's may reach one.
bool subid_key(const Partner& partner, std::string_view decoded_key) {
    return !partner.subid_param.empty() && equals_ignoring_case(decoded_key, partner.subid_param);
}

// A key the partner locks: its referral parameter, one of its extra parameters or its sub-ID
// parameter.
bool locked_key(const Partner& partner, std::string_view decoded_key) {
    return decoded_key == partner.ref_param || is_extra_key(partner, decoded_key) ||
           subid_key(partner, decoded_key);
}

bool locked_piece(std::string_view piece, const Partner& partner) {
    auto encoded = boost::urls::make_pct_string_view(piece);
    return encoded && locked_key(partner, encoded->decode());
}

void escape_semicolons(std::string& text) {
    for (std::size_t semi = text.find(';'); semi != std::string::npos;
         semi = text.find(';', semi + 3)) {
        text.replace(semi, 1, "%3B");
    }
}

// Servers that split a query on ';' as well as '&' (older Python, Go before 1.17, Rack 2) would
// read "a=1;ref=x" or "ref;a=1" of a destination as a second referral parameter. Such a ';'
// becomes "%3B": every reader then reads the parameter as one that splits on '&' alone does, the
// locked name inside another parameter's key or value.
// A key: every ';'-separated piece of it is a key to those servers; when one is locked, all of
// its ';' are escaped.
void escape_locked_key(std::string& key, const Partner& partner) {
    for (std::size_t start = 0; start <= key.size();) {
        std::size_t end = std::min(key.find(';', start), key.size());
        if (end == key.size() && start == 0) return;  // no ';': set() deals with the key
        if (locked_piece(std::string_view(key).substr(start, end - start), partner)) {
            escape_semicolons(key);
            return;
        }
        start = end + 1;
    }
}

// A value: each piece after a ';' is a parameter of its own to those servers, its key before the
// first '='; the ';' before a locked one is escaped.
void escape_locked_value(std::string& value, const Partner& partner) {
    for (std::size_t semi = value.find(';'); semi != std::string::npos;
         semi = value.find(';', semi + 1)) {
        std::string_view piece = std::string_view(value).substr(semi + 1);
        piece = piece.substr(0, piece.find_first_of(";="));
        if (locked_piece(piece, partner)) value.replace(semi, 1, "%3B");
    }
}

// The destination's query as a list of percent-encoded parameters, edited here and written back
// once. Boost.URL 1.81's params_encoded_ref::set() fails an assertion inside its erase (and reads
// out of bounds without assertions) on some queries that hold the key more than once, and misreads
// an empty query ("?" or "?#f") as holding a parameter (boostorg/url#864).
class Params {
  public:
    explicit Params(const boost::urls::url_view& url) {
        if (!url.has_query() || url.encoded_query().empty()) return;
        for (auto p : url.encoded_params()) {
            params_.push_back(
                {std::string(p.key),
                 p.has_value ? std::optional<std::string>(std::string(p.value)) : std::nullopt});
        }
    }

    // As set() of Boost.URL: the first parameter of that (decoded) key takes the key's spelling
    // and the value, every other of that key goes; appended when there is none. Keys compare
    // decoded, so that "r%65f" cannot stand beside a locked "ref".
    void set(std::string_view encoded_key, std::string_view encoded_value) {
        set_where(encoded_key, encoded_value,
                  [](std::string_view a, std::string_view b) { return a == b; });
    }

    // set() with keys compared decoded and ignoring case: every spelling of the key goes, the
    // first one's place taking `encoded_key` and the value.
    void set_any_case(std::string_view encoded_key, std::string_view encoded_value) {
        set_where(encoded_key, encoded_value, [](std::string_view a, std::string_view b) {
            return equals_ignoring_case(a, b);
        });
    }

    // Removes every parameter whose decoded key is `key` in any case.
    void remove_any_case(std::string_view key) {
        std::erase_if(params_, [&](const Param& p) {
            return equals_ignoring_case(boost::urls::pct_string_view(p.key).decode(), key);
        });
    }

    // No ';'-separated piece of the destination's query may name a parameter the partner
    // locks (escape_locked_key(), escape_locked_value()).
    void escape_locked(const Partner& partner) {
        for (auto& p : params_) {
            escape_locked_key(p.key, partner);
            if (p.value) escape_locked_value(*p.value, partner);
        }
    }

    void write_to(boost::urls::url& url) const {
        std::string query;
        for (const auto& p : params_) {
            if (!query.empty()) query.push_back('&');
            query.append(p.key);
            if (p.value) query.append("=").append(*p.value);
        }
        if (params_.empty()) {
            url.remove_query();
        } else {
            url.set_encoded_query(boost::urls::pct_string_view(query));
        }
    }

  private:
    template <typename SameKey>
    void set_where(std::string_view encoded_key, std::string_view encoded_value, SameKey same) {
        auto key = boost::urls::pct_string_view(encoded_key).decode();
        bool found = false;
        for (auto it = params_.begin(); it != params_.end();) {
            if (!same(boost::urls::pct_string_view(it->key).decode(), key)) {
                ++it;
            } else if (!found) {
                it->key = std::string(encoded_key);
                it->value = std::string(encoded_value);
                found = true;
                ++it;
            } else {
                it = params_.erase(it);
            }
        }
        if (!found) params_.push_back({std::string(encoded_key), std::string(encoded_value)});
    }

    struct Param {
        std::string key;
        std::optional<std::string> value;
    };
    std::vector<Param> params_;
};

}  // namespace

bool query_has_utm(std::string_view raw_query) {
    std::size_t pos = 0;
    while (pos <= raw_query.size()) {
        if (raw_query.substr(pos).starts_with("utm_")) return true;
        auto amp = raw_query.find('&', pos);
        if (amp == std::string_view::npos) break;
        pos = amp + 1;
    }
    return false;
}

std::string build_location(std::string_view destination, const Partner& partner,
                           bool utm_passthrough, std::string_view incoming_query) {
    return build_placement_location(destination, partner, partner.ref_code, std::nullopt,
                                    utm_passthrough, incoming_query);
}

std::string build_placement_location(std::string_view destination, const Partner& partner,
                                     std::string_view code, std::optional<std::string_view> token,
                                     bool utm_passthrough, std::string_view incoming_query) {
    boost::urls::url url{destination};
    Params params(url);
    params.escape_locked(partner);
    if (utm_passthrough && !incoming_query.empty()) {
        // Boost.URL 1.81's parse_query builds its result from data() with strlen(), reading past
        // the end of a view that is not NUL-terminated (a request target is not: the headers
        // follow it). A copy ends where the query ends; the grammar admits no NUL inside it.
        std::string own_query(incoming_query);
        auto incoming = boost::urls::parse_query(own_query);
        if (incoming) {
            std::size_t taken = 0;
            for (auto param : *incoming) {
                if (taken == kMaxUtmParams) break;
                if (!param.has_value || locked_key(partner, param.key) ||
                    !acceptable_utm(param.key, param.value.decode())) {
                    continue;
                }
                params.set(param.key, reencode_value(param.value));
                ++taken;
            }
        }
    }
    params.set(encode_component(partner.ref_param), encode_component(code));
    for (const auto& [key, value] : partner.extra_params) {
        if (key != partner.ref_param) params.set(encode_component(key), encode_component(value));
    }
    if (!partner.subid_param.empty()) {
        if (token) {
            params.set_any_case(encode_component(partner.subid_param), encode_component(*token));
        } else {
            params.remove_any_case(partner.subid_param);
        }
    }
    params.write_to(url);
    return std::string(url.buffer());
}

std::string redirect_page(std::string_view location, std::string_view label) {
    std::string html;
    html.reserve(location.size() * 2 + 160);
    append_redirect_page(html, location, label);
    return html;
}

void append_redirect_page(std::string& out, std::string_view location, std::string_view label,
                          std::string_view label_name) {
    constexpr std::string_view kHead =
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Redirecting</title>"
        "</head><body><p><a href=\"";
    constexpr std::string_view kMiddle = "\">";
    constexpr std::string_view kTail = "</a></p></body></html>\n";
    // Sized once for the worst case and cut to what was written: a page per redirect.
    const std::size_t start = out.size();
    out.resize(start + kHead.size() + escaped_html_room(location.size()) + kMiddle.size() +
               escaped_html_room(label.size()) + escaped_html_room(label_name.size()) +
               kTail.size());
    char* to = std::copy(kHead.begin(), kHead.end(), out.data() + start);
    to = write_escaped_html(to, location);
    to = std::copy(kMiddle.begin(), kMiddle.end(), to);
    to = write_escaped_html(to, label);
    to = write_escaped_html(to, label_name);
    to = std::copy(kTail.begin(), kTail.end(), to);
    out.resize(static_cast<std::size_t>(to - out.data()));
}

// What build_location() appends to a destination without a query: "ref=code&extra=value..."
// (taken from build_location() itself, so the encoding is its own). Empty when the partner's
// parameters are not plain enough for the fast path (a repeated key, say).
LocationSuffix location_suffix(const Partner& partner) {
    // A Location per channel is built by placed_location(), whose destination check is its own.
    if (has_placements(partner)) return {};
    std::vector<std::string_view> keys{partner.ref_param};
    for (const auto& [key, value] : partner.extra_params) {
        if (key == partner.ref_param) continue;
        if (!valid_param_name(key) || std::find(keys.begin(), keys.end(), key) != keys.end()) {
            return {};
        }
        keys.push_back(key);
    }
    constexpr std::string_view kProbe = "https://probe.invalid/";
    std::string probe = build_location(kProbe, partner);
    if (probe.size() <= kProbe.size() + 1 || !probe.starts_with(kProbe) ||
        probe[kProbe.size()] != '?' || probe.find('#') != std::string::npos) {
        return {};
    }
    return {probe.substr(kProbe.size() + 1)};
}

// build_location(destination, partner) for a destination that passed the checks above: when its
// query (if any) is plain and names none of the partner's parameters, setting them appends them
// to the query, and the fragment follows unchanged. Anything else goes through build_location().
std::string build_location(std::string_view destination, const Partner& partner,
                           const LocationSuffix& suffix) {
    if (suffix.text.empty()) return build_location(destination, partner);
    std::size_t hash = destination.find('#');
    std::string_view base = destination.substr(0, hash);
    std::string_view fragment =
        hash == std::string_view::npos ? std::string_view{} : destination.substr(hash);
    std::size_t question = base.find('?');
    if (question != std::string_view::npos) {
        std::string_view query = base.substr(question + 1);
        if (query.empty()) return build_location(destination, partner);
        std::size_t start = 0;
        while (start <= query.size()) {
            std::size_t end = query.find('&', start);
            if (end == std::string_view::npos) end = query.size();
            std::string_view param = query.substr(start, end - start);
            std::string_view key = param.substr(0, param.find('='));
            for (char c : param) {
                bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                             (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                             c == '~' || c == '=';
                if (!plain) return build_location(destination, partner);
            }
            if (key.empty() || key == partner.ref_param)
                return build_location(destination, partner);
            for (const auto& extra : partner.extra_params) {
                if (key == extra.first) return build_location(destination, partner);
            }
            start = end + 1;
        }
    }
    std::string out;
    out.reserve(destination.size() + 1 + suffix.text.size());
    out.append(base).push_back(question == std::string_view::npos ? '?' : '&');
    out.append(suffix.text).append(fragment);
    return out;
}

bool has_placements(const Partner& partner) {
    return !partner.subid_param.empty() || !partner.channel_codes.empty();
}

std::optional<PlacedLocation> placed_location(std::string_view destination, const Partner& partner,
                                              std::int64_t link_id, std::string_view slug) {
    // Built once with markers in the code's and the token's places, which are then found and
    // replaced by the "direct" channel's. A marker that the destination already holds is
    // replaced by another, so each is found exactly once.
    char token[kMaxToken];
    std::size_t token_length =
        write_token(token, placement_style(partner), link_id, slug, kDirectChannel);
    const std::string& direct_code = code_for_channel(partner, kDirectChannel);
    bool code_slot = !partner.channel_codes.empty();
    bool token_slot = !partner.subid_param.empty();
    auto once = [](const std::string& text, const std::string& marker) {
        auto at = text.find(marker);
        return at != std::string::npos && text.find(marker, at + 1) == std::string::npos;
    };
    for (int attempt = 0; attempt < 16; ++attempt) {
        std::string code_marker = "zqRGcode" + std::to_string(attempt) + "Xq";
        std::string token_marker = "zqRGtoken" + std::to_string(attempt) + "Xq";
        std::string built = build_placement_location(
            destination, partner, code_slot ? std::string_view(code_marker) : direct_code,
            token_slot ? std::optional<std::string_view>(token_marker) : std::nullopt);
        if ((code_slot && !once(built, code_marker)) || (token_slot && !once(built, token_marker)))
            continue;
        std::string encoded_code = encode_component(direct_code);
        PlacedLocation placed;
        // Each replacement moves the other part when that part comes after it.
        std::size_t code_at = code_slot ? built.find(code_marker) : 0;
        std::size_t token_at = token_slot ? built.find(token_marker) : 0;
        auto replace_code = [&] {
            built.replace(code_at, code_marker.size(), encoded_code);
            if (token_slot && token_at > code_at)
                token_at = token_at - code_marker.size() + encoded_code.size();
        };
        auto replace_token = [&] {
            built.replace(token_at, token_marker.size(), token, token_length);
            if (code_slot && code_at > token_at)
                code_at = code_at - token_marker.size() + token_length;
        };
        if (code_slot) replace_code();
        if (token_slot) replace_token();
        if (built.size() > 0xffff) return std::nullopt;
        placed.slots.code_at = static_cast<std::uint16_t>(code_at);
        placed.slots.code_length = code_slot ? static_cast<std::uint16_t>(encoded_code.size()) : 0;
        placed.slots.token_at = static_cast<std::uint16_t>(token_at);
        placed.slots.token_length = static_cast<std::uint16_t>(token_slot ? token_length : 0);
        placed.location = std::move(built);
        return placed;
    }
    return std::nullopt;
}

void write_placed_location(std::string& out, std::string_view location, const PlacementSlots& slots,
                           std::string_view code, std::string_view token) {
    out.clear();
    // The two parts in the order they come in the Location.
    struct Part {
        std::size_t at = 0;
        std::size_t length = 0;
        bool code = false;
    };
    Part first{slots.code_at, slots.code_length, true};
    Part second{slots.token_at, slots.token_length, false};
    if (first.at == 0 || (second.at != 0 && second.at < first.at)) std::swap(first, second);
    std::size_t from = 0;
    for (const Part& part : {first, second}) {
        if (part.at == 0) continue;
        out.append(location.substr(from, part.at - from));
        if (part.code) {
            for (unsigned char c : code) {
                if (unreserved(c)) {
                    out.push_back(static_cast<char>(c));
                } else {
                    append_escaped(out, c);
                }
            }
        } else {
            out.append(token);
        }
        from = part.at + part.length;
    }
    out.append(location.substr(from));
}

}  // namespace refgate::domain
