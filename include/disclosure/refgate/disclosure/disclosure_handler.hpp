#pragma once

#include <chrono>
#include <string>

#include "refgate/disclosure/disclosure_answers.hpp"
#include "refgate/domain/snapshot.hpp"
#include "refgate/http/server.hpp"
#include "refgate/runtime/snapshot_store.hpp"

namespace refgate::disclosure {

struct DisclosureOptions {
    std::string default_locale = "en";
    std::chrono::seconds max_age{300};
    std::string public_base_url;  // empty: /snippet/ answers 404
};

// The public disclosure endpoints, answered from the in-memory snapshot only:
//   GET /disclosure (negotiated), /disclosure.txt, /disclosure.html, /disclosure.json,
//   GET /disclosure/history, GET /snippet/{slug}.
// ?lang= (else Accept-Language) picks the locale, ?partner= a partner's own text.
class DisclosureHandler final : public http::Handler {
  public:
    DisclosureHandler(const runtime::SnapshotStore& store, DisclosureOptions options);
    void handle(const http::Request& request, http::Response& response) override;

    // The exact paths this handler serves (besides the /snippet/ prefix).
    static constexpr std::string_view kPaths[] = {"/disclosure", "/disclosure.txt",
                                                  "/disclosure.html", "/disclosure.json",
                                                  "/disclosure/history"};
    static constexpr std::string_view kSnippetPrefix = "/snippet/";

  private:
    void serve(const http::Request& request, http::Response& response,
               const domain::Snapshot& snapshot);
    void snippet(const http::Request& request, http::Response& response,
                 const domain::Snapshot& snapshot);
    // Answers 200 with the body, or 304 when If-None-Match matches.
    void cacheable(const http::Request& request, http::Response& response,
                   std::string_view content_type, std::string_view etag, std::string_view vary,
                   std::string_view body, std::string_view content_language) const;

    // The answers for the snapshot the reader holds (a handler serves one I/O thread).
    const DisclosureAnswers& answers(const domain::Snapshot& snapshot);

    runtime::SnapshotReader reader_;
    std::uint64_t answers_generation_ = 0;  // 0: none built yet
    DisclosureAnswers answers_;
    DisclosureOptions options_;
    std::string cache_control_;
};

}  // namespace refgate::disclosure
