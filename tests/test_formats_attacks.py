"""Hostile and broken sources for the importers: XML bombs and external entities, zip slip and
zip bombs, huge and non-UTF-8 files, and random bytes. Each gets a located error, reads nothing
from the network or the disk it was not given, and writes nothing."""

import contextlib
import gc
import importlib.util
import io
import shutil
import time
import zipfile

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli import quiz_cli
from app.config import PROJECT_ROOT
from app.formats import FORMATS, MAX_BYTES, FormatError, Source, moodle_xml, qti, qti3
from app.formats.common import parse_xml

from test_formats import FIXTURES, SEED, canvas_package, qti3_package

pytestmark = pytest.mark.any_database

PACKAGED = pytest.mark.parametrize("module", [qti, qti3], ids=["qti", "qti3"])

BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE quiz [
  <!ENTITY a "aaaaaaaaaa">
  <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
  <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
  <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
  <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
  <!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">
  <!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">
  <!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">
]>
<quiz><question type="multichoice"><questiontext><text>&h;</text></questiontext></question></quiz>
"""
SECRET = "quizwright-secret-file-content"


def external_entity(tmp_path) -> bytes:
    """XML that would paste a local file into a question's text, were entities allowed."""
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE quiz [<!ENTITY x SYSTEM "file://{secret}">]>\n'
        '<quiz><question type="multichoice"><questiontext format="plain_text"><text>&x;</text>'
        "</questiontext></question></quiz>\n"
    ).encode()


EXTERNAL_DTD = (
    b'<?xml version="1.0"?>\n<!DOCTYPE quiz SYSTEM "http://127.0.0.1:9/quiz.dtd">\n<quiz/>\n'
)


def import_into_copy(tmp_path, source, *options):
    """Run `flask quiz import` into a copy of the real bank; the result and whether it changed."""
    bank = tmp_path / "questions.json"
    shutil.copy(PROJECT_ROOT / "questions.json", bank)
    before = bank.read_bytes()
    result = CliRunner().invoke(
        quiz_cli, ["import", str(source), "--into", str(bank), "--allow-gaps", *options]
    )
    return result, bank.read_bytes() != before


@pytest.mark.parametrize("name", ["bomb", "external entity", "external DTD"])
def test_entities_and_dtds_are_refused(tmp_path, name):
    """Billion laughs, a file:// entity and an external DTD: refused before any expansion or
    fetch, with the file named, and nothing written."""
    data = {
        "bomb": BOMB, "external entity": external_entity(tmp_path), "external DTD": EXTERNAL_DTD,
    }[name]  # fmt: skip
    source = tmp_path / "hostile.xml"
    source.write_bytes(data)
    result, changed = import_into_copy(tmp_path, source, "--format", "moodle-xml")
    assert result.exit_code == 1 and not changed
    assert result.stderr.startswith(f"{source}: refused: DTDForbidden")
    assert "a quiz file needs no DTD or entities" in result.stderr
    assert SECRET not in result.output


@PACKAGED
def test_entities_inside_a_qti_package_are_refused_too(module):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr("imsmanifest.xml", BOMB.replace(b"quiz", b"manifest"))
    with pytest.raises(FormatError) as raised:
        module.parse(buffer.getvalue(), "bomb.zip")
    assert raised.value.errors[0].startswith("bomb.zip/imsmanifest.xml: refused: DTDForbidden")


@pytest.mark.parametrize("format_name", ["qti", "qti3"])
@pytest.mark.parametrize(
    "name", ["../../evil.xml", "/etc/evil.xml", "a/../../evil.xml", "C:/evil.xml", "..\\evil.xml"]
)
def test_zip_slip_names_are_refused(tmp_path, name, format_name):
    """A package naming a file outside itself is refused whole, and nothing lands on disk."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr(name, (FIXTURES / "canvas-qti/g1a2b3c/g1a2b3c.xml").read_bytes())
    source = tmp_path / "slip" / "package.zip"
    source.parent.mkdir()
    source.write_bytes(buffer.getvalue())
    result, changed = import_into_copy(tmp_path, source, "--format", format_name)
    assert result.exit_code == 1 and not changed
    assert result.stderr.splitlines()[0] == (
        f"{source}: {name!r}: unsafe file name (an absolute path or '..' would write outside the "
        "package)"
    )
    assert not (tmp_path / "evil.xml").exists() and not list(tmp_path.rglob("evil.xml"))


@PACKAGED
def test_a_member_with_no_name_is_refused(module):
    """Found by fuzzing: zipfile itself fails on an empty name."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr(zipfile.ZipInfo(""), b"<questestinterop/>")
    with pytest.raises(FormatError) as raised:
        module.parse(buffer.getvalue(), "nameless.zip")
    assert raised.value.errors[0].startswith("nameless.zip: '': unsafe file name")


@PACKAGED
def test_a_zip_bomb_is_refused_before_it_is_unpacked(module):
    """60 MB of zeros squeezed into a few kilobytes: refused by its ratio."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("imsmanifest.xml", b"<manifest/>")
        package.writestr("zeros.xml", bytes(60_000_000))
    assert len(buffer.getvalue()) < 200_000
    with pytest.raises(FormatError) as raised:
        module.parse(buffer.getvalue(), "bomb.zip")
    assert raised.value.errors == [
        "bomb.zip: zeros.xml: unpacks 60,000,000 bytes from "
        f"{zip_member_size(buffer, 'zeros.xml'):,} (a zip bomb?)"
    ]


@PACKAGED
def test_many_small_bombs_are_refused_by_the_packages_ratio(module):
    """Attacker review: 49 files of 1,000,000 zeros each, under the one-file check, unpacked
    49 MB in memory from a 50 KB upload. The whole package's ratio refuses them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("imsmanifest.xml", b"<manifest/>")
        for n in range(49):
            package.writestr(f"zeros-{n}.xml", bytes(1_000_000))
    packed = len(buffer.getvalue())
    with pytest.raises(FormatError) as raised:
        module.parse(buffer.getvalue(), "bombs.zip")
    [error] = raised.value.errors
    assert error.startswith("bombs.zip: unpacks ") and error.endswith(
        f"bytes and more from {packed:,} (a zip bomb?)"
    )


def zip_member_size(buffer: io.BytesIO, name: str) -> int:
    with zipfile.ZipFile(buffer) as package:
        return package.getinfo(name).compress_size


@PACKAGED
def test_a_zip_whose_headers_lie_about_sizes_is_caught_while_reading(module):
    """A member whose header claims a tiny size is read only up to the limit, and the lie is
    reported, not trusted."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as package:
        package.writestr("a.xml", b"<questestinterop/>" + b" " * 1000)
    data = bytearray(buffer.getvalue())
    # The local and central headers' uncompressed size fields: claim 10 bytes.
    for offset in (22, data.rfind(b"PK\x01\x02") + 24):
        data[offset : offset + 4] = (10).to_bytes(4, "little")
    with pytest.raises(FormatError) as raised:
        module.parse(bytes(data), "liar.zip")
    assert raised.value.errors[0].startswith("liar.zip: ")


def test_a_file_over_50_mb_is_refused_unread(tmp_path):
    big = tmp_path / "big.gift"
    with open(big, "wb") as file:
        file.truncate(MAX_BYTES + 1)  # sparse: no 50 MB written to the test disk
    result, changed = import_into_copy(tmp_path, big)
    assert result.exit_code == 1 and not changed
    assert result.stderr.splitlines() == [
        f"{big}: larger than 50 MB; nothing was read",
        "Nothing was written.",
    ]


def test_text_that_is_not_utf8_is_located(tmp_path):
    source = tmp_path / "latin1.gift"
    source.write_bytes("// ok\n\nCaf\u00e9? {=oui ~non}\n".encode("latin-1"))
    result, changed = import_into_copy(tmp_path, source)
    assert result.exit_code == 1 and not changed
    assert result.stderr.splitlines()[0] == (
        f"{source}:3:4: not UTF-8 text (byte 0xe9); save the file as UTF-8 and try again"
    )


def test_xml_declaring_another_encoding_is_refused():
    data = '<?xml version="1.0" encoding="ISO-8859-1"?><quiz/>'.encode("latin-1")
    with pytest.raises(FormatError) as raised:
        moodle_xml.parse(data, "old.xml")
    assert raised.value.errors == ["old.xml:1: declares the encoding ISO-8859-1; save it as UTF-8"]


def test_broken_xml_is_located():
    with pytest.raises(FormatError) as raised:
        moodle_xml.parse(b"<quiz>\n  <question type='multichoice'>\n</quiz>\n", "broken.xml")
    assert raised.value.errors == ["broken.xml:3:3: not well-formed XML: mismatched tag"]


def test_a_package_without_an_assessment_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr("readme.txt", "hello")
    with pytest.raises(FormatError) as raised:
        qti.parse(buffer.getvalue(), "empty.zip")
    assert raised.value.errors == ["empty.zip: no QTI assessment (imsqti_xmlv1p2) in the package"]
    with pytest.raises(FormatError) as raised:
        qti3.parse(buffer.getvalue(), "empty.zip")
    assert raised.value.errors == [
        "empty.zip: no QTI 3.0 item (imsqti_item_xmlv3p0) in the package"
    ]


def test_a_qti3_manifest_naming_a_missing_item_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr(
            "imsmanifest.xml",
            f'<manifest xmlns="{qti3.MANIFEST}"><resources><resource identifier="r" '
            'type="imsqti_item_xmlv3p0" href="items/gone.xml"/></resources></manifest>',
        )
    with pytest.raises(FormatError) as raised:
        qti3.parse(buffer.getvalue(), "gone.zip")
    assert raised.value.errors == [
        "gone.zip/imsmanifest.xml: names items/gone.xml, which the package lacks"
    ]


def fuzz_settings(examples: int):
    """Bounded, no deadline, nothing saved to disk, as in test_fuzz.py."""
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,  # tally only counts
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )


def parses_or_refuses(module, data: bytes) -> None:
    """A parser's only answers: a Source whose questions the bank could hold, or FormatError."""
    try:
        source = module.parse(data, "fuzzed")
    except FormatError as error:
        assert error.errors and all(isinstance(e, str) and e for e in error.errors)
        return
    assert isinstance(source, Source)
    for question in source.questions:  # each keeps its type's rule for what is right
        right = sum(choice.correct for choice in question.choices)
        if question.type == "multiple_answers":
            assert right >= 1 and all(-1 <= c.fraction <= 1 for c in question.choices)
        else:
            assert right == 1
        if question.type == "true_false":
            assert [c.text for c in question.choices] == ["True", "False"]


@fuzz_settings(300)
@given(data=st.binary(max_size=2000), format_name=st.sampled_from(sorted(FORMATS)))
def test_random_bytes_never_crash_an_importer(data, format_name, tally):
    parses_or_refuses(FORMATS[format_name], data)
    tally["import sources fuzzed"] += 1


GIFT_PIECES = st.lists(
    st.sampled_from(
        ["{", "}", "=", "~", "#", "####", "::", "\\", "\\n", "\n", "\n\n", "//", "%50%", "->",
         "[html]", "<p>", "</p>", "<img>", "Q?", " right", " wrong", "π", "$CATEGORY: x"]
    ),
    max_size=40,
)  # fmt: skip


@fuzz_settings(300)
@given(pieces=GIFT_PIECES)
def test_gift_made_of_its_own_marks_never_crashes(pieces, tally):
    parses_or_refuses(FORMATS["gift"], "".join(pieces).encode())
    tally["import sources fuzzed"] += 1


AIKEN_LINES = st.lists(
    st.sampled_from(["Q?", "A. x", "B) y", "C. z", "ANSWER: A", "ANSWER: D", "", "A.", "ANSWER:"]),
    max_size=20,
)


@fuzz_settings(200)
@given(lines=AIKEN_LINES)
def test_aiken_made_of_its_own_lines_never_crashes(lines, tally):
    parses_or_refuses(FORMATS["aiken"], "\n".join(lines).encode())
    tally["import sources fuzzed"] += 1


@fuzz_settings(150)
@given(cut=st.integers(min_value=0, max_value=100_000), flip=st.integers(0, 255))
def test_damaged_exports_never_crash_an_importer(cut, flip, tally):
    """Real files, cut short or with one byte changed, as a failed upload leaves them."""
    for module in (moodle_xml, qti, qti3):
        data = bytearray(module.write(SEED))
        position = cut % len(data)
        parses_or_refuses(module, bytes(data[:position]))
        data[position] = flip
        parses_or_refuses(module, bytes(data))
    parses_or_refuses(qti, canvas_package()[: cut % 4000])
    parses_or_refuses(qti3, qti3_package()[: cut % 8000])
    tally["import sources fuzzed"] += 5


def test_deeply_nested_xml_is_refused_or_read_without_crashing():
    nested = b"<quiz>" + b"<a>" * 100_000 + b"</a>" * 100_000 + b"</quiz>"
    try:
        parse_xml(nested, "deep.xml")
    except FormatError as error:
        assert error.errors[0].startswith("deep.xml")
    parses_or_refuses(moodle_xml, nested)


def _load_worst_cases():
    """bench/worst_imports.py, which `make bench` measures too."""
    spec = importlib.util.spec_from_file_location(
        "worst_imports", PROJECT_ROOT / "bench" / "worst_imports.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CASES


WORST = _load_worst_cases()


@contextlib.contextmanager
def _heap_frozen():
    """The cyclic collector's full passes grow with everything a test run holds, not with the
    file parsed: what the run holds is frozen while timing, so that collections walk only what
    the parses leave (walking it all, once per measurement, was most of these tests' time)."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _cpu_seconds(format_name: str, data: bytes) -> float:
    """This process's CPU time for the best of three parses: other processes do not count. The
    collector is off while timing, inside `_heap_frozen`."""
    best = float("inf")
    for _ in range(3):
        gc.collect()
        gc.disable()
        try:
            started = time.process_time()
            with contextlib.suppress(FormatError):  # a refusal is an answer too
                FORMATS[format_name].parse(data, "crafted")
            best = min(best, time.process_time() - started)
        finally:
            gc.enable()
    return max(best, 1e-4)


@pytest.mark.parametrize("case", [name for name in WORST if name != "QTI 1.2, the seed"])
def test_a_crafted_file_four_times_as_big_costs_about_four_times_as_much(case):
    """Attacker repro: a 200 KB GIFT file ran past a minute; 16,000 nested <not> took 10.8 s.
    Every importer reads each crafted file in time linear in its size: a file four times as big
    costs about four times the work, where a quadratic reader costs sixteen."""
    format_name, make = WORST[case]
    size = 4_000
    # Big enough to measure: a parse of a few milliseconds is mostly noise (a cache, the
    # allocator), which once made a linear reader look quadratic. Grown from small, so a format
    # that reads slowly (HTML) is measured at a twentieth of a second too, not ten times that.
    with _heap_frozen():
        while (small := _cpu_seconds(format_name, make(size))) < 0.05 and size < 1_000_000:
            size *= 2
        large = _cpu_seconds(format_name, make(4 * size))
    # Linear measured 4-5 (and up to 4.8 for a doubling's worth on a busy CI); quadratic is 16.
    assert large / small < 9, f"{case}: {small:.3f}s, then {large:.3f}s at four times the size"
