#pragma once

// Placements (issue 42): the sub-ID token a partner's Locations carry, naming the link and the
// click's channel and nothing about the reader, and the per-channel referral codes. Pure values
// in, values out; the redirect writes tokens without allocating (write_token()).

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/domain/model.hpp"

namespace refgate::domain {

// Opaque tokens: the link's id in base36 and an 8-digit base36 digest of the channel.
constexpr std::size_t kChannelDigestLength = 8;
constexpr std::size_t kMaxOpaqueToken = 13 + kChannelDigestLength;  // 13: base36 of 2^63 - 1
// Readable tokens: the slug, a separator, the channel (slug 64 + 1 + channel 48).
constexpr std::size_t kMaxReadableToken = 64 + 1 + 48;
constexpr std::size_t kMaxToken = kMaxReadableToken;

// The characters a readable token may hold, from a partner's `subid_charset`: ranges of lower-case
// letters, upper-case letters or digits ("a-z", "A-F", "0-9") and the literals '-', '_' and '.',
// written one after the other ("a-z0-9", "a-zA-Z0-9_-"); nothing else.
class SubidCharset {
  public:
    // nullopt when the text is not of that syntax (or is empty, or longer than 64).
    static std::optional<SubidCharset> parse(std::string_view text);
    bool allows(char c) const noexcept {
        auto u = static_cast<unsigned char>(c);
        return u < 128 && ((bits_[u >> 6] >> (u & 63)) & 1u) != 0;
    }
    // The separator between slug and channel: '_', else '.', else '-' if allowed; 0: none.
    char separator() const noexcept { return separator_; }
    // A character of a slug or channel as the token writes it: itself when allowed, else the
    // letter in the other case when that is allowed; 0: dropped.
    char map(char c) const noexcept;

  private:
    std::array<std::uint64_t, 2> bits_{};
    char separator_ = 0;
};

// The digest of a channel in opaque tokens: FNV-1a (64-bit) of its bytes, then the finaliser of
// splitmix64, modulo 36^8. Fixed: the same on every machine and in every version.
std::uint64_t channel_digest(std::string_view channel) noexcept;

// The opaque token of (link id, channel) into `out` (at least kMaxOpaqueToken bytes): base36
// of the id (at least 1) followed by the digest in exactly 8 base36 digits. Returns its length.
std::size_t write_opaque_token(char* out, std::int64_t link_id, std::string_view channel) noexcept;
// The readable token of (slug, channel) into `out` (at least kMaxReadableToken bytes): the slug's
// characters as the charset maps them, its separator (if any), the channel's mapped the same way.
std::size_t write_readable_token(char* out, std::string_view slug, std::string_view channel,
                                 const SubidCharset& charset) noexcept;

// A partner's token settings, parsed once (a snapshot keeps one per partner).
struct PlacementStyle {
    SubidStyle style = SubidStyle::opaque;
    SubidCharset charset;  // readable only
};
PlacementStyle placement_style(const Partner& partner);
// The token of a placement in that style, into `out` (at least kMaxToken bytes).
std::size_t write_token(char* out, const PlacementStyle& style, std::int64_t link_id,
                        std::string_view slug, std::string_view channel) noexcept;
std::string placement_token(const Partner& partner, std::int64_t link_id, std::string_view slug,
                            std::string_view channel);

// What a token of either style can look like: 1 to kMaxToken of A-Z a-z 0-9 _ . -
bool valid_placement_token(std::string_view token) noexcept;

// An opaque token taken apart: the link id and the channel's digest; nullopt when it is not
// the form write_opaque_token() writes.
struct OpaqueToken {
    std::int64_t link_id = 0;
    std::uint64_t digest = 0;
};
std::optional<OpaqueToken> parse_opaque_token(std::string_view token) noexcept;
// What a readable token of `slug` starts with: the mapped slug and the separator.
std::string readable_prefix(std::string_view slug, const SubidCharset& charset);

// The referral code for a click of `channel`: the first of the partner's channel_codes whose
// channel is equal, or whose prefix pattern ("nl-*") the channel starts with; else the partner's
// ref_code (the code in effect).
const std::string& code_for_channel(const Partner& partner, std::string_view channel) noexcept;

// Checks of the partner's placement fields, for every save path (messages name no field).
// `subid_param`: a parameter name, not the referral parameter nor an extra one, not starting with
// "utm_" in any case (a visitor's utm_* parameters pass through on some links).
std::optional<std::string> subid_param_problem(const Partner& partner);
// A channel_codes entry's channel: a channel (valid_channel) or a prefix of one followed by '*'.
bool valid_channel_pattern(std::string_view pattern) noexcept;

// Readable tokens of links of one partner must not collide: a link's token begins with its
// readable_prefix(), so no prefix may begin another. Returns the first pair of slugs that
// would (or a slug whose prefix is empty, paired with itself); nullopt when none.
std::optional<std::pair<std::string, std::string>> readable_collision(
    std::span<const std::string> slugs, const SubidCharset& charset);
// The same over links named apart from their slugs: (slug, name), where the name tells links
// apart (a slug on two domains: "deal" and "de.example.com/deal" give one token, a collision);
// one name listed twice is one link. Returns the pair of names.
std::optional<std::pair<std::string, std::string>> readable_collision(
    std::span<const std::pair<std::string, std::string>> links, const SubidCharset& charset);

// The check every save path runs for a partner with readable tokens: `links` are all links as
// they will be stored (those that route to no branch of the partner are ignored). A message for
// editors when two of the partner's links could give the same token; nullopt when none can, or
// when the partner's tokens are opaque or it has no sub-ID parameter.
std::optional<std::string> readable_token_problem(const Partner& partner,
                                                  const std::vector<Link>& links);

}  // namespace refgate::domain
