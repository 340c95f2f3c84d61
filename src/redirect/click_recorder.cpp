#include "refgate/redirect/click_recorder.hpp"

#include <ctime>

namespace refgate::redirect {

ClickRecorder::Click ClickRecorder::begin(const http::Request& request, ReaderRequest& fields,
                                          std::int64_t link_id, std::int64_t unix_seconds) {
    domain::ClickSignals signals;
    signals.head = request.method == http::Method::head;
    signals.user_agent = fields.user_agent;
    signals.purpose = fields.purpose;
    signals.sec_purpose = fields.sec_purpose;
    signals.x_purpose = fields.x_purpose;
    signals.x_moz = fields.x_moz;
    Click click;
    click.reader = &fields;
    click.link_id = link_id;
    click.unix_seconds = unix_seconds;
    click.cls = classifier_.classify(signals, agents_.match(signals.user_agent));
    click.day = domain::utc_day(unix_seconds);
    domain::ChannelTag tag = domain::read_channel(request.query());
    click.validated_channel = tag.channel;
    clicks::ChannelCap::Admitted admitted = channels_.admit(link_id, click.day, tag.channel);
    click.channel = admitted.channel;
    if (tag.identifier) {
        click.other = clicks::OtherChannel::identifier;
    } else if (admitted.capped) {
        click.other = clicks::OtherChannel::cap;
    }
    shard_.prefetch(domain::CounterKey(link_id, click.day, click.cls, click.channel));
    return click;
}

void ClickRecorder::prefetch_likely(std::int64_t link_id) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME_COARSE, &now);
    shard_.prefetch(domain::CounterKey(link_id, domain::utc_day(now.tv_sec),
                                       domain::ClickClass::human, domain::channel_of({})));
}

void ClickRecorder::count(const Click& click, const ClickTarget* target) {
    ReaderRequest& fields = *click.reader;
    const std::int64_t link_id = click.link_id;
    const std::int32_t day = click.day;
    const std::string_view channel = click.channel;
    domain::ClickClass cls = click.cls;
    auto count = [&] {
        shard_.count(domain::CounterKey(link_id, day, cls, channel), click.other);
        if (target == nullptr) return;
        char country[2] = {'X', 'X'};
        if (target->country != 0) {
            country[0] = static_cast<char>(target->country >> 8);
            country[1] = static_cast<char>(target->country & 0xff);
        }
        shard_.count(domain::CounterKey::targeting(link_id, day, cls, std::string_view(country, 2),
                                                   target->rule, target->branch));
    };
    if (cls != domain::ClickClass::human) {
        count();
        return;
    }
    const domain::IpBytes& address = fields.address;
    clicks::SaltKey salt;
    bool salted = salts_.get(day, salt);
    if (scanner_ && (scanner_->from_listed_network(address) ||
                     (salted && scanner_->burst_applies(address) &&
                      scanner_->in_burst(clicks::burst_hash(salt, address, channel), link_id,
                                         click.unix_seconds)))) {
        cls = domain::ClickClass::scanner;
    }
    count();

    // Only human clicks feed the unique estimate; readers who ask not to be tracked are counted
    // but left out of it.
    if (cls != domain::ClickClass::human || fields.dnt == "1" || fields.sec_gpc == "1" || !salted)
        return;
    shard_.sample({link_id, day, fields.hash(salt, link_id)});
}

}  // namespace refgate::redirect
