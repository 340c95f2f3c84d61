#include "refgate/admin/commissions.hpp"

#include <algorithm>
#include <cstdlib>

#include "api.hpp"
#include "refgate/admin/tokens.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::admin {
namespace {

// The path's partner: the segment after the prefix, by the slugs' rule; nullopt otherwise.
std::optional<std::string> postback_partner(std::string_view path) {
    if (!path.starts_with(PostbackHandler::kPrefix)) return std::nullopt;
    path.remove_prefix(PostbackHandler::kPrefix.size());
    if (path.ends_with('/')) path.remove_suffix(1);
    if (path.empty() || path.size() > 64 ||
        !((path[0] >= 'a' && path[0] <= 'z') || (path[0] >= '0' && path[0] <= '9')))
        return std::nullopt;
    for (char c : path) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return std::nullopt;
    }
    return std::string(path);
}

// The batcher's test seam (commissions.hpp): 1 unless a test build's environment says more.
std::size_t postback_gather() {
#ifdef REFGATE_FAULT_POINTS
    const char* configured = std::getenv("REFGATE_TEST_POSTBACK_GATHER");
    if (configured != nullptr) {
        char* end = nullptr;
        unsigned long n = std::strtoul(configured, &end, 10);
        if (end != configured && *end == '\0' && n >= 1 && n <= kMaxPostbackBatch) return n;
    }
#endif
    return 1;
}
constexpr std::chrono::seconds kGatherWait{10};

void postback_no_store(http::Response& response) {
    response.add_header("Cache-Control", "no-store");
    response.add_header("X-Content-Type-Options", "nosniff");
}

}  // namespace

std::string_view to_string(CommissionSource source) noexcept {
    switch (source) {
        case CommissionSource::api:
            return "api";
        case CommissionSource::postback:
            return "postback";
        default:
            return "import";
    }
}

Result<codec::CommissionsReport> import_commissions(CommissionStore& store,
                                                    const CommissionImport& command) {
    codec::CommissionsReport report{.dry_run = command.dry_run};
    std::vector<codec::FieldError> errors;
    auto refuse = [&](std::size_t line, const std::string& field, const std::string& message) {
        report.refused.push_back({line, field, message});
        std::string where = line != 0 ? "line " + std::to_string(line) + ": " : std::string();
        errors.push_back({field, where + message});
    };
    for (const auto& p : command.input.problems) refuse(p.line, p.field, p.message);
    std::vector<domain::Commission> commissions;
    for (const auto& row : command.input.rows) {
        auto check = domain::check_commission(row.fields);
        for (const auto& p : check.problems) refuse(row.line, p.field, p.message);
        if (check.commission) commissions.push_back(std::move(*check.commission));
    }
    report.applied = !command.dry_run && report.refused.empty();
    auto recorded = store.record(command.partner, commissions, command.source, !report.applied);
    if (!recorded)
        return {.kind = OutcomeKind::not_found, .detail = "no partner '" + command.partner + "'"};
    report.recorded = *recorded;
    bool refused = !command.dry_run && !report.applied;
    return {.kind = refused ? OutcomeKind::invalid : OutcomeKind::ok,
            .view = std::move(report),
            .errors = refused ? std::move(errors) : std::vector<codec::FieldError>{}};
}

Result<codec::PostbackSecretView> rotate_postback_secret(CommissionStore& store,
                                                         const std::string& partner) {
    std::string secret = generate_token();
    if (!store.set_postback_secret(partner, hash_token(secret)))
        return {.kind = OutcomeKind::not_found, .detail = "no partner '" + partner + "'"};
    return {.view = {std::move(secret)}};
}

void serve_commissions(CommissionStore& store, const ApiRequest& r, Answer& answer) {
    if (r.route->operation == Operation::rotate_postback_secret)
        return answer.outcome(rotate_postback_secret(store, r.name));
    auto type = media_type(r.http.header("Content-Type"));
    bool csv = http::iequals(type, "text/csv");
    if (!csv && !http::iequals(type, "application/json"))
        return answer.problem(415, "unsupported-media-type", "send application/json or text/csv");
    auto dry_run = domain::query_value(r.http.query(), "dry_run").value_or("0");
    if (dry_run != "0" && dry_run != "1" && dry_run != "true" && dry_run != "false")
        return answer.invalid_query({{"dry_run", "must be 1, true, 0 or false"}});
    auto format =
        codec::parse_commissions_format(domain::query_value(r.http.query(), "format").value_or(""));
    if (!format) return answer.invalid_query({{"format", "must be impact or awin"}});
    if (csv && *format == codec::CommissionsFormat::awin)
        return answer.problem(415, "unsupported-media-type",
                              "Awin's transactions come as application/json");
    if (!csv && nlohmann::json::parse(r.http.body, nullptr, false).is_discarded())
        return answer.problem(400, "bad-json", "the request body is not valid JSON");
    codec::CommissionsInput input = codec::read_commissions(r.http.body, *format, csv);
    answer.outcome(import_commissions(store, {.partner = r.name,
                                              .input = std::move(input),
                                              .source = CommissionSource::api,
                                              .dry_run = dry_run == "1" || dry_run == "true"}));
}

PostbackLimiter::PostbackLimiter(double rate, double burst, const domain::MonotonicClock* clock)
    : rate_(rate), burst_(std::max(burst, 1.0)), clock_(clock ? clock : &steady_) {}

bool PostbackLimiter::allow(const std::string& partner) {
    auto now = clock_->now();
    std::lock_guard lock(mutex_);
    auto it = buckets_.find(partner);
    if (it == buckets_.end()) {
        // Bounded: names are checked as slugs but need not be partners'. Full buckets are
        // the same as none, so those go first; past that every partner starts again.
        if (buckets_.size() >= kMaxPostbackBuckets) {
            std::erase_if(buckets_, [&](const auto& entry) {
                std::chrono::duration<double> idle = now - entry.second.at;
                return entry.second.tokens + idle.count() * rate_ >= burst_;
            });
            if (buckets_.size() >= kMaxPostbackBuckets) buckets_.clear();
        }
        it = buckets_.emplace(partner, Bucket{burst_, now}).first;
    }
    Bucket& b = it->second;
    std::chrono::duration<double> elapsed = now - b.at;
    b.tokens = std::min(burst_, b.tokens + elapsed.count() * rate_);
    b.at = now;
    if (b.tokens < 1.0) return false;
    b.tokens -= 1.0;
    return true;
}

PostbackBatcher::PostbackBatcher(std::shared_ptr<CommissionStore> store, std::size_t max_batch)
    : store_(std::move(store)),
      max_batch_(std::max<std::size_t>(max_batch, 1)),
      gather_(postback_gather()) {}

void PostbackBatcher::record(const std::string& partner, const domain::Commission& commission) {
    Waiting self{.postback = {partner, commission}};
    std::unique_lock lock(mutex_);
    queue_.push_back(&self);
    if (gather_ > 1) {
        runtime::log::info("postback_queued", {{"waiting", queue_.size()}});
        changed_.notify_all();
    }
    changed_.wait(lock, [&] { return self.done || !leading_; });
    if (!self.done) {
        leading_ = true;
        if (gather_ > 1)
            changed_.wait_for(lock, kGatherWait, [&] { return queue_.size() >= gather_; });
        while (!self.done) {
            auto end =
                queue_.begin() + static_cast<std::ptrdiff_t>(std::min(queue_.size(), max_batch_));
            std::vector<Waiting*> batch(queue_.begin(), end);
            queue_.erase(queue_.begin(), end);
            lock.unlock();
            // Until they are marked done, only this thread touches the batch's entries.
            run(batch);
            lock.lock();
            for (Waiting* w : batch) w->done = true;
            changed_.notify_all();
        }
        leading_ = false;
        changed_.notify_all();
    }
    if (self.error) std::rethrow_exception(self.error);
}

std::size_t PostbackBatcher::waiting() {
    std::lock_guard lock(mutex_);
    return queue_.size();
}

void PostbackBatcher::run(const std::vector<Waiting*>& batch) {
    if (batch.size() > 1) {
        std::vector<PartnerCommission> postbacks;
        postbacks.reserve(batch.size());
        for (const Waiting* w : batch) postbacks.push_back(w->postback);
        try {
            store_->record_postbacks(postbacks);
            return;
        } catch (...) {
            // Each alone below: the database's refusal of one row fails only that postback.
        }
    }
    for (Waiting* w : batch) {
        try {
            store_->record(w->postback.partner, {w->postback.commission},
                           CommissionSource::postback, false);
        } catch (...) {
            w->error = std::current_exception();
        }
    }
}

PostbackHandler::PostbackHandler(std::shared_ptr<CommissionStore> store,
                                 std::shared_ptr<PostbackLimiter> limiter,
                                 std::shared_ptr<PostbackBatcher> batcher)
    : store_(std::move(store)), limiter_(std::move(limiter)), batcher_(std::move(batcher)) {}

void PostbackHandler::handle(const http::Request& request, http::Response& response) {
    Answer answer{response};
    postback_no_store(response);
    if (request.method != http::Method::get && request.method != http::Method::post) {
        answer.problem(405, "method-not-allowed", "use GET or POST");
        response.add_header("Allow", "GET, POST");
        return;
    }
    auto partner = postback_partner(request.path());
    if (!partner) return answer.problem(404, "not-found", "no such resource");
    if (!limiter_->allow(*partner)) {
        answer.problem(429, "rate-limited", "too many postbacks for this partner; retry later");
        response.add_header("Retry-After", "1");
        return;
    }
    auto query = request.query();
    std::string secret(request.header("X-Refgate-Secret"));
    if (secret.empty()) secret = domain::query_value(query, "secret").value_or("");
    try {
        auto stored = secret.empty() ? std::nullopt : store_->postback_secret_hash(*partner);
        // A missing partner, secret or match all answer the same, in the same way.
        if (!stored || !same_hash(*stored, hash_token(secret))) {
            response.set_status(401);
            return;
        }
        domain::CommissionFields fields;
        for (auto name : domain::kCommissionFields) {
            auto value = domain::query_value(query, name);
            if (value && !value->empty()) *fields.field(name) = std::move(*value);
        }
        auto check = domain::check_commission(fields);
        if (!check.commission) {
            std::vector<codec::FieldError> errors;
            for (auto& p : check.problems) errors.push_back({p.field, p.message});
            std::string detail = "bad parameter '" + check.problems.front().field +
                                 "': " + check.problems.front().message;
            answer.problem(400, "bad-parameter", detail, errors);
            return;
        }
        batcher_->record(*partner, *check.commission);
        response.set_status(204);
    } catch (const StoreError& e) {
        runtime::log::warn("postback_store_failed", {{"partner", *partner}, {"error", e.what()}});
        response.reset();
        postback_no_store(response);
        answer.problem(503, "unavailable", "the database is unreachable; try again");
        response.add_header("Retry-After", "1");
    }
}

}  // namespace refgate::admin
