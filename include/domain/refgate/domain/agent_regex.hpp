#pragma once

// Turns the regular expressions of a crawler pattern source (third_party) into plain
// substrings for the click classifier's automaton, so that no regex engine runs on the hot path.
//
// The source's patterns are a small regex subset (literals, escaped punctuation, `^`, `$`, `|`,
// groups, short character classes, `\d`, `\s`, `?`, `*`, `+`). Each becomes the set of literal
// texts it can match, lower-cased (the classifier matches ASCII case-insensitively). Where a
// pattern has a part no finite set of texts can express (`.`, `*`, `+`, a negated or long class),
// only its longest fixed part is kept: the literal then matches a little more than the regex,
// which the browser corpus in tests/data/agents guards against.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace refgate::domain {

struct AgentLiteral {
    std::string lower;      // lower-cased ASCII; other bytes as they are; never empty
    bool at_start = false;  // only at the start of the User-Agent (`^`)
    bool at_end = false;    // only at its end (`$`)
    friend bool operator==(const AgentLiteral&, const AgentLiteral&) = default;
};

// A kept literal is at least this long, so that a widened pattern cannot match nearly anything.
inline constexpr std::size_t kMinAgentLiteralBytes = 3;
// A pattern expands into at most this many literals.
inline constexpr std::size_t kMaxAgentLiterals = 64;

// The literals of `regex`, without duplicates. Throws std::invalid_argument saying what is not
// supported (a back-reference, a counted repetition, a misplaced anchor, an unbalanced group, a
// literal shorter than kMinAgentLiteralBytes, too many literals, ...).
std::vector<AgentLiteral> agent_regex_literals(std::string_view regex);

}  // namespace refgate::domain
