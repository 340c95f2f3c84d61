// The admin API's HTTP rules against a fake store: authentication, roles, methods, bodies,
// preconditions, query validation and how store outcomes become answers. The PostgreSQL store
// itself is tested end to end in tests/integration/admin_api_test.cpp.

#include "refgate/admin/admin_handler.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "refgate/admin/tokens.hpp"
#include "support/fake_clock.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace admin_handler_test {

namespace {

namespace http = refgate::http;
using namespace refgate::admin;
using Json = nlohmann::ordered_json;
using refgate::codec::CodeView;
using refgate::codec::CountryGroupPut;
using refgate::codec::CountryGroupView;
using refgate::codec::DisclosureInput;
using refgate::codec::DisclosurePreviewView;
using refgate::codec::DisclosureVersionView;
using refgate::codec::DisclosureView;
using refgate::codec::LinkPatch;
using refgate::codec::LinkPreview;
using refgate::codec::LinkPreviewView;
using refgate::codec::LinkShareView;
using refgate::codec::LinkView;
using refgate::codec::NewLink;
using refgate::codec::NewPartner;
using refgate::codec::Page;
using refgate::codec::PartnerPatch;
using refgate::codec::PartnerView;

// A store's answer as the test states it: the decision and the object as JSON.
struct Outcome {
    OutcomeKind kind = OutcomeKind::ok;
    Json body;
    std::int64_t version = 0;
    std::string detail;
    std::vector<refgate::codec::FieldError> errors;
};

// Answers every call with `next` (or throws `fail`), and remembers what it was asked.
class FakeStore final : public AdminStore {
  public:
    std::map<std::string, Actor> tokens;  // hash -> actor
    Outcome next;
    std::optional<std::string> fail;  // "store": StoreError, "other": std::runtime_error
    std::string last_call;
    std::string last_slug;
    std::string last_actor;
    Json last_body;
    refgate::domain::Partner last_partner;
    Precondition last_precondition;
    LinkFilter last_filter;
    AuditFilter last_audit;
    ImportRequest last_import;

    std::optional<StoredToken> find_token(const std::string& hash) override {
        auto it = tokens.find(hash);
        if (it == tokens.end()) return std::nullopt;
        return StoredToken{it->second, hash};
    }
    Result<Page<PartnerView>> list_partners(const std::string& query) override {
        return typed<Page<PartnerView>>("list_partners", query);
    }
    Result<PartnerView> get_partner(const std::string& slug) override {
        return typed_partner("get_partner", slug);
    }
    Result<PartnerView> create_partner(const Actor& a, const NewPartner& partner) override {
        last_partner = partner.partner;
        return typed_partner("create_partner", "", &a);
    }
    Result<PartnerView> update_partner(const Actor& a, const std::string& slug,
                                       const Precondition& p, const PartnerPatch&) override {
        last_precondition = p;
        return typed_partner("update_partner", slug, &a);
    }
    Result<PartnerView> delete_partner(const Actor& a, const std::string& slug,
                                       const Precondition& p) override {
        last_precondition = p;
        return typed_partner("delete_partner", slug, &a);
    }
    Result<Page<CodeView>> partner_codes(const std::string& slug) override {
        return typed<Page<CodeView>>("partner_codes", slug);
    }
    Result<Page<LinkView>> list_links(const LinkFilter& f) override {
        last_filter = f;
        return typed<Page<LinkView>>("list_links");
    }
    Result<LinkView> get_link(const std::string& slug) override {
        return typed_link("get_link", slug);
    }
    Result<LinkView> create_link(const Actor& a, const NewLink&) override {
        return typed_link("create_link", "", &a);
    }
    Result<LinkView> update_link(const Actor& a, const std::string& slug, const Precondition& p,
                                 const LinkPatch&) override {
        last_precondition = p;
        return typed_link("update_link", slug, &a);
    }
    Result<LinkView> delete_link(const Actor& a, const std::string& slug,
                                 const Precondition& p) override {
        last_precondition = p;
        return typed_link("delete_link", slug, &a);
    }
    Result<LinkPreviewView> preview_link(const LinkPreview&) override {
        return typed<LinkPreviewView>("preview_link");
    }
    Result<LinkShareView> share_link(const std::string& slug, const std::string&) override {
        return typed<LinkShareView>("share_link", slug);
    }
    Result<Page<AuditView>> audit(const AuditFilter& f) override {
        last_audit = f;
        return typed<Page<AuditView>>("audit");
    }
    Result<Page<TokenView>> list_tokens() override { return typed<Page<TokenView>>("list_tokens"); }
    Result<CreatedToken> create_token(const Actor& a, const NewToken&) override {
        CreatedToken token;
        token.token.name = next.body.is_object() ? next.body.value("name", "") : "";
        token.token.version = next.version;
        return typed("create_token", "", &a, std::move(token));
    }
    Result<TokenView> revoke_token(const Actor& a, const std::string& name,
                                   const Precondition& p) override {
        last_precondition = p;
        return typed<TokenView>("revoke_token", name, &a);
    }

    Result<Page<CountryGroupView>> list_country_groups() override {
        return typed<Page<CountryGroupView>>("list_country_groups");
    }
    Result<CountryGroupView> get_country_group(const std::string& family) override {
        return typed<CountryGroupView>("get_country_group", family);
    }
    Result<CountryGroupView> put_country_group(const Actor& a, const std::string& family,
                                               const PutPrecondition&,
                                               const CountryGroupPut&) override {
        return typed<CountryGroupView>("put_country_group", family, &a);
    }
    Result<CountryGroupView> delete_country_group(const Actor& a, const std::string& family,
                                                  const Precondition& p) override {
        last_precondition = p;
        return typed<CountryGroupView>("delete_country_group", family, &a);
    }
    Result<Page<DisclosureView>> list_disclosures() override {
        return typed<Page<DisclosureView>>("list_disclosures");
    }
    Result<DisclosureView> get_disclosure(const std::string& key,
                                          const std::string& locale) override {
        return typed<DisclosureView>("get_disclosure", key + "/" + locale);
    }
    Result<DisclosureView> put_disclosure(const Actor& a, const std::string& key,
                                          const std::string& locale, const PutPrecondition&,
                                          const DisclosureInput&) override {
        return typed<DisclosureView>("put_disclosure", key + "/" + locale, &a);
    }
    Result<Page<DisclosureVersionView>> disclosure_versions(const std::string& key,
                                                            const std::string& locale) override {
        return typed<Page<DisclosureVersionView>>("disclosure_versions", key + "/" + locale);
    }
    Result<DisclosurePreviewView> preview_disclosure(const DisclosureInput&) override {
        return typed<DisclosurePreviewView>("preview_disclosure");
    }
    Result<ImportReport> import_document(const Actor& a, const ImportRequest& request) override {
        last_import = request;
        return typed<ImportReport>("import_document", "", &a);
    }
    Result<refgate::codec::ImportDocument> export_document() override {
        return typed<refgate::codec::ImportDocument>("export_document");
    }

  private:
    // `next` as a typed answer: its decision; a partner's or link's view has its slug and version.
    template <typename View>
    Result<View> typed(std::string call, std::string slug = "", const Actor* actor = nullptr,
                       View view = {}) {
        Outcome o = answer(std::move(call), std::move(slug), actor);
        return Result<View>{.kind = o.kind,
                            .view = std::move(view),
                            .version = o.version,
                            .detail = o.detail,
                            .errors = o.errors};
    }
    Result<PartnerView> typed_partner(std::string call, std::string slug,
                                      const Actor* actor = nullptr) {
        PartnerView view;
        view.partner.slug = next.body.is_object() ? next.body.value("slug", "") : "";
        view.stamps.version = next.version;
        return typed(std::move(call), std::move(slug), actor, std::move(view));
    }
    Result<LinkView> typed_link(std::string call, std::string slug, const Actor* actor = nullptr) {
        LinkView view;
        view.link.slug = next.body.is_object() ? next.body.value("slug", "") : "";
        view.stamps.version = next.version;
        return typed(std::move(call), std::move(slug), actor, std::move(view));
    }

    Outcome answer(std::string call, std::string slug = "", const Actor* actor = nullptr,
                   const Json* body = nullptr) {
        last_call = std::move(call);
        last_slug = std::move(slug);
        last_actor = actor ? actor->name : "";
        last_body = body ? *body : Json();
        if (fail == "store") throw StoreError("connection refused");
        if (fail == "other") throw std::runtime_error("bug");
        return next;
    }
};

struct Answer {
    int status = 0;
    std::string headers;
    std::string body;

    std::string header(std::string_view name) const {
        std::string key = std::string(name) + ": ";
        auto at = headers.find(key);
        if (at == std::string::npos) return "";
        auto end = headers.find("\r\n", at);
        return headers.substr(at + key.size(), end - at - key.size());
    }
    Json json() const { return Json::parse(body); }
};

struct Fixture {
    FakeStore* store;
    AdminHandler handler;
    std::string viewer = generate_token();
    std::string editor = generate_token();
    std::string admin = generate_token();

    Fixture() : Fixture(std::make_unique<FakeStore>()) {}
    explicit Fixture(std::unique_ptr<FakeStore> s,
                     AdminOptions options = AdminOptions{.max_failures_per_minute = 3})
        : store(s.get()), handler(std::move(s), std::move(options)) {
        store->tokens[hash_token(viewer)] = {"vera", Role::viewer};
        store->tokens[hash_token(editor)] = {"eddie", Role::editor};
        store->tokens[hash_token(admin)] = {"ada", Role::admin};
    }

    Answer send(http::Method method, std::string_view method_name, std::string_view target,
                const std::string& token, std::vector<http::HeaderField> extra = {},
                std::string_view body = "", std::uint8_t peer = 1) {
        std::string authorization = "Bearer " + token;
        std::vector<http::HeaderField> fields = std::move(extra);
        if (!token.empty()) fields.push_back({"Authorization", authorization});
        http::Request request;
        request.method = method;
        request.method_name = method_name;
        request.target = target;
        request.fields = &fields;
        request.body = body;
        request.peer.bytes[15] = peer;
        http::Response response;
        handler.handle(request, response);
        return {response.status(), response.headers(), response.body()};
    }
    Answer get(std::string_view target, const std::string& token) {
        return send(http::Method::get, "GET", target, token);
    }
    Answer post_json(std::string_view target, const std::string& token, std::string_view body) {
        return send(http::Method::post, "POST", target, token,
                    {{"Content-Type", "application/json; charset=utf-8"}}, body);
    }
    Answer patch(std::string_view target, const std::string& token, std::string_view if_match,
                 std::string_view body = "{}") {
        std::vector<http::HeaderField> h{{"Content-Type", "application/merge-patch+json"}};
        if (!if_match.empty()) h.push_back({"If-Match", if_match});
        return send(http::Method::patch, "PATCH", target, token, h, body);
    }
};

Outcome ok_object(std::int64_t version) {
    Outcome o;
    o.body = Json{{"slug", "tailscale"}, {"version", version}};
    o.version = version;
    return o;
}

}  // namespace

TEST_CASE("admin: unknown paths are 404 and missing or unknown tokens 401, before any store call",
          "[admin]") {
    Fixture f;
    auto unknown = f.get("/api/v1/nothing", f.admin);
    CHECK(unknown.status == 404);
    CHECK(unknown.header("Content-Type") == "application/problem+json");

    auto none = f.get("/api/v1/partners", "");
    CHECK(none.status == 401);
    CHECK(none.header("WWW-Authenticate") == "Bearer realm=\"refgate\"");
    auto wrong = f.get("/api/v1/partners", generate_token());
    CHECK(wrong.status == 401);
    CHECK(wrong.header("WWW-Authenticate") == "Bearer realm=\"refgate\", error=\"invalid_token\"");
    CHECK(f.get("/api/v1/partners", "not-a-token").status == 401);
    CHECK(f.store->last_call.empty());
    CHECK(wrong.json()["type"] == "urn:refgate:problem:unauthorized");
    CHECK(wrong.json()["status"] == 401);
}

TEST_CASE("admin: failed authentications are limited per address, a valid token never is",
          "[admin]") {
    Fixture f;  // 3 failures a minute
    for (int i = 0; i < 3; ++i)
        CHECK(f.send(http::Method::get, "GET", "/api/v1/partners", "rg_bad", {}, "", 7).status ==
              401);
    auto limited = f.send(http::Method::get, "GET", "/api/v1/partners", "rg_bad", {}, "", 7);
    CHECK(limited.status == 429);
    CHECK_FALSE(limited.header("Retry-After").empty());
    // Another address still guesses, and a valid token from either is served.
    CHECK(f.send(http::Method::get, "GET", "/api/v1/partners", "rg_bad", {}, "", 8).status == 401);
    CHECK(f.send(http::Method::get, "GET", "/api/v1/partners", f.admin, {}, "", 7).status == 200);
    CHECK(f.send(http::Method::get, "GET", "/api/v1/partners", f.admin, {}, "", 8).status == 200);
}

TEST_CASE("admin: a query parameter that is not UTF-8 text is 400 before the store is asked",
          "[admin]") {
    Fixture f;
    for (const char* target : {"/api/v1/partners?q=%FF%FE", "/api/v1/links?q=%C3%28",
                               "/api/v1/audit?actor=%FF", "/api/v1/audit?entity=a%00b"}) {
        auto bad = f.get(target, f.admin);
        INFO(target);
        CHECK(bad.status == 400);
        CHECK(bad.json()["type"] == "urn:refgate:problem:bad-query");
        CHECK(f.store->last_call.empty());
    }
    CHECK(f.get("/api/v1/partners?q=%C3%A9", f.admin).status == 200);
    CHECK(f.store->last_call == "list_partners");
}

TEST_CASE("admin: roles gate each route, and a wrong method is 405 with Allow", "[admin]") {
    Fixture f;
    CHECK(f.get("/api/v1/partners", f.viewer).status == 200);
    CHECK(f.store->last_call == "list_partners");
    f.store->last_call.clear();

    auto forbidden = f.post_json("/api/v1/partners", f.viewer, "{}");
    CHECK(forbidden.status == 403);
    CHECK_THAT(forbidden.json()["detail"].get<std::string>(), Catch::Contains("editor"));
    CHECK(f.get("/api/v1/audit", f.editor).status == 403);
    CHECK(f.get("/api/v1/tokens", f.editor).status == 403);
    CHECK(f.store->last_call.empty());
    CHECK(f.get("/api/v1/audit", f.admin).status == 200);

    auto wrong = f.send(http::Method::put, "PUT", "/api/v1/partners/tailscale", f.editor);
    CHECK(wrong.status == 405);
    CHECK(wrong.header("Allow") == "GET, PATCH, DELETE");
}

TEST_CASE("admin: bodies must be JSON objects of the right media type", "[admin]") {
    Fixture f;
    CHECK(f.send(http::Method::post, "POST", "/api/v1/partners", f.editor,
                 {{"Content-Type", "text/plain"}}, "{}")
              .status == 415);
    // merge-patch is for PATCH only.
    CHECK(f.send(http::Method::post, "POST", "/api/v1/partners", f.editor,
                 {{"Content-Type", "application/merge-patch+json"}}, "{}")
              .status == 415);
    CHECK(f.post_json("/api/v1/partners", f.editor, "{\"slug\": ").status == 400);
    auto array = f.post_json("/api/v1/partners", f.editor, "[1]");
    CHECK(array.status == 422);
    CHECK(array.json()["errors"][0]["message"] == "must be a JSON object");
    CHECK(f.store->last_call.empty());

    f.store->next.kind = OutcomeKind::created;
    f.store->next.body = Json{{"slug", "x"}, {"version", 1}};
    f.store->next.version = 1;
    auto created = f.post_json("/api/v1/partners", f.editor, R"({"slug": "x"})");
    CHECK(created.status == 201);
    CHECK(f.store->last_partner.slug == "x");
    CHECK(f.store->last_actor == "eddie");
    CHECK(created.header("ETag") == "\"1\"");
}

TEST_CASE("admin: PATCH and DELETE need If-Match, and its value reaches the store", "[admin]") {
    Fixture f;
    f.store->next = ok_object(8);
    CHECK(f.patch("/api/v1/partners/tailscale", f.editor, "").status == 428);
    CHECK(f.patch("/api/v1/partners/tailscale", f.editor, "W/\"7\"").status == 412);
    CHECK(f.patch("/api/v1/partners/tailscale", f.editor, "\"x\"").status == 412);
    CHECK(f.store->last_call.empty());

    auto ok = f.patch("/api/v1/partners/tailscale", f.editor, "\"7\"", R"({"name": "T"})");
    CHECK(ok.status == 200);
    CHECK(ok.header("ETag") == "\"8\"");
    CHECK(f.store->last_call == "update_partner");
    CHECK(f.store->last_slug == "tailscale");
    CHECK(f.store->last_precondition.version == 7);
    CHECK_FALSE(f.store->last_precondition.any);
    CHECK(f.patch("/api/v1/links/a1", f.editor, "*").status == 200);
    CHECK(f.store->last_precondition.any);

    CHECK(f.send(http::Method::del, "DELETE", "/api/v1/links/a1", f.editor).status == 428);
    f.store->next.kind = OutcomeKind::deleted;
    auto deleted =
        f.send(http::Method::del, "DELETE", "/api/v1/links/a1", f.editor, {{"If-Match", "\"8\""}});
    CHECK(deleted.status == 204);
    CHECK(deleted.body.empty());
    CHECK(deleted.header("ETag") == "\"8\"");
}

TEST_CASE("admin: store outcomes become problem answers", "[admin]") {
    Fixture f;
    auto status_of = [&](OutcomeKind kind) {
        f.store->next = Outcome{.kind = kind, .detail = "why"};
        return f.get("/api/v1/partners/tailscale", f.viewer);
    };
    CHECK(status_of(OutcomeKind::not_found).status == 404);
    CHECK(status_of(OutcomeKind::conflict).status == 409);
    auto stale = status_of(OutcomeKind::stale);
    CHECK(stale.status == 412);
    CHECK_THAT(stale.json()["detail"].get<std::string>(), Catch::StartsWith("why"));

    f.store->next = Outcome{.kind = OutcomeKind::invalid,
                            .errors = {{"destination", "is outside the domains [host_not_allowed]"},
                                       {"name", "is required"}}};
    auto invalid = f.post_json("/api/v1/links", f.editor, "{}");
    CHECK(invalid.status == 422);
    CHECK(invalid.header("Content-Type") == "application/problem+json");
    auto errors = invalid.json()["errors"];
    REQUIRE(errors.size() == 2);
    CHECK(errors[0]["field"] == "destination");
    CHECK(errors[0]["rule"] == "host_not_allowed");
    CHECK_FALSE(errors[1].contains("rule"));

    f.store->fail = "store";
    auto down = f.get("/api/v1/partners", f.viewer);
    CHECK(down.status == 503);
    CHECK(down.header("Retry-After") == "1");
    f.store->fail = "other";
    auto bug = f.get("/api/v1/partners", f.viewer);
    CHECK(bug.status == 500);
    CHECK(bug.body.find("bug") == std::string::npos);  // internals stay in the log
}

TEST_CASE("admin: link filters and limits are validated before the store sees them", "[admin]") {
    Fixture f;
    auto bad =
        f.get("/api/v1/links?status=gone&partner=No%20Such&limit=999&cursor=%C3%A9", f.viewer);
    CHECK(bad.status == 422);
    std::vector<std::string> fields;
    auto problem = bad.json();  // kept: a range over a temporary's member would dangle
    for (const auto& e : problem["errors"]) fields.push_back(e["field"]);
    CHECK(fields == std::vector<std::string>{"status", "partner", "cursor", "limit"});
    CHECK(f.store->last_call.empty());

    CHECK(f.get("/api/v1/links?partner=tailscale&status=disabled&cursor=a1&limit=2", f.viewer)
              .status == 200);
    CHECK(f.store->last_filter.partner == "tailscale");
    CHECK(f.store->last_filter.status == "disabled");
    CHECK(f.store->last_filter.cursor == "a1");
    CHECK(f.store->last_filter.limit == 2);
    CHECK(f.get("/api/v1/links/", f.viewer).status == 200);  // a trailing slash is the same path
    CHECK(f.store->last_filter.limit == 50);

    CHECK(f.get("/api/v1/audit?entity=link&slug=a1&limit=0", f.admin).status == 422);
    CHECK(f.get("/api/v1/audit?entity=link&slug=a1", f.admin).status == 200);
    CHECK(f.store->last_audit.entity == "link");
    CHECK(f.store->last_audit.slug == "a1");
}

TEST_CASE("admin: slugs and token names in paths are checked by their own rules", "[admin]") {
    Fixture f;
    CHECK(f.get("/api/v1/partners/Not_A_Slug", f.viewer).status == 404);
    CHECK(f.store->last_call.empty());
    CHECK(f.get("/api/v1/partners/tailscale/codes", f.viewer).status == 200);
    CHECK(f.store->last_call == "partner_codes");

    f.store->next.kind = OutcomeKind::deleted;
    auto revoked = f.send(http::Method::del, "DELETE", "/api/v1/tokens/grafana.prod@ops", f.admin,
                          {{"If-Match", "*"}});
    CHECK(revoked.status == 204);
    CHECK(f.store->last_call == "revoke_token");
    CHECK(f.store->last_slug == "grafana.prod@ops");
    CHECK(f.store->last_actor == "ada");
    CHECK(f.send(http::Method::del, "DELETE", "/api/v1/tokens/bad%20name", f.admin,
                 {{"If-Match", "*"}})
              .status == 404);
}

TEST_CASE("admin: disclosure paths carry a key and a normalised locale", "[admin]") {
    Fixture f;
    CHECK(f.get("/api/v1/disclosures/general/de-AT", f.viewer).status == 200);
    CHECK(f.store->last_call == "get_disclosure");
    CHECK(f.store->last_slug == "general/de-at");
    CHECK(f.get("/api/v1/disclosures/general/not_a_tag!", f.viewer).status == 404);
    CHECK(f.get("/api/v1/disclosures/general", f.viewer).status == 404);
}

TEST_CASE("admin: a create answers 201 with a Location naming the new resource", "[admin]") {
    Fixture f;
    f.store->next = Outcome{.kind = OutcomeKind::created,
                            .body = Json{{"slug", "tailscale"}, {"version", 1}},
                            .version = 1};
    auto partner = f.post_json("/api/v1/partners", f.editor, "{}");
    CHECK(partner.status == 201);
    CHECK(partner.header("Location") == "/api/v1/partners/tailscale");
    CHECK(f.post_json("/api/v1/links", f.editor, "{}").header("Location") ==
          "/api/v1/links/tailscale");

    f.store->next.body = Json{{"name", "grafana.prod"}, {"token", "rg_x"}, {"version", 1}};
    CHECK(f.post_json("/api/v1/tokens", f.admin, "{}").header("Location") ==
          "/api/v1/tokens/grafana.prod");

    auto disclosure = f.send(http::Method::put, "PUT", "/api/v1/disclosures/affiliate/EN-us",
                             f.editor, {{"Content-Type", "application/json"}}, "{}");
    CHECK(disclosure.status == 201);
    CHECK(disclosure.header("Location") == "/api/v1/disclosures/affiliate/en-us");

    // Answers that create nothing name no new resource.
    f.store->next = ok_object(2);
    CHECK(f.get("/api/v1/partners/tailscale", f.viewer).header("Location").empty());
}

namespace {

const std::string kConsole = "https://console.example.com";

Fixture cors_fixture() {
    return Fixture(std::make_unique<FakeStore>(),
                   AdminOptions{.max_failures_per_minute = 3, .cors_origins = {kConsole}});
}

std::vector<http::HeaderField> preflight_fields(std::string_view origin) {
    return {{"Origin", origin},
            {"Access-Control-Request-Method", "PATCH"},
            {"Access-Control-Request-Headers", "authorization, content-type, if-match"}};
}

}  // namespace

TEST_CASE("admin: a preflight from a configured origin is 204 with CORS headers and needs no token",
          "[admin][cors]") {
    Fixture f = cors_fixture();
    auto answer = f.send(http::Method::options, "OPTIONS", "/api/v1/partners/tailscale", "",
                         preflight_fields(kConsole));
    CHECK(answer.status == 204);
    CHECK(answer.header("Access-Control-Allow-Origin") == kConsole);
    CHECK(answer.header("Access-Control-Allow-Methods") == "GET, PATCH, DELETE, OPTIONS");
    CHECK(answer.header("Access-Control-Allow-Headers") ==
          "Authorization, Content-Type, If-Match, If-None-Match");
    CHECK(answer.header("Access-Control-Max-Age") == "600");
    CHECK(answer.header("Vary") == "Origin");
    CHECK(answer.header("Allow") == "GET, PATCH, DELETE, OPTIONS");
    CHECK(f.store->last_call.empty());
}

TEST_CASE("admin: a preflight from another origin or none is 204 with Allow and no CORS header",
          "[admin][cors]") {
    Fixture configured = cors_fixture();
    Fixture same_origin_only;
    for (auto* f : {&configured, &same_origin_only}) {
        for (std::string origin : {"https://evil.example", ""}) {
            INFO(origin);
            auto fields =
                origin.empty() ? std::vector<http::HeaderField>{} : preflight_fields(origin);
            auto answer = f->send(http::Method::options, "OPTIONS", "/api/v1/partners", "", fields);
            CHECK(answer.status == 204);
            CHECK(answer.header("Allow") == "GET, POST, OPTIONS");
            CHECK(answer.headers.find("Access-Control-") == std::string::npos);
        }
    }
    // An unknown resource stays 404, as it is for every method.
    CHECK(configured.send(http::Method::options, "OPTIONS", "/api/v1/nothing", "").status == 404);
}

TEST_CASE("admin: answers to a configured origin let its browser read them, even a 401",
          "[admin][cors]") {
    Fixture f = cors_fixture();
    f.store->next = ok_object(3);
    std::vector<http::HeaderField> from_console{{"Origin", kConsole}};
    auto ok =
        f.send(http::Method::get, "GET", "/api/v1/partners/tailscale", f.viewer, from_console);
    CHECK(ok.status == 200);
    CHECK(ok.header("Access-Control-Allow-Origin") == kConsole);
    CHECK(ok.header("Access-Control-Expose-Headers") == "ETag, Location");
    CHECK(ok.header("Vary") == "Origin");
    auto unauthorized =
        f.send(http::Method::get, "GET", "/api/v1/partners/tailscale", "", from_console);
    CHECK(unauthorized.status == 401);
    CHECK(unauthorized.header("Access-Control-Allow-Origin") == kConsole);

    auto other = f.send(http::Method::get, "GET", "/api/v1/partners/tailscale", f.viewer,
                        {{"Origin", "https://evil.example"}});
    CHECK(other.status == 200);
    CHECK(other.headers.find("Access-Control-") == std::string::npos);
}

TEST_CASE("admin: over the ceiling of failures per second a failure is 429, a good token is not",
          "[admin][limiter]") {
    refgate::testing::FakeMonotonicClock clock;  // stopped: every failure in the same second
    auto store = std::make_unique<FakeStore>();
    std::string admin = generate_token();
    store->tokens[hash_token(admin)] = {"ada", Role::admin};
    AdminHandler handler(std::move(store),
                         AdminOptions{.max_failures_per_second = 2, .clock = &clock});
    auto send = [&](const std::string& token, std::uint8_t peer) {
        std::string authorization = "Bearer " + token;  // the fields only view it
        std::vector<http::HeaderField> fields{{"Authorization", authorization}};
        http::Request request;
        request.method = http::Method::get;
        request.method_name = "GET";
        request.target = "/api/v1/partners";
        request.fields = &fields;
        request.peer.bytes[15] = peer;
        http::Response response;
        handler.handle(request, response);
        return Answer{response.status(), response.headers(), response.body()};
    };
    CHECK(send("rg_bad", 1).status == 401);
    CHECK(send("rg_bad", 2).status == 401);
    auto over = send("rg_bad", 3);
    CHECK(over.status == 429);
    CHECK(over.header("Retry-After") == "1");
    CHECK(send(admin, 4).status == 200);
}

}  // namespace admin_handler_test
