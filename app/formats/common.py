"""What every format shares: the parsed source, located problems, safe reading of untrusted
files (size, UTF-8, hardened XML) and the HTML that LMS formats keep text in."""

import base64
import binascii
import hashlib
import html
import math
import posixpath
import re
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree
from defusedxml import DefusedXmlException

from .. import images
from .. import text as quiz_text
from ..bank import MOST_PICTURES, BankError
from ..question_types import Choice, Question, Reference

MAX_BYTES = 50 * 1000 * 1000
"""No source, nor everything unpacked from a package, may be larger: 50 MB."""


class FormatError(BankError):
    """A source that cannot be imported; `errors` holds every problem, each located."""


@dataclass(frozen=True)
class Skip:
    """A question the bank cannot hold, where it is in the source, and why."""

    where: str
    why: str

    def __str__(self) -> str:
        return f"{self.where}: skipped, {self.why}"


@dataclass(frozen=True)
class Source:
    """What a file held: questions in the bank's shape (empty text where the source had none),
    each with its place in the file, and the questions skipped."""

    questions: tuple[Question, ...]
    places: tuple[str, ...]
    skipped: tuple[Skip, ...] = ()
    title: str | None = None
    description: str | None = None
    shuffle_choices: bool = False
    slug: str | None = None
    """The quiz's slug, when the file is a Quizwright export that carries it."""
    lost: tuple[str, ...] = ()
    """What of a Quizwright export's marks the file shows was lost on the way, each located."""
    title_from: str | None = None
    """Where the title was found, when the author may not expect it there (GIFT's category)."""
    pictures: dict[str, bytes] = field(default_factory=dict)
    """The pictures the questions show, by their address here (app/images.py)."""
    unshown: tuple[str, ...] = ()
    """What of the questions' media was left out, and why, each located."""


class Unsupported(Exception):
    """This question is not one the bank can hold; the message says why."""


PIXELS_PER_FILE = 200_000_000
"""The most pixels an import decodes to turn, clean or scale its pictures (a dozen photos of
4096 pixels a side, some seconds of work): a small file naming many large pictures must not
hold a server for minutes."""


@dataclass
class Shelf:
    """One file's pictures as they are kept, each prepared once however often it is shown
    (or why it is not kept), and the pixels the file may still have decoded."""

    prepared: dict[str, tuple[str, bytes] | str] = field(default_factory=dict)
    pixels_left: int = field(default_factory=lambda: PIXELS_PER_FILE)

    def prepare(self, data: bytes) -> tuple[str, bytes] | str:
        """A picture's address and bytes as kept, or why it is not kept."""
        digest = hashlib.sha256(data).digest()
        if digest not in self.prepared:
            self.prepared[digest] = self._prepare(data)
        return self.prepared[digest]

    def _prepare(self, data: bytes) -> tuple[str, bytes] | str:
        try:
            kind, width, height = images.read(data)
            if images.needs_rewriting(data):
                if width * height > self.pixels_left:
                    millions = PIXELS_PER_FILE // 1_000_000
                    return f"The file's pictures hold over {millions} million pixels in all: " \
                        "import the rest in a smaller file."  # fmt: skip
                self.pixels_left -= width * height
            return images.prepared(data)
        except images.NotAPicture as refused:
            return str(refused)


@dataclass
class Media:
    """What one question's text shows besides words, while it is read: the pictures the file
    carries, by their address here, with their bytes, and what is left out, said for the
    report. `find` gives the bytes of a file the text names (by its src), or None."""

    find: Callable[[str], bytes | None] = lambda src: None
    shelf: Shelf = field(default_factory=Shelf)
    pictures: dict[str, bytes] = field(default_factory=dict)
    unshown: list[str] = field(default_factory=list)
    shown: int = 0

    def picture(self, src: str, alt: str) -> str:
        """A picture of the text as Markdown at its address here, or else its words."""
        words = " ".join(alt.split())
        name = "written into the text" if src.startswith("data:") else f'"{_file_name(src)}"'
        instead = f'; its words "{words}" stand in its place' if words else ""
        if urlsplit(src).scheme in ("http", "https"):
            self.unshown.append(f"the picture {name} is on another site ({urlsplit(src).hostname}"
                                f"), which a page here never loads{instead}")  # fmt: skip
            return quiz_text.from_plain(words)
        data = _data_url(src) if src.startswith("data:") else self.find(src)
        if data is None:
            self.unshown.append(f"the picture {name} is not in the file{instead}")
            return quiz_text.from_plain(words)
        if self.shown >= MOST_PICTURES:
            self.unshown.append(f"the picture {name} is left out, as a question shows at most "
                                f"{MOST_PICTURES}{instead}")  # fmt: skip
            return quiz_text.from_plain(words)
        if not words:
            self.unshown.append(f"the picture {name} is left out: it has no words for what it "
                                "shows; upload it in the editor with them")  # fmt: skip
            return ""
        kept = self.shelf.prepare(data)
        if isinstance(kept, str):
            self.unshown.append(f"the picture {name} is left out{instead}. {kept}")
            return quiz_text.from_plain(words)
        address, data = kept
        self.pictures[address] = data
        self.shown += 1
        return images.markdown(address, words)


_MEDIA: ContextVar[Media | None] = ContextVar("media", default=None)
"""The question being read: its text's pictures go there (Found.read), not through every
parser's functions."""


def picture(src: str, alt: str) -> str:
    """A picture a format names outside HTML (QTI's matimage), as html's <img> is read."""
    media = _MEDIA.get()
    return media.picture(src, alt) if media is not None else quiz_text.from_plain(alt.strip())


def in_package(files: dict[str, bytes], within: str) -> Callable[[str], bytes | None]:
    """The file a package's text names: relative to the file naming it (`within`), to the
    package's root, or under $IMS-CC-FILEBASE$, Canvas's folder of a course's files."""
    folder = within.rsplit("/", 1)[0] + "/" if "/" in within else ""

    def find(src: str) -> bytes | None:
        path = unquote(src.split("?", 1)[0])
        if path.startswith(CANVAS_FILES):
            rest = path.removeprefix(CANVAS_FILES).lstrip("/")
            names = [f"web_resources/{rest}", rest]
        else:
            names = [posixpath.normpath(folder + path), path.lstrip("/")]
        return next((files[name] for name in names if name in files), None)

    return find


CANVAS_FILES = "$IMS-CC-FILEBASE$"


def packed(text: str, pictures: dict[str, bytes], folder: str) -> tuple[str, dict[str, bytes]]:
    """Written text (a package's file, a Moodle field) with each picture of `pictures` it shows
    named by `folder` and its file name instead of its address here, and the files to carry
    with it, by that name, in order."""
    files = {}
    for address in sorted({found[0] for found in images.ADDRESS.finditer(text)} & set(pictures)):
        name = address.rsplit("/", 1)[1]
        text = text.replace(f'src="{address}"', f'src="{folder}/{name}"')
        files[name] = pictures[address]
    return text, files


def _file_name(src: str) -> str:
    """The name a source gives a file, as a report may print it: no control characters, which
    a terminal would obey."""
    named = unquote(urlsplit(src).path.rsplit("/", 1)[-1]) or src[:60]
    return "".join(char for char in named if char.isprintable())[:120]


def _opens(href: str) -> bool:
    """Whether a link is one students can follow from a page here: to another site, by mail,
    or within the page."""
    return href.startswith("#") or href.split(":", 1)[0].lower() in quiz_text.SCHEMES


def _data_url(src: str) -> bytes | None:
    """The bytes a base64 data: address holds, or None."""
    head, _, body = src.partition(",")
    if not head.endswith(";base64"):
        return None
    try:
        return base64.b64decode(unquote(body), validate=False)
    except (binascii.Error, ValueError):
        return None


@dataclass
class Found:
    """A parser's tally: the questions read so far with their places, those skipped as
    Unsupported and every located error, so that one file reports all of its problems; the
    pictures its questions show and the media they leave out."""

    questions: list[Question] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    pictures: dict[str, bytes] = field(default_factory=dict)
    unshown: list[str] = field(default_factory=list)
    shelf: Shelf = field(default_factory=Shelf)

    def read(
        self,
        where: str,
        parse: Callable[..., Question],
        *details,
        find: Callable[[str], bytes | None] = lambda src: None,
    ) -> bool:
        """Read one question with parse(where, *details), keeping it, its skip or its errors;
        whether it was kept. `find` gives the files its text names."""
        media = Media(find, self.shelf)
        token = _MEDIA.set(media)
        try:
            self.questions.append(parse(where, *details))
        except Unsupported as why:
            self.skipped.append(Skip(where, str(why)))
            return False
        except FormatError as error:
            self.errors += error.errors
            return False
        finally:
            _MEDIA.reset(token)
        self.places.append(where)
        self.pictures.update(media.pictures)
        self.unshown += [f"{where}: {note}" for note in media.unshown]
        return True

    def source(self, **details) -> Source:
        """What the file held, unless any of it was malformed."""
        if self.errors:
            raise FormatError(self.errors)
        return Source(tuple(self.questions), tuple(self.places), tuple(self.skipped),
                      pictures=self.pictures, unshown=tuple(self.unshown), **details)  # fmt: skip


MARK = "quizwright"
"""What Quizwright's exports write before the slug and the evidence keys they carry."""
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A bank id, as questions.schema.json's id: what an evidence key must look like."""


def true_first(where: str, choices: list[Choice]) -> list[Choice]:
    """A true/false question's two choices, True first and named as the bank names them,
    whatever order and case the file gives; FormatError unless they are true and false once
    each."""
    named = {choice.text.strip().lower(): choice for choice in choices}
    if sorted(named) != ["false", "true"] or len(choices) != 2:
        raise FormatError([f"{where}: a true/false question answers True and False once each"])
    return [replace(named["true"], id="true", text="True"),
            replace(named["false"], id="false", text="False")]  # fmt: skip


def carried(text: str | None, kind: str) -> str | None:
    """The slug or evidence key in a mark an export wrote ("quizwright-slug: x"), or None."""
    prefix = f"{MARK}-{kind}:"
    if not text or not text.strip().startswith(prefix):
        return None
    return fits(kind, text.strip().removeprefix(prefix).strip())


def fits(kind: str, value: str | None) -> str | None:
    """A carried slug or evidence key if it is one the bank accepts, else None."""
    return value if value and (SLUG if kind == "slug" else NAME).fullmatch(value) else None


FEWEST_POINTS, MOST_POINTS = 0.01, 1000
"""What a question may be worth (questions.schema.json says the same)."""


def checked_points(points: float) -> float:
    """A question's points as a file gives them, if the bank can hold them; else Unsupported."""
    if not math.isfinite(points) or not FEWEST_POINTS <= points <= MOST_POINTS:
        raise Unsupported(
            f"it is worth {points:g} points; a question is worth {FEWEST_POINTS:g} to "
            f"{MOST_POINTS:g}"
        )
    points = round(points, 7)
    return int(points) if points == int(points) else points


def exported_slug(identifier: str | None) -> str | None:
    """The slug in an identifier a Quizwright export gave its package ("quizwright-SLUG")."""
    if not identifier or not identifier.startswith(f"{MARK}-"):
        return None
    return fits("slug", identifier.removeprefix(f"{MARK}-"))


def marked(kind: str, value: str) -> str:
    """The mark carried() reads back."""
    return f"{MARK}-{kind}: {value}"


def read_limited(path: Path, limit: int = MAX_BYTES) -> bytes:
    """A file's bytes, refusing one larger than the limit without reading it all."""
    try:
        with open(path, "rb") as file:
            data = file.read(limit + 1)
    except OSError as error:
        raise FormatError([f"{path}: cannot be read: {error.strerror}"]) from None
    if len(data) > limit:
        raise FormatError([f"{path}: larger than {limit // 1_000_000} MB; nothing was read"])
    return data


def check_size(data: bytes, source: str, limit: int = MAX_BYTES) -> None:
    """Refuse data over the limit (a caller that did not come through read_limited)."""
    if len(data) > limit:
        size = f"{limit // 1_000_000} MB" if limit % 1_000_000 == 0 else f"{limit:,} bytes"
        raise FormatError([f"{source}: larger than {size}"])


def decode(data: bytes, source: str) -> str:
    """UTF-8 text (a byte-order mark is fine), or an error naming the line of the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise FormatError(
            [f"{source}:{line}:{column}: not UTF-8 text (byte 0x{data[error.start]:02x}); "
             "save the file as UTF-8 and try again"]
        ) from None  # fmt: skip


DECLARED = re.compile(rb"""^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


def parse_xml(data: bytes, source: str) -> Element:
    """Parse untrusted XML with no DTD, entities or network; a located error otherwise."""
    check_size(data, source)
    decode(data, source)
    declared = DECLARED.match(data.removeprefix(b"\xef\xbb\xbf"))
    if declared and declared.group(1).lower().replace(b"_", b"-") not in (b"utf-8", b"utf8"):
        raise FormatError(
            [f"{source}:1: declares the encoding {declared.group(1).decode()}; save it as UTF-8"]
        )
    try:
        root = defusedxml.ElementTree.fromstring(
            data, forbid_dtd=True, forbid_entities=True, forbid_external=True
        )
    except ParseError as error:
        line, column = error.position
        message = str(error).split(":")[0]
        where = f"{source}:{line}:{column + 1}"
        raise FormatError([f"{where}: not well-formed XML: {message}"]) from None
    except DefusedXmlException as error:
        raise FormatError(
            [f"{source}: refused: {type(error).__name__} ({error}); a quiz file needs no DTD "
             "or entities"]
        ) from None  # fmt: skip
    _check_depth(root, source)
    return root


MAX_DEPTH = 64
"""How deeply a quiz file's elements may nest: Moodle's and QTI's go about 12 deep. The readers
look into an element's whole subtree for each of some elements, which costs the size times the
depth: bounded, that stays linear (16,000 nested <not> took 10.8 s)."""


def _check_depth(root: Element, source: str) -> None:
    stack = [(root, 1)]
    while stack:
        element, depth = stack.pop()
        if depth > MAX_DEPTH:
            tag = local(element.tag)
            raise FormatError(
                [f"{source}: <{tag}> nests {depth} deep; no quiz file nests over {MAX_DEPTH}"]
            )
        stack.extend((child, depth + 1) for child in element)


def local(tag: str) -> str:
    """An element's name without its namespace."""
    return tag.rsplit("}", 1)[-1]


class _Text(HTMLParser):
    """The words of an LMS's HTML, paragraphs and line breaks kept, and the media it shows
    that no page here can: players, frames, drawings and links to the file's own files."""

    BLOCKS = {"p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "tr"}
    UNSHOWN = {"video": "a video", "audio": "a sound", "object": "an embedded object",
               "embed": "an embedded object", "iframe": "an embedded page",
               "svg": "a drawing (SVG)", "math": "a formula (MathML)"}  # fmt: skip

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.unshown: list[str] = []
        self._hidden = 0  # inside <script> or <style>, whose text no reader sees

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._hidden += 1
        elif tag == "br":
            self.parts.append("\n")
        elif tag in self.BLOCKS:
            self.parts.append("\n\n")
        elif tag in self.UNSHOWN:
            named = dict(attrs).get("src") or dict(attrs).get("data")
            called = f' ("{_file_name(named)}")' if named else ""
            self.unshown.append(f"{self.UNSHOWN[tag]}{called} is left out: Quizwright shows "
                                "pictures, not sound, video or embedded pages")  # fmt: skip
        elif tag == "a" and not _opens(href := dict(attrs).get("href") or "#"):
            kind = LINKED_KINDS.get(_file_name(href).rsplit(".", 1)[-1].lower(), "a file")
            self.unshown.append(f'the link to "{_file_name(href)}" ({kind}) is left out, its '
                                "words kept: a page here links only to other sites")  # fmt: skip

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._hidden = max(0, self._hidden - 1)
        elif tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if not self._hidden:
            self.parts.append(re.sub(r"\s+", " ", data))

    @property
    def text(self) -> str:
        lines = [re.sub(" {2,}", " ", line).strip() for line in "".join(self.parts).split("\n")]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


LINKED_KINDS = {
    **dict.fromkeys(("mp3", "wav", "ogg", "oga", "m4a", "aac", "flac"), "a sound"),
    **dict.fromkeys(("mp4", "webm", "mov", "avi", "mkv", "ogv"), "a video"),
    **dict.fromkeys(("pdf", "doc", "docx", "odt", "ppt", "pptx", "xls", "xlsx"), "a document"),
}
"""What a linked file of the source is, by its ending, as the report says it."""
FORMATTED = re.compile(r"<(?:a|b|strong|i|em|code|pre|ul|ol|li|h[1-6]|tt|kbd|samp|img)[\s>/]", re.I)
"""An element the Markdown subset keeps (app/text.py); HTML with none is only words."""


def _tamed(markup: str) -> str:
    """The markup with every "<" that opens no whole tag or comment written as "&lt;", in one
    pass: Python's HTMLParser rescans an unclosed tag or comment for each that follows, which
    made a crafted file's import take minutes (quadratic); what it is given now, it reads once."""
    out, at, size = [], 0, len(markup)
    close = -1  # the first ">" at or after the current "<"; size when there is none
    start = markup.find("<")
    while start >= 0:
        out.append(markup[at:start])
        if markup.startswith("<!--", start):
            end = markup.find("-->", start + 4)
            if end < 0:  # never closed: the rest is text
                out.append(markup[start:].replace("<", "&lt;"))
                return "".join(out)
            at = end + 3
            out.append(markup[start:at])
        else:
            if close < start:
                close = markup.find(">", start)
                close = size if close < 0 else close
            following = markup.find("<", start + 1, close)
            if close == size or following >= 0:
                out.append("&lt;")
                at = start + 1
            else:
                at = close + 1
                out.append(markup[start:at])
        start = markup.find("<", at)
    out.append(markup[at:])
    return "".join(out)


def from_html(markup: str) -> str:
    """The text a student would read in a piece of HTML, as Markdown: its pictures at their
    address here, when the question being read (Found.read) carries them, else their words."""
    tamed = _tamed(markup)
    parser = _Text()
    parser.feed(tamed)
    parser.close()
    media = _MEDIA.get()
    if media is not None:
        media.unshown += parser.unshown
    # Most LMS HTML is paragraphs of words: read in one pass, as the converter takes five times
    # as long.
    if not FORMATTED.search(tamed):
        return quiz_text.from_plain(parser.text)
    try:
        if media is None:
            return quiz_text.from_html(tamed)
        return quiz_text.from_html(tamed, media.picture)
    except RecursionError:  # nested deeper than the converter follows (unclosed <p>, <b>...)
        return quiz_text.from_plain(parser.text)


def to_html(source: str) -> str:
    """Quiz text as the cleaned HTML that LMS formats keep text in."""
    return str(quiz_text.rich(source))


SOURCES = "Sources:"
LINKED = re.compile(r"<(https://[^<>\s]+)>")  # [^<>]: one scan per "<", linear on any text
MARKDOWN_LINK = re.compile(
    r"\[((?:\\.|[^\\\[\]\n])*)\]\((https://[^\s()<>]*(?:\([^\s()<>]*\)[^\s()<>]*)*)\)"
)
"""A Markdown link to an https address: "[Chen et al. (2016)](https://...)"."""
LISTED = re.compile(f"{LINKED.pattern}|{MARKDOWN_LINK.pattern}")


def _title(words: str) -> str:
    """Words of Markdown as a source's title: as a reader sees them, without the marks around."""
    return quiz_text.plain(words).strip(" <>;")


def _sources_line(text: str) -> tuple[str, tuple[Reference, ...]] | None:
    """The text before a last "Sources:" line and the references it lists, if it has one."""
    head, _, last = text.rstrip().rpartition("\n")
    if not last.startswith(SOURCES):
        if not text.lstrip().startswith(SOURCES) or head:
            return None
        head, last = "", text.strip()
    # Each "<https://...>" with the text since the previous one as its title, or a Markdown
    # link with its own: one pass (a lazy pattern tried from every position was quadratic in
    # a long line with no link).
    listed, entries, at = last.removeprefix(SOURCES), [], 0
    for found in LISTED.finditer(listed):
        url = found[1] or found[3]
        title = _title(found[2] if found[3] else listed[at : found.start()])
        entries.append(Reference(title or url, url))
        at = found.end()
    if not entries:
        return None
    return head.strip(), tuple(entries)


PLAIN_URL = re.compile(r"https://[^\s<>\"'()\[\]]+(?:\([^\s<>\"'()]*\)[^\s<>\"'()\[\]]*)*")
URL_TAIL = re.compile(r"(https://\S+?)>?[.;,]?\s*")
LINK_END = re.compile(r"[.;,]?\s*")
GENERIC_LABELS = {
    "see",
    "source",
    "sources",
    "reference",
    "references",
    "link",
    "read more",
    "more",
}
"""Labels that introduce a link without naming it: the link's own words title it instead."""


def _trimmed(url: str) -> str:
    """A URL found in prose without the punctuation of the sentence around it."""
    url = url.rstrip(".,;:!?")
    # Counted once, not once a parenthesis: a URL of many ")" was quadratic.
    extra = url.count(")") - url.count("(")
    while extra > 0 and url.endswith(")"):
        url, extra = url[:-1].rstrip(".,;:!?"), extra - 1
    return url


def _link_title(url: str) -> str:
    """A link's host and path, as a source's title when the text gives it none."""
    parts = urlsplit(url)
    return (parts.netloc + parts.path).rstrip("/") or url


def _named(url: str, *words: str | None) -> str:
    """A source's title: the first of a label's or a link's words that names it, else its
    host and path."""
    for title in (_title(each) for each in words if each):
        if title and title != url and title.lower() not in GENERIC_LABELS:
            return title
    return _link_title(url)


def _label(head: str) -> str | None | bool:
    """What precedes a link that ends its line: None when nothing does, the label when a
    separator ends it ("Chen et al. (2016):", "Chen -"), else False (the link is in a
    sentence). Read from its end, with no pattern, so a long line costs one pass."""
    head = head.strip()
    if not head:
        return None
    if head.endswith(":") or head[-1] in "-–—" and head[-2:-1].isspace():
        label = head[:-1].rstrip()
    else:
        return False
    return label or False


def _link_line(line: str) -> tuple[str | None, str, str | None] | None:
    """A line that is only a link, perhaps after a label: its label, address and words (a
    Markdown link's), or None."""
    links = list(MARKDOWN_LINK.finditer(line))
    if links and LINK_END.fullmatch(line, links[-1].end()):
        label = _label(line[: links[-1].start()])
        return None if label is False else (label, links[-1][2], links[-1][1])
    words = line.split()
    at = line.find("https://", line.rstrip().rfind(words[-1])) if words else -1
    if at < 0 or not (url := URL_TAIL.fullmatch(line, at)):
        return None
    label = _label(line[:at].removesuffix("<"))
    return None if label is False else (label, _trimmed(url[1]), None)


def plain_links(text: str) -> tuple[str, tuple[Reference, ...]]:
    """Feedback text and a reference for each https link in it. A line that is only a link
    (after a label, which titles it) becomes a source and leaves the text; a link in a sentence
    stays, so the sentence still reads, titled by its words (a bare address by its host and
    path)."""
    kept, references, seen = [], [], set()

    def cite(url: str, *words: str | None) -> None:
        if url != "https://" and url not in seen:
            seen.add(url)
            references.append(Reference(_named(url, *words), url))

    for line in text.split("\n"):
        if whole := _link_line(line):
            label, url, words = whole
            cite(url, label, words)
            continue
        kept.append(line)
        for found in MARKDOWN_LINK.finditer(line):
            cite(found[2], found[1])
        for found in PLAIN_URL.findall(MARKDOWN_LINK.sub("", line)):
            cite(_trimmed(found))
    explanation = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return explanation, tuple(references)


def split_sources(text: str) -> tuple[str, tuple[Reference, ...]]:
    """General feedback (Markdown) and its references: those its last "Sources:" line lists,
    else its https links (plain_links)."""
    listed = _sources_line(text)
    return listed if listed is not None else plain_links(text.strip())


def html_sources(markup: str) -> tuple[str, tuple[Reference, ...]]:
    """HTML general feedback as explanation (Markdown) and references (its https links, as
    anchors or as plain text)."""
    return split_sources(from_html(markup))


def sources_html(references: tuple[Reference, ...]) -> str:
    """The references as an HTML paragraph of links that split_sources reads back."""
    links = "; ".join(
        f'{html.escape(r.title, quote=False)} &lt;<a href="{html.escape(r.url)}">'
        f"{html.escape(r.url, quote=False)}</a>&gt;"
        for r in references
    )
    return f"<p>{SOURCES} {links}</p>" if links else ""  # a quiz published with gaps has none
