#include "refgate/codec/disclosure_json.hpp"

#include <stdexcept>

#include "refgate/domain/model.hpp"
#include "refgate/domain/time.hpp"

namespace refgate::codec {

using Json = nlohmann::ordered_json;

Json disclosure_to_json(const domain::Disclosure& d) {
    Json j{{"key", d.key}, {"locale", d.locale}, {"text", d.text}};
    if (d.html_given) j["html"] = d.html;
    return j;
}

Json disclosures_to_json(const std::vector<domain::Disclosure>& versions) {
    Json array = Json::array();
    for (const auto& d : versions) {
        array.push_back({{"key", d.key},
                         {"locale", d.locale},
                         {"version", d.version},
                         {"text", d.text},
                         {"html", d.html},
                         {"html_given", d.html_given},
                         {"updated_at", d.updated_at}});
    }
    return array;
}

std::vector<domain::Disclosure> disclosures_from_json(const Json& array) {
    if (!array.is_array()) throw std::runtime_error("disclosures must be a list");
    std::vector<domain::Disclosure> versions;
    for (const auto& j : array) {
        domain::Disclosure d;
        d.key = j.at("key").get<std::string>();
        auto locale = domain::normalize_locale(j.at("locale").get<std::string>());
        if (!domain::valid_slug(d.key) || !locale || *locale != j.at("locale").get<std::string>())
            throw std::runtime_error("disclosure " + d.key + ": bad key or locale");
        d.locale = *locale;
        d.version = j.at("version").get<std::int64_t>();
        d.text = j.at("text").get<std::string>();
        d.html = j.at("html").get<std::string>();
        d.html_given = j.value("html_given", false);
        d.updated_at = j.at("updated_at").get<std::string>();
        if (d.version < 1 || !domain::parse_rfc3339(d.updated_at))
            throw std::runtime_error("disclosure " + d.key + ": bad version or updated_at");
        versions.push_back(std::move(d));
    }
    return versions;
}

}  // namespace refgate::codec
