#pragma once

// Sorts a redirect into human, bot or prefetch so that each class is counted apart (the fourth
// class, scanner, is decided by the click recorder from the client's network and behaviour). It
// runs on the hot path of every redirect: nothing is stored, nothing is allocated, and the
// User-Agent is read once, byte by byte, through a multi-pattern automaton built when the
// classifier is made.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace refgate::domain {

// scanner: an e-mail security or cloud network, or a client fetching many links of one channel
// within seconds (docs/click-classes.md).
enum class ClickClass : std::uint8_t { human = 0, bot = 1, prefetch = 2, scanner = 3 };
inline constexpr std::size_t kClickClassCount = 4;

// Every class with its name ("human", "bot", "prefetch", "scanner": the label value of the click
// counters and the class field of a counter key), in enum order. The one place names meet the enum.
struct ClickClassName {
    ClickClass click_class;
    std::string_view name;
};
inline constexpr std::array<ClickClassName, kClickClassCount> kClickClasses = {
    {{ClickClass::human, "human"},
     {ClickClass::bot, "bot"},
     {ClickClass::prefetch, "prefetch"},
     {ClickClass::scanner, "scanner"}}};

std::string_view to_string(ClickClass click_class);
// The class of that name; nullopt for any other text.
std::optional<ClickClass> parse_click_class(std::string_view name);

// What the request says. The views are only read during classify(); nothing is kept.
struct ClickSignals {
    bool head = false;             // HEAD request
    std::string_view user_agent;   // may be empty
    std::string_view purpose;      // Purpose header
    std::string_view sec_purpose;  // Sec-Purpose header, e.g. "prefetch;prerender"
    std::string_view x_purpose;    // X-Purpose header (old Chrome/Safari preview)
    std::string_view x_moz;        // X-Moz header (old Firefox prefetch)
};

// Only this many leading bytes of a User-Agent (and of each purpose header) are scanned: every
// agent worth recognising names itself well before that, and the cost of one call stays bounded
// whatever a client sends.
inline constexpr std::size_t kMaxScannedUserAgentBytes = 512;

// The pattern texts compiled into the binary: refgate's own list (src/domain/bot_patterns.txt)
// and the crawler patterns converted at build time from the pinned npm package in
// third_party (`bot-regex` lines; see docs/click-classes.md).
std::string_view embedded_bot_patterns();
std::string_view embedded_crawler_patterns();

// Whether a classifier also applies refgate's generic rules (refgate/domain/agent_rules.hpp).
enum class GenericRules : bool { off, on };

class ClickClassifier {
  public:
    // Pattern text: one pattern a line, `bot <substring>`, `prefetch <substring>`,
    // `bot-regex <regex>` (the subset of refgate/domain/agent_regex.hpp) or `except <substring>`
    // (bot patterns that end inside this substring do not count: `Cubot` is a phone, not a bot).
    // A substring (which may hold spaces) is matched case-insensitively (ASCII) anywhere in the
    // User-Agent. Lines starting with `#` and blank lines are ignored. Throws
    // std::invalid_argument naming the line number and text of the first bad line. With
    // GenericRules::on, the generic rules count as bot patterns too, and an app's own HTTP stack
    // (agent_rules::is_app_http_stack) makes a prefetch where no bot pattern or rule token matches.
    explicit ClickClassifier(std::string_view patterns, GenericRules rules = GenericRules::off);

    // The classifier of the embedded patterns and the generic rules, built on first use.
    static const ClickClassifier& builtin();

    // In order: a purpose header saying prefetch or preview -> prefetch; a `prefetch` pattern in
    // the User-Agent, or an app's own HTTP stack that no `bot` pattern or rule token names ->
    // prefetch; HEAD -> bot; an empty or all-blank User-Agent -> bot; a `bot` pattern or a
    // generic rule -> bot; anything else -> human.
    ClickClass classify(const ClickSignals& signals) const noexcept {
        return classify(signals, match_agent(signals.user_agent));
    }

    // The two halves of classify(): what the User-Agent alone matches (a walk over its bytes, the
    // costly half, which AgentMatchCache remembers), and the answer for a request given that.
    enum class AgentMatch : std::uint8_t { none, bot, prefetch };
    AgentMatch match_agent(std::string_view user_agent) const noexcept;
    ClickClass classify(const ClickSignals& signals, AgentMatch agent) const noexcept;

    // The number of literals in the automaton (a `bot-regex` line may expand into several).
    std::size_t pattern_count() const noexcept { return pattern_count_; }

  private:
    void build_delta(const std::vector<std::uint32_t>& next,
                     const std::vector<std::uint32_t>& match,
                     const std::vector<std::uint32_t>& depth, std::size_t states);

    // Byte -> input symbol. Upper-case ASCII letters share the symbol of their lower-case
    // letter, so the walk lower-cases as it reads; bytes in no pattern share symbol 0. Symbols 1
    // and 2 are read before the first and after the last byte (the anchors `^` and `$`).
    std::array<std::uint8_t, 256> symbol_of_{};
    std::size_t row_size_ = 1;  // the number of symbols
    // The complete automaton, failure links folded in: entry [offset + symbol] is the offset
    // (state * row_size_) of the next state. The root is at offset 0; states where a pattern
    // ends are numbered last: first those of a browser-grammar token, then of the `compatible;`
    // token, then of an app HTTP stack's, then bot patterns, then prefetch patterns.
    std::vector<std::uint32_t> delta_;
    std::uint32_t start_offset_ = 0;  // after the start symbol
    std::uint32_t first_match_offset_ = 0;
    std::uint32_t first_compatible_offset_ = 0;
    std::uint32_t first_app_stack_offset_ = 0;
    std::uint32_t first_bot_offset_ = 0;
    std::uint32_t first_prefetch_offset_ = 0;
    bool generic_rules_ = false;
    bool has_prefetch_patterns_ = false;
    std::size_t pattern_count_ = 0;
};

// The agent matches of the last User-Agents one thread saw (direct-mapped by a hash of the text,
// which is kept and compared in full): readers' agents repeat a great deal (a few browser
// versions make most of them), and a hash and a compare cost a fraction of the walk. Agents
// longer than kMaxAgentBytes are walked every time. Not thread-safe: one per I/O thread.
class AgentMatchCache {
  public:
    static constexpr std::size_t kEntries = 64;
    static constexpr std::size_t kMaxAgentBytes = 256;
    explicit AgentMatchCache(const ClickClassifier& classifier) : classifier_(classifier) {}
    // classifier.match_agent(user_agent), remembered.
    ClickClassifier::AgentMatch match(std::string_view user_agent) noexcept;

  private:
    struct Entry {
        std::uint16_t length = 0;  // 0: empty (an empty agent is never kept)
        ClickClassifier::AgentMatch match = ClickClassifier::AgentMatch::none;
        std::array<char, kMaxAgentBytes> text;
    };
    const ClickClassifier& classifier_;
    std::array<Entry, kEntries> entries_{};
};

}  // namespace refgate::domain
