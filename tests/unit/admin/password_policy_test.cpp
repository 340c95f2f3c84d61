// The console's password policy (NIST SP 800-63B): length in characters, the user's name, short
// repeats and runs, and the list of commonly used passwords compiled into the binary.

#include "refgate/admin/password_policy.hpp"

#include <catch2/catch.hpp>
#include <string>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace password_policy_test {

using namespace refgate::admin;
using V = PasswordVerdict;

namespace {

const CommonPasswords kNone{""};

}  // namespace

TEST_CASE("a password needs 12 characters counted as code points, not bytes", "[admin][password]") {
    CHECK(check_password("€€€€", "eddie", kNone) == V::too_short);  // 12 bytes, 4 characters
    CHECK(check_password("aaaaaaaaaa", "eddie", kNone) == V::too_short);
    CHECK(check_password("tulip garde", "eddie", kNone) == V::too_short);  // 11
    CHECK(check_password("tulip garden", "eddie", kNone) == V::ok);        // 12
    CHECK(check_password("naïve café €5", "eddie", kNone) == V::ok);       // 13, 17 bytes
    CHECK(check_password("ça été là", "eddie", kNone) == V::too_short);    // 9, 13 bytes
    CHECK(check_password(std::string(1024, 'x').replace(0, 3, "abc"), "e", kNone) == V::ok);
    CHECK(check_password(std::string(1025, 'x').replace(0, 3, "abc"), "e", kNone) == V::too_long);
    CHECK(check_password("\xff\xfe not text at all", "eddie", kNone) == V::not_text);
}

TEST_CASE("no composition rules: lower-case words and spaces are fine", "[admin][password]") {
    CHECK(check_password("all lower case words here", "eddie", kNone) == V::ok);
    CHECK(check_password("123 789 456 0", "eddie", kNone) == V::ok);
    CHECK(password_rule(V::ok).empty());
}

TEST_CASE("a password may not contain the user's name, in any case", "[admin][password]") {
    CHECK(check_password("eddie's long passphrase", "eddie", kNone) == V::contains_name);
    CHECK(check_password("Hello EDDIE how are you", "eddie", kNone) == V::contains_name);
    CHECK(check_password("my name is eddie", "eddie", kNone) == V::contains_name);
    CHECK(check_password("ed and die apart", "eddie", kNone) == V::ok);
    // A name of one or two characters says nothing about a password that contains it.
    CHECK(check_password("journey to the sea", "jo", kNone) == V::ok);
    CHECK(check_password("journey to the sea", "jou", kNone) == V::contains_name);
}

TEST_CASE("one short block repeated or a straight run is refused", "[admin][password]") {
    CHECK(check_password("aaaaaaaaaaaa", "eddie", kNone) == V::repetitive);
    CHECK(check_password("abababababab", "eddie", kNone) == V::repetitive);
    CHECK(check_password("abcdabcdabcd", "eddie", kNone) == V::repetitive);
    CHECK(check_password("€€€€€€€€€€€€", "eddie", kNone) == V::repetitive);
    CHECK(check_password("abcdefghijkl", "eddie", kNone) == V::repetitive);
    CHECK(check_password("lkjihgfedcba", "eddie", kNone) == V::repetitive);
    CHECK(check_password("789012345678", "eddie", kNone) == V::repetitive);
    CHECK(check_password("987654321098", "eddie", kNone) == V::repetitive);
    CHECK(check_password("abcdeabcdeab", "eddie", kNone) == V::ok);  // a block of five
    CHECK(check_password("abcdefghijkm", "eddie", kNone) == V::ok);
}

TEST_CASE("a listed password is refused whatever its case", "[admin][password]") {
    std::string text = "test list\nqwertyuiop12\nsunshine2024\n";
    CommonPasswords list(text);
    CHECK(list.size() == 2);
    CHECK(list.source() == "test list");
    CHECK(check_password("qwertyuiop12", "eddie", list) == V::common);
    CHECK(check_password("QwertyUIOP12", "eddie", list) == V::common);
    CHECK(check_password("sunshine2025", "eddie", list) == V::ok);
    // The rules are checked in order: a short listed password is reported as too short.
    CHECK(check_password("qwerty", "eddie", list) == V::too_short);
    CHECK(password_rule(V::common).find("commonly used") != std::string_view::npos);
}

TEST_CASE("only the most common entries of a long list are kept", "[admin][password]") {
    std::string text = "big list\n";
    for (std::size_t i = 0; i < CommonPasswords::kMostCommon + 10; ++i)
        text += "entry number " + std::to_string(i) + "\n";
    CommonPasswords list(text);
    CHECK(list.size() == CommonPasswords::kMostCommon);
    CHECK(list.contains("entry number 0"));
    CHECK_FALSE(list.contains("entry number " + std::to_string(CommonPasswords::kMostCommon)));
}

TEST_CASE("the built-in list is the pinned package's, tens of thousands of passwords",
          "[admin][password]") {
    const auto& list = CommonPasswords::built_in();
    CHECK(list.source().find("@zxcvbn-ts/language-common") != std::string_view::npos);
    CHECK(list.size() > 40'000);
    CHECK(list.contains("password"));
    CHECK(check_password("password1234", "eddie") == V::common);
    CHECK(check_password("QWERTYUIOP123", "eddie") == V::common);
    CHECK(check_password("administrator", "eddie") == V::common);
    CHECK(check_password("correct horse battery", "eddie") == V::ok);
}

}  // namespace password_policy_test
