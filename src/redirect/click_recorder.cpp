#include "refgate/redirect/click_recorder.hpp"

namespace refgate {

namespace {

// The request fields a click looks at, found in one pass over the fields (the first of each name,
// as Request::header would give) instead of a pass per name.
struct ClickFields {
    std::string_view user_agent, purpose, sec_purpose, x_purpose, x_moz, dnt, sec_gpc,
        forwarded_for;
};

ClickFields click_fields(const http::Request& request) {
    ClickFields out;
    if (request.fields == nullptr) return out;
    for (const auto& field : *request.fields) {
        const auto& name = field.name;
        std::string_view* slot = nullptr;
        switch (name.size()) {
            case 3:
                if (http::iequals(name, "DNT")) slot = &out.dnt;
                break;
            case 5:
                if (http::iequals(name, "X-Moz")) slot = &out.x_moz;
                break;
            case 7:
                if (http::iequals(name, "Purpose")) {
                    slot = &out.purpose;
                } else if (http::iequals(name, "Sec-GPC")) {
                    slot = &out.sec_gpc;
                }
                break;
            case 9:
                if (http::iequals(name, "X-Purpose")) slot = &out.x_purpose;
                break;
            case 10:
                if (http::iequals(name, "User-Agent")) slot = &out.user_agent;
                break;
            case 11:
                if (http::iequals(name, "Sec-Purpose")) slot = &out.sec_purpose;
                break;
            case 15:
                if (http::iequals(name, "X-Forwarded-For")) slot = &out.forwarded_for;
                break;
            default:
                break;
        }
        if (slot != nullptr && slot->data() == nullptr) *slot = field.value;
    }
    return out;
}

}  // namespace

void ClickRecorder::record(const http::Request& request, std::int64_t link_id,
                           std::int64_t unix_seconds, const ClickTarget* target) {
    ClickFields fields = click_fields(request);
    ClickSignals signals;
    signals.head = request.method == http::Method::head;
    signals.user_agent = fields.user_agent;
    signals.purpose = fields.purpose;
    signals.sec_purpose = fields.sec_purpose;
    signals.x_purpose = fields.x_purpose;
    signals.x_moz = fields.x_moz;
    ClickClass cls = classifier_.classify(signals, agents_.match(signals.user_agent));
    std::int32_t day = utc_day(unix_seconds);
    std::string_view channel = channel_of(request.query());
    auto count = [&] {
        shard_.count(CounterKey(link_id, day, cls, channel));
        if (target == nullptr) return;
        char country[2] = {'X', 'X'};
        if (target->country != 0) {
            country[0] = static_cast<char>(target->country >> 8);
            country[1] = static_cast<char>(target->country & 0xff);
        }
        shard_.count(CounterKey::targeting(link_id, day, cls, std::string_view(country, 2),
                                           target->rule, target->branch));
    };
    if (cls != ClickClass::human) {
        count();
        return;
    }
    IpBytes address = client_address(request.peer.bytes, fields.forwarded_for, trusted_proxies_);
    SaltKey salt;
    bool salted = salts_.get(day, salt);
    if (scanner_ &&
        (scanner_->from_listed_network(address) ||
         (salted && scanner_->burst_applies(address) &&
          scanner_->in_burst(burst_hash(salt, address, channel), link_id, unix_seconds)))) {
        cls = ClickClass::scanner;
    }
    count();

    // Only human clicks feed the unique estimate; readers who ask not to be tracked are counted
    // but left out of it.
    if (cls != ClickClass::human || fields.dnt == "1" || fields.sec_gpc == "1" || !salted) return;
    shard_.sample({link_id, day, unique_hash(salt, address, signals.user_agent, link_id)});
}

}  // namespace refgate
