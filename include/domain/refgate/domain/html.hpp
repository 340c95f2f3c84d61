#pragma once

// HTML for disclosure texts that publishers inline into their pages: escaping, deriving a
// fragment from plain text, and sanitising editors' markup to a small allow-list. Pure functions.

#include <string>
#include <string_view>

namespace refgate::domain {

// Escapes & < > " ' so that the result is safe in element content and in quoted attributes.
std::string escape_html(std::string_view text);
void append_escaped_html(std::string& out, std::string_view text);
// The bytes write_escaped_html() may write for `size` bytes of text ("&quot;" is six, and it
// stores 16 at a time).
constexpr std::size_t escaped_html_room(std::size_t size) { return size * 6 + 16; }
// Writes `text` escaped at `to`, which has escaped_html_room(text.size()) bytes of room; returns
// the end of what it wrote. For a caller that sizes its buffer once for several pieces.
char* write_escaped_html(char* to, std::string_view text);

// Plain text as an HTML fragment: escaped, line breaks as <br>.
std::string text_to_html(std::string_view text);

// The rel every link in a disclosure or snippet carries.
inline constexpr std::string_view kSponsoredRel = "sponsored nofollow noopener";

// The snippet a publisher pastes beside a paid pick (GET /snippet/{slug}, the admin API's share):
// a sponsored link to `href` labelled `label`, then the disclosure text, if any, in a <small>.
std::string link_snippet(std::string_view href, std::string_view label,
                         const std::string* disclosure_text);

// Keeps only p, br, strong, em, b, i, small, span and a; the attributes title and lang, and href
// on a (http, https and mailto only, after entity decoding and whitespace removal). Every a gets
// rel="sponsored nofollow noopener". script, style and similar elements are removed with their
// content, comments are removed, unknown tags are dropped with their text kept. Whatever the
// input (unclosed tags, stray '<', unterminated attributes), the output is balanced, every text
// is escaped, and sanitising it again changes nothing.
std::string sanitize_html(std::string_view html);

}  // namespace refgate::domain
