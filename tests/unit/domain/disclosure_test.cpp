#include "refgate/domain/disclosure.hpp"

#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "refgate/codec/import_document.hpp"
#include "refgate/domain/html.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/domain/snapshot.hpp"
#include "support/builders.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace disclosure_test {

using refgate::domain::Disclosure;
using refgate::domain::DisclosureSet;
using refgate::domain::normalize_locale;
using Json = nlohmann::ordered_json;
using refgate::testing::disclosure_version;

TEST_CASE("locale tags are validated and normalised to lower case", "[disclosure][locale]") {
    CHECK(normalize_locale("en") == "en");
    CHECK(normalize_locale("de-AT") == "de-at");
    CHECK(normalize_locale("DE_at") == "de-at");
    CHECK(normalize_locale("zh-Hant-TW") == "zh-hant-tw");
    CHECK(normalize_locale("gsw") == "gsw");
    CHECK_FALSE(normalize_locale(""));
    CHECK_FALSE(normalize_locale("e"));
    CHECK_FALSE(normalize_locale("english"));
    CHECK_FALSE(normalize_locale("de-"));
    CHECK_FALSE(normalize_locale("de--at"));
    CHECK_FALSE(normalize_locale("de-toolongsubtag"));
    CHECK_FALSE(normalize_locale("de-AT;q=1"));
    CHECK_FALSE(normalize_locale("en\r\nX-Bad: 1"));
    CHECK_FALSE(normalize_locale("../etc"));
    CHECK_FALSE(normalize_locale("a1"));
}

TEST_CASE("query values are percent-decoded", "[disclosure]") {
    CHECK(refgate::domain::query_value("lang=de-AT&partner=tailscale", "partner") == "tailscale");
    CHECK(refgate::domain::query_value("a=1&lang=de%2DAT", "lang") == "de-AT");
    CHECK(refgate::domain::query_value("lang", "lang") == "");
    CHECK_FALSE(refgate::domain::query_value("language=en", "lang"));
}

TEST_CASE("a locale's chain is the tag, then each shorter prefix", "[disclosure][locale]") {
    using V = std::vector<std::string>;
    CHECK(refgate::domain::locale_chain("de-at-x") == V{"de-at-x", "de-at", "de"});
}

TEST_CASE("a locale falls back to its language, then to the default", "[disclosure][locale]") {
    DisclosureSet set({disclosure_version("general", "en", 1, "English"),
                       disclosure_version("general", "de", 1, "Deutsch"),
                       disclosure_version("general", "de-ch", 1, "Schweiz")});
    auto text_of = [&](std::vector<std::string> locales) {
        const auto* e = set.resolve("", locales, "en");
        return e == nullptr ? std::string("none") : e->current->text;
    };
    CHECK(text_of({"de-at"}) == "Deutsch");
    CHECK(text_of({"de-ch"}) == "Schweiz");
    CHECK(text_of({"fr"}) == "English");
    CHECK(text_of({}) == "English");
    CHECK(text_of({"fr", "de"}) == "Deutsch");
    CHECK(set.resolve("", {"fr"}, "it") == nullptr);
}

TEST_CASE("a partner's own disclosure wins over the general one in the same locale",
          "[disclosure]") {
    DisclosureSet set({disclosure_version("general", "en", 1, "General"),
                       disclosure_version("tailscale", "en", 1, "Tailscale's own"),
                       disclosure_version("general", "de", 1, "Allgemein")});
    CHECK(set.resolve("tailscale", {"en"}, "en")->current->text == "Tailscale's own");
    CHECK(set.resolve("backblaze", {"en"}, "en")->current->text == "General");
    CHECK(set.resolve("tailscale", {"de"}, "en")->current->text == "Allgemein");
    CHECK(set.resolve("general", {"en"}, "en")->current->text == "General");
}

TEST_CASE("stored html is sanitised again when the set is built", "[disclosure][sanitize]") {
    auto d = disclosure_version("general", "en", 1, "t");
    d.html = "<p onclick=x>hi<script>alert(1)</script>";
    DisclosureSet set({d});
    CHECK(set.find("general", "en")->current->html == "<p>hi</p>");
}

TEST_CASE("imports read disclosures, derive or sanitise their html and refuse bad ones",
          "[disclosure][import]") {
    auto parsed = refgate::codec::parse_import(Json::parse(R"({"disclosures": [
        {"key": "general", "locale": "en-GB", "text": "Tom & \"Jerry\""},
        {"key": "tailscale", "locale": "de", "text": "t", "html": "<b onclick=x>b</b><script>s</script>"}
    ]})"));
    REQUIRE(parsed.issues.empty());
    REQUIRE(parsed.document.disclosures.size() == 2);
    CHECK(parsed.document.disclosures[0].locale == "en-gb");
    CHECK(parsed.document.disclosures[0].html == "Tom &amp; &quot;Jerry&quot;");
    CHECK_FALSE(parsed.document.disclosures[0].html_given);
    CHECK(parsed.document.disclosures[1].html == "<b>b</b>");
    CHECK(parsed.document.disclosures[1].html_given);

    auto bad = refgate::codec::parse_import(Json::parse(R"({"disclosures": [
        {"key": "Bad Key", "locale": "english", "text": "", "extra": 1},
        {"key": "general", "locale": "en", "text": "a\u0007b"},
        {"key": "general", "locale": "en", "text": "twice"}
    ]})"));
    std::vector<std::string> fields;
    for (const auto& issue : bad.issues) fields.push_back(issue.field);
    CHECK(fields == std::vector<std::string>{"extra", "key", "locale", "text", "text", "locale"});
}

}  // namespace disclosure_test
