"""This release's page templates, read into memory as the package is imported, before any code
that renders them: a worker that boots while `git pull` replaces the files holds pages no newer
than its code (docs/deploy.md §7), and never reads the folder again."""

import re
from pathlib import Path

from jinja2 import DictLoader

FOLDER = Path(__file__).parent / "templates"
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
