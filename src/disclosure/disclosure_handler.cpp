#include "refgate/disclosure/disclosure_handler.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "refgate/disclosure/disclosure_answers.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/disclosure.hpp"
#include "refgate/domain/html.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/public_url.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/domain/request_host.hpp"
#include "refgate/http/negotiation.hpp"
#include "refgate/runtime/snapshot_store.hpp"

namespace refgate::disclosure {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kVaryNegotiated = "Accept, Accept-Language";
constexpr std::string_view kVaryLanguage = "Accept-Language";

// Headers every answer of these endpoints carries, errors included, so a page script can read
// them.
void common_headers(http::Response& response) {
    response.add_header("Access-Control-Allow-Origin", "*");
    response.add_header("X-Content-Type-Options", "nosniff");
}

void problem(http::Response& response, int status, std::string_view type, std::string_view detail,
             const Json& extra = nullptr) {
    Json body{{"type", "urn:refgate:problem:" + std::string(type)},
              {"title", std::string(http::reason_phrase(status))},
              {"status", status},
              {"detail", std::string(detail)}};
    if (extra.is_object()) body.update(extra);
    response.set_status(status);
    response.add_header("Content-Type", "application/problem+json");
    response.add_header("Cache-Control", "no-store");
    common_headers(response);
    // The detail may quote a query value that is not UTF-8: U+FFFD in its place, not a throw.
    response.body() = body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<DisclosureFormat> format_of_path(std::string_view path) {
    if (path == "/disclosure.txt") return DisclosureFormat::text;
    if (path == "/disclosure.html") return DisclosureFormat::html;
    if (path == "/disclosure.json") return DisclosureFormat::json;
    return std::nullopt;
}

std::string content_type_of(DisclosureFormat format) {
    switch (format) {
        case DisclosureFormat::html:
            return "text/html; charset=utf-8";
        case DisclosureFormat::json:
            return "application/json";
        case DisclosureFormat::text:
            break;
    }
    return "text/plain; charset=utf-8";
}

}  // namespace

DisclosureHandler::DisclosureHandler(const runtime::SnapshotStore& store, DisclosureOptions options)
    : reader_(store),
      options_(std::move(options)),
      cache_control_("public, max-age=" + std::to_string(options_.max_age.count())) {}

void DisclosureHandler::handle(const http::Request& request, http::Response& response) {
    if (request.method == http::Method::options) {
        // Simple GETs need no preflight; answer one anyway for clients that send it.
        response.set_status(204);
        response.add_header("Allow", "GET, HEAD, OPTIONS");
        response.add_header("Access-Control-Allow-Methods", "GET, HEAD");
        response.add_header("Access-Control-Allow-Headers",
                            "Accept, Accept-Language, "
                            "If-None-Match");
        response.add_header("Access-Control-Max-Age", "86400");
        common_headers(response);
        return;
    }
    if (request.method != http::Method::get && request.method != http::Method::head) {
        problem(response, 405, "method-not-allowed",
                std::string(request.method_name) + " is not allowed here");
        response.add_header("Allow", "GET, HEAD, OPTIONS");
        return;
    }
    const domain::Snapshot* snapshot = reader_.get();
    if (snapshot == nullptr) {
        problem(response, 503, "unavailable", "no data loaded yet; try again");
        response.add_header("Retry-After", "1");
        return;
    }
    if (request.path().starts_with(kSnippetPrefix)) {
        snippet(request, response, *snapshot);
    } else {
        serve(request, response, *snapshot);
    }
}

const DisclosureAnswers& DisclosureHandler::answers(const domain::Snapshot& snapshot) {
    // Built once per snapshot on each thread (a few strings per text), then only looked up.
    if (answers_generation_ != reader_.generation()) {
        answers_ = DisclosureAnswers(snapshot.disclosures());
        answers_generation_ = reader_.generation();
    }
    return answers_;
}

namespace {

// The reader's locales from ?lang= or Accept-Language; nullopt (after answering 400) when ?lang=
// or ?partner= is malformed. `partner` is set from ?partner=.
std::optional<std::vector<std::string>> reader_locales(const http::Request& request,
                                                       http::Response& response,
                                                       std::string& partner) {
    std::vector<std::string> locales;
    if (auto lang = domain::query_value(request.query(), "lang")) {
        auto locale = domain::normalize_locale(*lang);
        if (!locale) {
            problem(response, 400, "bad-lang", "lang must be a language tag such as en or de-AT");
            return std::nullopt;
        }
        locales.push_back(std::move(*locale));
    } else {
        locales = http::accepted_languages(request.header("Accept-Language"));
    }
    if (auto p = domain::query_value(request.query(), "partner")) {
        if (!domain::valid_slug(*p)) {
            problem(response, 400, "bad-partner", "partner must be a partner slug");
            return std::nullopt;
        }
        partner = std::move(*p);
    }
    return locales;
}

// The link a snippet is for (issue 46): on the domain ?domain= names, else on the request's
// host (as the redirect picks it), else on the default domain. nullptr once answered 404.
const domain::LinkEntry* snippet_link(const http::Request& request, http::Response& response,
                                      const domain::Snapshot& snapshot, std::string_view slug) {
    std::uint16_t domain = 0;
    if (auto named = domain::query_value(request.query(), "domain")) {
        domain = snapshot.domain_of(*named);
        if (domain == domain::Snapshot::kUnknownDomain) {
            problem(response, 404, "no-domain", "no domain '" + *named + "'");
            return nullptr;
        }
    } else if (snapshot.has_domains()) {
        domain = snapshot.domain_of(domain::authority_host(
            request.authority.empty() ? request.header("Host") : request.authority));
        if (domain == domain::Snapshot::kUnknownDomain) domain = 0;
    }
    const domain::LinkEntry* link =
        domain::valid_slug(slug)
            ? snapshot.find(slug, domain::Snapshot::hash_of(slug, domain), domain)
            : nullptr;
    if (link == nullptr) problem(response, 404, "not-found", "no link with that slug");
    return link;
}

// The snippet as JSON: the link, its href and rel, the HTML, and the disclosure it carries.
std::string snippet_json(const domain::LinkEntry& link, const domain::Partner& partner,
                         const std::string& href, const std::string& html,
                         const domain::DisclosureEntry* entry) {
    Json disclosure = nullptr;
    if (entry != nullptr) {
        disclosure = Json{{"key", entry->current->key},
                          {"locale", entry->current->locale},
                          {"text", entry->current->text},
                          {"version", entry->current->version}};
    }
    return Json{{"slug", link.slug},
                {"partner", partner.slug},
                {"name", partner.name},
                {"href", href},
                {"rel", std::string(domain::kSponsoredRel)},
                {"html", html},
                {"disclosure", disclosure}}
        .dump();
}

}  // namespace

void DisclosureHandler::serve(const http::Request& request, http::Response& response,
                              const domain::Snapshot& snapshot) {
    std::string_view path = request.path();
    bool history = path == "/disclosure/history";
    std::optional<DisclosureFormat> format = format_of_path(path);
    bool negotiated = !history && !format;
    if (negotiated) {
        format = negotiate_format(request.header("Accept"));
        if (!format) {
            problem(response, 406, "not-acceptable",
                    "available types: " + std::string(kDisclosureTypes),
                    Json{{"available", {"text/plain", "text/html", "application/json"}}});
            response.add_header("Vary", kVaryNegotiated);
            return;
        }
    }
    std::string partner;
    auto locales = reader_locales(request, response, partner);
    if (!locales) return;
    const domain::DisclosureEntry* entry =
        snapshot.disclosures().resolve(partner, *locales, options_.default_locale);
    if (entry == nullptr) {
        problem(response, 404, "no-disclosure", "no disclosure text has been published");
        return;
    }
    const std::string& language = entry->current->locale;
    const DisclosureAnswer& answer = answers(snapshot).of(*entry);
    if (history) {
        cacheable(request, response, "application/json", answer.history_etag, kVaryLanguage,
                  answer.history_body, language);
        return;
    }
    cacheable(request, response, content_type_of(*format), answer.etag(*format),
              negotiated ? kVaryNegotiated : kVaryLanguage, answer.body(*format), language);
    if (*format == DisclosureFormat::html) {
        // The fragment may be framed; it never runs anything.
        response.add_header("Content-Security-Policy",
                            "default-src 'none'; style-src 'unsafe-inline'");
    }
}

void DisclosureHandler::snippet(const http::Request& request, http::Response& response,
                                const domain::Snapshot& snapshot) {
    std::string_view slug = request.path().substr(kSnippetPrefix.size());
    if (slug.ends_with('/')) slug.remove_suffix(1);
    if (options_.public_base_url.empty()) {
        problem(response, 404, "snippets-off",
                "snippets need REFGATE_PUBLIC_BASE_URL to be configured");
        return;
    }
    const domain::LinkEntry* link = snippet_link(request, response, snapshot, slug);
    if (link == nullptr) return;
    auto format = domain::query_value(request.query(), "format").value_or("html");
    if (format != "html" && format != "json") {
        problem(response, 400, "bad-format", "format must be html or json");
        return;
    }
    // The channel the link is made for, as the redirect will count it (never "direct" or "other"
    // by accident: a value it would not take as is is refused).
    auto src = domain::query_value(request.query(), "src");
    if (src && !domain::counted_channel(*src)) {
        problem(response, 400, "bad-src", "src " + std::string(domain::kCountedChannelRule));
        return;
    }
    std::string ignored_partner;
    auto locales = reader_locales(request, response, ignored_partner);
    if (!locales) return;
    const domain::Partner& partner = snapshot.partner(*link);
    const domain::DisclosureEntry* entry =
        snapshot.disclosures().resolve(partner.slug, *locales, options_.default_locale);

    std::string href = domain::public_link_url(options_.public_base_url,
                                               snapshot.domains()[link->domain].host, link->slug);
    if (src) href.append("?src=").append(*src);
    std::string html = domain::link_snippet(href, partner.name,
                                            entry != nullptr ? &entry->current->text : nullptr);
    std::int64_t version = entry != nullptr ? entry->current->version : 0;
    std::string language = entry != nullptr ? entry->current->locale : std::string();
    if (format == "json") {
        std::string body = snippet_json(*link, partner, href, html, entry);
        cacheable(request, response, "application/json", http::strong_etag(version, body),
                  kVaryLanguage, body, language);
        return;
    }
    html.push_back('\n');
    cacheable(request, response, "text/html; charset=utf-8", http::strong_etag(version, html),
              kVaryLanguage, html, language);
}

void DisclosureHandler::cacheable(const http::Request& request, http::Response& response,
                                  std::string_view content_type, std::string_view etag,
                                  std::string_view vary, std::string_view body,
                                  std::string_view content_language) const {
    bool not_modified = http::if_none_match_matches(request.header("If-None-Match"), etag);
    response.set_status(not_modified ? 304 : 200);
    response.add_header("ETag", etag);
    response.add_header("Cache-Control", cache_control_);
    response.add_header("Vary", vary);
    if (!content_language.empty()) response.add_header("Content-Language", content_language);
    common_headers(response);
    // So that a page script can revalidate and see which locale it got.
    response.add_header("Access-Control-Expose-Headers", "ETag, Content-Language");
    if (not_modified) return;
    response.add_header("Content-Type", content_type);
    response.body().assign(body);
}

}  // namespace refgate::disclosure
