// The admin API's routes for the editors' console beyond the resources' basics: QR codes of a
// link's public URL, the import, the export and the partner families' country groups.

#include <array>
#include <charconv>

#include "api.hpp"
#include "refgate/admin/qr_code.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/codec/links_csv.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/query.hpp"

namespace refgate::admin {
namespace {

using http::Method;
using Json = nlohmann::ordered_json;

std::optional<int> qr_size(std::string_view query) {
    auto text = domain::query_value(query, "size");
    if (!text) return kQrDefaultPixels;
    int n = 0;
    auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
    if (ec != std::errc{} || ptr != text->data() + text->size() || n < kQrMinPixels ||
        n > kQrMaxPixels)
        return std::nullopt;
    return n;
}

// "1"/"true" or "0"/"false"; absent: false; nullopt otherwise.
std::optional<bool> flag(std::string_view query, std::string_view name) {
    auto text = domain::query_value(query, name);
    if (!text || *text == "0" || *text == "false") return false;
    if (*text == "1" || *text == "true") return true;
    return std::nullopt;
}

void attachment(Answer& answer, const std::string& filename) {
    answer.response().add_header("Content-Disposition",
                                 "attachment; filename=\"" + filename + "\"");
}

constexpr std::array kImportRoutes{
    Route{Method::post, "POST", "/api/v1/import", Role::editor, Operation::import_document},
};

class Import final : public Resource {
  public:
    explicit Import(AdminStore& store) : store_(store) {}

    void serve(const ApiRequest& r, Answer& answer) override {
        auto type = media_type(r.http.header("Content-Type"));
        bool csv = http::iequals(type, "text/csv");
        if (!csv && !http::iequals(type, "application/json"))
            return answer.problem(415, "unsupported-media-type",
                                  "send application/json or text/csv");
        auto dry_run = flag(r.http.query(), "dry_run");
        if (!dry_run) return answer.invalid_query({{"dry_run", "must be 1, true, 0 or false"}});
        ImportRequest request{.text = std::string(r.http.body), .csv = csv, .dry_run = *dry_run};
        answer.outcome(store_.import_document(r.actor, request));
    }

  private:
    AdminStore& store_;
};

constexpr std::array kExportRoutes{
    Route{Method::get, "GET", "/api/v1/export", Role::viewer, Operation::export_document},
};

class Export final : public Resource {
  public:
    explicit Export(AdminStore& store) : store_(store) {}

    void serve(const ApiRequest& r, Answer& answer) override {
        auto format = domain::query_value(r.http.query(), "format").value_or("json");
        if (format != "json" && format != "csv")
            return answer.invalid_query({{"format", "must be json or csv"}});
        auto o = store_.export_document();
        if (o.kind != OutcomeKind::ok) return answer.outcome(o);
        if (format == "csv") {
            answer.csv(codec::links_to_csv(o.view.links));
            return attachment(answer, "refgate-links.csv");
        }
        answer.json(200, view_json(o.view));
        attachment(answer, "refgate-export.json");
    }

  private:
    AdminStore& store_;
};

constexpr std::array kCountryGroupRoutes{
    Route{Method::get, "GET", "/api/v1/country-groups", Role::viewer,
          Operation::list_country_groups},
    Route{Method::get, "GET", "/api/v1/country-groups/{family}", Role::viewer,
          Operation::get_country_group},
    Route{Method::put, "PUT", "/api/v1/country-groups/{family}", Role::editor,
          Operation::put_country_group},
    Route{Method::del, "DELETE", "/api/v1/country-groups/{family}", Role::editor,
          Operation::delete_country_group},
};

// A partner family's country fallbacks; the family is checked like a slug (the table's rule).
class CountryGroups final : public Resource {
  public:
    explicit CountryGroups(AdminStore& store) : store_(store) {}

    void serve(const ApiRequest& r, Answer& answer) override {
        switch (r.route->operation) {
            case Operation::list_country_groups:
                return answer.outcome(store_.list_country_groups());
            case Operation::get_country_group:
                return answer.outcome(store_.get_country_group(r.name));
            case Operation::delete_country_group:
                return answer.outcome(store_.delete_country_group(r.actor, r.name, r.if_match));
            default: {
                auto o = store_.put_country_group(r.actor, r.name, r.put,
                                                  codec::parse_country_group_put(r.name, r.body));
                answer.outcome(o, o.kind == OutcomeKind::created
                                      ? "/api/v1/country-groups/" + r.name
                                      : std::string());
            }
        }
    }

  private:
    AdminStore& store_;
};

}  // namespace

void serve_qr(AdminStore& store, const ApiRequest& r, Answer& answer) {
    bool png = r.route->operation == Operation::qr_png;
    auto query = r.http.query();
    std::vector<codec::FieldError> errors;
    auto size = qr_size(query);
    if (!size) errors.push_back({"size", "must be an integer from 64 to 2048 (pixels)"});
    auto src = domain::query_value(query, "src");
    if (src && !domain::counted_channel(*src))
        errors.push_back({"src", std::string(domain::kCountedChannelRule)});
    auto download = flag(query, "download");
    if (!download) errors.push_back({"download", "must be 1, true, 0 or false"});
    if (!errors.empty()) return answer.invalid_query(errors);
    auto share = store.share_link(link_name(r), src.value_or(""));
    if (share.kind != OutcomeKind::ok) return answer.outcome(share);
    if (!share.view.public_url)
        return answer.problem(409, "no-public-base-url",
                              "QR codes need REFGATE_PUBLIC_BASE_URL to be configured");
    const std::string& url = *share.view.public_url;
    auto matrix = encode_qr(url);
    if (!matrix) throw std::runtime_error("libqrencode could not encode " + url);
    http::Response& response = answer.response();
    response.set_status(200);
    response.add_header("Content-Type", png ? "image/png" : "image/svg+xml");
    response.add_header("Cache-Control", "no-store");
    response.add_header("X-Content-Type-Options", "nosniff");
    if (!png) response.add_header("Content-Security-Policy", "default-src 'none'");
    if (*download) attachment(answer, r.name + (png ? ".png" : ".svg"));
    response.body() = png ? qr_png(*matrix, *size) : qr_svg(*matrix, *size);
}

std::span<const Route> import_routes() { return kImportRoutes; }
std::span<const Route> export_routes() { return kExportRoutes; }
std::span<const Route> country_group_routes() { return kCountryGroupRoutes; }

std::unique_ptr<Resource> import_resource(AdminStore& store) {
    return std::make_unique<Import>(store);
}
std::unique_ptr<Resource> export_resource(AdminStore& store) {
    return std::make_unique<Export>(store);
}
std::unique_ptr<Resource> country_groups_resource(AdminStore& store) {
    return std::make_unique<CountryGroups>(store);
}

}  // namespace refgate::admin
