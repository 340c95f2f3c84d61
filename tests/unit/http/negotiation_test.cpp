#include "refgate/http/negotiation.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

TEST_CASE("Accept-Language gives locales best first", "[disclosure][negotiation]") {
    using V = std::vector<std::string>;
    CHECK(refgate::http::accepted_languages("de-AT,de;q=0.9,en;q=0.8") == V{"de-at", "de", "en"});
    CHECK(refgate::http::accepted_languages("en;q=0.1, fr") == V{"fr", "en"});
    CHECK(refgate::http::accepted_languages("*, nl;q=0, x!y, it;q=0.5") == V{"it"});
    CHECK(refgate::http::accepted_languages("").empty());
}

TEST_CASE("If-None-Match matches by weak comparison, lists and *", "[disclosure]") {
    CHECK(refgate::http::if_none_match_matches("\"1-ab\"", "\"1-ab\""));
    CHECK(refgate::http::if_none_match_matches("W/\"1-ab\"", "\"1-ab\""));
    CHECK(refgate::http::if_none_match_matches("\"x\", \"1-ab\"", "\"1-ab\""));
    CHECK(refgate::http::if_none_match_matches("*", "\"1-ab\""));
    CHECK_FALSE(refgate::http::if_none_match_matches("", "\"1-ab\""));
    CHECK_FALSE(refgate::http::if_none_match_matches("\"1-ac\"", "\"1-ab\""));
}

TEST_CASE("Accept: text/csv selects CSV", "[stats]") {
    CHECK(refgate::http::wants_csv("text/csv"));
    CHECK(refgate::http::wants_csv("text/csv, application/json;q=0.5"));
    CHECK_FALSE(refgate::http::wants_csv("application/json, text/csv"));
    CHECK_FALSE(refgate::http::wants_csv(""));
    CHECK_FALSE(refgate::http::wants_csv("*/*"));
}
