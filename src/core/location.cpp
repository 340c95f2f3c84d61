#include "refgate/core/location.hpp"

#include <boost/url/parse_query.hpp>
#include <boost/url/url.hpp>

#include "refgate/core/html.hpp"

namespace refgate {
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

// Everything but RFC 3986 unreserved characters is percent-encoded, so that '+', '&', '=' and
// '#' in a code or value reach the partner as themselves whatever decoder it uses.
std::string encode_component(std::string_view text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size() * 3);
    for (unsigned char c : text) {
        bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
        if (unreserved) {
            out.push_back(static_cast<char>(c));
        } else {
            out.push_back('%');
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 0xf]);
        }
    }
    return out;
}

void set_param(boost::urls::url& url, std::string_view key, std::string_view value) {
    // Boost.URL 1.81 misreads an empty query ("?" or "?#f") as holding parameters and can read
    // out of bounds when one is set (boostorg/url#864): drop an empty query first.
    if (url.has_query() && url.encoded_query().empty()) url.remove_query();
    std::string encoded_value = encode_component(value);
    url.encoded_params().set(boost::urls::pct_string_view(encode_component(key)),
                             boost::urls::pct_string_view(encoded_value));
}

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
    boost::urls::url url{destination};
    if (utm_passthrough && !incoming_query.empty()) {
        if (url.has_query() && url.encoded_query().empty()) url.remove_query();
        // Incoming parameters are copied in their (already valid) percent-encoded form.
        auto encoded = url.encoded_params();
        auto incoming = boost::urls::parse_query(incoming_query);
        if (incoming) {
            std::size_t taken = 0;
            for (auto param : *incoming) {
                if (taken == kMaxUtmParams) break;
                if (!param.has_value || param.key == partner.ref_param ||
                    is_extra_key(partner, param.key) ||
                    !acceptable_utm(param.key, param.value.decode())) {
                    continue;
                }
                encoded.set(param.key, param.value);
                ++taken;
            }
        }
    }
    set_param(url, partner.ref_param, partner.ref_code);
    for (const auto& [key, value] : partner.extra_params) {
        if (key != partner.ref_param) set_param(url, key, value);
    }
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
    out.append(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Redirecting</title>"
        "</head><body><p><a href=\"");
    append_escaped_html(out, location);
    out.append("\">");
    append_escaped_html(out, label);
    append_escaped_html(out, label_name);
    out.append("</a></p></body></html>\n");
}

}  // namespace refgate
