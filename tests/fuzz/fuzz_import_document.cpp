// The import document and the admin API's JSON bodies (which go through the same parse_import as
// {"partners": [body]}, {"links": [body]} or {"disclosures": [body]}). The first byte picks the
// form: 0 the whole document, 1 a partner body, 2 a link body, 3 a disclosure body. Invariants:
// nothing throws; a document without issues has every link's destination and fallback canonical
// and within its partner's domains, and exporting it and importing the export gives the same
// document without issues.

#include <unordered_map>

#include "fuzz_check.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/domain/destination.hpp"

namespace {

using Json = nlohmann::ordered_json;

Json wrap(std::uint8_t form, Json body) {
    switch (form % 4) {
        case 1:
            return Json{{"partners", Json::array({std::move(body)})}};
        case 2:
            return Json{{"links", Json::array({std::move(body)})}};
        case 3:
            return Json{{"disclosures", Json::array({std::move(body)})}};
        default:
            return body;
    }
}

void check_links(refgate::codec::ImportDocument& document) {
    std::unordered_map<std::string, const refgate::domain::Partner*> partners;
    for (const auto& p : document.partners) partners.emplace(p.slug, &p);
    auto lookup = [&partners](const std::string& slug) -> const refgate::domain::Partner* {
        auto it = partners.find(slug);
        return it == partners.end() ? nullptr : it->second;
    };
    std::vector<refgate::domain::Link> links = document.links;
    auto issues = refgate::codec::validate_links(links, lookup, {});
    if (!issues.empty()) return;
    for (const auto& link : links) {
        const refgate::domain::Partner* partner = lookup(link.partner);
        FUZZ_CHECK(partner != nullptr);
        auto check =
            refgate::domain::check_destination(link.destination, partner->allowed_domains, {});
        FUZZ_CHECK(check.ok() && check.canonical == link.destination);
        if (link.fallback) {
            auto fb =
                refgate::domain::check_destination(*link.fallback, partner->allowed_domains, {});
            FUZZ_CHECK(fb.ok() && fb.canonical == *link.fallback);
        }
    }
    document.links = std::move(links);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    auto text = refgate::fuzz::as_text(data + 1, size - 1);
    Json body = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) return 0;
    auto parsed = refgate::codec::parse_import(wrap(data[0], std::move(body)));
    if (!parsed.issues.empty()) return 0;
    check_links(parsed.document);
    const auto& doc = parsed.document;
    Json exported = refgate::codec::export_document(doc.partners, doc.links, doc.disclosures);
    auto again = refgate::codec::parse_import(exported);
    FUZZ_CHECK(again.issues.empty());
    const auto& d2 = again.document;
    FUZZ_CHECK(refgate::codec::export_document(d2.partners, d2.links, d2.disclosures) == exported);
    return 0;
}
