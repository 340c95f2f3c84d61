#include "refgate/domain/placement.hpp"

#include <algorithm>

#include "refgate/domain/ascii.hpp"
#include "refgate/domain/counter_key.hpp"

namespace refgate::domain {
namespace {

constexpr char kBase36[] = "0123456789abcdefghijklmnopqrstuvwxyz";
constexpr std::uint64_t kDigestModulus = 2'821'109'907'456ULL;  // 36^8
constexpr std::size_t kMaxCharsetText = 64;

int base36_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    return -1;
}

using ascii::is_alnum;
using ascii::is_digit;
using ascii::is_lower;
using ascii::is_upper;
using ascii::to_lower;

// Both ends of a range of one kind: two lower-case letters, two upper-case ones or two digits.
bool same_kind(char a, char b) noexcept {
    return (is_lower(a) && is_lower(b)) || (is_upper(a) && is_upper(b)) ||
           (is_digit(a) && is_digit(b));
}

}  // namespace

std::optional<SubidCharset> SubidCharset::parse(std::string_view text) {
    if (text.empty() || text.size() > kMaxCharsetText) return std::nullopt;
    SubidCharset set;
    auto add = [&](char c) {
        auto u = static_cast<unsigned char>(c);
        set.bits_[u >> 6] |= std::uint64_t{1} << (u & 63);
    };
    for (std::size_t i = 0; i < text.size();) {
        char c = text[i];
        bool alnum_next = i + 2 < text.size() && is_alnum(text[i + 2]);
        if (is_alnum(c) && alnum_next && text[i + 1] == '-') {
            // A range: both ends of one kind, in order ("a-Z" and "z-a" are no ranges).
            if (!same_kind(c, text[i + 2]) || text[i + 2] < c) return std::nullopt;
            for (char x = c; x <= text[i + 2]; ++x) add(x);
            i += 3;
        } else if (is_alnum(c) || c == '-' || c == '_' || c == '.') {
            add(c);
            ++i;
        } else {
            return std::nullopt;
        }
    }
    for (char sep : {'_', '.', '-'}) {
        if (set.allows(sep)) {
            set.separator_ = sep;
            break;
        }
    }
    return set;
}

char SubidCharset::map(char c) const noexcept {
    if (allows(c)) return c;
    if (is_lower(c) && allows(static_cast<char>(c - 'a' + 'A')))
        return static_cast<char>(c - 'a' + 'A');
    if (is_upper(c) && allows(to_lower(c))) return to_lower(c);
    return 0;
}

std::uint64_t channel_digest(std::string_view channel) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, 64-bit
    for (unsigned char c : channel) h = (h ^ c) * 0x100000001b3ULL;
    h ^= h >> 30;  // splitmix64's finaliser
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h % kDigestModulus;
}

std::size_t write_opaque_token(char* out, std::int64_t link_id, std::string_view channel) noexcept {
    char digits[16];
    std::size_t n = 0;
    auto id = static_cast<std::uint64_t>(link_id < 0 ? 0 : link_id);
    do {
        digits[n++] = kBase36[id % 36];
        id /= 36;
    } while (id != 0);
    std::size_t length = 0;
    while (n > 0) out[length++] = digits[--n];
    std::uint64_t digest = channel_digest(channel);
    for (std::size_t i = kChannelDigestLength; i > 0; --i) {
        out[length + i - 1] = kBase36[digest % 36];
        digest /= 36;
    }
    return length + kChannelDigestLength;
}

std::size_t write_readable_token(char* out, std::string_view slug, std::string_view channel,
                                 const SubidCharset& charset) noexcept {
    std::size_t length = 0;
    for (std::size_t i = 0; i < slug.size() && i < 64; ++i) {
        if (char c = charset.map(slug[i]); c != 0) out[length++] = c;
    }
    if (charset.separator() != 0) out[length++] = charset.separator();
    for (std::size_t i = 0; i < channel.size() && i < kMaxChannelLength; ++i) {
        if (char c = charset.map(channel[i]); c != 0) out[length++] = c;
    }
    return length;
}

PlacementStyle placement_style(const Partner& partner) {
    PlacementStyle style;
    style.style = partner.subid_style;
    if (auto charset = SubidCharset::parse(partner.subid_charset)) {
        style.charset = *charset;
    } else {
        style.charset = *SubidCharset::parse("a-z0-9");
    }
    return style;
}

std::size_t write_token(char* out, const PlacementStyle& style, std::int64_t link_id,
                        std::string_view slug, std::string_view channel) noexcept {
    if (style.style == SubidStyle::readable)
        return write_readable_token(out, slug, channel, style.charset);
    return write_opaque_token(out, link_id, channel);
}

std::string placement_token(const Partner& partner, std::int64_t link_id, std::string_view slug,
                            std::string_view channel) {
    char buffer[kMaxToken];
    std::size_t n = write_token(buffer, placement_style(partner), link_id, slug, channel);
    return std::string(buffer, n);
}

bool valid_placement_token(std::string_view token) noexcept {
    if (token.empty() || token.size() > kMaxToken) return false;
    for (char c : token) {
        if (!is_alnum(c) && c != '_' && c != '.' && c != '-') return false;
    }
    return true;
}

std::optional<OpaqueToken> parse_opaque_token(std::string_view token) noexcept {
    if (token.size() <= kChannelDigestLength || token.size() > kMaxOpaqueToken) return std::nullopt;
    std::string_view id_part = token.substr(0, token.size() - kChannelDigestLength);
    if (id_part.size() > 1 && id_part.front() == '0') return std::nullopt;
    OpaqueToken parsed;
    unsigned __int128 id = 0;
    for (char c : id_part) {
        int v = base36_value(c);
        if (v < 0) return std::nullopt;
        id = id * 36 + static_cast<unsigned>(v);
        if (id > static_cast<unsigned __int128>(INT64_MAX)) return std::nullopt;
    }
    parsed.link_id = static_cast<std::int64_t>(id);
    for (char c : token.substr(id_part.size())) {
        int v = base36_value(c);
        if (v < 0) return std::nullopt;
        parsed.digest = parsed.digest * 36 + static_cast<unsigned>(v);
    }
    return parsed;
}

std::string readable_prefix(std::string_view slug, const SubidCharset& charset) {
    std::string prefix;
    for (char c : slug) {
        if (char m = charset.map(c); m != 0) prefix.push_back(m);
    }
    if (!prefix.empty() && charset.separator() != 0) prefix.push_back(charset.separator());
    return prefix;
}

const std::string& code_for_channel(const Partner& partner, std::string_view channel) noexcept {
    for (const auto& entry : partner.channel_codes) {
        std::string_view pattern = entry.channel;
        bool match = pattern.ends_with('*')
                         ? channel.starts_with(pattern.substr(0, pattern.size() - 1))
                         : channel == pattern;
        if (match) return entry.ref_code;
    }
    return partner.ref_code;
}

std::optional<std::string> subid_param_problem(const Partner& partner) {
    const std::string& name = partner.subid_param;
    if (!valid_param_name(name)) return "must be 1 to 64 of A-Z a-z 0-9 _ . -, or null";
    std::string folded(name.size(), ' ');
    std::transform(name.begin(), name.end(), folded.begin(), to_lower);
    if (folded.starts_with("utm_"))
        return "must not start with utm_ (a visitor's utm_* parameters may pass through)";
    auto folded_equal = [&](std::string_view other) {
        if (other.size() != folded.size()) return false;
        for (std::size_t i = 0; i < other.size(); ++i) {
            if (to_lower(other[i]) != folded[i]) return false;
        }
        return true;
    };
    // In any case: the Location removes every spelling of the sub-ID parameter.
    if (folded_equal(partner.ref_param))
        return "must differ (in any case) from the referral parameter '" + partner.ref_param + "'";
    for (const auto& [key, value] : partner.extra_params) {
        if (folded_equal(key))
            return "must differ (in any case) from the extra parameter '" + key + "'";
    }
    return std::nullopt;
}

bool valid_channel_pattern(std::string_view pattern) noexcept {
    if (pattern.ends_with('*')) {
        pattern.remove_suffix(1);
        if (pattern.empty()) return true;
        if (pattern.size() >= kMaxChannelLength) return false;
        // A prefix of a channel: a channel itself, or one followed by '.', '_' or '-'.
        while (!pattern.empty() &&
               (pattern.back() == '.' || pattern.back() == '_' || pattern.back() == '-'))
            pattern.remove_suffix(1);
        return valid_channel(pattern);
    }
    return valid_channel(pattern);
}

std::optional<std::pair<std::string, std::string>> readable_collision(
    std::span<const std::string> slugs, const SubidCharset& charset) {
    std::vector<std::pair<std::string, std::string>> links;
    links.reserve(slugs.size());
    for (const auto& slug : slugs) links.emplace_back(slug, slug);
    return readable_collision(links, charset);
}

std::optional<std::pair<std::string, std::string>> readable_collision(
    std::span<const std::pair<std::string, std::string>> links, const SubidCharset& charset) {
    std::vector<std::pair<std::string, std::string>> prefixes;  // (prefix, name)
    prefixes.reserve(links.size());
    for (const auto& [slug, name] : links) {
        std::string prefix = readable_prefix(slug, charset);
        if (prefix.empty()) return std::pair{name, name};
        prefixes.emplace_back(std::move(prefix), name);
    }
    // Sorted, a prefix that begins another begins the one right after it.
    std::sort(prefixes.begin(), prefixes.end());
    for (std::size_t i = 1; i < prefixes.size(); ++i) {
        if (prefixes[i].second == prefixes[i - 1].second) continue;  // one link named twice
        if (prefixes[i].first.starts_with(prefixes[i - 1].first))
            return std::pair{prefixes[i - 1].second, prefixes[i].second};
    }
    return std::nullopt;
}

std::optional<std::string> readable_token_problem(const Partner& partner,
                                                  const std::vector<Link>& links) {
    if (partner.subid_param.empty() || partner.subid_style != SubidStyle::readable)
        return std::nullopt;
    auto charset = SubidCharset::parse(partner.subid_charset);
    if (!charset) return std::nullopt;  // reported as the charset's own problem
    // A link is named by its slug, or host/slug on a domain other than the default: the same
    // slug on two domains gives the same tokens, which would name two links.
    std::vector<std::pair<std::string, std::string>> named;
    for (const auto& link : links) {
        if (branches_to(link, partner.slug).empty()) continue;
        named.emplace_back(link.slug,
                           link.domain.empty() ? link.slug : link.domain + "/" + link.slug);
    }
    auto pair = readable_collision(named, *charset);
    if (!pair) return std::nullopt;
    auto slug_of = [](const std::string& name) { return name.substr(name.rfind('/') + 1); };
    if (pair->first == pair->second)
        return "readable sub-ID tokens of link '" + pair->first +
               "' would hold none of its slug (" + "subid_charset " + partner.subid_charset +
               " keeps none of its characters)";
    return "readable sub-ID tokens of links '" + pair->first + "' and '" + pair->second +
           "' could collide ('" + readable_prefix(slug_of(pair->first), *charset) + "' begins '" +
           readable_prefix(slug_of(pair->second), *charset) + "' with subid_charset " +
           partner.subid_charset +
           "): rename one, allow a separator (_ . -) in subid_charset, or use opaque tokens";
}

}  // namespace refgate::domain
