#include "refgate/disclosure/disclosure_answers.hpp"

#include <nlohmann/json.hpp>

#include "refgate/http/negotiation.hpp"

namespace refgate::disclosure {
namespace {

using Json = nlohmann::ordered_json;

DisclosureAnswer answer_for(const domain::DisclosureEntry& entry) {
    const domain::Disclosure& current = *entry.current;
    DisclosureAnswer a;
    a.text_body = current.text + "\n";
    a.html_body = domain::disclosure_fragment(current);
    a.json_body = Json{{"key", current.key},         {"locale", current.locale},
                       {"text", current.text},       {"html", current.html},
                       {"version", current.version}, {"updated_at", current.updated_at}}
                      .dump();
    Json items = Json::array();
    for (std::size_t k = 0; k < entry.history.size(); ++k) {
        const domain::Disclosure& d = entry.history[k];
        items.push_back(
            {{"version", d.version},
             {"text", d.text},
             {"html", d.html},
             {"effective_at", d.updated_at},
             {"until",
              k + 1 < entry.history.size() ? Json(entry.history[k + 1].updated_at) : Json()}});
    }
    a.history_body =
        Json{{"key", current.key}, {"locale", current.locale}, {"items", std::move(items)}}.dump();
    a.text_etag = http::strong_etag(current.version, a.text_body);
    a.html_etag = http::strong_etag(current.version, a.html_body);
    a.json_etag = http::strong_etag(current.version, a.json_body);
    a.history_etag = http::strong_etag(current.version, a.history_body);
    return a;
}

}  // namespace

std::optional<DisclosureFormat> negotiate_format(std::string_view accept) {
    auto index = http::negotiate_media_type(accept, kDisclosureMediaTypes);
    if (!index) return std::nullopt;
    return static_cast<DisclosureFormat>(*index);
}

const std::string& DisclosureAnswer::body(DisclosureFormat format) const {
    switch (format) {
        case DisclosureFormat::html:
            return html_body;
        case DisclosureFormat::json:
            return json_body;
        case DisclosureFormat::text:
            break;
    }
    return text_body;
}

const std::string& DisclosureAnswer::etag(DisclosureFormat format) const {
    switch (format) {
        case DisclosureFormat::html:
            return html_etag;
        case DisclosureFormat::json:
            return json_etag;
        case DisclosureFormat::text:
            break;
    }
    return text_etag;
}

DisclosureAnswers::DisclosureAnswers(const domain::DisclosureSet& set) {
    set.each([this](const domain::DisclosureEntry& entry) {
        answers_.emplace(entry.current, answer_for(entry));
    });
}

const DisclosureAnswer& DisclosureAnswers::of(const domain::DisclosureEntry& entry) const {
    return answers_.at(entry.current);
}

}  // namespace refgate::disclosure
