#pragma once

// Branded domains (issue 46) in the import format and the admin API: {"host", "default",
// "not_found"}, read with the import's rules and messages.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "refgate/codec/admin_objects.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/domain/model.hpp"

namespace refgate::codec {

// A host as an editor may give it ("Go.Example.COM", an international name): its canonical
// lower-case ASCII form, checked as destinations' hosts are; empty when it is not a DNS name.
std::string canonical_domain_host(const std::string& host);

// The document's "domains": each host once, at most one default.
void read_domains(const nlohmann::ordered_json& domains, std::vector<domain::Domain>& out,
                  std::vector<ImportIssue>& issues);
nlohmann::ordered_json domain_to_json(const domain::Domain& domain);
nlohmann::ordered_json view_json(const DomainView& view);

// PUT /api/v1/domains/{host}: the whole domain; a "host" the body names must be the path's.
DomainPut parse_domain_put(const std::string& host, const nlohmann::ordered_json& body);

}  // namespace refgate::codec
