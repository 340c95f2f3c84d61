#pragma once

// Figures of the stored commissions for /metrics (issue 43): read from PostgreSQL by a background
// worker every kCommissionMetricsInterval, never on a request, and served as they were last read.
// Every instance reads the same stored totals, so a dashboard takes the largest over instances
// (max without (instance)), never their sum.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace refgate::metrics {

inline constexpr std::chrono::seconds kCommissionMetricsInterval{10};

struct CommissionFigures {
    // Commissions of the partner that have had the status at some point (from their history),
    // so that the figure only grows: every partner, each of the four statuses.
    struct Count {
        std::string partner;
        std::string status;
        std::uint64_t commissions = 0;
    };
    // The sum of the amounts of the partner's commissions that have the status now, in one
    // currency: each (partner, currency) with commissions, each of the four statuses.
    struct Amount {
        std::string partner;
        std::string currency;
        std::string status;
        double amount = 0;  // only here as a float: Prometheus has no decimals
    };
    std::vector<Count> counts;
    std::vector<Amount> amounts;
};

// The last figures read, shared between the worker that reads them and the scrapes.
class CommissionStats {
  public:
    void set(CommissionFigures figures) {
        std::lock_guard lock(mutex_);
        figures_ = std::move(figures);
    }
    // nullopt until the first read succeeded.
    std::optional<CommissionFigures> get() const {
        std::lock_guard lock(mutex_);
        return figures_;
    }

  private:
    mutable std::mutex mutex_;
    std::optional<CommissionFigures> figures_;
};

}  // namespace refgate::metrics

namespace prometheus {
struct MetricFamily;
}

namespace refgate::metrics {
// refgate_commissions_total{partner,status}, refgate_commission_amount{partner,currency,status};
// both families without samples before the first read.
void collect_commissions(const CommissionStats& stats, std::vector<prometheus::MetricFamily>& out);
}  // namespace refgate::metrics
