#include "refgate/domain/click_classifier.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include "refgate/domain/agent_regex.hpp"
#include "refgate/domain/agent_rules.hpp"
#include "refgate/domain/ascii.hpp"
#include "refgate/domain/string_hash.hpp"

namespace refgate::domain {
namespace {

constexpr std::uint32_t kBotMatch = 1;
constexpr std::uint32_t kPrefetchMatch = 2;
constexpr std::uint32_t kCompatibleMatch = 4;  // the `compatible;` token of a generic rule
constexpr std::uint32_t kExcept = 8;           // an `except` substring: no match inside it
constexpr std::uint32_t kGrammarMatch = 16;    // a token of a browser's grammar (agent_rules)
constexpr std::uint32_t kAppStackMatch = 32;   // an app's own HTTP stack: prefetch, unless a bot

// The symbols read before the first and after the last byte of a User-Agent.
constexpr std::uint8_t kStartSymbol = 1;
constexpr std::uint8_t kEndSymbol = 2;
constexpr std::size_t kFirstByteSymbol = 3;

// Bounds what a runaway pattern file can make the constructor allocate (entries of 4 bytes);
// the built-in patterns need about 1.2 million (about 20 thousand states of 60 symbols).
constexpr std::size_t kMaxAutomatonEntries = std::size_t{1} << 24;

using ascii::to_lower;

constexpr bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view text) {
    while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
    while (!text.empty() && (is_blank(text.back()) || text.back() == '\r')) text.remove_suffix(1);
    return text;
}

std::string_view capped(std::string_view text) noexcept {
    return {text.data(), std::min(text.size(), kMaxScannedUserAgentBytes)};
}

bool all_blank(std::string_view text) noexcept {
    return std::all_of(text.begin(), text.end(), is_blank);
}

bool starts_with_lower(std::string_view text, std::string_view lower_word) noexcept {
    if (text.size() < lower_word.size()) return false;
    for (std::size_t i = 0; i < lower_word.size(); ++i) {
        if (to_lower(text[i]) != lower_word[i]) return false;
    }
    return true;
}

// True when a Purpose-style header asks for a prefetch or a preview, e.g. "prefetch",
// "prefetch;prerender", "Preview". The values are a token or two, so a plain scan is enough.
bool says_prefetch(std::string_view header) noexcept {
    header = capped(header);
    for (std::size_t i = 0; i < header.size(); ++i) {
        if (to_lower(header[i]) != 'p') continue;
        std::string_view rest = header.substr(i);
        if (starts_with_lower(rest, "prefetch") || starts_with_lower(rest, "preview")) return true;
    }
    return false;
}

struct Pattern {
    std::uint32_t kind;  // one of the k...Match kinds above, or kExcept
    std::string lower;
    bool at_start = false;
    bool at_end = false;
};

[[noreturn]] void bad_line(std::size_t number, std::string_view line, const std::string& why) {
    // The message stays one line whatever the pattern text holds.
    std::string text(line.substr(0, 120));
    for (char& c : text) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    throw std::invalid_argument("click patterns line " + std::to_string(number) + ": " + why +
                                ", got '" + text + "'");
}

void add_regex(std::vector<Pattern>& patterns, std::size_t number, std::string_view raw,
               std::string_view regex) {
    std::vector<AgentLiteral> literals;
    try {
        literals = agent_regex_literals(regex);
    } catch (const std::invalid_argument& e) {
        bad_line(number, raw, e.what());
    }
    for (AgentLiteral& literal : literals) {
        patterns.push_back({kBotMatch, std::move(literal.lower), literal.at_start, literal.at_end});
    }
}

std::uint32_t kind_of(std::string_view kind) {
    if (kind == "except") return kExcept;
    auto click_class = parse_click_class(kind);
    if (click_class == ClickClass::bot) return kBotMatch;
    if (click_class == ClickClass::prefetch) return kPrefetchMatch;
    return 0;
}

std::vector<Pattern> parse_patterns(std::string_view text) {
    std::vector<Pattern> patterns;
    std::size_t number = 0;
    while (!text.empty()) {
        ++number;
        std::size_t end = text.find('\n');
        std::string_view raw = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);

        std::string_view line = trim(raw);
        if (line.empty() || line.front() == '#') continue;
        std::size_t space = line.find_first_of(" \t");
        std::string_view kind = line.substr(0, space);
        std::string_view substring =
            space == std::string_view::npos ? std::string_view{} : trim(line.substr(space));
        const std::uint32_t pattern_kind = kind_of(kind);
        if (pattern_kind == 0 && kind != "bot-regex") {
            bad_line(number, raw,
                     "expected 'bot <substring>', 'prefetch <substring>', 'except <substring>' "
                     "or 'bot-regex <regex>'");
        }
        if (substring.empty()) bad_line(number, raw, "the substring is missing");
        if (substring.size() > kMaxScannedUserAgentBytes) {
            bad_line(number, raw, "the substring is longer than the scanned part of a User-Agent");
        }
        if (kind == "bot-regex") {
            add_regex(patterns, number, raw, substring);
            continue;
        }
        Pattern pattern{pattern_kind, {}};
        pattern.lower.reserve(substring.size());
        for (char c : substring) pattern.lower.push_back(to_lower(c));
        patterns.push_back(std::move(pattern));
    }
    return patterns;
}

// A rule token; a leading `^` ties it to the start of the agent.
Pattern rule_token(std::uint32_t kind, std::string_view token) {
    const bool at_start = token.starts_with('^');
    return {kind, std::string(at_start ? token.substr(1) : token), at_start};
}

void add_generic_rule_tokens(std::vector<Pattern>& patterns) {
    for (const agent_rules::TokenRule& rule : agent_rules::token_rules()) {
        for (std::string_view token : rule.tokens) patterns.push_back(rule_token(kBotMatch, token));
    }
    for (std::string_view token : agent_rules::app_http_stack_tokens()) {
        patterns.push_back(rule_token(kAppStackMatch, token));
    }
    for (std::string_view token : agent_rules::browser_grammar_tokens()) {
        patterns.push_back(rule_token(kGrammarMatch, token));
    }
    patterns.push_back({kCompatibleMatch, std::string(agent_rules::kCompatibleToken)});
}

// What the walk noticed besides pattern matches, for the generic rules that are not substrings.
struct WalkFeatures {
    bool compatible = false;         // the `compatible;` token
    bool grammar = false;            // a token of a browser's grammar
    bool app_stack = false;          // a token of an app's own HTTP stack
    std::size_t longest_digits = 0;  // the longest run of digits
};

// The generic rules that are not substrings, for an agent that matched no pattern. The two that
// punish a missing part (no platform comment; `compatible;` without an engine) give way to any
// positive evidence of a browser.
bool generic_rule_matches(std::string_view scanned, const WalkFeatures& seen) noexcept {
    if (seen.longest_digits >= agent_rules::kTimestampDigits &&
        agent_rules::has_millisecond_timestamp(scanned)) {
        return true;
    }
    if (agent_rules::has_email_address(scanned)) return true;
    if (seen.grammar) return false;
    return seen.compatible || agent_rules::lacks_platform_comment(scanned);
}

}  // namespace

std::string_view to_string(ClickClass click_class) {
    auto index = static_cast<std::size_t>(click_class);
    return index < kClickClasses.size() ? kClickClasses[index].name : kClickClasses[0].name;
}

std::optional<ClickClass> parse_click_class(std::string_view name) {
    for (const auto& c : kClickClasses) {
        if (c.name == name) return c.click_class;
    }
    return std::nullopt;
}

namespace {

// Turns the trie into the automaton. Breadth first, so that a state's failure target is complete
// before the state itself: a missing edge takes the failure target's edge, and a state inherits
// the failure target's matches (a pattern that ends inside a longer one is still found).
void add_failure_edges(std::vector<std::uint32_t>& next, std::vector<std::uint32_t>& match,
                       std::size_t states, std::size_t row_size) {
    std::vector<std::uint32_t> fail(states, 0);
    std::deque<std::uint32_t> queue;
    for (std::size_t c = 0; c < row_size; ++c) {
        if (next[c] != 0) queue.push_back(next[c]);
    }
    while (!queue.empty()) {
        const std::uint32_t s = queue.front();
        queue.pop_front();
        for (std::size_t c = 0; c < row_size; ++c) {
            std::uint32_t& edge = next[s * row_size + c];
            const std::uint32_t via_fail = next[fail[s] * row_size + c];
            if (edge == 0) {
                edge = via_fail;
            } else {
                fail[edge] = via_fail;
                // Whatever ends inside an `except` substring does not count.
                if ((match[edge] & kExcept) == 0) match[edge] |= match[via_fail] & ~kExcept;
                queue.push_back(edge);
            }
        }
    }
}

// The symbols a pattern walks through: its bytes' symbols, between the anchors it has.
std::vector<std::uint8_t> pattern_symbols(const Pattern& p,
                                          const std::array<std::uint8_t, 256>& symbol_of) {
    std::vector<std::uint8_t> symbols;
    if (p.at_start) symbols.push_back(kStartSymbol);
    for (char c : p.lower) symbols.push_back(symbol_of[static_cast<unsigned char>(c)]);
    if (p.at_end) symbols.push_back(kEndSymbol);
    return symbols;
}

// The rank that orders states for renumbering: no match, browser grammar, `compatible;`, app
// HTTP stack, bot, prefetch. Below bot, no state carries two kinds (no token of one kind ends in
// a token of another; the constructor checks), so a rank tells which.
constexpr std::uint32_t kFeatureKinds = kGrammarMatch | kCompatibleMatch | kAppStackMatch;
std::uint32_t rank_of(std::uint32_t match) {
    if (match & kPrefetchMatch) return 5;
    if (match & kBotMatch) return 4;
    if (match & kAppStackMatch) return 3;
    if (match & kCompatibleMatch) return 2;
    return (match & kGrammarMatch) ? 1 : 0;
}

}  // namespace

// Aho–Corasick over the lower-cased patterns, compiled to a complete DFA: every state has an
// entry for every input symbol, so the walk is one table load per byte and never backtracks.
ClickClassifier::ClickClassifier(std::string_view pattern_text, GenericRules rules)
    : generic_rules_(rules == GenericRules::on) {
    std::vector<Pattern> patterns = parse_patterns(pattern_text);
    if (generic_rules_) add_generic_rule_tokens(patterns);
    pattern_count_ = patterns.size();

    // Input symbols: one per distinct pattern byte, 0 for every other byte.
    std::size_t total_symbols = 0;
    std::size_t used_symbols = kFirstByteSymbol;
    for (const Pattern& p : patterns) {
        total_symbols += p.lower.size() + 2;
        has_prefetch_patterns_ = has_prefetch_patterns_ || p.kind == kPrefetchMatch;
        for (char c : p.lower) {
            auto& symbol = symbol_of_[static_cast<unsigned char>(c)];
            if (symbol == 0) symbol = static_cast<std::uint8_t>(used_symbols++);
        }
    }
    for (char c = 'A'; c <= 'Z'; ++c) {
        symbol_of_[static_cast<unsigned char>(c)] =
            symbol_of_[static_cast<unsigned char>(to_lower(c))];
    }
    row_size_ = used_symbols;
    const std::size_t max_states = total_symbols + 1;
    if (max_states * row_size_ > kMaxAutomatonEntries) {
        throw std::invalid_argument("click patterns: too many patterns (" +
                                    std::to_string(patterns.size()) + ")");
    }

    // The trie; child 0 means "no child", as no edge leads back to the root.
    std::vector<std::uint32_t> next(max_states * row_size_, 0);
    std::vector<std::uint32_t> match(max_states, 0);
    std::vector<std::uint32_t> depth(max_states, 0);
    std::size_t states = 1;
    for (const Pattern& p : patterns) {
        std::uint32_t s = 0;
        for (std::uint8_t symbol : pattern_symbols(p, symbol_of_)) {
            std::uint32_t& child = next[s * row_size_ + symbol];
            if (child == 0) {
                child = static_cast<std::uint32_t>(states++);
                depth[child] = depth[s] + 1;
            }
            s = child;
        }
        match[s] |= p.kind;
    }

    add_failure_edges(next, match, states, row_size_);
    for (std::size_t s = 0; s < states; ++s) {
        const std::uint32_t kinds = match[s] & kFeatureKinds;
        if (rank_of(match[s]) < rank_of(kBotMatch) && (kinds & (kinds - 1)) != 0) {
            throw std::logic_error("click patterns: a rule token ends in a token of another kind");
        }
    }
    build_delta(next, match, depth, states);
}

// Renumbers the states so that those with matches come last, in rank order: then one comparison
// per byte tells whether the walk has found anything, and entries can hold plain row offsets
// (state * row_size_), which saves a multiplication per byte. Within a rank, shallow states come
// first: the walk over a browser's agent stays in a few shallow states, whose rows then share
// the cache instead of being scattered over the whole table.
void ClickClassifier::build_delta(const std::vector<std::uint32_t>& next,
                                  const std::vector<std::uint32_t>& match,
                                  const std::vector<std::uint32_t>& depth, std::size_t states) {
    std::vector<std::uint32_t> order(states);
    for (std::uint32_t i = 0; i < states; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return std::pair(rank_of(match[a]), depth[a]) < std::pair(rank_of(match[b]), depth[b]);
    });
    std::vector<std::uint32_t> renumbered(states);
    for (std::uint32_t i = 0; i < states; ++i) renumbered[order[i]] = i;
    const auto first_with_rank = [&](std::uint32_t rank) {
        auto it = std::find_if(order.begin(), order.end(),
                               [&](std::uint32_t s) { return rank_of(match[s]) >= rank; });
        return static_cast<std::uint32_t>((it - order.begin()) * row_size_);
    };
    first_match_offset_ = first_with_rank(1);
    first_compatible_offset_ = first_with_rank(2);
    first_app_stack_offset_ = first_with_rank(3);
    first_bot_offset_ = first_with_rank(4);
    first_prefetch_offset_ = first_with_rank(5);

    delta_.resize(states * row_size_);
    for (std::uint32_t s = 0; s < states; ++s) {
        for (std::size_t c = 0; c < row_size_; ++c) {
            delta_[renumbered[s] * row_size_ + c] =
                static_cast<std::uint32_t>(renumbered[next[s * row_size_ + c]] * row_size_);
        }
    }
    // The root keeps offset 0 (it matches nothing, so it sorts first).
    start_offset_ = delta_[kStartSymbol];
}

const ClickClassifier& ClickClassifier::builtin() {
    static const ClickClassifier classifier{
        std::string(embedded_bot_patterns()) + "\n" + std::string(embedded_crawler_patterns()),
        GenericRules::on};
    return classifier;
}

ClickClassifier::AgentMatch ClickClassifier::match_agent(
    std::string_view user_agent) const noexcept {
    // The walk stops at the first match that settles the answer: any prefetch match, or a bot
    // match when no prefetch pattern could still overrule it.
    const std::string_view scanned = capped(user_agent);
    AgentMatch found = AgentMatch::none;
    WalkFeatures seen;
    std::uint32_t offset = start_offset_;
    const auto settles = [&](std::uint32_t next) noexcept {
        offset = next;
        if (offset < first_match_offset_) [[likely]]
            return false;
        if (offset >= first_prefetch_offset_) {
            found = AgentMatch::prefetch;
            return true;
        }
        if (offset >= first_bot_offset_) {
            found = AgentMatch::bot;
            return !has_prefetch_patterns_;
        }
        if (offset >= first_app_stack_offset_) {
            seen.app_stack = true;
        } else if (offset >= first_compatible_offset_) {
            seen.compatible = true;
        } else {
            seen.grammar = true;
        }
        return false;
    };
    bool settled = false;
    // The digit run is counted beside the walk: it does not depend on the table loads, which are
    // what a byte costs, so it adds next to nothing.
    std::size_t digits = 0;
    for (const char c : scanned) {
        digits = ascii::is_digit(c) ? digits + 1 : 0;
        seen.longest_digits = std::max(seen.longest_digits, digits);
        if (settles(delta_[offset + symbol_of_[static_cast<unsigned char>(c)]])) {
            settled = true;
            break;
        }
    }
    // `$` only where the whole agent was read.
    if (!settled && scanned.size() == user_agent.size()) settles(delta_[offset + kEndSymbol]);
    if (found != AgentMatch::none || !generic_rules_) return found;
    // An app's own HTTP stack fetches for a person's app, not for a crawler: a prefetch, unless a
    // bot pattern or token said otherwise above. The rules that punish a missing part would
    // misjudge it (its agent is an app's name and the stack's).
    if (seen.app_stack) return AgentMatch::prefetch;
    return generic_rule_matches(scanned, seen) ? AgentMatch::bot : AgentMatch::none;
}

ClickClass ClickClassifier::classify(const ClickSignals& signals, AgentMatch agent) const noexcept {
    if (says_prefetch(signals.purpose) || says_prefetch(signals.sec_purpose) ||
        says_prefetch(signals.x_purpose) || says_prefetch(signals.x_moz)) {
        return ClickClass::prefetch;
    }
    if (agent == AgentMatch::prefetch) return ClickClass::prefetch;
    if (signals.head || all_blank(capped(signals.user_agent)) || agent == AgentMatch::bot)
        return ClickClass::bot;
    return ClickClass::human;
}

ClickClassifier::AgentMatch AgentMatchCache::match(std::string_view user_agent) noexcept {
    if (user_agent.empty() || user_agent.size() > kMaxAgentBytes)
        return classifier_.match_agent(user_agent);
    Entry& entry = entries_[quick_hash(user_agent) % kEntries];
    if (entry.length == user_agent.size() &&
        std::memcmp(entry.text.data(), user_agent.data(), user_agent.size()) == 0) {
        return entry.match;
    }
    entry.length = static_cast<std::uint16_t>(user_agent.size());
    std::memcpy(entry.text.data(), user_agent.data(), user_agent.size());
    entry.match = classifier_.match_agent(user_agent);
    return entry.match;
}

}  // namespace refgate::domain
