"""Pictures in quiz text: uploaded in the editor with the words that say what they show, kept
in the database, served from the app's own address, and nothing else shown as a picture."""

import io
import re

import pytest
from PIL import Image as Pillow
from test_authoring import (
    EDITOR,
    QUIZ,
    draft_question,
    import_file,
    publish,
    question_fields,
    said,
    token_of,
    write_quiz,
)

from app import images
from app.bank import UNSAID, problems
from app.text import phrase, rich

from helpers import Student

pytestmark = pytest.mark.postgres

NEW = f"/teach/quizzes/{QUIZ}/new-question"


def png(width=300, height=200, colour="red") -> bytes:
    buffer = io.BytesIO()
    Pillow.new("RGB", (width, height), colour).save(buffer, "PNG")
    return buffer.getvalue()


def with_picture(token, data: bytes, name="leaf.png", alt="A green leaf", into="prompt") -> dict:
    fields = {"csrf_token": token, "base": "", **question_fields()}
    return fields | {"picture": (io.BytesIO(data), name), "picture_alt": alt, "picture_into": into}


def test_a_picture_uploaded_in_the_editor_is_shown_to_students_from_this_app(app, lecturer):
    """The picture goes at the end of the question as Markdown naming its address and size; a
    student's page shows it with its words, its size and lazy loading; its address answers
    with the bytes, cached for a year."""
    token = write_quiz(lecturer, questions=())
    saved = lecturer.post(NEW, data=with_picture(token, png()), content_type="multipart/form-data")
    assert saved.status_code == 303, said(saved)
    prompt = draft_question(app)["prompt"]
    address = re.search(r"!\[A green leaf\]\((/images/[0-9a-f]{64}-300x200\.png)\)$", prompt)[1]
    served = app.test_client().get(address)
    assert served.status_code == 200 and served.mimetype == "image/png"
    assert served.get_data() == png()
    assert served.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert served.headers["X-Content-Type-Options"] == "nosniff"
    assert publish(lecturer, token).status_code == 303
    student = Student(app.test_client())
    assert student.start(slug=QUIZ).status_code == 303
    page = student.client.get(student.question_url(1)).get_data(as_text=True)
    assert (
        f'<img src="{address}" alt="A green leaf" width="300" height="200" loading="lazy">' in page
    )


@pytest.mark.parametrize(
    ("data", "alt", "field", "words"),
    [
        (b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', "x",
         "picture", "SVG pictures are not taken"),
        (b"just some text", "x", "picture", "This file is not a picture"),
        (png(5000, 10), "x", "picture", "The picture is 5000×10 pixels; make its longest side"),
        (png(), "", "picture_alt", "Say what the picture shows"),
    ],
)  # fmt: skip
def test_a_picture_the_app_does_not_show_is_refused_beside_its_field(
    app, lecturer, data, alt, field, words
):
    token = write_quiz(lecturer, questions=())
    refused = lecturer.post(NEW, data=with_picture(token, data, alt=alt),
                            content_type="multipart/form-data")  # fmt: skip
    assert refused.status_code == 400
    assert f'id="{field}-error">{words}' in said(refused)
    assert "/images/" not in said(lecturer.get(EDITOR))


def test_a_picture_past_the_size_limit_is_refused(app, lecturer, monkeypatch):
    """At a limit of 1,000 bytes here: the test client spools a 2 MB upload to a file it never
    closes."""
    monkeypatch.setattr(images, "MOST_BYTES", 1_000)
    token = write_quiz(lecturer, questions=())
    refused = lecturer.post(NEW, data=with_picture(token, png(600, 600, "white") + b"0" * 1000),
                            content_type="multipart/form-data")  # fmt: skip
    assert refused.status_code == 400
    assert 'id="picture-error">The picture is over 1,000 bytes: make it smaller.' in said(refused)


def test_a_question_shows_at_most_ten_pictures(app, lecturer):
    token = write_quiz(lecturer, questions=())
    sent = lecturer.post(NEW, data=with_picture(token, png()), content_type="multipart/form-data")
    assert sent.status_code == 303, said(sent)
    shown = draft_question(app)["prompt"].rsplit("\n\n", 1)[1]
    ten = with_picture(token, png(colour="blue")) | {"prompt": "Which?\n\n" + shown * 10}
    refused = lecturer.post(NEW, data=ten, content_type="multipart/form-data")
    assert refused.status_code == 400
    assert 'id="picture-error">A question shows at most 10 pictures.' in said(refused)


def test_only_pictures_from_this_app_are_shown_and_each_needs_its_words():
    """Another site's picture, a script address or an address of this app's other pages shows
    no picture (its words stay); words that try to close the attribute stay words; a picture
    without words is a problem of the bank, at its field."""
    digest = "0" * 64
    ours = f"/images/{digest}-10x20.gif"
    assert phrase(f"![a cell]({ours})") == (
        f'<img src="{ours}" alt="a cell" width="10" height="20" loading="lazy">'
    )
    for elsewhere in ("https://evil.example/x.png", "/teach/quizzes", f"/images/{digest}.png",
                      "//evil.example/x.png"):  # fmt: skip
        assert "<img" not in phrase(f"![a cell]({elsewhere})") and "a cell" in phrase(
            f"![a cell]({elsewhere})"
        )  # fmt: skip
    assert '"><script>' not in rich(f'![x"><script>alert(1)</script>]({ours})')
    quiz = {"slug": "p", "title": "P", "description": "D", "questions": [{
        "id": "q1", "prompt": f"Which? ![ ]({ours})", "explanation": "E",
        "references": [{"title": "T", "url": "https://example.org"}],
        "choices": [{"id": "a", "text": "A", "correct": True, "explanation": "x"},
                    {"id": "b", "text": "B", "correct": False, "explanation": "y"}]}]}  # fmt: skip
    assert problems({"quizzes": [quiz]}) == [
        f'quiz "p", question "q1", field "prompt": {UNSAID}'
    ]


def test_an_address_that_names_no_kept_picture_is_not_found(app):
    client = app.test_client()
    for name in ("0" * 64 + "-1x1.png", "not-a-picture.png", "x" * 64 + "-1x1.png"):
        assert client.get(f"/images/{name}").status_code == 404


def test_an_export_without_the_files_writes_each_picture_as_its_words_and_says_so(app):
    """Another system cannot load this app's picture addresses: without the pictures' files (a
    bank file, exported on the command line), every format writes the words instead, and lists
    the pictures among what it leaves out."""
    from app import formats
    from app.bank import build_quiz

    address = f"/images/{'0' * 64}-10x20.png"
    quiz = build_quiz({"slug": "p", "title": "P", "description": "D", "questions": [{
        "id": "q1", "prompt": f"Which cell? ![A \\] red cell]({address})",
        "explanation": f'E ![a nucleus](<{address}> "its title")',
        "references": [{"title": "T", "url": "https://example.org"}],
        "choices": [{"id": "a", "text": "A", "correct": True, "explanation": "x"},
                    {"id": "b", "text": "B", "correct": False, "explanation": "y"}]}]})  # fmt: skip
    for name in ("gift", "moodle-xml", "qti", "qti3", "aiken"):
        written = formats.export_quiz(quiz, name)
        if name not in ("qti", "qti3"):  # the packages are zipped
            assert b"/images/" not in written and b"A ] red cell" in written, name
            assert name == "aiken" or b"a nucleus" in written, name  # Aiken has no feedback
        assert formats.PICTURES in formats.dropped(name, quiz, files=False)
    # GIFT and Aiken carry no files at all: the browser's download says so too.
    assert [name for name in formats.FORMATS if formats.PICTURES in formats.dropped(name)] == [
        "gift", "aiken"
    ]
    back = formats.FORMATS["qti3"].parse(formats.export_quiz(quiz, "qti3"), "p.zip")
    assert back.questions[0].prompt == "Which cell? (picture: A ] red cell)"


def png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims a size it does not hold (attacker review)."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body) & 0xFFFFFFFF)  # fmt: skip

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00" + b"\x00" * 3)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(
        b"IEND", b"")  # fmt: skip


@pytest.mark.parametrize("size", [(20000, 20000), (5000, 10)])
def test_a_picture_claiming_a_huge_size_is_refused_not_a_500(size):
    """Pillow raised DecompressionBombError, which nothing caught: a 500 on the editor."""
    with pytest.raises(images.NotAPicture, match="pixels"):
        images.read(png_claiming(*size))


def test_the_limits_hold_however_a_picture_is_written(app, lecturer):
    """Attacker review: thirty pictures with their addresses in <>, and words that are only a
    zero-width space, once saved; the bank counts every address and wants real words."""
    address = f"/images/{'0' * 64}-1x1.png"
    many = {"id": "q1", "prompt": "Which? " + f"![x](<{address}>)" * 11, "explanation": "E",
            "references": [{"title": "T", "url": "https://example.org"}],
            "choices": [{"id": "a", "text": "A", "correct": True, "explanation": "x"},
                        {"id": "b", "text": "B", "correct": False, "explanation": "y"}],
            }  # fmt: skip
    quiz = {"slug": "p", "title": "P", "description": "D", "questions": [many]}
    assert problems({"quizzes": [quiz]}) == [
        'quiz "p", question "q1": shows 11 pictures; a question shows at most 10'
    ]
    for nothing in ("\u200b", "&nbsp;", " \t"):
        quiz["questions"] = [{**many, "prompt": f"Which? ![{nothing}]({address})"}]
        said_nothing = f'quiz "p", question "q1", field "prompt": {UNSAID}'
        assert problems({"quizzes": [quiz]}) == [said_nothing]
    token = write_quiz(lecturer, questions=())
    refused = lecturer.post(NEW, data=with_picture(token, png(), alt="\u200b"),
                            content_type="multipart/form-data")  # fmt: skip
    assert refused.status_code == 400 and 'id="picture_alt-error">Say what' in said(refused)


def test_one_address_a_picture(app, lecturer):
    """The size in the address is the picture's own: another size is no address of it."""
    token = write_quiz(lecturer, questions=())
    assert lecturer.post(NEW, data=with_picture(token, png()),
                         content_type="multipart/form-data").status_code == 303  # fmt: skip
    address = re.search(r"\((/images/[^)]+)\)", draft_question(app)["prompt"])[1]
    client = app.test_client()
    assert client.get(address).status_code == 200
    assert client.get(address.replace("-300x200.", "-1x9999.")).status_code == 404


@pytest.mark.parametrize("format_name", ["moodle-xml", "qti", "qti3"])
def test_a_download_carries_its_pictures_and_comes_back_with_them(app, format_name):
    """Moodle XML writes each picture's file into the field that shows it, the QTI packages
    put it beside the items; importing the download gives back the same text, pictures and
    all, and the picture's bytes."""
    from app import formats
    from app.bank import build_quiz

    with app.app_context():
        leaf, cell = images.store(png(30, 20, "green")), images.store(png(8, 6, "blue"))
    missing = f"/images/{'0' * 64}-10x20.png"
    quiz = build_quiz({"slug": "p", "title": "P", "description": "D", "questions": [{
        "id": "q1", "prompt": f"Which leaf? ![A green leaf]({leaf})",
        "explanation": f"See ![a blue cell]({cell}) and ![gone]({missing})",
        "references": [{"title": "T", "url": "https://example.org"}],
        "choices": [{"id": "a", "text": f"This ![a blue cell]({cell})", "correct": True,
                     "explanation": "x"},
                    {"id": "b", "text": "B", "correct": False, "explanation": "y"}]}]})  # fmt: skip
    with app.app_context():
        written = formats.export_quiz(quiz, format_name, images.kept)
    assert formats.PICTURES not in formats.dropped(format_name, quiz)
    back = formats.FORMATS[format_name].parse(written, f"p.{format_name}")
    [question] = back.questions
    # What the download could not find is written as its words.
    assert (question.prompt, question.explanation) == (
        f"Which leaf? ![A green leaf]({leaf})", f"See ![a blue cell]({cell}) and (picture: gone)",
    )  # fmt: skip
    assert question.choices[0].text == f"This ![a blue cell]({cell})"
    assert back.pictures == {leaf: png(30, 20, "green"), cell: png(8, 6, "blue")}
    assert back.unshown == ()


def test_a_picture_wider_than_a_page_is_kept_at_the_width_a_page_shows(app, lecturer):
    """A 3000-pixel photo is scaled to the widest a page shows (two pixels a point), in its
    own kind; an animated GIF is kept as it is, as scaling would stop it."""
    wide = png(3000, 300, "navy")
    address, kept = images.prepared(wide)
    assert re.fullmatch(rf"/images/[0-9a-f]{{64}}-{images.WIDEST}x141\.png", address)
    assert Pillow.open(io.BytesIO(kept)).size == (images.WIDEST, 141) and len(kept) < len(wide)
    token = write_quiz(lecturer, questions=())
    saved = lecturer.post(NEW, data=with_picture(token, wide), content_type="multipart/form-data")
    assert saved.status_code == 303, said(saved)
    assert f"]({address})" in draft_question(app)["prompt"]
    assert app.test_client().get(address).get_data() == kept
    frames = io.BytesIO()
    first, second = Pillow.new("P", (2000, 10)), Pillow.new("P", (2000, 10), 1)
    first.save(frames, "GIF", save_all=True, append_images=[second])
    assert images.prepared(frames.getvalue())[1] == frames.getvalue()


def test_a_moodle_file_imported_in_the_browser_brings_its_pictures(app, lecturer, tmp_path):
    """The report counts the pictures that come and says, at its place, what is left out; the
    draft shows each picture from this app's own address, whose bytes are the file's."""
    import base64
    import html

    leaf = png(40, 30, "green")
    encoded = base64.b64encode(leaf).decode()
    moodle = tmp_path / "leaf.xml"
    moodle.write_text(
        '<quiz><question type="truefalse"><name><text>Leaf</text></name>'
        '<questiontext format="html"><text><![CDATA[<p>Is this leaf green? '
        '<img src="@@PLUGINFILE@@/leaf%20one.png" alt="A leaf"> '
        '<a href="@@PLUGINFILE@@/rustle.mp3">Listen</a></p>]]></text>'
        f'<file name="leaf one.png" path="/" encoding="base64">{encoded}</file></questiontext>'
        '<answer fraction="100"><text>true</text></answer>'
        '<answer fraction="0"><text>false</text></answer></question></quiz>'
    )
    report = import_file(lecturer, moodle)
    assert report.status_code == 200, said(report)
    words = said(report)
    assert "showing 1 picture. No question is stored yet." in words
    assert 'leaf.xml: /quiz/question[1]: the link to "rustle.mp3" (a sound) is left out' in words
    address = images.prepared(leaf)[0]
    assert app.test_client().get(address).get_data() == leaf
    page = report.get_data(as_text=True)
    parsed = re.search(r'name="parsed" type="hidden" value="([^"]*)"', page)
    made = lecturer.post("/teach/quizzes/import/confirm", data={
        "csrf_token": token_of(lecturer), "parsed": html.unescape(parsed[1]), "into": "",
        "title": "Leaves"})  # fmt: skip
    assert made.status_code == 303
    editor = lecturer.get("/teach/quizzes/leaves/questions/leaf").get_data(as_text=True)
    assert f"![A leaf]({address})" in html.unescape(editor)


def moodle_file(body: str, files: dict[str, bytes]) -> bytes:
    """A Moodle XML true/false question whose text is body, carrying these files."""
    import base64

    carried = "".join(
        f'<file name="{name}" path="/" encoding="base64">{base64.b64encode(data).decode()}</file>'
        for name, data in files.items()
    )
    return (
        '<quiz><question type="truefalse"><name><text>q</text></name><questiontext format="html">'
        f"<text><![CDATA[<p>Is it? {body}</p>]]></text>{carried}</questiontext>"
        '<answer fraction="100"><text>true</text></answer>'
        '<answer fraction="0"><text>false</text></answer></question></quiz>'
    ).encode()


def test_a_picture_named_many_times_is_decoded_once_and_a_file_decodes_a_bounded_share(
    monkeypatch,
):
    """A small file naming one large picture thirty times costs one decoding; pictures past
    the file's budget of pixels are left out and said, so no import holds a server for long."""
    from app.formats import common, moodle_xml

    big = png(3000, 10, "teal")
    calls = []
    real = images.prepared
    monkeypatch.setattr(images, "prepared", lambda data: calls.append(1) or real(data))
    source = moodle_xml.parse(moodle_file('<img src="@@PLUGINFILE@@/a.png" alt="A">' * 9,
                                          {"a.png": big}), "many.xml")  # fmt: skip
    assert len(calls) == 1 and source.questions[0].prompt.count("](/images/") == 9
    monkeypatch.setattr(common, "PIXELS_PER_FILE", 3000 * 10 * 2)
    three = {f"{n}.png": png(3000, 10, colour) for n, colour in enumerate(["red", "blue", "lime"])}
    body = "".join(f'<img src="@@PLUGINFILE@@/{name}" alt="P{name[0]}">' for name in three)
    source = moodle_xml.parse(moodle_file(body, three), "three.xml")
    assert source.questions[0].prompt.count("](/images/") == 2
    assert source.unshown == (
        'three.xml: /quiz/question[1]: the picture "2.png" is left out; its words "P2" stand in '
        "its place. The file's pictures hold over 0 million pixels in all: import the rest in a "
        "smaller file.",
    )


def test_pictures_are_turned_upright_and_lose_what_the_camera_wrote():
    """A phone photo held sideways shows upright, and where it was taken is not handed to
    students; one too wide is scaled; a damaged one, or one that would grow past the limit
    when scaled, is refused, not a server error."""
    photo = Pillow.new("RGB", (400, 200), "orange")
    camera = Pillow.Exif()
    camera[0x0112] = 6  # held on its side
    camera[0x8825] = {1: "N", 2: (52.0, 31.0, 0.0)}  # where it was taken
    buffer = io.BytesIO()
    photo.save(buffer, "JPEG", exif=camera.tobytes())
    address, kept = images.prepared(buffer.getvalue())
    shown = Pillow.open(io.BytesIO(kept))
    assert address.endswith("-200x400.jpeg") and shown.size == (200, 400)
    assert "exif" not in shown.info and not shown.getexif()
    damaged = png_claiming(2000, 10)  # its header passes; its pixels are not there
    with pytest.raises(images.NotAPicture, match="damaged"):
        images.prepared(damaged)


def test_a_picture_that_would_grow_past_the_limit_when_scaled_is_refused(monkeypatch):
    import random

    rng = random.Random(7)
    tile = Pillow.frombytes("RGB", (61, 61), bytes(rng.randrange(256) for _ in range(61 * 61 * 3)))
    striped = Pillow.new("RGB", (3050, 61))
    for left in range(0, 3050, 61):
        striped.paste(tile, (left, 0))
    buffer = io.BytesIO()
    striped.save(buffer, "PNG", optimize=True)
    monkeypatch.setattr(images, "MOST_BYTES", len(buffer.getvalue()) + 1)
    with pytest.raises(images.NotAPicture, match="once scaled to 1408 pixels wide"):
        images.prepared(buffer.getvalue())


def test_a_picture_has_one_address_in_plain_digits(app):
    """Leading zeros or other scripts' digits name no picture: one address a picture."""
    with app.app_context():
        address = images.store(png(30, 20))
    digest = address.split("/")[2].split("-")[0]
    client = app.test_client()
    assert client.get(address).status_code == 200
    for other in (f"{digest}-030x20.png", f"{digest}-٣٠x٢٠.png"):
        assert client.get(f"/images/{other}").status_code == 404


def test_an_imported_link_around_a_picture_keeps_the_picture_and_no_control_characters():
    from app.formats import moodle_xml

    body = ('<a href="https://moodle.org"><img src="@@PLUGINFILE@@/logo.png" alt="Logo"></a> '
            '<img src="@@PLUGINFILE@@/%1b%5b2J%1b%5dX%07.png" alt="gone">')  # fmt: skip
    source = moodle_xml.parse(moodle_file(body, {"logo.png": png(20, 10)}), "link.xml")
    assert re.fullmatch(r"Is it\? !\[Logo\]\(/images/\w+-20x10\.png\) gone",
                        source.questions[0].prompt)  # fmt: skip
    assert source.unshown == (
        'link.xml: /quiz/question[1]: the picture "[2J]X.png" is not in the file; its words '
        '"gone" stand in its place',
    )
