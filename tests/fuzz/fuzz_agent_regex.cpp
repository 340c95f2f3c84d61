// A crawler pattern as the classifier's build reads it, and a User-Agent as a redirect reads it.
// Invariants: a pattern is either refused with std::invalid_argument or becomes 1 to
// kMaxAgentLiterals distinct literals of at least kMinAgentLiteralBytes bytes, none with an
// upper-case ASCII letter; a classifier built from it matches the pattern's own literals; the
// built-in classifier and its per-thread cache agree on any agent.

#include <stdexcept>

#include "fuzz_check.hpp"
#include "refgate/domain/agent_regex.hpp"
#include "refgate/domain/click_classifier.hpp"

namespace {

void check_pattern(std::string_view regex) {
    std::vector<refgate::domain::AgentLiteral> literals;
    try {
        literals = refgate::domain::agent_regex_literals(regex);
    } catch (const std::invalid_argument&) {
        return;
    }
    FUZZ_CHECK(!literals.empty() && literals.size() <= refgate::domain::kMaxAgentLiterals);
    for (const auto& literal : literals) {
        FUZZ_CHECK(literal.lower.size() >= refgate::domain::kMinAgentLiteralBytes);
        for (char c : literal.lower) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));
    }
    // The pattern file's parser trims blanks around a pattern, which may change its literals.
    const auto blank = [](char c) { return c == ' ' || c == '\t'; };
    if (regex.find_first_of("\r\n") != std::string_view::npos || regex.size() > 200 ||
        blank(regex.front()) || blank(regex.back())) {
        return;
    }
    std::string line = "bot-regex " + std::string(regex);
    try {
        const refgate::domain::ClickClassifier classifier{line};
        for (const auto& literal : literals) {
            // A literal with a start mark is found at the start, one with an end mark at the end.
            if (literal.lower.find_first_of("\r\n") != std::string::npos) continue;
            FUZZ_CHECK(classifier.match_agent(literal.lower) ==
                       refgate::domain::ClickClassifier::AgentMatch::bot);
        }
    } catch (const std::invalid_argument&) {
        FUZZ_CHECK(false);  // the same pattern was accepted above
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = refgate::fuzz::as_text(data, size);
    check_pattern(text);
    static refgate::domain::AgentMatchCache cache(refgate::domain::ClickClassifier::builtin());
    FUZZ_CHECK(cache.match(text) == refgate::domain::ClickClassifier::builtin().match_agent(text));
    return 0;
}
