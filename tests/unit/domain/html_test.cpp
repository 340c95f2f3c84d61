#include "refgate/domain/html.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace html_test {

using refgate::domain::escape_html;
using refgate::domain::sanitize_html;
using refgate::domain::text_to_html;

namespace {

// Balanced: every allowed element opened is closed, in order.
bool balanced(const std::string& html) {
    std::vector<std::string> open;
    std::size_t pos = 0;
    while ((pos = html.find('<', pos)) != std::string::npos) {
        auto end = html.find('>', pos);
        if (end == std::string::npos) return false;
        std::string tag = html.substr(pos + 1, end - pos - 1);
        pos = end + 1;
        if (tag.starts_with("/")) {
            if (open.empty() || open.back() != tag.substr(1)) return false;
            open.pop_back();
        } else {
            std::string name = tag.substr(0, tag.find(' '));
            if (name != "br") open.push_back(name);
        }
    }
    return open.empty();
}

}  // namespace

TEST_CASE("escaping turns all five HTML specials into references", "[html]") {
    CHECK(refgate::domain::escape_html("Tom & \"Jerry\" <b>'s</b>") ==
          "Tom &amp; &quot;Jerry&quot; &lt;b&gt;&#39;s&lt;/b&gt;");
    CHECK(refgate::domain::escape_html("plain — text") == "plain — text");
}

TEST_CASE("plain text becomes an escaped fragment with line breaks", "[html]") {
    CHECK(text_to_html("a < b & c\nnext line\r\nlast") == "a &lt; b &amp; c<br>next line<br>last");
    CHECK(text_to_html("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;");
}

TEST_CASE("allowed markup passes through unchanged in canonical form", "[html][sanitize]") {
    CHECK(refgate::domain::sanitize_html("<p>Paid <strong>picks</strong> we <em>use</em>.</p>") ==
          "<p>Paid <strong>picks</strong> we <em>use</em>.</p>");
    CHECK(refgate::domain::sanitize_html("<P>a<BR/>b<br>c</P>") == "<p>a<br>b<br>c</p>");
    CHECK(sanitize_html("<span title='x &amp; y' lang=de>t</span>") ==
          "<span title=\"x &amp; y\" lang=\"de\">t</span>");
    CHECK(sanitize_html("<small>s</small><b>b</b><i>i</i>") == "<small>s</small><b>b</b><i>i</i>");
}

TEST_CASE("links keep a safe href and always get rel=sponsored", "[html][sanitize]") {
    CHECK(refgate::domain::sanitize_html(
              "<a href=\"https://example.com/x?a=1&amp;b=2\" rel=\"author\" "
              "title=\"T\">go</a>") ==
          "<a href=\"https://example.com/x?a=1&amp;b=2\" title=\"T\" rel=\"sponsored nofollow "
          "noopener\">go</a>");
    CHECK(refgate::domain::sanitize_html("<a href=mailto:hi@example.com>mail</a>") ==
          "<a href=\"mailto:hi@example.com\" rel=\"sponsored nofollow noopener\">mail</a>");
    CHECK(sanitize_html("<a href=\"HTTP://example.com/\">x</a>") ==
          "<a href=\"http://example.com/\" rel=\"sponsored nofollow noopener\">x</a>");
}

TEST_CASE("script and style elements are removed with their content", "[html][sanitize]") {
    CHECK(refgate::domain::sanitize_html("a<script>alert(1)</script>b") == "ab");
    CHECK(refgate::domain::sanitize_html("a<SCRIPT type=x>alert('</p>')</ScRiPt >b") == "ab");
    CHECK(sanitize_html("a<style>p{color:red}</style>b") == "ab");
    CHECK(sanitize_html("a<iframe src=//evil>inner</iframe>b") == "ab");
    CHECK(sanitize_html("a<script>never closed <p>x</p>") == "a");
    CHECK(sanitize_html("<scr<script>ipt>alert(1)</script>") == "ipt&gt;alert(1)");
}

TEST_CASE("event handlers and style attributes are dropped", "[html][sanitize]") {
    CHECK(refgate::domain::sanitize_html("<p onclick=\"alert(1)\" style=\"color:red\">x</p>") ==
          "<p>x</p>");
    CHECK(refgate::domain::sanitize_html("<span ONMOUSEOVER=alert(1)>x</span>") ==
          "<span>x</span>");
    CHECK(sanitize_html("<img src=x onerror=alert(1)>") == "");
    CHECK(sanitize_html("<a href=\"https://e.com/\" onfocus=x autofocus>y</a>") ==
          "<a href=\"https://e.com/\" rel=\"sponsored nofollow noopener\">y</a>");
}

TEST_CASE("javascript: links do not pass however they are disguised", "[html][sanitize]") {
    for (const char* bad : {
             "<a href=\"javascript:alert(1)\">x</a>",
             "<a href=\"JaVaScRiPt:alert(1)\">x</a>",
             "<a href=\" javascript:alert(1)\">x</a>",
             "<a href=\"java\tscript:alert(1)\">x</a>",
             "<a href=\"java&#x09;script:alert(1)\">x</a>",
             "<a href=\"&#106;avascript:alert(1)\">x</a>",
             "<a href=\"&#x6A;avascript:alert(1)\">x</a>",
             "<a href=\"&#0000106&#0000097vascript:alert(1)\">x</a>",
             "<a href=\"javascript&colon;alert(1)\">x</a>",
             "<a href=\"data:text/html,<script>alert(1)</script>\">x</a>",
             "<a href=\"vbscript:msgbox(1)\">x</a>",
             "<a href=\"//evil.example/\">x</a>",
             "<a href=\"/relative\">x</a>",
             "<a>x</a>",
         }) {
        INFO(bad);
        CHECK(refgate::domain::sanitize_html(bad) == "x");
    }
}

TEST_CASE("unknown tags are dropped and their text kept, escaped", "[html][sanitize]") {
    CHECK(refgate::domain::sanitize_html("<div class=x>Paid <u>picks</u></div>") == "Paid picks");
    CHECK(refgate::domain::sanitize_html("<svg><g>t</g></svg>") == "t");
    CHECK(sanitize_html("a <!-- secret --> b") == "a  b");
    CHECK(sanitize_html("a <!-- never closed") == "a ");
    CHECK(sanitize_html("x<!doctype html>y<?php echo 1 ?>z") == "xyz");
}

TEST_CASE("broken markup yields balanced and escaped output", "[html][sanitize]") {
    CHECK(refgate::domain::sanitize_html("<p><strong>open") == "<p><strong>open</strong></p>");
    CHECK(refgate::domain::sanitize_html("<strong><em>x</strong>y</em>") ==
          "<strong><em>x</em></strong>y");
    CHECK(sanitize_html("</p>stray close</b>") == "stray close");
    CHECK(sanitize_html("1 < 2 && 3 > 2") == "1 &lt; 2 &amp;&amp; 3 &gt; 2");
    CHECK(sanitize_html("a <3 b") == "a &lt;3 b");
    CHECK(sanitize_html("tail <") == "tail &lt;");
    CHECK(sanitize_html("x <p title=\"unterminated>y</p>") == "x ");
    CHECK(sanitize_html("x <strong") == "x ");
    CHECK(sanitize_html("<p>one<p>two") == "<p>one</p><p>two</p>");
    CHECK(sanitize_html("<a href=https://a.example/>one<a href=https://b.example/>two</a>") ==
          "<a href=\"https://a.example/\" rel=\"sponsored nofollow noopener\">onetwo</a>");
    CHECK(sanitize_html("\"quotes\" & 'apostrophes'") ==
          "&quot;quotes&quot; &amp; &#39;apostrophes&#39;");
    for (const char* input : {"<p><b><i><span>deep", "</span></i></b></p>", "<<<>>>", "<p <p <p",
                              "<a href='https://x.example/'><p>in link", "&#0;&#xD800;&#99999999;",
                              "<b>\"</b'>\"<i>", "<p/><br/></br>"}) {
        INFO(input);
        std::string once = sanitize_html(input);
        CHECK(balanced(once));
        CHECK(sanitize_html(once) == once);
    }
}

TEST_CASE("character references are decoded and re-escaped", "[html][sanitize]") {
    CHECK(refgate::domain::sanitize_html("a &mdash; b &amp; c &lt;d&gt; &#169; &#x20AC;") ==
          "a — b &amp; c &lt;d&gt; © €");
    CHECK(refgate::domain::sanitize_html("&unknown; &") == "&amp;unknown; &amp;");
}

TEST_CASE("sanitising twice changes nothing", "[html][sanitize]") {
    for (const char* input : {
             "<p>Paid picks. <a href=\"https://example.com/?a=1&b=2\">More</a></p>",
             "<span title='&quot;x&quot;'>y</span> & <em>z",
             "Links carry a referral code — a subscription through one earns us a commission.",
         }) {
        INFO(input);
        std::string once = refgate::domain::sanitize_html(input);
        CHECK(refgate::domain::sanitize_html(once) == once);
    }
}

TEST_CASE("escaping keeps ordinary runs whole around specials at either end", "[html]") {
    CHECK(refgate::domain::escape_html("") == "");
    CHECK(refgate::domain::escape_html("&") == "&amp;");
    CHECK(escape_html("'a'") == "&#39;a&#39;");
    CHECK(escape_html("https://shop.example/p?ref=abc&utm_source=x&q=<1>") ==
          "https://shop.example/p?ref=abc&amp;utm_source=x&amp;q=&lt;1&gt;");
}

TEST_CASE("escaping gives what a byte-by-byte reading gives at every length, NUL bytes kept",
          "[html]") {
    // Texts end inside a 16-byte block at every length; the last block is read from a padded
    // copy, so a NUL of the text must still be written and the padding never.
    auto reference = [](std::string_view text) {
        std::string out;
        for (char c : text) {
            switch (c) {
                case '&':
                    out += "&amp;";
                    break;
                case '<':
                    out += "&lt;";
                    break;
                case '>':
                    out += "&gt;";
                    break;
                case '"':
                    out += "&quot;";
                    break;
                case '\'':
                    out += "&#39;";
                    break;
                default:
                    out += c;
            }
        }
        return out;
    };
    for (std::size_t size = 0; size <= 48; ++size) {
        std::string text;
        for (std::size_t i = 0; i < size; ++i) text += "a&b\0<c\"d'>"[i % 11];
        INFO("size " << size);
        CHECK(refgate::domain::escape_html(text) == reference(text));
        std::string out = "kept:";
        refgate::domain::append_escaped_html(out, text);
        CHECK(out == "kept:" + reference(text));
    }
}

TEST_CASE("escaping finds a special character at every offset of a long text", "[html]") {
    // Long runs are scanned 16 bytes at a time: a special in any lane, in the last partial
    // block, or in none, is escaped as a character-by-character reading would.
    for (char special : {'&', '<', '>', '"', '\''}) {
        for (std::size_t at = 0; at < 50; ++at) {
            std::string text(50, 'x');
            text[at] = special;
            std::string expected = refgate::domain::escape_html(std::string(1, special));
            INFO(special << " at " << at);
            CHECK(refgate::domain::escape_html(text) ==
                  std::string(at, 'x') + expected + std::string(49 - at, 'x'));
        }
    }
    std::string high(40, '\xe9');  // bytes >= 0x80 are ordinary
    CHECK(refgate::domain::escape_html(high) == high);
}

}  // namespace html_test
