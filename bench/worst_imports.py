"""Files crafted to make each importer work hardest for their size, each made at a chosen size,
beside an ordinary file of the same format: what `make bench` measures (bench/importers.py) and
what tests/test_formats_attacks.py doubles, to show that parsing time grows linearly."""

import io
import zipfile
from collections.abc import Callable

from app.bank import load_bank
from app.config import PROJECT_ROOT
from app.formats import export_quiz

SEED = load_bank(PROJECT_ROOT / "questions.json").quizzes["gradient-checkpointing"]
QTI_ITEMS = "quizwright-gradient-checkpointing/quizwright-gradient-checkpointing.xml"


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def _moodle_xml_of(size: int) -> bytes:
    """The seed's Moodle XML with its questions repeated to about `size` bytes."""
    whole = export_quiz(SEED, "moodle-xml").decode()
    head, _, rest = whole.partition("<question")
    body, _, tail = ("<question" + rest).rpartition("</quiz>")
    return (head + body * max(1, size // len(body)) + "</quiz>" + tail).encode()


def _qti_with(size: int, inside: Callable[[int], str]) -> bytes:
    """The seed's QTI 1.2 package, its first condition holding `inside` (about `size` bytes)."""
    original = zipfile.ZipFile(io.BytesIO(export_quiz(SEED, "qti")))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        for name in original.namelist():
            data = original.read(name)
            if name == QTI_ITEMS:
                data = data.replace(b"<other />", inside(size).encode(), 1)
            package.writestr(name, data)
    return buffer.getvalue()


CASES: dict[str, tuple[str, Callable[[int], bytes]]] = {
    # name: (format, a file of about `size` bytes)
    "GIFT, ordinary questions": ("gift", lambda size: _repeat("Q {=a ~b ~c}\n\n", size).encode()),
    "GIFT, a Sources: line with no link": (
        "gift", lambda size: f"Q {{=a ~b ####Sources: {_repeat('a <', size)}}}\n".encode()),
    "GIFT, a Sources: line of unclosed links": (
        "gift", lambda size: ("Q {=a ~b ####Sources\\: " + _repeat("<https\\://a", size)
                              + "}\n").encode()),
    "GIFT, unclosed HTML tags": (
        "gift", lambda size: f"[html]Q {{=a ~b ####{_repeat('<a ', size)}}}\n".encode()),
    "GIFT, unclosed HTML comments": (
        "gift", lambda size: f"[html]Q {{=a ~b ####{_repeat('<!--', size)}}}\n".encode()),
    "GIFT, a link of closing parentheses": (
        "gift", lambda size: f"Q {{=a ~b #https://x/{_repeat(')', size)}}}\n".encode()),
    "GIFT, one question of many answers": (
        "gift", lambda size: f"Q {{={_repeat('~a ', size)}}}\n".encode()),
    "GIFT, blank lines in plain text": (
        "gift", lambda size: ("Q a" + "\\n" * (size // 2) + "b {=a ~b}\n").encode()),
    "GIFT, HTML of formatting": (
        "gift",
        lambda size: f"[html]Q {{=a ~b ####{_repeat('<p>a <b>b</b> c</p>', size)}}}\n".encode()),
    "GIFT, HTML nested past any converter": (
        "gift", lambda size: f"[html]Q {_repeat('<b>a', size)} {{=a ~b}}\n".encode()),
    "GIFT, a feedback line of labels and links": (
        "gift",
        lambda size: ("Q {=a ~b ####" + _repeat("x\\:https\\://", size) + " y}\n").encode()),
    "Aiken, ordinary questions": (
        "aiken", lambda size: _repeat("Q?\nA. x\nB. y\nANSWER: A\n\n", size).encode()),
    "Moodle XML, ordinary questions": ("moodle-xml", _moodle_xml_of),
    "Moodle XML, deeply nested elements": (
        "moodle-xml", lambda size: b"<quiz>" + b"<a>" * (size // 7) + b"</a>" * (size // 7)
        + b"</quiz>"),
    "QTI 1.2, the seed": ("qti", lambda size: _qti_with(size, lambda n: "<other/>")),
    "QTI 1.2, nested <not>": (
        "qti", lambda size: _qti_with(size, lambda n: "<not>" * (n // 11) + "<other/>"
                                      + "</not>" * (n // 11))),
    "QTI 1.2, many conditions": (
        "qti", lambda size: _qti_with(size, lambda n: _repeat("<other/>", n))),
}  # fmt: skip
"""Each is named for what it stresses; the ordinary ones are the baseline of their format."""
