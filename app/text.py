"""Quiz text: Markdown in a safe subset, shown as cleaned HTML, said as plain text, and made from
the HTML and plain text that imported files hold.

A choice is a phrase (it stands in a label): emphasis, code, links and line breaks. A prompt's
first paragraph is one too (it stands in a heading or a legend), and what follows it, like an
explanation, may also hold paragraphs, lists and code blocks. Markdown is read
by markdown-it with its raw HTML off (so `List<String>` stays text) and headings, rules and
quotes left as typed; what it makes is cleaned again by nh3 (Ammonia), which keeps only those
elements, only http, https and mailto links, and gives every link rel="noreferrer". A picture
is shown only from this app's own store (app/images.py), with its size, so that its room is
kept while it loads; any other image source is dropped.
"""

import functools
import html
import itertools
import re

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

from .images import ADDRESS

_MARKDOWN = MarkdownIt("commonmark", {"breaks": True, "html": False}).disable(
    ["heading", "lheading", "hr", "blockquote", "reference", "html_block", "html_inline"]
)
PHRASE_TAGS = {"em", "strong", "code", "a", "br", "img"}
BLOCK_TAGS = PHRASE_TAGS | {"p", "ul", "ol", "li", "pre"}
SCHEMES = {"http", "https", "mailto"}


def _absolute_only(tag: str, attribute: str, value: str) -> str | None:
    """A link to another site only (an http(s) one with "//": "https:/x" would be an address
    of this site); a picture from this app's store only."""
    if tag == "img" and attribute == "src":
        return value if ADDRESS.fullmatch(value) else None
    if attribute == "href" and ":" not in value:
        return None  # an address of this site is not a source
    if attribute == "href" and value.split(":", 1)[0].lower() in ("http", "https"):
        return value if value.split(":", 1)[1].startswith("//") else None
    return value


_IMG = re.compile(r"<img( [^<>]*)>")
_ATTRIBUTE = re.compile(r' (src|alt)="([^"]*)"')


def _sized(markup: str) -> str:
    """Each picture with its size, so the page keeps its room while it loads, and loaded only
    when it is about to be seen; one whose source was dropped leaves its words."""

    def picture(found: re.Match) -> str:
        said = dict(_ATTRIBUTE.findall(found[1]))
        if not (address := ADDRESS.fullmatch(said.get("src", ""))):
            return said.get("alt", "")
        return (
            f'<img src="{said["src"]}" alt="{said.get("alt", "")}" width="{address["width"]}" '
            f'height="{address["height"]}" loading="lazy">'
        )

    return _IMG.sub(picture, markup)


_TAG = re.compile(r'(<[^<>"]*(?:"[^"]*"[^<>"]*)*>)')
"""A tag of nh3's output, whose attribute values are always in double quotes."""


def _clean(markup: str, tags: set[str]) -> str:
    cleaned = nh3.clean(
        markup,
        tags=tags,
        clean_content_tags={"script", "style"},
        # "*": none on every element, as nh3 otherwise keeps title and lang everywhere.
        attributes={"a": {"href"}, "ol": {"start"}, "img": {"src", "alt"}, "*": set()},
        # An address of this site written without "//" ("https:/x") is refused with the rest,
        # and a relative one too but a picture's: _absolute_only decides, not nh3.
        attribute_filter=_absolute_only,
        url_schemes=SCHEMES,
        url_relative="pass_through",
        link_rel="noopener noreferrer",
    ).strip()
    cleaned = _sized(cleaned) if "<img" in cleaned else cleaned
    # Quotes in the text escaped as Jinja escapes them, so that quiz text reads the same in
    # a page's HTML wherever it stands.
    parts = _TAG.split(cleaned)
    return "".join(
        part if odd else part.replace("'", "&#39;").replace('"', "&#34;")
        for odd, part in zip(itertools.cycle((False, True)), parts)
    )


def _cached(render):
    """A rendering kept for the texts a worker serves again and again: thousands of short ones,
    and a few long ones, whose HTML can be ten times their 20,000 characters."""
    short, lengthy = functools.lru_cache(4096)(render), functools.lru_cache(32)(render)

    @functools.wraps(render)
    def cached(source: str):
        return (short if len(source) < 2000 else lengthy)(source)

    return cached


@_cached
def rich(source: str) -> Markup:
    """Explanation text as HTML: paragraphs, lists, code blocks, emphasis, code and links."""
    return Markup(_clean(_MARKDOWN.render(source), BLOCK_TAGS))


@_cached
def phrase(source: str) -> Markup:
    """A choice, or a prompt's first paragraph, as HTML to stand in a label, heading or legend."""
    return Markup(_clean(_MARKDOWN.renderInline(source.strip()), PHRASE_TAGS))


@_cached
def prompt_parts(source: str) -> tuple[Markup, Markup]:
    """A prompt as its first paragraph, to stand in a heading or a legend, and the blocks after
    it (the code to read, a list), to show beneath; a prompt that opens with a block is one
    phrase."""
    tokens = _MARKDOWN.parse(source)
    if len(tokens) > 3 and tokens[0].type == "paragraph_open":
        lines = source.split("\n")
        end = tokens[0].map[1]
        return phrase("\n".join(lines[:end])), rich("\n".join(lines[end:]))
    return phrase(source), Markup("")


def explained(source: str) -> Markup:
    """A choice's explanation as HTML of class "explanation": its one paragraph, or its blocks
    in a div (a review shows dozens, and most are one paragraph)."""
    shown = rich(source)
    if shown.startswith("<p>") and shown.count("<p>") == 1 and shown.endswith("</p>"):
        return Markup('<p class="explanation">') + shown[3:]
    return Markup('<div class="explanation">') + shown + Markup("</div>")


def prompt_html(source: str) -> str:
    """A prompt as the HTML of LMS formats, in the parts the pages show it in."""
    lead, rest = prompt_parts(source)
    return f"<p>{lead}</p>{rest}"


@_cached
def plain(source: str) -> str:
    """The text a reader sees, on one line: for CSVs, titles, lists and quotes."""
    # A picture is said by its words, as a screen reader says it.
    inline = _IMG.sub(lambda m: dict(_ATTRIBUTE.findall(m[1])).get("alt", ""),
                      _MARKDOWN.renderInline(source))  # fmt: skip
    shown = nh3.clean(inline, tags=set(), clean_content_tags={"script"})
    return " ".join(html.unescape(shown).split())


_MARKS = re.compile(r"[\\`*_\[\]<!|~&]")
_LIST_MARK = re.compile(r"^([ \t]*\d{0,9})([-+.)])(?=\s|$)", re.M)
"""A line that would start a list: "- ", "+ ", "1. ", "2) ". Spaces and tabs only before it:
`\\s` would run across blank lines, and rescan the text from each (quadratic)."""
_MARK_OUTSIDE_LINKS = re.compile(r"(<https?://[^<>\s]+>|https?://[^\s<>]+)|" + _MARKS.pattern)


def _reads_as_typed(text: str) -> bool:
    """Whether Markdown shows this text exactly as it is written: its paragraphs and lines,
    nothing more."""
    if not _MARKS.search(text) and not _LIST_MARK.search(text):
        return True  # most text, answered without reading it as Markdown
    paragraphs = (part.strip() for part in re.split(r"\n\s*\n", text))
    expected = "".join(
        "<p>" + "<br />\n".join(html.escape(line.strip(), quote=False) for line in part.split("\n"))
        + "</p>\n"
        for part in paragraphs
        if part
    )  # fmt: skip
    return _MARKDOWN.render(text) == expected


def from_plain(text: str) -> str:
    """Plain text as Markdown that shows it as written: unchanged when Markdown reads it so,
    else with its marks escaped."""
    if _reads_as_typed(text):
        return text
    # A link stays as written: "<https://...>" is one in Markdown too, and a source is read
    # from it (app/formats/common.py).
    escaped = _MARK_OUTSIDE_LINKS.sub(lambda found: found[1] or "\\" + found[0], text)
    return _LIST_MARK.sub(lambda found: found[1] + "\\" + found[2], escaped)


@functools.cache
def _to_markdown() -> type:
    """The converter from HTML, made at the first import of a file: markdownify and
    BeautifulSoup are 4 MB that a worker serving students never needs."""
    from markdownify import MarkdownConverter

    class ToMarkdown(MarkdownConverter):
        """HTML to the Markdown this module reads: what the subset cannot hold becomes its text."""

        def escape(self, text, parent_tags):
            # Escaped only where Markdown would misread it, so the editor shows it as written.
            return text if "_noformat" in parent_tags else from_plain(text)

        def convert_a(self, el, text, parent_tags):
            # A link the page would not keep (javascript:, data:, this app's own paths) is its text;
            # so is one around a picture (a logo linking home), which Markdown here cannot nest.
            if el.get("href", "").split(":", 1)[0].lower() not in SCHEMES or "](/images/" in text:
                return text
            # What would end the address or the words early is escaped, so the link stays whole.
            el["href"] = re.sub(r"[\s()<>]", lambda found: f"%{ord(found[0]):02X}", el["href"])
            return super().convert_a(el, re.sub(r"(?<!\\)([\[\]])", r"\\\1", text), parent_tags)

        def convert_hN(self, n, el, text, parent_tags):
            # Headings are not in the subset: a heading in a prompt reads as strong text.
            return f"\n\n**{text.strip()}**\n\n" if text.strip() else ""

        def convert_img(self, el, text, parent_tags):
            # The importer decides: the picture at its address here, or its words (app/formats).
            return self.options["picture"](el.get("src", ""), el.get("alt", ""))

    return ToMarkdown


def from_html(markup: str, picture=lambda src, alt: from_plain(" ".join(alt.split()))) -> str:
    """An imported piece of HTML as Markdown in the subset, its line breaks as new lines; each
    picture as `picture(src, alt)` writes it, by default its words."""
    converted = _to_markdown()(
        autolinks=True, bullets="-", escape_misc=False, picture=picture
    ).convert(markup)
    # A no-break space reads as a space; Markdown would keep it as a mark of its own.
    lines = [line.rstrip() for line in converted.replace("\xa0", " ").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
