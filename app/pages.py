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


class Sent(NamedTuple):
    """A stylesheet's bytes in one encoding, and the tag a browser revalidates them by."""

    body: bytes
    tag: str


def _sent(body: bytes, suffix: str = "") -> Sent:
    # Each encoding tagged by its own bytes: a cache must not answer one with the other, and
    # another server's zlib may compress the same sheet differently.
    return Sent(body, hashlib.sha256(body).hexdigest()[:32] + suffix)


def _minified(path: Path) -> dict[str, Sent]:
    """A stylesheet without its comments and spacing, as it is and gzipped."""
    sheet = rcssmin.cssmin(path.read_text(encoding="utf-8")).encode()
    zipped = gzip.compress(sheet, compresslevel=9, mtime=0)
    return {"identity": _sent(sheet), "gzip": _sent(zipped, "-gzip")}


# The stylesheets' comments and spacing are for their readers: a fifth of the bytes that every
# page's first visit downloads (issue 32: 50 KB a page, HTML and what it loads). Gzipped, a
# quarter of that again. Pages themselves are sent as they are: one that holds a form's token
# and text a student typed, compressed, would let a watcher of its size guess the token (BREACH).
STYLESHEETS = {path.name: _minified(path) for path in sorted(STATIC.glob("*.css"))}


def static_file(filename: str):
    """A stylesheet as this worker read and minified it; any other file from the folder."""
    if filename not in STYLESHEETS:
        return current_app.send_static_file(filename)
    encoding = "gzip" if request.accept_encodings["gzip"] > 0 else "identity"  # gzip;q=0 refuses
    sent = STYLESHEETS[filename][encoding]
    response = send_file(
        io.BytesIO(sent.body),
        mimetype="text/css",
        etag=sent.tag,
        max_age=current_app.get_send_file_max_age(filename),
        conditional=True,
    )
    if encoding == "gzip":
        response.content_encoding = "gzip"
    response.vary.add("Accept-Encoding")
    return response
