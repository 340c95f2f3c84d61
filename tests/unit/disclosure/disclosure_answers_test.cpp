#include "refgate/disclosure/disclosure_answers.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "refgate/codec/snapshot_file.hpp"
#include "refgate/domain/html.hpp"
#include "refgate/domain/snapshot.hpp"
#include "support/builders.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace disclosure_answers_test {

using refgate::disclosure::DisclosureAnswers;
using refgate::disclosure::DisclosureFormat;
using refgate::disclosure::negotiate_format;
using refgate::domain::Disclosure;
using refgate::domain::DisclosureSet;
using Json = nlohmann::ordered_json;
using refgate::testing::disclosure_version;

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

TEST_CASE("the set serves the newest version and keeps the history", "[disclosure]") {
    DisclosureSet set({disclosure_version("general", "en", 2, "Second"),
                       disclosure_version("general", "en", 1, "First"),
                       disclosure_version("general", "en", 3, "Third & <last>")});
    const auto* entry = set.find("general", "en");
    REQUIRE(entry != nullptr);
    CHECK(entry->current->version == 3);
    DisclosureAnswers answers(set);
    const auto* e = &answers.of(*entry);
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
    DisclosureSet changed({disclosure_version("general", "en", 3, "Third, reworded")});
    CHECK(DisclosureAnswers(changed).of(*changed.find("general", "en")).text_etag != e->text_etag);
}

TEST_CASE("disclosures travel in the snapshot file", "[disclosure][snapshot]") {
    auto original =
        refgate::domain::Snapshot::build(7, {}, {}, {}, "postgres",
                                         {disclosure_version("general", "en", 1, "One"),
                                          disclosure_version("general", "en", 2, "Two")});
    // The file as refgate writes it (in pieces) and reads it at start-up (streaming).
    std::string text;
    refgate::codec::write_snapshot_json(*original,
                                        [&](std::string_view piece) { text.append(piece); });
    std::istringstream in(text);
    auto restarted = refgate::codec::read_snapshot_json(in, {});
    REQUIRE(restarted->disclosures().size() == 1);
    CHECK(restarted->disclosures().versions().size() == 2);
    DisclosureAnswers before(original->disclosures());
    DisclosureAnswers after(restarted->disclosures());
    CHECK(after.of(*restarted->disclosures().find("general", "en")).json_body ==
          before.of(*original->disclosures().find("general", "en")).json_body);
    // A file from before disclosures has none, and still loads.
    auto old = Json::parse(text);
    old.erase("disclosures");
    auto old_text = old.dump();
    CHECK(
        refgate::codec::read_snapshot_json(std::string_view(old_text), {})->disclosures().empty());
}

}  // namespace disclosure_answers_test
