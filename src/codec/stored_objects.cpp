#include "refgate/codec/stored_objects.hpp"

#include <chrono>
#include <cstdio>

#include "refgate/codec/import_document.hpp"
#include "refgate/domain/time.hpp"

namespace refgate {
namespace {

using Json = nlohmann::ordered_json;

void add_stamps(Json& object, const Stamps& stamps) {
    object["created_at"] = format_micros(stamps.created_us);
    object["updated_at"] = format_micros(stamps.updated_us);
    object["version"] = stamps.version;
}

}  // namespace

std::string format_micros(std::int64_t unix_micros) {
    auto micros =
        std::chrono::sys_time<std::chrono::microseconds>(std::chrono::microseconds{unix_micros});
    auto seconds = std::chrono::floor<std::chrono::seconds>(micros);
    std::string text = format_rfc3339(seconds);  // "...T16:00:00Z"
    char fraction[8];
    std::snprintf(fraction, sizeof fraction, ".%06lld",
                  static_cast<long long>((micros - seconds).count()));
    text.insert(text.size() - 1, fraction);
    return text;
}

Json stored_partner_object(const Partner& partner, const Stamps& stamps) {
    Json object = partner_to_json(partner);
    Json scheduled = Json::array();
    for (const auto& code : partner.scheduled_codes) {
        scheduled.push_back(
            {{"ref_code", code.ref_code}, {"valid_from", format_rfc3339(code.valid_from)}});
    }
    object["scheduled_codes"] = std::move(scheduled);
    add_stamps(object, stamps);
    return object;
}

Json stored_link_object(const Link& link, const Stamps& stamps) {
    Json object = link_to_json(link);
    add_stamps(object, stamps);
    return object;
}

}  // namespace refgate
