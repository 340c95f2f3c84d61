#pragma once

// A partner's and a link's row as stored, read by column name: each select beside the reader of
// its columns, shared by the admin API's rows, the import (its audit entries) and the snapshot.

#include <pqxx/pqxx>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "refgate/codec/stored_objects.hpp"
#include "refgate/domain/model.hpp"

namespace refgate::pg {

// SQL for a timestamptz column as microseconds since the epoch: the API shows times to the
// microsecond.
inline std::string micros(std::string_view column) {
    return "(extract(epoch FROM " + std::string(column) + ") * 1000000)::bigint";
}

// A partner with its stamps; partner.id is the row's id.
struct StoredPartner {
    domain::Partner partner;
    codec::Stamps stamps;
};

// A link with its stamps; link.id is the row's id, link.partner its partner's slug.
struct StoredLink {
    domain::Link link;
    codec::Stamps stamps;
};

// "SELECT <the partner columns> FROM refgate_partners p ": stored_partner() reads them.
extern const std::string kPartnerSelect;
// "SELECT <the link columns> FROM refgate_links l JOIN refgate_partners p ...": stored_link().
extern const std::string kLinkSelect;
// "l.id, l.slug, <every stored column of a link>" for a select that joins refgate_partners p
// (the snapshot's): read_link_columns() reads them.
extern const std::string kLinkColumnsSelect;
domain::Link read_link_columns(const pqxx::row& row);

// The statements that write a partner's or a link's row, built from the same column list as
// the selects: `insert` takes the record (partner_record(), link_record()) as $1, `update` the
// row's id as $1 and the record as $2, and `upsert` (the import's) an array of records as $1,
// bumps version and updated_at only for a row that really changed and returns the ids of those.
enum class RowWrite { insert, update, upsert };
const std::string& partner_write_sql(RowWrite write);
const std::string& link_write_sql(RowWrite write);
// An object as the jsonb record those statements read: its slug and every stored column (a
// partner's scheduled codes and a link's fallback switches have tables of their own).
nlohmann::ordered_json partner_record(const domain::Partner& p);
nlohmann::ordered_json link_record(const domain::Link& l);

// Without the scheduled codes (add_scheduled_codes reads them).
StoredPartner stored_partner(const pqxx::row& row);
StoredLink stored_link(const pqxx::row& row);
// The scheduled codes of `partners`, by valid_from.
void add_scheduled_codes(pqxx::transaction_base& tx, std::vector<StoredPartner>& partners);

// kPartnerSelect + `rest` (WHERE, ORDER BY, locks) with `params`, scheduled codes included.
template <typename... Params>
std::vector<StoredPartner> read_partners(pqxx::transaction_base& tx, const std::string& rest,
                                         Params&&... params) {
    std::vector<StoredPartner> partners;
    for (const auto& row : tx.exec_params(kPartnerSelect + rest, std::forward<Params>(params)...))
        partners.push_back(stored_partner(row));
    add_scheduled_codes(tx, partners);
    return partners;
}

// The link an API request names (issue 46): "slug", or "host/slug" with ?domain=HOST. `host` is
// empty for a bare slug.
struct LinkName {
    std::string host;
    std::string slug;
};
LinkName parse_link_name(const std::string& name);

// The condition, order and limit after WHERE (links aliased `l`) that find the link a LinkName
// names, with its host as $<first> and its slug as $<first + 1>: on a host, that domain's link (the
// default domain's are those without a domain and those naming its host); a bare slug names the
// default domain's link first, else the one on the first host in order.
std::string link_named_sql(int first);

// kLinkSelect + `rest` with `params`.
template <typename... Params>
std::vector<StoredLink> read_links(pqxx::transaction_base& tx, const std::string& rest,
                                   Params&&... params) {
    std::vector<StoredLink> links;
    for (const auto& row : tx.exec_params(kLinkSelect + rest, std::forward<Params>(params)...))
        links.push_back(stored_link(row));
    return links;
}

}  // namespace refgate::pg
