#!/usr/bin/python3
"""The disclosure sanitiser against a browser's parser (issue 21).

  html5lib_differential.py SANITIZE_HTML_FILES CORPUS_DIR

Sanitises every input of CORPUS_DIR (tests/fuzz/corpus/sanitize_html) with the sanitize_html_files
tool, then parses each output with html5lib, an HTML5 parser that builds the tree a browser
builds, as the content of a <div> (where publishers inline a disclosure). In html5lib's tree: no
element outside the sanitiser's allow-list (so no script, style, iframe, object, embed, svg,
math, form...), no on* or style attribute, every href or src http(s) or mailto (as the browser
reads it: entities decoded, blanks and controls stripped). And the tree is the one the sanitiser
claims its output is (read by a strict reader of balanced, quoted, escaped markup): the same
elements, nested the same way, with the same attributes and text. A difference is HTML that a
browser restructures (a <p> inside a <p>, an <a> inside an <a>), the shape mutation XSS starts
from. Run with Debian's /usr/bin/python3 (python3-html5lib). Exit 0 when every output passes,
1 with the differences otherwise.
"""

import html
import os
import re
import subprocess
import sys
import tempfile

import html5lib

ALLOWED = {"p", "br", "strong", "em", "b", "i", "small", "span", "a"}
VOID = {"br"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "background", "poster"}
SAFE_SCHEME = re.compile(r"^(https?:|mailto:)", re.IGNORECASE)
TOKEN = re.compile(r'<(/?)([a-z]+)((?: [a-z]+="[^"<>]*")*)>|([^<>]+)')
ATTRIBUTE = re.compile(r' ([a-z]+)="([^"]*)"')


def browser_text(text):
    # The HTML5 input stream: CR and CRLF become LF, NUL is dropped in text.
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "")


def claimed_tree(output):
    """The sanitiser's output read as the balanced markup it claims to be:
    [tag, {attributes}, [children]] and strings; None with the reason if it is not."""
    root = ["#fragment", {}, []]
    stack = [root]
    at = 0
    while at < len(output):
        m = TOKEN.match(output, at)
        if not m:
            return None, f"unreadable at {at}: {output[at:at + 40]!r}"
        at = m.end()
        closing, tag, attrs, text = m.groups()
        if text is not None:
            children = stack[-1][2]
            text = browser_text(html.unescape(text))
            if children and isinstance(children[-1], str):
                children[-1] += text
            elif text:
                children.append(text)
        elif closing:
            if tag in VOID or stack[-1][0] != tag:
                return None, f"</{tag}> closes <{stack[-1][0]}>"
            stack.pop()
        else:
            element = [tag, {k: html.unescape(v) for k, v in ATTRIBUTE.findall(attrs)}, []]
            stack[-1][2].append(element)
            if tag not in VOID:
                stack.append(element)
    if len(stack) != 1:
        return None, f"<{stack[-1][0]}> left open"
    return root, None


def parsed_tree(output):
    """What a browser builds of the output inside a <div>: the same shape as claimed_tree."""
    fragment = html5lib.parseFragment(output, container="div", treebuilder="etree",
                                      namespaceHTMLElements=False)

    def convert(element, tag):
        node = [tag, dict(element.attrib), []]
        if element.text:
            node[2].append(element.text)
        for child in element:
            if not isinstance(child.tag, str):  # a comment: an element the sanitiser never writes
                node[2].append(["#comment", {}, []])
            else:
                node[2].append(convert(child, child.tag))
            if child.tail:
                if node[2] and isinstance(node[2][-1], str):
                    node[2][-1] += child.tail
                else:
                    node[2].append(child.tail)
        return node

    return convert(fragment, "#fragment")


def unsafe(node, path="", problems=None):
    """Everything in html5lib's tree that the sanitiser must never let through."""
    problems = [] if problems is None else problems
    for child in node[2]:
        if isinstance(child, str):
            continue
        tag, attrs, _ = child
        where = f"{path}/{tag}"
        if tag not in ALLOWED:
            problems.append(f"element {where}")
        for name, value in attrs.items():
            lower = name.lower()
            if lower.startswith("on") or lower == "style":
                problems.append(f"attribute {lower} on {where}")
            if lower in URL_ATTRIBUTES:
                stripped = re.sub(r"[\x00-\x20]", "", value)
                if not SAFE_SCHEME.match(stripped) or stripped != value:
                    problems.append(f"{lower}={value!r} on {where}")
        unsafe(child, where, problems)
    return problems


def main():
    tool, corpus = sys.argv[1], sys.argv[2]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="refgate-html5lib-") as out_dir:
        subprocess.run([tool, corpus, out_dir], check=True, stdout=subprocess.DEVNULL)
        names = sorted(os.listdir(out_dir))
        for name in names:
            with open(os.path.join(out_dir, name), "rb") as f:
                output = f.read().decode("utf-8", errors="replace")
            problems = unsafe(parsed_tree(output))
            claimed, why = claimed_tree(output)
            if claimed is None:
                problems.append(f"the output is not balanced markup: {why}")
            elif claimed != parsed_tree(output):
                problems.append(f"a browser builds another tree:\n    claimed {claimed}\n"
                                f"    parsed  {parsed_tree(output)}")
            if problems:
                failures += 1
                print(f"{name}: {output[:200]!r}")
                for p in problems:
                    print(f"  {p}")
    print(f"{len(names) - failures} of {len(names)} sanitised corpus inputs read the same by "
          f"html5lib")
    return 1 if failures or not names else 0


if __name__ == "__main__":
    sys.exit(main())
