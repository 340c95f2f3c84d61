// The Location builder. Input lines: destination, referral parameter, referral code, extra
// parameters ("k=v&k2=v2"), incoming query. Only destinations and partners that pass the save
// checks are built (as on every save path). Invariants: scheme, host, port, path and fragment are
// the destination's; the referral parameter appears once with the partner's code; every extra
// parameter is set; every acceptable utm_* parameter passed is in the output with its value; no
// other parameter from the incoming query is. Read as a server reads it that splits the query on
// '&' alone, and as one that splits on ';' too (older Python, Go before 1.17, Rack 2): the
// referral and every extra parameter appear once, with the partner's values; a passed utm_* value
// holds nothing but unreserved bytes, '+' and %XX escapes, so none of its bytes can start a
// parameter.
// A sixth line, when given, is a sub-ID parameter (placements, issue 42; partners whose save
// checks refuse it are built without one): the Location of the incoming query's channel, as the
// redirect writes it from the snapshot's and as built afresh (with utm_* passed through), carries
// that parameter exactly once in any case, whichever way the query is split, with the
// placement's token (never a visitor's value), and the channel's code as the referral code.

#include <algorithm>
#include <boost/url/parse.hpp>
#include <boost/url/parse_query.hpp>
#include <boost/url/url_view.hpp>
#include <cctype>
#include <map>

#include "fuzz_check.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/destination.hpp"
#include "refgate/domain/location.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/placement.hpp"

namespace {

namespace urls = boost::urls;
using refgate::fuzz::as_text;

bool printable(std::string_view text) {
    for (unsigned char c : text) {
        if (c < 0x20 || c == 0x7f) return false;
    }
    return true;
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

// The rules of location.cpp for a utm_* parameter that passes through, restated independently.
bool passes(const urls::param_pct_view& p, const refgate::domain::Partner& partner) {
    std::string_view key = p.key;
    if (!p.has_value || !key.starts_with("utm_") || key.size() <= 4 || key.size() > 64)
        return false;
    if (key == partner.ref_param || iequals(key, partner.subid_param)) return false;
    for (const auto& [k, v] : partner.extra_params) {
        if (k == key) return false;
    }
    for (char c : key) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    }
    auto value = p.value.decode();
    return value.size() <= 256 && printable(value);
}

std::size_t count_key(const urls::url_view& url, std::string_view key) {
    std::size_t n = 0;
    for (auto p : url.params()) n += p.key == key ? 1 : 0;
    return n;
}

std::optional<std::string> value_of(const urls::url_view& url, std::string_view key) {
    for (auto p : url.params()) {
        if (p.key == key) return p.value;
    }
    return std::nullopt;
}

std::optional<std::string> encoded_value_of(const urls::url_view& url, std::string_view key) {
    for (auto p : url.encoded_params()) {
        if (p.key == key) return std::string(p.value);
    }
    return std::nullopt;
}

// Percent-decoding as servers do it, '+' read as a space (form decoding).
std::string form_decode(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        auto hex = [](char c) {
            if (c >= '0' && c <= '9') return c - '0';
            if (c >= 'a' && c <= 'f') return c - 'a' + 10;
            if (c >= 'A' && c <= 'F') return c - 'A' + 10;
            return -1;
        };
        if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 &&
            hex(text[i + 2]) >= 0) {
            out.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
            i += 2;
        } else {
            out.push_back(text[i] == '+' ? ' ' : text[i]);
        }
    }
    return out;
}

// The Location's query as (key, value) pairs, decoded, split on `separators`.
std::vector<std::pair<std::string, std::string>> read_query(const urls::url_view& url,
                                                            std::string_view separators) {
    std::vector<std::pair<std::string, std::string>> out;
    if (!url.has_query()) return out;
    std::string_view query = url.encoded_query();
    std::size_t pos = 0;
    while (pos <= query.size()) {
        std::size_t end = std::min(query.find_first_of(separators, pos), query.size());
        std::string_view piece = query.substr(pos, end - pos);
        std::size_t eq = piece.find('=');
        out.emplace_back(form_decode(piece.substr(0, eq)),
                         eq == std::string_view::npos ? "" : form_decode(piece.substr(eq + 1)));
        pos = end + 1;
    }
    return out;
}

void check_read_once(const std::vector<std::pair<std::string, std::string>>& params,
                     const std::string& key, const std::string& value) {
    std::size_t n = 0;
    for (const auto& [k, v] : params) {
        if (k != key) continue;
        ++n;
        FUZZ_CHECK(v == value);  // encoded whole: no '+' of its own
    }
    FUZZ_CHECK(n == 1);
}

bool encoded_only(std::string_view value) {
    for (std::size_t i = 0; i < value.size(); ++i) {
        char c = value[i];
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '.' || c == '_' || c == '~' || c == '+';
        if (plain) continue;
        auto hex = [&](std::size_t at) {
            return std::isxdigit(static_cast<unsigned char>(value[at])) != 0;
        };
        if (c != '%' || i + 2 >= value.size() || !hex(i + 1) || !hex(i + 2)) return false;
        i += 2;
    }
    return true;
}

std::size_t pluses(std::string_view text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '+'));
}

// `partner`'s ref_code is the code expected (the channel's, for a partner with placements);
// `token` the sub-ID expected when it has a sub-ID parameter.
void check_location(const urls::url_view& dest, const refgate::domain::Partner& partner,
                    std::string_view incoming, const std::string& location,
                    const std::string& token = {}) {
    for (unsigned char c : location) FUZZ_CHECK(c > 0x20 && c < 0x7f);
    auto parsed = urls::parse_uri(location);
    FUZZ_CHECK(parsed.has_value());
    const urls::url_view& out = *parsed;
    FUZZ_CHECK(out.scheme() == dest.scheme());
    FUZZ_CHECK(out.encoded_host_and_port() == dest.encoded_host_and_port());
    FUZZ_CHECK(!out.has_userinfo());
    FUZZ_CHECK(out.encoded_path() == dest.encoded_path());
    FUZZ_CHECK(out.has_fragment() == dest.has_fragment());
    FUZZ_CHECK(out.encoded_fragment() == dest.encoded_fragment());
    FUZZ_CHECK(count_key(out, partner.ref_param) == 1);
    FUZZ_CHECK(value_of(out, partner.ref_param) == partner.ref_code);
    for (const auto& [k, v] : partner.extra_params) {
        FUZZ_CHECK(count_key(out, k) == 1);
        FUZZ_CHECK(value_of(out, k) == v);
    }
    // The utm_* parameters expected: the first eight that pass, a later one replacing an earlier.
    std::map<std::string, std::string> utm;
    // A NUL-terminated copy: Boost.URL 1.81's parse_query runs strlen() over the view's data.
    std::string own_query(incoming);
    auto params = urls::parse_query(own_query);
    if (params) {
        std::size_t taken = 0;
        for (auto p : *params) {
            if (taken == 8) break;
            if (!passes(p, partner)) continue;
            utm[std::string(p.key)] = std::string(p.value);
            ++taken;
        }
    }
    for (const auto& [k, v] : utm) {
        FUZZ_CHECK(count_key(out, k) == 1);
        // Written again from its encoded form: the same bytes once decoded, the same '+' signs
        // (a space or a plus, as the partner's decoder reads the visitor's own), nothing else
        // unescaped.
        auto passed = encoded_value_of(out, k);
        FUZZ_CHECK(passed.has_value());
        FUZZ_CHECK(encoded_only(*passed));
        FUZZ_CHECK(urls::pct_string_view(*passed).decode() == urls::pct_string_view(v).decode());
        FUZZ_CHECK(pluses(*passed) == pluses(v));
    }
    for (std::string_view separators : {"&", "&;"}) {
        auto read = read_query(out, separators);
        check_read_once(read, partner.ref_param, partner.ref_code);
        for (const auto& [k, v] : partner.extra_params) check_read_once(read, k, v);
    }
    // The sub-ID parameter: once, in any case and however split, with the placement's token.
    if (!partner.subid_param.empty()) {
        for (std::string_view separators : {"&", "&;"}) {
            std::size_t n = 0;
            for (const auto& [k, v] : read_query(out, separators)) {
                if (!iequals(k, partner.subid_param)) continue;
                ++n;
                FUZZ_CHECK(v == token);
            }
            FUZZ_CHECK(n == 1);
        }
    }
    // Nothing else: every other parameter of the output was in the destination.
    for (auto p : out.params()) {
        bool partner_key = p.key == partner.ref_param ||
                           (!partner.subid_param.empty() && iequals(p.key, partner.subid_param));
        for (const auto& [k, v] : partner.extra_params) partner_key = partner_key || p.key == k;
        FUZZ_CHECK(partner_key || utm.contains(p.key) || count_key(dest, p.key) > 0);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto parts = refgate::fuzz::split_lines(as_text(data, size), 6);
    refgate::domain::Partner partner;
    partner.ref_param = parts[1];
    partner.ref_code = parts[2];
    if (!refgate::domain::valid_param_name(partner.ref_param) || partner.ref_code.empty() ||
        partner.ref_code.size() > 128 || !printable(partner.ref_code))
        return 0;
    for (const auto& pair : refgate::fuzz::split_list(parts[3], '&')) {
        auto eq = pair.find('=');
        std::string key = pair.substr(0, eq);
        std::string value = eq == std::string::npos ? "" : pair.substr(eq + 1);
        if (!refgate::domain::valid_param_name(key) || key == partner.ref_param ||
            !printable(value))
            return 0;
        for (const auto& [k, v] : partner.extra_params) {
            if (k == key) return 0;
        }
        partner.extra_params.emplace_back(key, value);
    }
    auto check = refgate::domain::check_destination(parts[0], {"example.com", "tailscale.com"}, {});
    if (!check.ok()) return 0;
    auto dest = urls::parse_uri(check.canonical);
    FUZZ_CHECK(dest.has_value());

    check_location(*dest, partner, {}, refgate::domain::build_location(check.canonical, partner));
    check_location(*dest, partner, parts[4],
                   refgate::domain::build_location(check.canonical, partner, true, parts[4]));

    partner.subid_param = parts[5];
    if (partner.subid_param.empty() || refgate::domain::subid_param_problem(partner)) return 0;
    partner.channel_codes = {{"newsletter", "nl-" + partner.ref_code.substr(0, 100)},
                             {"blog-*", "blog code&="}};
    if (partner.subid_param.size() % 2 == 1) {
        partner.subid_style = refgate::domain::SubidStyle::readable;
        partner.subid_charset = "a-z0-9_";
    }
    // The channel and the token come from the validated channel only.
    std::string_view channel = refgate::domain::read_channel(parts[4]).channel;
    const std::string& code = refgate::domain::code_for_channel(partner, channel);
    std::string token = refgate::domain::placement_token(partner, 42, "pick-1", channel);
    refgate::domain::Partner expected = partner;
    expected.ref_code = code;
    auto placed = refgate::domain::placed_location(check.canonical, partner, 42, "pick-1");
    FUZZ_CHECK(placed.has_value());
    std::string written;
    refgate::domain::write_placed_location(written, placed->location, placed->slots, code, token);
    FUZZ_CHECK(written ==
               refgate::domain::build_placement_location(check.canonical, partner, code, token));
    check_location(*dest, expected, {}, written, token);
    check_location(*dest, expected, parts[4],
                   refgate::domain::build_placement_location(check.canonical, partner, code, token,
                                                             true, parts[4]),
                   token);
    return 0;
}
