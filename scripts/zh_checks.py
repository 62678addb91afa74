"""What a translation keeps of its English, and the glossary's terms: `python -m scripts.zh_checks [DOC]`.

tests/book/test_translation.py runs these checks on the Chinese book (``zh/``, scripts/zh_sync.py); a
translator runs this script while translating, for the same messages at once. A translated unit (a notebook's
Markdown cell, a page's section) must keep, of the English it translates (:func:`keeps`), both read as the
book's build reads them (scripts/myst.py: an equation, a code span or a role is what the site makes of it):

* its mathematics: the same ``$…$``, ``$$…$$`` and ``{math}`` expressions (whitespace aside);
* its numbers, outside mathematics and code: the same numbers, however they are grouped (1,024, 1 024 and 1024
  are one number), written in digits in both;
* its code: the same inline code and code blocks;
* its links and images (the same targets, paths made relative to ``zh/``), cross-references (``{ref}``,
  ``{doc}``, ``{numref}``, ``{cite}``, ``{eq}``: the same targets; their texts are translated), labels, and
  directives in the same order with the same options (and the same argument, except an exercise's or an
  admonition's title);
* its headings' levels, in order;
* and it must be Chinese: a unit whose English has prose has Chinese characters, and no line broken between
  two Chinese characters (a page shows such a break as a space).

The glossary (``zh/glossary.md``, a table: 中文, English, 不用, 说明) fixes one Chinese term for each
English term (:func:`term_problems`): where a unit's English uses a glossary term (its forms,
``;``-separated, and those of :data:`WORD_FORMS`, match as words, any case, a plural too, ``*`` standing
for any ending), the Chinese uses the glossary's Chinese term, and no unit uses a rejected variant (不用).
A chapter or page gives, at the first use of each glossary term of two or more characters (other than a
term kept in English, like softmax, and those of :data:`GLOSSED_ONCE`), the English in parentheses right
after it, up to four more characters between: 注意力掩码（attention mask） (:func:`first_use_problems`).
A unit's record may allow an exception, ``"allow": ["term:key"]`` (scripts/zh_sync.py describes records).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import re
import sys
from collections import Counter

from scripts import myst, zh_book, zh_sync

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_BARE_URL = re.compile(r"https?://[^\s)>\]]+")  # a URL in a text: a link to keep, though not linked
# A number in prose: digits, grouped by thousands or not (1,024, 1 024, 1024), decimals; not in a name.
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?:\d{1,3}(?:(?:,|[ \u00a0\u2009\u202f])\d{3})+|\d+)(?:\.\d+)?(?![A-Za-z0-9_])"
)
TITLED = {"exercise", "admonition", "note", "tip", "warning", "important", "caution", "attention", "hint",
          "seealso", "topic", "sidebar", "dropdown", "margin"}  # fmt: skip  # their argument is a title
REFERENCE_ROLES = {"doc", "ref", "numref", "cite", "cite:p", "cite:t", "eq", "term", "download"}


# ---------------------------------------------------------------------------------------------------------
# What a MyST text holds
# ---------------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Parts:
    """What of a MyST text a translation must keep, and its prose (for the numbers, terms and words)."""

    math: set[str] = dataclasses.field(default_factory=set)
    numbers: Counter = dataclasses.field(default_factory=Counter)
    code: set[str] = dataclasses.field(default_factory=set)
    links: set[str] = dataclasses.field(default_factory=set)
    references: set[str] = dataclasses.field(default_factory=set)
    labels: set[str] = dataclasses.field(default_factory=set)
    directives: list[str] = dataclasses.field(default_factory=list)
    headings: list[int] = dataclasses.field(default_factory=list)
    prose: list[str] = dataclasses.field(default_factory=list)  # text a reader reads, headings apart
    heading_text: list[str] = dataclasses.field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.prose)


def _squash(text: str) -> str:
    return " ".join(text.split())


def number_value(token: str) -> str:
    """A number as the sameness check compares it: its digit groups joined (1,024 and 1 024 are 1024)."""
    return re.sub(r"[, \u00a0\u2009\u202f]", "", token)


def parse(text: str) -> Parts:
    """Cut a MyST text into what a translation keeps (directives, math, code, roles, links) and its prose,
    as the book's parser reads it (scripts/myst.py)."""
    parts = Parts()
    _parse_blocks(text, parts)
    return parts


CODE_BLOCKS = {"fence", "code_block"}  # a code block's text is code, kept as it is
MATH_BLOCKS = {"math_block", "math_block_label", "amsmath"}


def _parse_blocks(text: str, parts: Parts) -> None:
    heading = False  # whether the next inline token is a heading's text
    for token in myst.tokens(text):
        if token.type == "heading_open":
            parts.headings.append(int(token.tag[1:]))
            heading = True
        elif token.type == "inline" and heading:
            title = Parts()
            _parse_inline(token.children, title)
            _merge(parts, title, prose=False)
            parts.heading_text.append(title.text)
            heading = False
        elif token.type == "inline":
            _parse_inline(token.children, parts)
        elif found := myst.directive(token):
            _directive(*found, token.content, parts)
        elif token.type in CODE_BLOCKS or token.type == "colon_fence":
            parts.code.add(token.content.removesuffix("\n"))
        elif token.type in MATH_BLOCKS:
            parts.math.add(_squash(token.content))
            if token.type == "math_block_label":
                parts.labels.add(token.info)
        elif token.type == "myst_target":
            parts.labels.add(token.content)
        elif token.type == "html_block":
            _prose(token.content.removesuffix("\n"), parts)


def _directive(name: str, arg: str, body: str, parts: Parts) -> None:
    options, content, _ = myst.read_body(body)
    options = {key: value.strip() for key, value in options.items()}
    if "label" in options:
        parts.labels.add(options["label"])
    kept = "" if name in TITLED else arg
    parts.directives.append(f"{{{name}}} {kept} {sorted(options.items())}".strip())
    if name in ("math",):
        parts.math.add(_squash(content))
    elif name in ("code-cell", "code-block", "code", "literalinclude", "include", "bibliography",
                  "tableofcontents", "raw"):  # fmt: skip
        parts.code.add(content)
    else:
        if name in TITLED and arg:
            title = Parts()
            _parse_inline(myst.inline(arg), title)
            _merge(parts, title, prose=False)
            parts.heading_text.append(title.text)
        _parse_blocks(content, parts)


def _merge(parts: Parts, other: Parts, *, prose: bool) -> None:
    parts.math |= other.math
    parts.numbers += other.numbers
    parts.code |= other.code
    parts.links |= other.links
    parts.references |= other.references
    if prose:
        parts.prose += other.prose


def _parse_inline(children: list, parts: Parts) -> None:
    """A text's inline tokens: its code, maths, roles and links kept aside, and its prose (a link's text and a
    role's shown text in it, a space for the rest)."""
    pieces, autolink = [], False
    for token in children:
        if autolink:  # an autolink's text is its URL, kept as a link
            autolink = token.type != "link_close"
            continue
        if token.type in ("text", "html_inline"):
            links = _BARE_URL.findall(token.content)
            parts.links.update(links)
            pieces.append(_BARE_URL.sub(" ", token.content) if links else token.content)
        elif token.type in ("softbreak", "hardbreak"):
            pieces.append("\n")
        elif token.type == "code_inline":
            parts.code.add(token.content.strip())
            pieces.append(" ")
        elif token.type in ("math_inline", "math_inline_double"):
            parts.math.add(_squash(token.content))
            pieces.append(" ")
        elif token.type == "myst_role":
            pieces.append(_role(token.meta["name"], token.content, parts))
        elif token.type == "link_open":
            parts.links.add(token.attrs["href"])
            autolink = token.markup == "autolink"
            pieces.append(" " if autolink else "")
        elif token.type == "image":
            parts.links.add(token.attrs["src"])
            pieces.append(token.content)
    _prose("".join(pieces), parts)


def _prose(text: str, parts: Parts) -> None:
    parts.numbers.update(number_value(n) for n in _NUMBER.findall(text))
    parts.prose.append(text)


def _role(name: str, body: str, parts: Parts) -> str:
    """A role's part: maths, or a reference's target; what the prose shows of it (a reference's own text)."""
    if name == "math":
        parts.math.add(_squash(body))
        return " "
    shown, _, target = body.partition("<")
    target = target.rstrip(">").strip() if target else body.strip()
    for key in target.split(",") if name.startswith("cite") else [target]:
        parts.references.add(f"{{{name}}}{key.strip()}")
    return shown if "<" in body else " "


# ---------------------------------------------------------------------------------------------------------
# A translation keeps its English's maths, numbers, code, links, references, labels, directives, headings
# ---------------------------------------------------------------------------------------------------------


def broken_lines(text: str) -> list[str]:
    """Where a paragraph's line breaks between Chinese characters (a page shows such a break as a space)."""
    prose = parse(text).prose
    found = []
    for paragraph in prose:
        lines = paragraph.split("\n")
        for a, b in itertools.pairwise(lines):
            if re.search(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]$", a.rstrip()) and CJK.match(
                b.lstrip()[:1] or " "
            ):
                found.append(f"{a.strip()[-12:]} / {b.strip()[:12]}")
    return found


def keeps(english: str, chinese: str, allowed: set[str] = frozenset()) -> list[str]:
    """What ``chinese`` (a translation) does not keep of ``english``: one message per difference."""
    en, zh = parse(zh_sync.relocate(english)), parse(chinese)
    problems = []
    for kind in ("math", "code", "links", "references", "labels"):
        a, b = getattr(en, kind), getattr(zh, kind)
        lost = sorted(x for x in a - b if f"{kind.rstrip('s')}:{x}" not in allowed)
        added = sorted(x for x in b - a if f"{kind.rstrip('s')}:{x}" not in allowed)
        if lost or added:
            problems.append(f"{kind}: only in the English {lost}, only in the Chinese {added}")
    lost = sorted(n for n in set(en.numbers) - set(zh.numbers) if f"number:{n}" not in allowed)
    added = sorted(n for n in set(zh.numbers) - set(en.numbers) if f"number:{n}" not in allowed)
    if lost or added:
        problems.append(
            f"numbers (outside maths and code): only in the English {lost}, only in the Chinese {added}"
        )
    if en.directives != zh.directives:
        problems.append(f"directives and their options: English {en.directives}, Chinese {zh.directives}")
    if en.headings != zh.headings:
        problems.append(f"heading levels: English {en.headings}, Chinese {zh.headings}")
    if broken := broken_lines(chinese):
        problems.append(
            f"a line break between Chinese characters shows as a space: join the lines at {broken}"
        )
    words = re.findall(r"[A-Za-z]{2,}", en.text + " ".join(en.heading_text))
    if len(words) >= 3 and not CJK.search(zh.text + " ".join(zh.heading_text)):
        problems.append("no Chinese in the translation (the English has prose)")
    return problems


# ---------------------------------------------------------------------------------------------------------
# The glossary
# ---------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Term:
    zh: str
    en: tuple[str, ...]  # its English forms
    avoid: tuple[str, ...]  # Chinese variants the book does not use

    @functools.cached_property
    def pattern(self) -> re.Pattern:
        """The English forms as words: any case, spaces and hyphens alike, a plural too, ``*`` any ending."""
        forms = []
        for form in self.en:
            wild = form.endswith("*")
            words = [re.escape(w) for w in re.split(r"[\s-]+", form.rstrip("*"))]
            last = words[-1]
            if wild:
                words[-1] = last + r"\w*"
            elif last.endswith("y") and last[-2:-1] not in ("a", "e", "o", "u"):
                words[-1] = last[:-1] + "(?:y|ies)"
            else:
                words[-1] = last + "(?:s|es)?"
            forms.append(r"[\s-]+".join(words))
        return re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(forms) + r")(?![A-Za-z0-9])", re.I)

    @property
    def glossed(self) -> bool:
        """Whether its first use in a chapter carries the English: two characters or more, not English, and
        not one of :data:`GLOSSED_ONCE`."""
        return len(self.zh) >= 2 and bool(CJK.search(self.zh)) and self.zh not in GLOSSED_ONCE

    def allowed_in(self, allowed: set[str]) -> bool:
        return any(f"term:{name}" in allowed for name in (self.zh, *self.en))


# The checker's own knowledge of the glossary's terms, kept here rather than on the page the reader sees.
# WORD_FORMS: English forms a term also matches, beyond the glossary's (``*`` any ending: saturated,
# transposing, LayerNorm's "layer normalisation"). GLOSSED_ONCE: terms of two characters or more whose
# English the glossary gives once for the book, not at each document's first use (a single-character term,
# such as 头, is never glossed: only its rendering is checked).
WORD_FORMS = {
    "饱和": ("saturat*",),
    "拼接": ("concatenat*",),
    "转置": ("transpos*",),
    "广播": ("broadcast*",),
    "微调": ("fine-tun*",),
    "旋转位置编码": ("rotary position*",),
    "层归一化": ("layer normali*",),
}
GLOSSED_ONCE = {"注意力", "权重", "张量", "全注意力", "回路", "分词器", "算子", "释义句", "头宽"}


@functools.cache
def glossary() -> tuple[Term, ...]:
    """The terms of ``zh/glossary.md``, with the forms of :data:`WORD_FORMS`."""
    terms = []
    for row in zh_book.glossary():
        zh = row[zh_book.GLOSSARY_ZH]
        forms = tuple(f.strip() for f in row[zh_book.GLOSSARY_EN].split(";") if f.strip())
        avoid = tuple(v.strip() for v in re.split(r"[、,，]", row[zh_book.GLOSSARY_AVOID]) if v.strip())
        terms.append(Term(zh, forms + WORD_FORMS.get(zh, ()), avoid))
    return tuple(terms)


def term_problems(english: str, chinese: str, allowed: set[str] = frozenset()) -> list[str]:
    """Where a translation departs from the glossary: a term's Chinese missing, a rejected variant used."""
    en, zh = parse(english), parse(chinese)
    en_text = " ".join([en.text, *en.heading_text])
    zh_text = " ".join([zh.text, *zh.heading_text])
    problems = []
    for term in glossary():
        if term.allowed_in(allowed):
            continue
        if (m := term.pattern.search(en_text)) and term.zh not in zh_text:
            problems.append(f"the English says {m.group(0)!r}: the glossary's term is {term.zh!r}")
        for (
            variant
        ) in term.avoid:  # (not inside a glossary term that contains it: 组查询注意力 in 分组查询注意力)
            longer = [t.zh for t in glossary() if variant in t.zh and t.zh != variant]
            if variant in re.sub("|".join(map(re.escape, longer)) or "(?!)", "", zh_text):
                problems.append(
                    f"{variant!r} is a variant the glossary rejects: use {term.zh!r} ({term.en[0]})"
                )
    return problems


def first_use_problems(units: list[zh_sync.Unit]) -> list[str]:
    """At the first use in a document of each glossed term, the English in parentheses right after it."""
    terms = {t.zh: t for t in glossary() if t.glossed}
    lexer = re.compile("|".join(re.escape(z) for z in sorted(terms, key=len, reverse=True)))
    seen, problems = set(), []
    for unit in units:
        if unit.key.endswith(zh_sync.ALT):  # an alt text is read out, not read: the prose carries the terms
            continue
        text = parse(unit.zh).text  # prose only: headings, titles, maths and code apart
        for m in lexer.finditer(text):
            term = terms[m.group(0)]
            if term.zh in seen:
                continue
            seen.add(term.zh)
            after = re.match(r"[\u3400-\u9fff]{0,4}[（(]([^）)]*)[）)]", text[m.end() :])
            if after and term.pattern.search(after.group(1)):  # (its English also glosses a term inside it:
                seen.update(  # 残差流（residual stream） glosses 残差)
                    t for t in terms if t in term.zh and terms[t].pattern.search(after.group(1))
                )
                continue
            if term.allowed_in(unit.allowed):
                continue
            problems.append(
                f"{unit.where}: the first {term.zh!r} needs its English after it, {term.zh}（{term.en[0]}）"
            )
    return problems


def document_problems(doc: str) -> list[str]:
    """Every check of one document's translated units, one message each (naming the unit)."""
    units = zh_sync.units(doc)
    problems = []
    for unit in units:
        if unit.state != "translated":
            continue
        for problem in keeps(unit.en, unit.zh, unit.allowed) + term_problems(unit.en, unit.zh, unit.allowed):
            problems.append(f"{unit.where}: {problem}")
    if all(u.state == "translated" for u in units):
        problems += first_use_problems(units)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("docs", nargs="*", help="documents as in _toc.yml (default: all)")
    args = parser.parse_args(argv)
    problems = [p for doc in args.docs or zh_sync.documents() for p in document_problems(doc)]
    print("\n".join(problems) or "no problem found in the translated units")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
