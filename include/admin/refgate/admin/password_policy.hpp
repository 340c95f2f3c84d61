#pragma once

// Which passwords console users may choose, after NIST SP 800-63B (5.1.1.2): long enough counted
// in characters (Unicode code points, not bytes), no composition rules, and refused when it
// contains the user's name, is one short block repeated or a straight run of characters, or is
// on a list of commonly used passwords compiled into the binary. Pure: no I/O.

#include <cstddef>
#include <string_view>
#include <vector>

namespace refgate::admin {

constexpr std::size_t kMinPasswordCharacters = 12;
constexpr std::size_t kMaxPasswordBytes = 1024;
// A name this short says nothing about a password that contains it ("jo" in "journey").
constexpr std::size_t kMinNameInPassword = 3;

// Commonly used passwords, compared in ASCII lower case. `text` is what
// refgate_data, src/tools/data_convert.cpp writes: a line naming the source, then one password a
// line, most common first; the kMostCommon first ones are kept, as a sorted index into `text`,
// which must outlive the object. Empty text: no list.
class CommonPasswords {
  public:
    static constexpr std::size_t kMostCommon = 100'000;

    explicit CommonPasswords(std::string_view text);
    // The list built into the binary; empty when it was built with -DREFGATE_PASSWORD_LIST=OFF.
    static const CommonPasswords& built_in();

    // Whether the password, in ASCII lower case, is on the list.
    bool contains(std::string_view password) const;
    std::size_t size() const { return sorted_.size(); }
    // "npm package ... (license: ...), N passwords, ..."; empty without a list.
    std::string_view source() const { return source_; }

  private:
    std::string_view source_;
    std::vector<std::string_view> sorted_;
};

enum class PasswordVerdict { ok, not_text, too_short, too_long, contains_name, repetitive, common };

// The first rule `password` breaks for the user `name`, in the order of PasswordVerdict.
PasswordVerdict check_password(std::string_view password, std::string_view name,
                               const CommonPasswords& common = CommonPasswords::built_in());

// What the rule asks, for a field error ("must be at least 12 characters ..."); empty for ok.
std::string_view password_rule(PasswordVerdict verdict);

// The list's text, from the file generated at build time (refgate_data,
// src/tools/data_convert.cpp).
std::string_view embedded_common_passwords();

}  // namespace refgate::admin
