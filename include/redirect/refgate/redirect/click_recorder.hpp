#pragma once

#include <optional>
#include <vector>

#include "refgate/clicks/channel_cap.hpp"
#include "refgate/clicks/click_shard.hpp"
#include "refgate/clicks/salts.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/domain/ip_network.hpp"
#include "refgate/http/request.hpp"
#include "refgate/redirect/reader_request.hpp"
#include "refgate/redirect/scanner_check.hpp"

namespace refgate::redirect {

// Turns a redirected request into an in-memory count (and, for human clicks without DNT or GPC, a
// unique sample). One per I/O thread. Reads the request's headers and address during the call and
// keeps none of them. With scanner sources, a click the classifier calls human is counted as
// scanner when it comes from a listed network or is part of a burst (ScannerCheck).
// Where a click went, counted per (link, day, country, rule) besides its channel counter.
struct ClickTarget {
    std::uint16_t country = 0;  // CountryCode; 0: unknown
    unsigned rule = 0;          // the rule's index + 1; 0: the link's own destination
    unsigned branch = 0;        // the split's branch + 1; 0: not a split
};

class ClickRecorder {
  public:
    // `max_channels_per_link_day`: REFGATE_MAX_CHANNELS_PER_LINK_DAY (channel_cap.hpp).
    ClickRecorder(clicks::ClickShard& shard, const clicks::SaltBox& salts,
                  const domain::ClickClassifier& classifier,
                  const std::vector<domain::IpNetwork>& trusted_proxies,
                  const ScannerSources* scanner = nullptr,
                  std::size_t max_channels_per_link_day = 100)
        : shard_(shard),
          salts_(salts),
          classifier_(classifier),
          agents_(classifier),
          trusted_proxies_(trusted_proxies),
          channels_(max_channels_per_link_day) {
        if (scanner != nullptr) scanner_.emplace(*scanner);
    }

    // A click between begin() and count(): what its counter key is made of. Refers to the
    // request and `reader` given to begin(), which must outlive it.
    struct Click {
        ReaderRequest* reader = nullptr;
        std::int64_t link_id = 0;
        std::int64_t unix_seconds = 0;
        std::int32_t day = 0;
        domain::ClickClass cls = domain::ClickClass::human;
        std::string_view channel;
        clicks::OtherChannel other =
            clicks::OtherChannel::no;  // why `channel` is "other", if it is for a reason
        // The channel as read_channel() validated it, before the cap: what a placement token
        // names (read once per click).
        std::string_view validated_channel;
    };
    // A click in two steps, so that the caller can answer the request in between: begin()
    // classifies it and starts loading the counter it will add to (at thousands of links that
    // counter is seldom in the cache, and a redirect would otherwise wait for it); count()
    // counts it. `reader` is the request read once (ReaderRequest::of with trusted_proxies());
    // the unique sample reuses its hash when the targeting rules' split already computed it.
    // With `target`, the click is also counted as a targeting counter (CounterKey::targeting).
    Click begin(const http::Request& request, ReaderRequest& reader, std::int64_t link_id,
                std::int64_t unix_seconds);
    // Starts loading the counter a click on `link_id` most likely adds to (a human click without
    // a channel, today), before its request is parsed: a guess, which begin() confirms or follows
    // with the right key. Today is read from the kernel's last tick.
    void prefetch_likely(std::int64_t link_id);
    void count(const Click& click, const ClickTarget* target = nullptr);
    // Both steps at once.
    void record(const http::Request& request, ReaderRequest& reader, std::int64_t link_id,
                std::int64_t unix_seconds, const ClickTarget* target = nullptr) {
        count(begin(request, reader, link_id, unix_seconds), target);
    }
    // The same, reading the request itself.
    void record(const http::Request& request, std::int64_t link_id, std::int64_t unix_seconds,
                const ClickTarget* target = nullptr) {
        ReaderRequest reader = ReaderRequest::of(request, trusted_proxies_);
        record(request, reader, link_id, unix_seconds, target);
    }
    const std::vector<domain::IpNetwork>& trusted_proxies() const noexcept {
        return trusted_proxies_;
    }

  private:
    clicks::ClickShard& shard_;
    clicks::SaltReader salts_;
    const domain::ClickClassifier& classifier_;
    domain::AgentMatchCache agents_;  // one recorder per I/O thread: no locking
    const std::vector<domain::IpNetwork>& trusted_proxies_;
    std::optional<ScannerCheck> scanner_;
    clicks::ChannelCap channels_;  // this thread's channels per link and day, up to the cap
};

}  // namespace refgate::redirect
