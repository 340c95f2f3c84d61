#include "refgate/admin/password_policy.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "refgate/domain/ascii.hpp"
#include "refgate/domain/utf8.hpp"

namespace refgate::admin {
namespace {

// The code points of well-formed UTF-8 (valid_utf8 checked it).
std::vector<std::uint32_t> code_points(std::string_view text) {
    std::vector<std::uint32_t> out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        std::size_t length = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        std::uint32_t cp = length == 1   ? c
                           : length == 2 ? c & 0x1F
                           : length == 3 ? c & 0x0F
                                         : c & 0x07;
        for (std::size_t k = 1; k < length; ++k)
            cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
        out.push_back(cp);
        i += length;
    }
    return out;
}

// One block of at most four characters over and over: "aaaaaaaaaaaa", "abcabcabcabc".
bool repeats_a_short_block(const std::vector<std::uint32_t>& cps) {
    for (std::size_t period = 1; period <= 4 && 2 * period <= cps.size(); ++period) {
        bool repeats = true;
        for (std::size_t i = period; i < cps.size() && repeats; ++i)
            repeats = cps[i] == cps[i - period];
        if (repeats) return true;
    }
    return false;
}

// Each character one after (or one before) the previous: "abcdefghijkl", "9876543210987"; a
// digit run may wrap from 9 to 0.
bool straight_run(const std::vector<std::uint32_t>& cps) {
    auto step = [](std::uint32_t a, std::uint32_t b) -> std::int64_t {
        if (a == '9' && b == '0') return 1;
        if (a == '0' && b == '9') return -1;
        return static_cast<std::int64_t>(b) - static_cast<std::int64_t>(a);
    };
    if (cps.size() < 2) return false;
    std::int64_t first = step(cps[0], cps[1]);
    if (first != 1 && first != -1) return false;
    for (std::size_t i = 2; i < cps.size(); ++i) {
        if (step(cps[i - 1], cps[i]) != first) return false;
    }
    return true;
}

}  // namespace

CommonPasswords::CommonPasswords(std::string_view text) {
    bool first = true;
    while (!text.empty()) {
        auto end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
        if (first) {
            source_ = line;
            first = false;
        } else if (!line.empty() && sorted_.size() < kMostCommon) {
            sorted_.push_back(line);
        }
    }
    std::sort(sorted_.begin(), sorted_.end());
    sorted_.erase(std::unique(sorted_.begin(), sorted_.end()), sorted_.end());
}

const CommonPasswords& CommonPasswords::built_in() {
    static const CommonPasswords list(embedded_common_passwords());
    return list;
}

bool CommonPasswords::contains(std::string_view password) const {
    if (sorted_.empty()) return false;
    std::string lowered = domain::ascii::lowered(password);
    return std::binary_search(sorted_.begin(), sorted_.end(), std::string_view(lowered));
}

PasswordVerdict check_password(std::string_view password, std::string_view name,
                               const CommonPasswords& common) {
    if (!domain::valid_utf8(password)) return PasswordVerdict::not_text;
    auto cps = code_points(password);
    if (cps.size() < kMinPasswordCharacters) return PasswordVerdict::too_short;
    if (password.size() > kMaxPasswordBytes) return PasswordVerdict::too_long;
    if (name.size() >= kMinNameInPassword &&
        domain::ascii::lowered(password).find(domain::ascii::lowered(name)) != std::string::npos)
        return PasswordVerdict::contains_name;
    if (repeats_a_short_block(cps) || straight_run(cps)) return PasswordVerdict::repetitive;
    if (common.contains(password)) return PasswordVerdict::common;
    return PasswordVerdict::ok;
}

std::string_view password_rule(PasswordVerdict verdict) {
    switch (verdict) {
        case PasswordVerdict::ok:
            return {};
        case PasswordVerdict::not_text:
            return "must be UTF-8 text";
        case PasswordVerdict::too_short:
            return "must be at least 12 characters long (characters, not bytes)";
        case PasswordVerdict::too_long:
            return "must be at most 1024 bytes long";
        case PasswordVerdict::contains_name:
            return "must not contain the user's name";
        case PasswordVerdict::repetitive:
            return "must not be one short sequence repeated (aaaa..., abcabc...) or a straight "
                   "run of characters (abcdef..., 98765...)";
        case PasswordVerdict::common:
            return "is on the list of commonly used passwords; choose another";
    }
    return {};
}

}  // namespace refgate::admin
