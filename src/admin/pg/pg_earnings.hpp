#pragma once

// The earnings answer's figures from PostgreSQL (GET /api/v1/stats/earnings): commissions of a
// range of UTC days (by their occurred_at) per group, next to the human clicks of the same days
// from the roll-ups (or, while they are built, and for placements, the base table).

#include <pqxx/pqxx>

#include "refgate/codec/earnings.hpp"

namespace refgate::admin {

// nullopt: the filter names a link or a partner that does not exist.
std::optional<codec::EarningsReport> read_earnings(pqxx::transaction_base& tx,
                                                   const domain::DayRange& range,
                                                   codec::EarningsGroup group,
                                                   const codec::EarningsFilter& filter);

// The links whose EPC fell to zero while their clicks went on, over the window `range`
// (codec/earnings.hpp, EpcZeroReport).
std::vector<codec::EpcZeroLink> read_epc_zero_links(pqxx::transaction_base& tx,
                                                    const domain::DayRange& range);

}  // namespace refgate::admin
