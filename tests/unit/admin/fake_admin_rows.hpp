#pragma once

// The admin service's rows kept in memory, for its unit tests: a transaction works on a copy
// that replaces the stored state only on commit().

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "refgate/admin/admin_rows.hpp"
#include "refgate/codec/stored_objects.hpp"

namespace refgate::admin::testing {

// An audit entry's object as the service recorded it (null: none).
inline nlohmann::ordered_json audited(const std::string& text) {
    return text.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json::parse(text);
}

// A typed answer's object as the API shows it.
template <typename View>
nlohmann::ordered_json body(const Result<View>& r) {
    return view_json(r.view);
}

struct FakeState {
    std::map<std::string, PartnerRow> partners;  // by slug
    std::map<std::string, LinkRow> links;        // by slug
    std::vector<AuditRecord> audit;
    std::vector<TokenRow> tokens;
    std::vector<DisclosureRow> disclosures;  // every version
    std::vector<CodeHistoryRow> history;
    std::map<std::string, CountryGroupRow> country_groups;  // by family
    std::int64_t next_id = 1;
    std::int64_t now_us = 1'800'000'000'000'000;
    std::int64_t versions = 0;  // country groups, one sequence as in PostgreSQL
};

class FakeRows final : public AdminRows {
  public:
    FakeRows(FakeState& stored, int& commits) : stored_(stored), s_(stored), commits_(commits) {}

    std::optional<PartnerRow> partner(const std::string& slug, RowLock) override {
        auto it = s_.partners.find(slug);
        if (it == s_.partners.end()) return std::nullopt;
        return it->second;
    }
    std::vector<PartnerRow> partners(const std::string& query) override {
        auto lower = [](std::string text) {
            for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            return text;
        };
        std::vector<PartnerRow> rows;
        for (const auto& [slug, row] : s_.partners) {
            if (lower(slug).find(lower(query)) != std::string::npos ||
                lower(row.partner.name).find(lower(query)) != std::string::npos)
                rows.push_back(row);
        }
        return rows;
    }
    bool insert_partner(const domain::Partner& p) override {
        if (s_.partners.contains(p.slug)) return false;
        PartnerRow row{s_.next_id++, p, {++s_.now_us, s_.now_us, 1}};
        row.partner.id = row.id;
        s_.partners[p.slug] = row;
        return true;
    }
    void update_partner(std::int64_t id, const domain::Partner& p) override {
        PartnerRow& row = by_id(id);
        auto scheduled = row.partner.scheduled_codes;
        row.partner = p;
        row.partner.id = id;
        row.partner.scheduled_codes = scheduled;
        touch_partner(id);
    }
    void touch_partner(std::int64_t id) override {
        PartnerRow& row = by_id(id);
        row.stamps.updated_us = ++s_.now_us;
        ++row.stamps.version;
    }
    void delete_partner(std::int64_t id) override { s_.partners.erase(by_id(id).partner.slug); }
    std::int64_t count_links(std::int64_t partner_id) override {
        return std::count_if(s_.links.begin(), s_.links.end(), [&](const auto& l) {
            return s_.partners.at(l.second.link.partner).id == partner_id;
        });
    }
    void apply_due_codes() override {}
    std::vector<CodeHistoryRow> code_history(std::int64_t) override { return s_.history; }
    void schedule_code(std::int64_t id, const domain::ScheduledCode& code,
                       const std::string&) override {
        auto& codes = by_id(id).partner.scheduled_codes;
        std::erase_if(codes, [&](const auto& c) { return c.valid_from == code.valid_from; });
        codes.push_back(code);
        std::sort(codes.begin(), codes.end(),
                  [](const auto& a, const auto& b) { return a.valid_from < b.valid_from; });
    }
    bool cancel_code(std::int64_t id, domain::SysSeconds at) override {
        return std::erase_if(by_id(id).partner.scheduled_codes,
                             [&](const auto& c) { return c.valid_from == at; }) > 0;
    }

    std::optional<LinkRow> link(const std::string& slug, RowLock) override {
        auto it = s_.links.find(slug);
        if (it == s_.links.end()) return std::nullopt;
        return it->second;
    }
    std::vector<LinkRow> links(const LinkFilter& f, std::size_t limit) override {
        std::vector<LinkRow> rows;
        for (auto it = s_.links.upper_bound(f.cursor); it != s_.links.end(); ++it) {
            if (rows.size() == limit) break;
            if (!f.partner.empty() && it->second.link.partner != f.partner) continue;
            rows.push_back(it->second);
        }
        return rows;
    }
    std::vector<domain::Link> links_naming(const std::string& partner_slug) override {
        std::vector<domain::Link> links;
        for (const auto& [slug, row] : s_.links) {
            if (!domain::branches_to(row.link, partner_slug).empty()) links.push_back(row.link);
        }
        return links;
    }
    bool insert_link(const domain::Link& l) override {
        if (s_.links.contains(l.slug)) return false;
        s_.links[l.slug] = LinkRow{s_.next_id++, l, {++s_.now_us, s_.now_us, 1}};
        return true;
    }
    void update_link(std::int64_t id, const domain::Link& l) override {
        for (auto& [slug, row] : s_.links) {
            if (row.id != id) continue;
            row.link = l;
            row.stamps.updated_us = ++s_.now_us;
            ++row.stamps.version;
        }
    }
    void delete_link(std::int64_t id) override {
        std::erase_if(s_.links, [&](const auto& l) { return l.second.id == id; });
    }

    void insert_audit(const AuditRecord& record) override { s_.audit.push_back(record); }
    std::vector<AuditRow> audit(const AuditFilter&) override {
        std::vector<AuditRow> rows;
        for (std::size_t i = s_.audit.size(); i-- > 0;)
            rows.push_back({static_cast<std::int64_t>(i + 1), s_.now_us, s_.audit[i]});
        return rows;
    }

    std::optional<TokenRow> live_token_by_hash(const std::string& hash) override {
        for (const auto& t : s_.tokens) {
            if (t.hash_hex == hash && t.revoked_at.empty()) return t;
        }
        return std::nullopt;
    }
    std::vector<TokenRow> tokens(const std::string& name) override {
        std::vector<TokenRow> rows;
        for (const auto& t : s_.tokens) {
            if (name.empty() || (t.name == name && t.revoked_at.empty())) rows.push_back(t);
        }
        return rows;
    }
    void touch_token(std::int64_t) override {}
    bool lock_live_token(const std::string& name) override { return !tokens(name).empty(); }
    void insert_token(const TokenRow& row) override {
        TokenRow t = row;
        t.id = s_.next_id++;
        t.created_at = "2027-01-15T08:00:00Z";
        s_.tokens.push_back(std::move(t));
    }
    std::optional<std::string> revoke_token(const std::string& name) override {
        for (auto& t : s_.tokens) {
            if (t.name != name || !t.revoked_at.empty()) continue;
            t.revoked_at = "2027-01-15T09:00:00Z";
            return t.role;
        }
        return std::nullopt;
    }

    void lock_disclosure(const std::string&, const std::string&) override {}
    void lock_readable_tokens(const std::string&) override {}
    std::optional<DisclosureRow> disclosure(const std::string& key,
                                            const std::string& locale) override {
        std::optional<DisclosureRow> latest;
        for (const auto& d : s_.disclosures) {
            if (d.disclosure.key == key && d.disclosure.locale == locale) latest = d;
        }
        return latest;
    }
    std::vector<DisclosureRow> disclosures() override { return s_.disclosures; }
    bool insert_disclosure(const domain::Disclosure& d, const std::string& actor) override {
        s_.disclosures.push_back({d, ++s_.now_us, actor});
        return true;
    }

    std::vector<DisclosureRow> disclosure_versions(const std::string& key,
                                                   const std::string& locale) override {
        std::vector<DisclosureRow> rows;
        for (const auto& d : s_.disclosures) {
            if (d.disclosure.key == key && d.disclosure.locale == locale)
                rows.insert(rows.begin(), d);
        }
        return rows;
    }
    std::vector<CountryGroupRow> country_groups() override {
        std::vector<CountryGroupRow> rows;
        for (const auto& [family, row] : s_.country_groups) rows.push_back(row);
        return rows;
    }
    std::optional<CountryGroupRow> country_group(const std::string& family, RowLock) override {
        auto it = s_.country_groups.find(family);
        if (it == s_.country_groups.end()) return std::nullopt;
        return it->second;
    }
    bool put_country_group(const domain::CountryGroup& group, bool create) override {
        if (create && s_.country_groups.contains(group.family)) return false;
        CountryGroupRow& row = s_.country_groups[group.family];
        row.group = group;
        row.updated_us = ++s_.now_us;
        row.version = ++s_.versions;
        return true;
    }
    void delete_country_group(const std::string& family) override {
        s_.country_groups.erase(family);
    }

    // The import itself is PostgreSQL's (tested end to end); the fake applies nothing.
    codec::ImportResult import_document(const codec::ParsedImport&, const domain::UrlPolicy&,
                                        const std::string&) override {
        return {};
    }
    codec::ImportDocument export_document() override {
        codec::ImportDocument doc;
        for (const auto& [slug, row] : s_.partners) doc.partners.push_back(row.partner);
        for (const auto& [slug, row] : s_.links) doc.links.push_back(row.link);
        return doc;
    }

    void commit() override {
        stored_ = s_;
        ++commits_;
    }

  private:
    PartnerRow& by_id(std::int64_t id) {
        for (auto& [slug, row] : s_.partners) {
            if (row.id == id) return row;
        }
        throw std::out_of_range("no partner row " + std::to_string(id));
    }

    FakeState& stored_;
    FakeState s_;
    int& commits_;
};

class FakeRepository final : public AdminRepository {
  public:
    FakeState state;
    int commits = 0;

    void run(Access, const std::function<void(AdminRows&)>& work) override {
        FakeRows rows(state, commits);
        work(rows);
    }
};

}  // namespace refgate::admin::testing
