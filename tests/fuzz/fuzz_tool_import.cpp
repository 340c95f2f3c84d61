// Another tool's export on its way through `refgate import --from <tool>` (issue 46): the first
// byte picks the reader (Pretty Links, ThirstyAffiliates, Shlink: CSV; YOURLS: its API's JSON)
// and whether codes are locked and a partner map names a partner; the rest is the file.
// Invariants: nothing throws (any bytes in a cell; the document and the dry run are still
// written); CSV links come after the header, in order; every link the reader found is either
// planned or refused with a problem at its line; planned links have distinct refgate slugs and a
// partner of the plan with a valid slug; a link whose code was moved no longer carries the
// partner's referral parameter, and without --lock-codes no destination changes; the document
// lists exactly the planned partners and links; the dry run says click history is not imported.

#include <set>

#include "fuzz_check.hpp"
#include "refgate/codec/tool_import.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/utf8.hpp"

namespace {

// A few rules of the Public Suffix List's kinds: plain, two labels, wildcard, exception.
const refgate::domain::PublicSuffixList& suffixes() {
    static const refgate::domain::PublicSuffixList list(
        "// a few rules\ncom\norg\nuk\nco.uk\nde\nio\ngithub.io\n*.ck\n!www.ck\n");
    return list;
}

const refgate::codec::PartnerMap& partner_map() {
    static const refgate::codec::PartnerMap map = [] {
        std::vector<std::string> problems;
        auto parsed = refgate::codec::parse_partner_map(
            nlohmann::json::parse(
                R"({"amazon.com": {"slug": "amazon", "ref_param": "tag", "ref_code": "picks-20"},
                    "kagi.com": "kagi"})"),
            problems);
        FUZZ_CHECK(problems.empty() && parsed.size() == 2);
        return parsed;
    }();
    return map;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::uint8_t flags = data[0];
    const auto tool = static_cast<refgate::codec::ExportTool>(flags % 4);
    const bool lock_codes = (flags & 4) != 0;
    const bool mapped = (flags & 8) != 0;
    const std::string_view text = refgate::fuzz::as_text(data + 1, size - 1);

    const refgate::codec::ToolExport input = refgate::codec::read_tool_export(tool, text);
    const bool csv = tool != refgate::codec::ExportTool::yourls;
    for (std::size_t i = 0; i < input.links.size(); ++i) {
        const auto& link = input.links[i];
        FUZZ_CHECK(link.line >= (csv ? 2u : 1u));
        if (i > 0) FUZZ_CHECK(link.line > input.links[i - 1].line);
        FUZZ_CHECK(refgate::domain::valid_utf8(link.slug) &&
                   refgate::domain::valid_utf8(link.destination) &&
                   refgate::domain::valid_utf8(link.title));
    }

    static const refgate::codec::PartnerMap no_map;
    const refgate::codec::PlanOptions options{suffixes(), mapped ? partner_map() : no_map,
                                              lock_codes};
    const refgate::codec::ImportPlan plan = refgate::codec::plan_tool_import(input, options);

    // Every link is planned, or refused at its line.
    std::size_t partners_without_code = 0;
    std::set<std::string> partner_slugs;
    for (const auto& p : plan.partners) {
        if (p.ref_param.empty()) ++partners_without_code;
        FUZZ_CHECK(p.ref_param.empty() == p.ref_code.empty());
        FUZZ_CHECK(refgate::domain::valid_slug(p.slug));
        partner_slugs.insert(p.slug);
    }
    FUZZ_CHECK(plan.problems.size() >= input.problems.size() + partners_without_code);
    const std::size_t refused_links =
        plan.problems.size() - input.problems.size() - partners_without_code;
    FUZZ_CHECK(plan.links.size() + refused_links == input.links.size());

    std::set<std::string> slugs;
    std::size_t next = 0;  // the links are planned in the reader's order
    for (const auto& l : plan.links) {
        FUZZ_CHECK(refgate::domain::valid_slug(l.slug));
        FUZZ_CHECK(slugs.insert(l.slug).second);
        FUZZ_CHECK(partner_slugs.contains(l.partner));
        while (next < input.links.size() && input.links[next].line != l.line) ++next;
        FUZZ_CHECK(next < input.links.size());
        const auto& original = input.links[next];
        FUZZ_CHECK(l.tool_slug == original.slug);
        if (!l.code_moved) {
            FUZZ_CHECK(l.destination == original.destination);
            continue;
        }
        FUZZ_CHECK(lock_codes);
        // The partner's parameter is gone: removing it again changes nothing.
        for (const auto& p : plan.partners) {
            if (p.slug != l.partner) continue;
            FUZZ_CHECK(!p.ref_param.empty());
            FUZZ_CHECK(refgate::codec::without_query_parameter(l.destination, p.ref_param) ==
                       l.destination);
        }
    }

    // The document and the dry run are written.
    const std::string document = plan.document.dump();
    FUZZ_CHECK(plan.document["partners"].size() == plan.partners.size());
    FUZZ_CHECK(plan.document["links"].size() == plan.links.size());
    const std::string text_plan = refgate::codec::plan_text(plan, tool, lock_codes);
    FUZZ_CHECK(text_plan.find("click history is not imported") != std::string::npos);
    return 0;
}
