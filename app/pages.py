"""This release's page templates and stylesheets, read into memory as the package is imported,
before any code that renders them: a worker that boots while `git pull` replaces the files holds
pages no newer than its code (docs/deploy.md §7), and never reads the folders again."""

import gzip
import hashlib
import io
import re
from pathlib import Path
from typing import NamedTuple

import rcssmin
from flask import current_app, request, send_file
from jinja2 import DictLoader

FOLDER = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
# The pages' indentation is for their readers, not the browser: it was a twentieth of the bytes
# a phone downloads. Line breaks stay, so words on two lines never run together (Jinja's
# trim_blocks joined them); no page writes a <pre> or a <textarea> over lines, where
# indentation would count.
INDENTATION = re.compile(r"^[ \t]+", re.MULTILINE)
SOURCES = {
    path.relative_to(FOLDER).as_posix(): INDENTATION.sub("", path.read_text(encoding="utf-8"))
    for path in sorted(FOLDER.rglob("*.html"))
}


def loader() -> DictLoader:
    """The pages as they were when this worker imported its code."""
    return DictLoader(SOURCES)


class Stylesheet(NamedTuple):
    """A stylesheet as sent, minified, and gzipped for the browsers that take it; each with the
    tag a browser revalidates it by."""

    sheet: bytes
    tag: str
    zipped: bytes
    zipped_tag: str


def _tag(sent: bytes) -> str:
    return hashlib.sha256(sent).hexdigest()[:32]


def _minified(path: Path) -> Stylesheet:
    """A stylesheet without its comments and spacing."""
    sheet = rcssmin.cssmin(path.read_text(encoding="utf-8")).encode()
    # Tagged by its own bytes: another server's zlib may compress the same sheet differently,
    # and a resumed download must not join the two.
    zipped = gzip.compress(sheet, compresslevel=9, mtime=0)
    return Stylesheet(sheet, _tag(sheet), zipped, _tag(zipped) + "-gzip")


# The stylesheets' comments and spacing are for their readers: a fifth of the bytes that every
# page's first visit downloads (issue 32: 50 KB a page, HTML and what it loads). Gzipped, a
# quarter of that again. Pages themselves are sent as they are: one that holds a form's token
# and text a student typed, compressed, would let a watcher of its size guess the token (BREACH).
STYLESHEETS = {path.name: _minified(path) for path in sorted(STATIC.glob("*.css"))}


def static_file(filename: str):
    """A stylesheet as this worker read and minified it; any other file from the folder."""
    if filename not in STYLESHEETS:
        return current_app.send_static_file(filename)
    stylesheet = STYLESHEETS[filename]
    zipped = request.accept_encodings["gzip"] > 0  # "gzip;q=0" refuses it
    response = send_file(
        io.BytesIO(stylesheet.zipped if zipped else stylesheet.sheet),
        mimetype="text/css",
        # Each encoding its own tag: a cache must not answer one with the other.
        etag=stylesheet.zipped_tag if zipped else stylesheet.tag,
        max_age=current_app.get_send_file_max_age(filename),
        conditional=True,
    )
    if zipped:
        response.content_encoding = "gzip"
    response.vary.add("Accept-Encoding")
    return response
