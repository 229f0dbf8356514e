"""An instructor's quiz preview and downloads: what the pages show, what they leave untouched."""

import html
import logging
import re
from urllib.parse import unquote

import factories
import pytest

from app.extensions import db
from app.formats import gift, moodle_xml, qti, qti3
from app.models import Answer, Attempt, QuizVersion
from app.question_types import right_choice

from helpers import SLUG, Student, login, queries, shown, text

pytestmark = pytest.mark.any_database

PREVIEW = f"/teach/quizzes/{SLUG}/preview"


@pytest.fixture
def teacher(app):
    """A logged-in instructor's browser."""
    with app.app_context():
        factories.instructor()
    client = app.test_client()
    assert login(client, "teacher", "correct horse").status_code == 303
    return client


def counts(app) -> tuple[int, int, int]:
    with app.app_context():
        return tuple(
            db.session.scalar(db.select(db.func.count()).select_from(model))
            for model in (Attempt, Answer, QuizVersion)
        )


def test_preview_shows_every_question_with_the_key_and_every_explanation(app, teacher, quiz):
    """In order: each prompt, every choice with its explanation, the right one marked, the
    general explanation, its sources and the evidence panels the feedback shows."""
    page = teacher.get(PREVIEW)
    assert page.status_code == 200
    body = page.get_data(as_text=True)
    headings = re.findall(r'<h2 id="preview-\d+">(.*?)</h2>', body, re.S)
    assert [html.unescape(re.sub(r"<[^>]+>", "", h)) for h in headings] == [
        f"Question {n}. {q.prompt}" for n, q in enumerate(quiz.questions, 1)
    ]
    words = text(page)
    for question in quiz.questions:
        for choice in question.choices:
            assert shown(choice.explanation) in body
            assert shown(choice.text) in body
        assert shown(question.explanation) in body
        for reference in question.references:
            assert f'href="{shown(reference.url)}"' in body
    assert words.count("Right answer") == len(quiz.questions)
    assert "Your answer" not in words
    # What each format has no room for, as `quiz export` says it, on the list of quizzes.
    listed = html.unescape(text(teacher.get("/teach/quizzes")))
    assert "What each download (Preview and export) leaves out</summary>" in listed
    assert "GIFT: the quiz's description; whether choices are shuffled; each question's points" \
        in listed  # fmt: skip
    # The right choice of each question carries the tag, in the same list item.
    for question in quiz.questions:
        item = re.search(
            r'<li class="choice-review is-right">(.*?)</li>', body[body.index(
                shown(question.prompt)):], re.S,
        ).group(1)  # fmt: skip
        assert shown(right_choice(question).text) in item
    # A link to the measurement from each question that has one, as in a review: the panel in
    # full would take the page over 50 KB.
    evidence_questions = [q for q in quiz.questions if q.evidence]
    assert len(evidence_questions) > 1
    assert '<details class="measured"' not in body
    assert words.count('<p class="measured-link"><a href="/evidence/') == len(evidence_questions)
    # The measurement leads back to the question it was opened from, in the preview.
    link = html.unescape(re.search(r'class="measured-link"><a href="([^"]+)"', body).group(1))
    back = re.search(r"back=([^&]+)", link).group(1)
    assert f'<a href="{unquote(back)}">Back to the question</a>' in text(teacher.get(link))
    assert unquote(back).startswith(f"{PREVIEW}#preview-")


def test_preview_makes_no_attempt_and_a_fixed_number_of_queries(app, teacher, quiz):
    """Previewing touches no attempt, answer or statistic, and its queries do not grow with
    the attempts the quiz has."""
    teacher.get(PREVIEW)  # the first request after login may load the bank
    before = counts(app)
    with queries(app) as few:
        assert teacher.get(PREVIEW).status_code == 200
    assert counts(app) == before
    with app.app_context():
        factories.attempts(
            quiz, [[right_choice(q).id for q in quiz.questions]] * 40,
            names=[f"Student {n}" for n in range(40)],
        )  # fmt: skip
    after = counts(app)
    with queries(app) as many:
        teacher.get(PREVIEW)
    assert counts(app) == after
    assert len(few) == len(many) <= 2  # the instructor's session; the bank is held in memory


@pytest.mark.parametrize(
    ("format_name", "name", "media_type", "module"),
    [
        ("moodle-xml", f"{SLUG}.moodle.xml", "application/xml", moodle_xml),
        ("qti", f"{SLUG}.qti.zip", "application/zip", qti),
        ("qti3", f"{SLUG}.qti3.zip", "application/zip", qti3),
        ("gift", f"{SLUG}.gift.txt", "text/plain", gift),
    ],
)
def test_downloads_give_the_quiz_in_each_format(
    app, teacher, quiz, caplog, format_name, name, media_type, module
):
    """Each download is a file named after the quiz, kept by no cache, that reads back as the
    quiz; the audit log says who took the key."""
    with caplog.at_level(logging.WARNING):
        response = teacher.get(f"/teach/quizzes/{SLUG}/download/{format_name}")
    assert response.status_code == 200
    assert response.mimetype == media_type
    assert response.headers["Content-Disposition"] == f'attachment; filename="{name}"'
    assert response.headers["Cache-Control"] == "no-store"
    source = module.parse(response.get_data(), name)
    assert [q.prompt for q in source.questions] == [q.prompt for q in quiz.questions]
    assert [[(c.text, c.correct, c.explanation) for c in q.choices] for q in source.questions] == [
        [(c.text, c.correct, c.explanation) for c in q.choices] for q in quiz.questions
    ]
    assert f"quiz {SLUG} exported as {format_name}: user='teacher'" in caplog.text


def test_unknown_quizzes_and_formats_are_not_found(teacher):
    assert teacher.get("/teach/quizzes/nope/preview").status_code == 404
    assert teacher.get("/teach/quizzes/nope/download/gift").status_code == 404
    assert teacher.get(f"/teach/quizzes/{SLUG}/download/aiken").status_code == 404
    assert teacher.get(f"/teach/quizzes/{SLUG}/download/..%2f..%2fetc").status_code == 404


def test_a_download_the_format_cannot_hold_is_refused_naming_the_question(
    teacher, quiz, monkeypatch
):
    """A format that holds none of the quiz's question types answers 409 with the questions it
    cannot write, never a file that says them wrong."""
    monkeypatch.setattr(gift, "TYPES", frozenset())
    refused = teacher.get(f"/teach/quizzes/{SLUG}/download/gift")
    assert refused.status_code == 409
    said = shown(f'question "{quiz.questions[0].id}" is single_choice, which gift cannot hold')
    assert said in text(refused)
    assert teacher.get(f"/teach/quizzes/{SLUG}/download/qti").status_code == 200


def test_students_get_the_login_page_not_the_key(client):
    for url in (PREVIEW, f"/teach/quizzes/{SLUG}/download/gift"):
        response = client.get(url)
        assert response.status_code in (302, 303)
        assert response.headers["Location"].startswith("/login")


LINKS = [
    f'href="{PREVIEW}"',
    f'href="/teach/quizzes/{SLUG}/download/moodle-xml"',
    f'href="/teach/quizzes/{SLUG}/download/qti"',
    f'href="/teach/quizzes/{SLUG}/download/qti3"',
    f'href="/teach/quizzes/{SLUG}/download/gift"',
]


def test_the_dashboard_and_start_page_link_preview_and_downloads(app, teacher, quiz):
    """A logged-in instructor finds Preview and the four downloads beside each quiz."""
    dashboard = teacher.get("/teach").get_data(as_text=True)
    start = teacher.get(f"/quizzes/{SLUG}").get_data(as_text=True)
    for page in (dashboard, start):
        assert all(link in page for link in LINKS), page
    # A screen reader hears which quiz each link is for.
    hidden = f'<span class="visually-hidden"> {quiz.title}</span>'
    assert f"Download{hidden} as Moodle XML" in dashboard
    assert f"Download{hidden} as QTI 3.0" in dashboard


def test_students_see_no_instructor_links(client):
    page = Student(client).client.get(f"/quizzes/{SLUG}").get_data(as_text=True)
    assert not any(link in page for link in LINKS)


def test_the_class_page_links_the_preview(app, teacher):
    with app.app_context():
        teacher_id = db.session.scalar(db.select(factories.Instructor.id))
        class_id = factories.class_(db.session.get(factories.Instructor, teacher_id)).id
    page = teacher.get(f"/teach/classes/{class_id}").get_data(as_text=True)
    assert f'href="{PREVIEW}"' in page
