"""This release's page templates and stylesheets, read into memory as the package is imported,
before any code that renders them: a worker that boots while `git pull` replaces the files holds
pages no newer than its code (docs/deploy.md §7), and never reads the folders again."""

import hashlib
import io
import re
from pathlib import Path

import rcssmin
from flask import current_app, send_file
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


def _minified(path: Path) -> tuple[bytes, str]:
    """A stylesheet without its comments and spacing, and the tag a browser revalidates it by."""
    sheet = rcssmin.cssmin(path.read_text(encoding="utf-8")).encode()
    return sheet, hashlib.sha256(sheet).hexdigest()[:32]


# The stylesheets' comments and spacing are for their readers: a fifth of the bytes that every
# page's first visit downloads (issue 32: 50 KB a page, HTML and what it loads).
STYLESHEETS = {path.name: _minified(path) for path in sorted(STATIC.glob("*.css"))}


def static_file(filename: str):
    """A stylesheet as this worker read and minified it; any other file from the folder."""
    if filename not in STYLESHEETS:
        return current_app.send_static_file(filename)
    sheet, tag = STYLESHEETS[filename]
    return send_file(
        io.BytesIO(sheet),
        mimetype="text/css",
        etag=tag,
        max_age=current_app.get_send_file_max_age(filename),
        conditional=True,
    )
