#include "refgate/domain/disclosure.hpp"

#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "refgate/codec/import_document.hpp"
#include "refgate/codec/snapshot_file.hpp"
#include "refgate/domain/html.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/domain/snapshot.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace disclosure_test {

using refgate::Disclosure;
using refgate::DisclosureFormat;
using refgate::DisclosureSet;
using refgate::negotiate_format;
using refgate::normalize_locale;
using Json = nlohmann::ordered_json;

namespace {

Disclosure version(std::string key, std::string locale, std::int64_t v, std::string text) {
    Disclosure d;
    d.key = std::move(key);
    d.locale = std::move(locale);
    d.version = v;
    d.text = std::move(text);
    d.html = refgate::text_to_html(d.text);
    d.updated_at = "2026-11-" + std::to_string(10 + v) + "T12:00:00Z";
    return d;
}

}  // namespace

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

TEST_CASE("Accept is negotiated by q-value and specificity", "[disclosure][negotiation]") {
    CHECK(negotiate_format("") == DisclosureFormat::text);
    CHECK(negotiate_format("*/*") == DisclosureFormat::text);
    CHECK(negotiate_format("text/html") == DisclosureFormat::html);
    CHECK(negotiate_format("application/json") == DisclosureFormat::json);
    CHECK(negotiate_format("TEXT/PLAIN; charset=utf-8") == DisclosureFormat::text);
    CHECK(negotiate_format("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8") ==
          DisclosureFormat::html);
    CHECK(negotiate_format("application/json, text/plain, */*") == DisclosureFormat::json);
    CHECK(negotiate_format("text/plain;q=0.2, application/json;q=0.8") == DisclosureFormat::json);
    CHECK(negotiate_format("text/*;q=0.5, text/html;q=0") == DisclosureFormat::text);
    CHECK(negotiate_format("*/*;q=0.1, text/plain;q=0") == DisclosureFormat::html);
    CHECK(negotiate_format("application/*") == DisclosureFormat::json);
    CHECK_FALSE(negotiate_format("image/png"));
    CHECK_FALSE(negotiate_format("text/plain;q=0"));
    CHECK_FALSE(negotiate_format("application/xml, text/csv"));
    // A malformed q leaves that range out.
    CHECK_FALSE(negotiate_format("text/plain;q=2"));
    CHECK(negotiate_format("text/plain;q=abc, text/html") == DisclosureFormat::html);
}

TEST_CASE("Accept-Language gives locales best first", "[disclosure][negotiation]") {
    using V = std::vector<std::string>;
    CHECK(refgate::accepted_languages("de-AT,de;q=0.9,en;q=0.8") == V{"de-at", "de", "en"});
    CHECK(refgate::accepted_languages("en;q=0.1, fr") == V{"fr", "en"});
    CHECK(refgate::accepted_languages("*, nl;q=0, x!y, it;q=0.5") == V{"it"});
    CHECK(refgate::accepted_languages("").empty());
    CHECK(refgate::locale_chain("de-at-x") == V{"de-at-x", "de-at", "de"});
}

TEST_CASE("query values are percent-decoded", "[disclosure]") {
    CHECK(refgate::query_value("lang=de-AT&partner=tailscale", "partner") == "tailscale");
    CHECK(refgate::query_value("a=1&lang=de%2DAT", "lang") == "de-AT");
    CHECK(refgate::query_value("lang", "lang") == "");
    CHECK_FALSE(refgate::query_value("language=en", "lang"));
}

TEST_CASE("a locale falls back to its language, then to the default", "[disclosure][locale]") {
    DisclosureSet set({version("general", "en", 1, "English"),
                       version("general", "de", 1, "Deutsch"),
                       version("general", "de-ch", 1, "Schweiz")});
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
    DisclosureSet set({version("general", "en", 1, "General"),
                       version("tailscale", "en", 1, "Tailscale's own"),
                       version("general", "de", 1, "Allgemein")});
    CHECK(set.resolve("tailscale", {"en"}, "en")->current->text == "Tailscale's own");
    CHECK(set.resolve("backblaze", {"en"}, "en")->current->text == "General");
    CHECK(set.resolve("tailscale", {"de"}, "en")->current->text == "Allgemein");
    CHECK(set.resolve("general", {"en"}, "en")->current->text == "General");
}

TEST_CASE("the set serves the newest version and keeps the history", "[disclosure]") {
    DisclosureSet set({version("general", "en", 2, "Second"), version("general", "en", 1, "First"),
                       version("general", "en", 3, "Third & <last>")});
    const auto* e = set.find("general", "en");
    REQUIRE(e != nullptr);
    CHECK(e->current->version == 3);
    CHECK(e->text_body == "Third & <last>\n");
    CHECK(e->html_body ==
          "<aside class=\"refgate-disclosure\" role=\"note\" data-rel=\"sponsored\" "
          "lang=\"en\">Third &amp; &lt;last&gt;</aside>\n");
    auto json = Json::parse(e->json_body);
    CHECK(json["key"] == "general");
    CHECK(json["locale"] == "en");
    CHECK(json["text"] == "Third & <last>");
    CHECK(json["html"] == "Third &amp; &lt;last&gt;");
    CHECK(json["version"] == 3);
    CHECK(json["updated_at"] == "2026-11-13T12:00:00Z");
    auto history = Json::parse(e->history_body)["items"];
    REQUIRE(history.size() == 3);
    CHECK(history[0]["text"] == "First");
    CHECK(history[0]["effective_at"] == "2026-11-11T12:00:00Z");
    CHECK(history[0]["until"] == "2026-11-12T12:00:00Z");
    CHECK(history[2]["until"].is_null());
    // One strong validator per representation, each changing with the words.
    CHECK(e->text_etag != e->html_etag);
    CHECK(e->text_etag.starts_with("\"3-"));
    DisclosureSet changed({version("general", "en", 3, "Third, reworded")});
    CHECK(changed.find("general", "en")->text_etag != e->text_etag);
}

TEST_CASE("stored html is sanitised again when the set is built", "[disclosure][sanitize]") {
    auto d = version("general", "en", 1, "t");
    d.html = "<p onclick=x>hi<script>alert(1)</script>";
    DisclosureSet set({d});
    CHECK(set.find("general", "en")->current->html == "<p>hi</p>");
}

TEST_CASE("If-None-Match matches by weak comparison, lists and *", "[disclosure]") {
    CHECK(refgate::if_none_match_matches("\"1-ab\"", "\"1-ab\""));
    CHECK(refgate::if_none_match_matches("W/\"1-ab\"", "\"1-ab\""));
    CHECK(refgate::if_none_match_matches("\"x\", \"1-ab\"", "\"1-ab\""));
    CHECK(refgate::if_none_match_matches("*", "\"1-ab\""));
    CHECK_FALSE(refgate::if_none_match_matches("", "\"1-ab\""));
    CHECK_FALSE(refgate::if_none_match_matches("\"1-ac\"", "\"1-ab\""));
}

TEST_CASE("imports read disclosures, derive or sanitise their html and refuse bad ones",
          "[disclosure][import]") {
    auto parsed = refgate::parse_import(Json::parse(R"({"disclosures": [
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

    auto bad = refgate::parse_import(Json::parse(R"({"disclosures": [
        {"key": "Bad Key", "locale": "english", "text": "", "extra": 1},
        {"key": "general", "locale": "en", "text": "a\u0007b"},
        {"key": "general", "locale": "en", "text": "twice"}
    ]})"));
    std::vector<std::string> fields;
    for (const auto& issue : bad.issues) fields.push_back(issue.field);
    CHECK(fields == std::vector<std::string>{"extra", "key", "locale", "text", "text", "locale"});
}

TEST_CASE("disclosures travel in the snapshot file", "[disclosure][snapshot]") {
    auto original = refgate::Snapshot::build(
        7, {}, {}, {}, "postgres",
        {version("general", "en", 1, "One"), version("general", "en", 2, "Two")});
    // The file as refgate writes it (in pieces) and reads it at start-up (streaming).
    std::string text;
    write_snapshot_json(*original, [&](std::string_view piece) { text.append(piece); });
    std::istringstream in(text);
    auto restarted = refgate::read_snapshot_json(in, {});
    REQUIRE(restarted->disclosures().size() == 1);
    CHECK(restarted->disclosures().versions().size() == 2);
    CHECK(restarted->disclosures().find("general", "en")->json_body ==
          original->disclosures().find("general", "en")->json_body);
    // A file from before disclosures has none, and still loads.
    auto old = Json::parse(text);
    old.erase("disclosures");
    auto old_text = old.dump();
    CHECK(refgate::read_snapshot_json(std::string_view(old_text), {})->disclosures().empty());
}

}  // namespace disclosure_test
