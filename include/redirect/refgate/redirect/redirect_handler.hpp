#pragma once

#include <optional>
#include <string>

#include "refgate/domain/snapshot.hpp"
#include "refgate/domain/time.hpp"
#include "refgate/http/server.hpp"
#include "refgate/redirect/click_recorder.hpp"
#include "refgate/redirect/reader_targeting.hpp"
#include "refgate/runtime/snapshot_store.hpp"

namespace refgate::redirect {

struct RedirectOptions {
    std::string referrer_policy = "strict-origin-when-cross-origin";
    // Issue 46: a request whose host names no domain is 404 (REFGATE_UNKNOWN_HOST=reject)
    // rather than served as the default domain; while no domain is defined the default domain's
    // host is `default_host` (the public base URL's, lower case; empty: none).
    bool reject_unknown_host = false;
    std::string default_host;
};

// GET/HEAD /go/{slug}: answered from the in-memory snapshot only. Never waits on the network.
class RedirectHandler final : public http::Handler {
  public:
    // `recorder` counts every redirect; null: nothing is counted. `targeting` says where a
    // link's rules find the reader's country and split key (none: no country, a local key).
    RedirectHandler(const runtime::SnapshotStore& store, const domain::Clock& clock,
                    RedirectOptions options, ClickRecorder* recorder = nullptr,
                    const TargetingSources& targeting = {});
    void handle(const http::Request& request, http::Response& response) override;
    // Works the slug and its hash out once (into `notes`) and starts loading the link: its slot
    // in the slug table at the first call, its entry at the next, its Location at the third.
    void prepare(std::string_view path, Parsed stage, http::RequestNotes& notes) override;

    // The slug of a /go/ path: exact lower-case slug, one trailing slash tolerated. Empty when the
    // path can name no link (encoded slashes, dots, upper case, control characters, too long).
    static std::string_view slug_of(std::string_view path);

  private:
    // A path's slug (empty when none) and its hash in the slug table.
    struct SlugKey {
        std::string_view slug;
        std::size_t hash = 0;
    };
    // slug_of(path) and its hash.
    static SlugKey key_of(std::string_view path);
    // The key prepare() noted for the request of `path`, else key_of(path).
    SlugKey key_of(std::string_view path, const http::RequestNotes& notes) const;

    // A link that is disabled, expired or switched to its fallback: the fallback, or 410.
    void answer_fallback(const http::Request& request, http::Response& response,
                         const domain::LinkEntry& link, std::int64_t now);
    // The domain of the request's host (0: the default), or Snapshot::kUnknownDomain when the
    // host is unknown and refused.
    std::uint16_t domain_of(const http::Request& request, const domain::Snapshot& snapshot) const;
    // The 302 of an active link: to the rule's branch, or the link's own Location. `channel`:
    // the click's validated channel when the recorder read it already (empty: read here).
    void answer(const http::Request& request, http::Response& response,
                const domain::Snapshot& snapshot, const domain::LinkEntry& link,
                const domain::Target& target, std::string_view channel = {});
    // Counts the click, per country and rule too when a country database is configured.
    void record(const ClickRecorder::Click& click, const domain::Snapshot& snapshot,
                const domain::LinkEntry& link, const domain::Target& target);
    // A 302 to `location` with the small page that links to it, labelled `label` + `label_name`.
    void redirect(http::Response& response, std::string_view location, std::string_view label,
                  std::string_view label_name = {}) const;

    runtime::SnapshotReader reader_;
    // The click caps' flags published beside the snapshot (read for links with a cap only).
    runtime::PublishedReader<runtime::CapFlags> cap_flags_;
    const domain::Clock& clock_;
    RedirectOptions options_;
    ClickRecorder* recorder_;
    // Reused for links that pass utm_* through and for Locations with placements.
    std::string dynamic_location_;
    std::string fixed_headers_;  // a redirect's header lines after its Location
    ReaderTargeting targeting_;
};

}  // namespace refgate::redirect
