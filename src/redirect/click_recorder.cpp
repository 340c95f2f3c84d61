#include "refgate/redirect/click_recorder.hpp"

namespace refgate {

void ClickRecorder::record(const http::Request& request, std::int64_t link_id,
                           std::int64_t unix_seconds) {
    ClickSignals signals;
    signals.head = request.method == http::Method::head;
    signals.user_agent = request.header("User-Agent");
    signals.purpose = request.header("Purpose");
    signals.sec_purpose = request.header("Sec-Purpose");
    signals.x_purpose = request.header("X-Purpose");
    signals.x_moz = request.header("X-Moz");
    ClickClass cls = classifier_.classify(signals);
    std::int32_t day = utc_day(unix_seconds);
    shard_.count(CounterKey(link_id, day, cls, channel_of(request.query())));

    if (cls != ClickClass::human) return;
    // Readers who ask not to be tracked are counted but left out of the unique estimate.
    if (request.header("DNT") == "1" || request.header("Sec-GPC") == "1") return;
    SaltKey salt;
    if (!salts_.get(day, salt)) return;
    IpBytes address =
        client_address(request.peer.bytes, request.header("X-Forwarded-For"), trusted_proxies_);
    shard_.sample({link_id, day, unique_hash(salt, address, signals.user_agent, link_id)});
}

}  // namespace refgate
