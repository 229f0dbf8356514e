"""Quizzes that instructors own: written, published, shared, copied and deleted in the browser."""

import html
import io
import json
import re
import threading

import factories
import pytest

from app.authoring import drafts
from app.bank import build_quiz
from app.config import PROJECT_ROOT
from app.extensions import db
from app.models import Publication, QuizRecord
from app.served import current_bank

from helpers import SLUG, Student, csrf_token, login, make_app, queries, text

pytestmark = pytest.mark.postgres

QUIZ = "photosynthesis"
EDITOR = f"/teach/quizzes/{QUIZ}/edit"


def said(response) -> str:
    """The page's words, with character references read as a person reads them."""
    return html.unescape(text(response))


def token_of(client, url="/teach/quizzes"):
    return csrf_token(client.get(url).get_data(as_text=True))


def base_of(page) -> str:
    return re.search(r'name="base" type="hidden" value="([^"]*)"', page.get_data(as_text=True))[1]


def question_fields(prompt="What gas do plants take in?", **overrides) -> dict:
    fields = {
        "prompt": prompt,
        "choices-0-text": "Carbon dioxide",
        "choices-0-explanation": "Right: leaves fix it into sugar.",
        "choices-1-text": "Oxygen",
        "choices-1-explanation": "Plants give oxygen off.",
        "right": "0",
        "explanation": "Photosynthesis takes in carbon dioxide and gives off oxygen.",
        "sources-0-title": "Photosynthesis",
        "sources-0-url": "https://en.wikipedia.org/wiki/Photosynthesis",
    }
    return {**fields, **overrides}


def write_quiz(client, questions=("What gas do plants take in?",), description="Plants."):
    """Create the quiz, describe it and write its questions, as the pages do."""
    token = token_of(client)
    made = client.post("/teach/quizzes", data={"title": "Photosynthesis", "csrf_token": token})
    assert made.status_code == 303 and made.location == EDITOR
    settings = {
        "csrf_token": token,
        "base": base_of(client.get(EDITOR)),
        "title": "Photosynthesis",
        "slug": QUIZ,
        "description": description,
    }
    assert client.post(EDITOR, data=settings).status_code == 303
    listed = {"csrf_token": token, "listed": "on"}
    assert client.post(f"/teach/quizzes/{QUIZ}/listing", data=listed).status_code == 303
    for prompt in questions:
        fields = {"csrf_token": token, "base": "", **question_fields(prompt)}
        saved = client.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields)
        assert saved.status_code == 303, text(saved)
    return token


def publish(client, token):
    return client.post(f"/teach/quizzes/{QUIZ}/publish", data={"csrf_token": token})


def test_a_lecturer_writes_and_publishes_a_quiz_a_student_then_takes(app, lecturer):
    """New quiz, settings, a question, Publish: the home page lists it and a student answers it
    and reads the explanations written in the editor."""
    token = write_quiz(lecturer)
    assert QUIZ not in text(app.test_client().get("/"))  # a draft is served to nobody
    assert app.test_client().get(f"/quizzes/{QUIZ}").status_code == 404
    published = publish(lecturer, token)
    assert published.status_code == 303
    assert "Published" in text(lecturer.get(EDITOR))
    assert "Photosynthesis" in text(app.test_client().get("/"))
    student = Student(app.test_client())
    assert student.start(name="Sam", slug=QUIZ).status_code == 303
    with app.app_context():
        question = current_bank().quizzes[QUIZ].questions[0]
    assert student.answer(1, question.choices[1].id).status_code == 303
    feedback = text(student.client.get(student.question_url(1)))
    assert "Plants give oxygen off." in feedback and "Right: leaves fix it into sugar." in feedback


def test_a_question_with_problems_says_each_beside_its_field_and_saves_nothing(app, lecturer):
    """One choice only, no right one, a source without an address: every problem at once, 400,
    and the draft is as it was."""
    write_quiz(lecturer)
    with app.app_context():
        before = db.session.scalar(db.select(QuizRecord.draft).filter_by(slug=QUIZ))
    fields = question_fields(
        "",
        **{
            "choices-1-text": "",
            "choices-1-explanation": "Orphan",
            "right": "1",
            "sources-0-url": "",
        },
    )
    page = lecturer.post(
        f"/teach/quizzes/{QUIZ}/new-question",
        data={"csrf_token": token_of(lecturer), "base": "", **fields},
    )
    assert page.status_code == 400
    words = said(page)
    for problem in (
        "Write the question.",
        "Write at least two choices.",
        "Write the choice this explains, or clear both.",
        "The right choice has no text",
        "Give the source's https:// address.",
    ):
        assert problem in words
    assert 'aria-invalid="true"' in page.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalar(db.select(QuizRecord.draft).filter_by(slug=QUIZ)) == before


def test_a_quiz_with_gaps_is_published_and_students_read_the_feedback_written(app, lecturer):
    """A question without explanations or a source is a gap the editor and the draft's preview
    name, with a link to its field; the quiz publishes all the same, and a student's feedback
    shows what is written. A quiz without a description is refused, naming the field."""
    token = write_quiz(lecturer, description="")
    bare = {
        "csrf_token": token,
        "base": "",
        **question_fields("Which pigment is green?"),
        "choices-0-explanation": "",
        "choices-1-explanation": "",
        "explanation": "",
        "sources-0-title": "",
        "sources-0-url": "",
    }
    assert lecturer.post(f"/teach/quizzes/{QUIZ}/new-question", data=bare).status_code == 303
    editor = lecturer.get(EDITOR).get_data(as_text=True)
    assert "2 choices without an explanation" in editor and "No source" in editor
    assert f"/teach/quizzes/{QUIZ}/questions/which-pigment-is-green#choices-0-explanation" in editor
    refused = publish(lecturer, token)
    assert refused.status_code == 409 and 'field "description": must not be empty' in said(refused)
    with app.app_context():
        assert QUIZ not in current_bank().quizzes
    settings = {
        "csrf_token": token,
        "base": base_of(lecturer.get(EDITOR)),
        "title": "Photosynthesis",
        "slug": QUIZ,
        "description": "Plants.",
    }
    lecturer.post(EDITOR, data=settings)
    preview = lecturer.get(f"/teach/quizzes/{QUIZ}/draft").get_data(as_text=True)
    assert "2 choices without an explanation" in preview and "No source" in preview
    assert f"/teach/quizzes/{QUIZ}/questions/which-pigment-is-green#sources-0-title" in preview
    assert publish(lecturer, token).status_code == 303
    student = Student(app.test_client())
    student.start(name="Sam", slug=QUIZ)
    with app.app_context():
        bare_question = current_bank().quizzes[QUIZ].questions[1]
    student.answer(1, "c1")
    student.answer(2, bare_question.choices[1].id)
    feedback = said(student.client.get(student.question_url(2)))
    assert "Which pigment is green?" in feedback and "Sources:" not in feedback


def test_attempts_keep_the_version_they_began_on_through_an_edit_and_publish(app, lecturer):
    """Mid-term, the lecturer rewords a question and publishes again: the first attempt's
    review still shows the old words, a new attempt the new ones, and the history has both."""
    token = write_quiz(lecturer)
    publish(lecturer, token)
    first = Student(app.test_client())
    first.start(name="Sam", slug=QUIZ)
    with app.app_context():
        old = current_bank().quizzes[QUIZ].questions[0]
    first.answer(1, old.choices[0].id)
    url = f"/teach/quizzes/{QUIZ}/questions/{old.id}"
    fields = {
        "csrf_token": token,
        "base": base_of(lecturer.get(url)),
        **question_fields("Which gas do leaves absorb in light?"),
    }
    assert lecturer.post(url, data=fields).status_code == 303
    assert "with unpublished changes" in text(lecturer.get("/teach/quizzes"))
    assert publish(lecturer, token).status_code == 303
    assert "What gas do plants take in?" in text(first.client.get(first.results_url))
    second = Student(app.test_client())
    second.start(name="Kim", slug=QUIZ)
    assert "Which gas do leaves absorb in light?" in text(second.client.get(second.question_url(1)))
    history = text(lecturer.get(f"/teach/quizzes/{QUIZ}/history"))
    assert "Changed: Which gas do leaves absorb in light?" in history
    assert "First published." in history and history.count("by ada") == 2


def test_another_instructor_finds_nothing_until_it_is_shared(app, lecturer):
    """Bo gets a 404 for every page of Ada's quiz and no line of it anywhere; shared to use, he
    previews it and may assign it; only a share to edit opens the editor."""
    publish(lecturer, write_quiz(lecturer))
    bo = app.test_client()
    login(bo, "bo", "bo password")
    for url in (
        EDITOR,
        f"/teach/quizzes/{QUIZ}/preview",
        f"/teach/quizzes/{QUIZ}/history",
        f"/teach/quizzes/{QUIZ}/download/gift",
    ):
        assert bo.get(url).status_code == 404, url
    for url in ("/teach/quizzes", "/teach"):
        assert "Photosynthesis" not in text(bo.get(url))
    token = token_of(lecturer)
    shared = lecturer.post(
        f"/teach/quizzes/{QUIZ}/share", data={"csrf_token": token, "username": "bo", "role": "use"}
    )
    assert shared.status_code == 303
    assert bo.get(f"/teach/quizzes/{QUIZ}/preview").status_code == 200
    assert bo.get(EDITOR).status_code == 403
    assert "Photosynthesis" in text(bo.get("/teach/quizzes"))
    lecturer.post(
        f"/teach/quizzes/{QUIZ}/share", data={"csrf_token": token, "username": "bo", "role": "edit"}
    )
    assert bo.get(EDITOR).status_code == 200


def test_a_class_offers_only_quizzes_its_instructor_may_use(app, lecturer):
    """Bo's Assign form lists the site's quiz and not Ada's, and refuses Ada's by address."""
    publish(lecturer, write_quiz(lecturer))
    with app.app_context():
        bo = db.session.scalar(db.select(factories.Instructor).filter_by(username="bo"))
        class_id = factories.class_(bo).id
    client = app.test_client()
    login(client, "bo", "bo password")
    form = client.get(f"/teach/classes/{class_id}/assignments/new")
    assert SLUG in form.get_data(as_text=True) and QUIZ not in form.get_data(as_text=True)
    assert QUIZ not in client.get(f"/teach/classes/{class_id}").get_data(as_text=True)
    refused = client.post(
        f"/teach/classes/{class_id}/assignments/new",
        data={
            "csrf_token": csrf_token(form.get_data(as_text=True)),
            "quiz": QUIZ,
            "time_zone": "UTC",
            "feedback": "each-answer",
            "grade_from": "first",
        },
    )
    assert refused.status_code == 400 and "Choose one of the quizzes on offer." in text(refused)


def test_another_instructors_class_is_no_way_to_a_quiz_and_its_key(app, lecturer):
    """Ada's unlisted quiz does not start under Bo's class code, which assigns nothing; an
    attempt at it in his class (from before this rule) shows him no review, marks or regrade."""
    token = write_quiz(lecturer)
    publish(lecturer, token)
    lecturer.post(f"/teach/quizzes/{QUIZ}/listing", data={"csrf_token": token})
    with app.app_context():
        bo = db.session.scalar(db.select(factories.Instructor).filter_by(username="bo"))
        class_ = factories.class_(bo)
        class_id, code = class_.id, class_.join_code
        bank = current_bank().quizzes
        hidden_token = factories.attempt(bank[QUIZ], "Probe", class_id=class_id).token
        site_token = factories.attempt(bank[SLUG], "Sam", class_id=class_id).token
    probe = Student(app.test_client())
    refused = probe.start(name="Probe", slug=QUIZ, class_code=code)
    assert refused.status_code == 400 and "does not set this quiz" in text(refused)
    assert probe.start(name="Probe", slug=SLUG, class_code=code).status_code == 303
    client = app.test_client()
    login(client, "bo", "bo password")
    assert client.get(f"/teach/attempts/{site_token}").status_code == 200
    for url in (f"/teach/attempts/{hidden_token}", f"/teach/attempts/{hidden_token}/marks",
                f"/teach/classes/{class_id}/quizzes/{QUIZ}/regrade"):  # fmt: skip
        assert client.get(url).status_code == 404, url
    form = {"csrf_token": token_of(client), "confirm": "yes"}
    assert client.post(f"/teach/attempts/{hidden_token}/void", data=form).status_code == 404
    assert "Carbon dioxide" not in text(client.get(f"/teach/classes/{class_id}"))


def test_an_unlisted_quiz_is_reached_by_its_link_only(app, lecturer):
    """Taken off the home page, the quiz still starts from its address."""
    token = write_quiz(lecturer)
    publish(lecturer, token)
    visitor = app.test_client()
    assert "Photosynthesis" in text(visitor.get("/"))
    unlisted = lecturer.post(f"/teach/quizzes/{QUIZ}/listing", data={"csrf_token": token})
    assert unlisted.status_code == 303 and "No longer on the home page." in said(
        lecturer.get(EDITOR)
    )
    assert "Photosynthesis" not in text(visitor.get("/"))
    assert visitor.get(f"/quizzes/{QUIZ}").status_code == 200


def test_two_editors_of_one_question_lose_nothing(app, lecturer):
    """Bo saves a question Ada has open: Ada's save is refused, names Bo, shows his words and
    keeps hers in the form; a save of another question merges."""
    token = write_quiz(lecturer, questions=("First?", "Second?"))
    with app.app_context():
        record = db.session.scalar(db.select(QuizRecord).filter_by(slug=QUIZ))
        bo = db.session.scalar(db.select(factories.Instructor).filter_by(username="bo"))
        factories.share_quiz(record, bo, factories.QuizRole.EDIT)
    bo_client = app.test_client()
    login(bo_client, "bo", "bo password")
    url = f"/teach/quizzes/{QUIZ}/questions/first"
    ada_base, bo_base = base_of(lecturer.get(url)), base_of(bo_client.get(url))
    other = f"/teach/quizzes/{QUIZ}/questions/second"
    other_base = base_of(lecturer.get(other))
    bo_save = {"csrf_token": token_of(bo_client), "base": bo_base, **question_fields("Bo's words?")}
    assert bo_client.post(url, data=bo_save).status_code == 303
    ada_save = {"csrf_token": token, "base": ada_base, **question_fields("Ada's words?")}
    clash = lecturer.post(url, data=ada_save)
    assert clash.status_code == 409
    words = said(clash)
    assert "bo changed this question since you opened it" in words
    assert "Bo's words?" in words and "Ada's words?" in words
    merged = {"csrf_token": token, "base": other_base, **question_fields("Ada's second?")}
    assert lecturer.post(other, data=merged).status_code == 303
    with app.app_context():
        prompts = [
            q["prompt"]
            for q in json.loads(
                db.session.scalar(db.select(QuizRecord.draft).filter_by(slug=QUIZ))
            )["questions"]
        ]
    assert prompts == ["Bo's words?", "Ada's second?"]


def test_saves_at_once_to_different_questions_all_land(app):
    """Eight editors save eight questions at the same moment: each save is kept."""
    with app.app_context():
        owner = factories.instructor("ada", "ada password")
        record = factories.owned_quiz(owner, QUIZ, questions=8, published=False)
        record_id, owner_id = record.id, owner.id
    barrier = threading.Barrier(8)
    errors = []

    def rename(number: int) -> None:
        with app.app_context():
            mine = db.session.get(QuizRecord, record_id)
            barrier.wait()
            try:
                drafts.save(
                    mine,
                    lambda draft: draft["questions"][number].update(
                        prompt=f"Saved by editor {number}"
                    ),
                    owner_id,
                )
            except Exception as error:  # a lost save fails the test below, with its cause
                errors.append(error)
            finally:
                db.session.remove()

    threads = [threading.Thread(target=rename, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with app.app_context():
        record = db.session.get(QuizRecord, record_id)
        prompts = [q["prompt"] for q in drafts.draft_of(record)["questions"]]
        assert prompts == [f"Saved by editor {n}" for n in range(8)]
        assert record.draft_revision == 8


def test_a_site_quiz_is_edited_only_as_a_copy(app, lecturer):
    """The file's quiz says where it is written; Duplicate makes a draft of Ada's own."""
    refused = lecturer.get(f"/teach/quizzes/{SLUG}/edit")
    assert refused.status_code == 409 and "questions.json" in text(refused)
    copied = lecturer.post(
        f"/teach/quizzes/{SLUG}/duplicate", data={"csrf_token": token_of(lecturer)}
    )
    assert copied.location == f"/teach/quizzes/{SLUG}-copy/edit"
    editor = text(lecturer.get(copied.location))
    assert "Edit Copy of Gradient Checkpointing Quiz" in editor and "never published" in editor


def test_delete_removes_an_untaken_quiz_and_archives_a_taken_one(app, lecturer):
    """Never taken: gone, with its stored versions. Taken: archived, served no more, and its
    attempt's results stay."""
    token = write_quiz(lecturer)
    publish(lecturer, token)
    student = Student(app.test_client())
    student.start(name="Sam", slug=QUIZ)
    unconfirmed = lecturer.post(f"/teach/quizzes/{QUIZ}/delete", data={"csrf_token": token})
    assert unconfirmed.location == f"/teach/quizzes/{QUIZ}/delete"
    assert "Archive quiz" in said(lecturer.get(unconfirmed.location))
    assert app.test_client().get(f"/quizzes/{QUIZ}").status_code == 200
    deleted = lecturer.post(
        f"/teach/quizzes/{QUIZ}/delete", data={"csrf_token": token, "confirm": "yes"}
    )
    assert deleted.status_code == 303 and "Archived" in text(lecturer.get("/teach/quizzes"))
    assert app.test_client().get(f"/quizzes/{QUIZ}").status_code == 404
    assert student.client.get(student.question_url(1)).status_code == 200
    copied = lecturer.post(f"/teach/quizzes/{SLUG}/duplicate", data={"csrf_token": token})
    copy_slug = copied.location.split("/")[3]
    lecturer.post(f"/teach/quizzes/{copy_slug}/publish", data={"csrf_token": token})
    lecturer.post(
        f"/teach/quizzes/{copy_slug}/delete", data={"csrf_token": token, "confirm": "yes"}
    )
    with app.app_context():
        assert db.session.scalar(db.select(QuizRecord).filter_by(slug=copy_slug)) is None
        assert copy_slug not in current_bank().retired


def test_restore_makes_an_old_version_the_draft(app, lecturer):
    """History's Restore puts the first version back into the draft, to publish again."""
    token = write_quiz(lecturer)
    publish(lecturer, token)
    with app.app_context():
        first = db.session.scalar(
            db.select(Publication.id).join(QuizRecord).where(QuizRecord.slug == QUIZ)
        )
    url = f"/teach/quizzes/{QUIZ}/questions/what-gas-do-plants-take-in"
    lecturer.post(
        url,
        data={
            "csrf_token": token,
            "base": base_of(lecturer.get(url)),
            **question_fields("Reworded?"),
        },
    )
    publish(lecturer, token)
    restored = lecturer.post(
        f"/teach/quizzes/{QUIZ}/history/{first}/restore", data={"csrf_token": token}
    )
    assert restored.status_code == 303
    assert "What gas do plants take in?" in text(lecturer.get(EDITOR))
    assert publish(lecturer, token).status_code == 303
    with app.app_context():
        assert current_bank().quizzes[QUIZ].questions[0].prompt == "What gas do plants take in?"


def test_a_publish_reaches_another_worker_at_its_next_check(app, lecturer, tmp_path):
    """A second app on the same database, checking every request, serves the new version."""
    other = make_app(tmp_path, BANK_CHECK_SECONDS=0)
    with other.app_context():
        assert QUIZ not in current_bank().quizzes
    publish(lecturer, write_quiz(lecturer))
    with other.app_context():
        assert current_bank().quizzes[QUIZ].title == "Photosynthesis"


def test_the_file_cannot_take_an_instructors_address(app, lecturer, tmp_path):
    """`flask quiz reload` of a bank with a quiz at the address of Ada's refuses, naming it,
    and both go on being served as they were."""
    publish(lecturer, write_quiz(lecturer))
    bank = json.loads((PROJECT_ROOT / "questions.json").read_text())
    bank["quizzes"][0]["slug"] = QUIZ
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(bank))
    app.config["QUESTIONS_PATH"] = str(path)
    refused = app.test_cli_runner().invoke(args=["quiz", "reload"])
    assert refused.exit_code == 1
    assert f'{path}: quiz "{QUIZ}": an instructor\'s quiz has this address' in refused.stderr
    with app.app_context():
        served = current_bank().quizzes
        assert served[QUIZ].title == "Photosynthesis" and SLUG in served


FEATURES = PROJECT_ROOT / "tests" / "fixtures" / "formats" / "features.gift"


def import_file(client, path, name=None):
    """Send a file through Import a file; returns the report page."""
    with open(path, "rb") as file:
        return client.post(
            "/teach/quizzes/import",
            data={
                "csrf_token": token_of(client),
                "format_name": "",
                "upload": (file, name or path.name),
            },
            content_type="multipart/form-data",
        )


def test_importing_a_file_reports_every_skip_before_storing_anything(app, lecturer):
    """The report lists what will come, every question left out with its place and why, and
    stores nothing; Import then makes a draft whose gaps the editor lists."""
    with app.app_context():
        before = db.session.scalar(db.select(db.func.count(QuizRecord.id)))
    report = import_file(lecturer, FEATURES)
    assert report.status_code == 200, said(report)
    words = said(report)
    assert "Left out" in words and "features.gift" in words
    assert "No question is stored yet." in words
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count(QuizRecord.id))) == before
    parsed = re.search(
        r'name="parsed" type="hidden" value="([^"]*)"', report.get_data(as_text=True)
    )
    made = lecturer.post(
        "/teach/quizzes/import/confirm",
        data={
            "csrf_token": token_of(lecturer),
            "parsed": html.unescape(parsed[1]),
            "into": "",
            "title": "Imported features",
        },
    )
    assert made.status_code == 303
    editor = said(lecturer.get(made.location))
    assert "Edit Imported features" in editor and "never published" in editor
    # Its true/false and select-all questions come as they are, their gaps as gaps to write.
    with app.app_context():
        draft = json.loads(db.session.scalar(db.select(QuizRecord.draft).filter_by(owner_id=1)))
    moon = next(q for q in draft["questions"] if q["id"] == "moon")
    assert (moon["type"], moon["answer"], "if_true" in moon) == ("true_false", False, False)
    assert [q.get("type") for q in draft["questions"]].count("multiple_answers") == 1
    assert "2 answers without what it says" in editor


def test_a_file_imported_twice_into_a_draft_says_its_questions_were_there(app, lecturer):
    """New-instructor review: a second import of the same file doubled every question without
    a word. It still adds them (an author may mean it), and says how many repeat."""

    def imported(into):
        report = import_file(lecturer, FEATURES)
        parsed = re.search(r'name="parsed" type="hidden" value="([^"]*)"', report.text)[1]
        form = {"csrf_token": token_of(lecturer), "parsed": html.unescape(parsed), "into": into,
                "title": "Imported features"}  # fmt: skip
        made = lecturer.post("/teach/quizzes/import/confirm", data=form)
        assert made.status_code == 303
        return made, said(lecturer.get(made.location))

    made, _ = imported("")
    slug = made.location.split("/")[3]
    with app.app_context():
        draft = db.session.scalar(db.select(QuizRecord.draft).filter_by(slug=slug))
        count = len(json.loads(draft)["questions"])
    _, editor = imported(slug)
    assert f"Added {count} imported questions to the draft. {count} of them are worded as " in (
        editor
    )


def test_an_unreadable_file_is_refused_at_its_field_and_stores_nothing(app, lecturer, tmp_path):
    broken = tmp_path / "broken.xml"
    broken.write_text("<quiz><question type='multichoice'>")
    refused = import_file(lecturer, broken)
    assert refused.status_code == 400
    assert "broken.xml" in said(refused) and 'aria-invalid="true"' in refused.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalar(db.select(QuizRecord).filter_by(owner_id=1)) is None


def test_a_tampered_import_is_refused(app, lecturer):
    refused = lecturer.post(
        "/teach/quizzes/import/confirm",
        data={"csrf_token": token_of(lecturer), "parsed": "forged", "into": "", "title": "X"},
    )
    assert refused.status_code == 400 and "import the file again" in said(refused)


def test_a_freed_address_does_not_hand_over_the_deleted_quizs_answers(app, lecturer):
    """Ada deletes a quiz nobody took; Bo takes its address: nothing of Ada's is his to see."""
    token = write_quiz(lecturer)
    publish(lecturer, token)
    lecturer.post(f"/teach/quizzes/{QUIZ}/delete", data={"csrf_token": token, "confirm": "yes"})
    bo = app.test_client()
    login(bo, "bo", "bo password")
    made = bo.post("/teach/quizzes", data={"csrf_token": token_of(bo), "title": "Photosynthesis"})
    assert made.location == EDITOR
    copied = lecturer.post(f"/teach/quizzes/{SLUG}/duplicate", data={"csrf_token": token})
    lecturer.post(copied.location.replace("/edit", "/publish"), data={"csrf_token": token})
    assert bo.get(f"/teach/quizzes/{QUIZ}/preview").status_code == 404
    assert "Plants give oxygen off." not in said(bo.get(f"/teach/quizzes/{QUIZ}/draft"))
    with app.app_context():
        assert QUIZ not in current_bank().retired


def test_a_share_to_use_copies_the_published_version_not_the_draft(app, lecturer):
    """Bo, who may use Ada's quiz, duplicates what students are served; her unpublished draft,
    and a quiz she never published, stay hers."""
    token = write_quiz(lecturer)
    publish(lecturer, token)
    url = f"/teach/quizzes/{QUIZ}/questions/what-gas-do-plants-take-in"
    draft = {
        "csrf_token": token,
        "base": base_of(lecturer.get(url)),
        **question_fields("Secret draft wording?"),
    }
    lecturer.post(url, data=draft)
    with app.app_context():
        record = db.session.scalar(db.select(QuizRecord).filter_by(slug=QUIZ))
        bo = db.session.scalar(db.select(factories.Instructor).filter_by(username="bo"))
        factories.share_quiz(record, bo)
        unpublished = factories.owned_quiz(record.owner, "unpublished", published=False)
        factories.share_quiz(unpublished, bo)
    client = app.test_client()
    login(client, "bo", "bo password")
    copied = client.post(f"/teach/quizzes/{QUIZ}/duplicate", data={"csrf_token": token_of(client)})
    copy = said(client.get(copied.location))
    assert "What gas do plants take in?" in copy and "Secret draft wording?" not in copy
    refused = client.post(
        "/teach/quizzes/unpublished/duplicate", data={"csrf_token": token_of(client)}
    )
    assert refused.status_code == 409 and "not published yet" in said(refused)


def test_the_history_of_a_quiz_never_published_says_so(app, lecturer):
    write_quiz(lecturer)
    page = lecturer.get(f"/teach/quizzes/{QUIZ}/history")
    assert page.status_code == 200 and "Never published." in said(page)


@pytest.mark.parametrize(
    ("content", "said_"),
    [
        (
            "".join(f"::q{n}::Q{n}? {{=a ~b}}\n\n" for n in range(501)),
            "501 questions; a quiz holds at most 500: split the file",
        ),
        (
            "::q::Q? {=a " + " ".join(f"~w{n}" for n in range(21)) + "}\n",
            "22 choices; a question holds at most 20",
        ),
    ],
)
def test_an_import_past_the_limits_is_refused_at_its_field(app, lecturer, tmp_path, content, said_):
    """What the editor could not show, or a worker read in time, is refused before anything."""
    path = tmp_path / "big.gift"
    path.write_text(content)
    refused = import_file(lecturer, path)
    assert refused.status_code == 400 and said_ in said(refused)


def test_a_file_somewhat_over_the_limit_is_refused_at_its_field(app, lecturer):
    """A Moodle export whose pictures take it past 2 MB is told so beside its field, not on an
    error page that loses the form."""
    from werkzeug.test import EnvironBuilder

    content = ("// " + "x" * 2_100_000 + "\n::q::Q? {=a ~b}\n").encode()
    # Built here to be closed: the test client spools a body this large to a temporary file.
    builder = EnvironBuilder(path="/teach/quizzes/import", method="POST", data={
        "csrf_token": token_of(lecturer), "format_name": "",
        "upload": (io.BytesIO(content), "big.gift")})  # fmt: skip
    environ = builder.get_environ()
    try:
        refused = lecturer.open(environ)
    finally:
        environ["wsgi.input"].close()
        builder.close()
    assert refused.status_code == 400 and "big.gift: larger than 2 MB" in said(refused)


def test_the_quiz_list_and_the_editor_cost_the_same_queries_for_a_larger_bank(app, lecturer):
    """Twice the quizzes, and a quiz of twice the questions, cost no more queries: the list is
    one query, the editor reads its quiz's draft once."""
    with app.app_context():
        ada = db.session.scalar(db.select(factories.Instructor).filter_by(username="ada"))

    def counted(quizzes: int, questions: int) -> tuple[int, int]:
        with app.app_context():
            have = db.session.scalar(db.select(db.func.count(QuizRecord.id)))
            for n in range(have - 1, quizzes):
                factories.owned_quiz(ada, f"quiz-{n}", questions=questions, published=False)
        with queries(app) as listed:
            assert lecturer.get("/teach/quizzes").status_code == 200
        with queries(app) as edited:
            assert lecturer.get(f"/teach/quizzes/quiz-{quizzes - 1}/edit").status_code == 200
        return len(listed), len(edited)

    small = counted(10, 5)
    assert counted(20, 10) == small
    # A few queries each, the same however large the bank.
    assert small[0] <= 3 and small[1] <= 3, small


def test_a_reload_speaks_only_of_the_files_quizzes(app, lecturer):
    """An instructor's archived quiz is none of `flask quiz reload`'s business."""
    token = write_quiz(lecturer)
    publish(lecturer, token)
    Student(app.test_client()).start(name="Sam", slug=QUIZ)
    lecturer.post(f"/teach/quizzes/{QUIZ}/delete", data={"csrf_token": token, "confirm": "yes"})
    reloaded = app.test_cli_runner().invoke(args=["quiz", "reload"])
    assert reloaded.exit_code == 0 and QUIZ not in reloaded.output


def test_two_choices_that_say_the_same_are_refused_beside_the_second(app, lecturer):
    token = write_quiz(lecturer)
    fields = question_fields("Twice?", **{"choices-1-text": "Carbon dioxide"})
    page = lecturer.post(
        f"/teach/quizzes/{QUIZ}/new-question", data={"csrf_token": token, "base": "", **fields}
    )
    assert page.status_code == 400
    assert "Another choice says the same: change or clear one." in said(page)


def test_saving_a_question_deleted_meanwhile_keeps_what_was_typed(app, lecturer):
    """Bo deletes the question Ada has open: her save says so and keeps her words in the form."""
    token = write_quiz(lecturer)
    url = f"/teach/quizzes/{QUIZ}/questions/what-gas-do-plants-take-in"
    base = base_of(lecturer.get(url))
    lecturer.post(f"{url}/delete", data={"csrf_token": token})
    clash = lecturer.post(
        url, data={"csrf_token": token, "base": base, **question_fields("My careful rewording?")}
    )
    assert clash.status_code == 409
    assert "deleted this question since you opened it" in said(clash)
    assert "My careful rewording?" in said(clash)


def test_on_a_first_start_the_site_quizzes_are_there_for_the_first_page_that_asks(app):
    """Nothing was published yet: the first page an instructor opens, the Assign form here,
    publishes the file's quizzes before asking which of them the instructor may use."""
    with app.app_context():
        teacher = factories.instructor("ada", "ada password")
        class_id = factories.class_(teacher).id
    client = app.test_client()
    login(client, "ada", "ada password")
    form = client.get(f"/teach/classes/{class_id}/assignments/new").get_data(as_text=True)
    assert f'value="{SLUG}"' in form


def test_a_file_larger_than_the_browser_takes_is_refused_at_its_field(tmp_path):
    """IMPORT_BYTES holds what one request reads (2 MB unless set): past it, the field says so."""
    app = make_app(tmp_path, IMPORT_BYTES=100_000)
    with app.app_context():
        factories.instructor("ada", "ada password")
    client = app.test_client()
    login(client, "ada", "ada password")
    path = tmp_path / "big.gift"
    path.write_text("// " + "x" * 100_000 + "\n::q::Q? {=a ~b}\n")
    refused = import_file(client, path)
    assert refused.status_code == 400 and "big.gift: larger than 100,000 bytes" in said(refused)


def test_a_question_of_20_sources_opens_and_saves_with_all_of_them(app, lecturer):
    """The editor offers a row for one more source only while the question may hold another:
    one with all 20 opens (with a 21st row it was a 500) and saves them all."""
    token = write_quiz(lecturer)
    url = f"/teach/quizzes/{QUIZ}/questions/what-gas-do-plants-take-in"
    sources = {}
    for n in range(20):
        sources |= {f"sources-{n}-title": f"Source {n}", f"sources-{n}-url": f"https://e.org/{n}"}
    fields = {"csrf_token": token, "base": base_of(lecturer.get(url)), **question_fields()}
    assert lecturer.post(url, data={**fields, **sources}).status_code == 303
    editing = lecturer.get(url)
    assert editing.status_code == 200
    page = editing.get_data(as_text=True)
    assert 'name="sources-19-url"' in page and 'name="sources-20-url"' not in page
    assert "A question holds at most 20." in said(editing) and "another empty row" not in page
    fields["base"] = base_of(editing)
    assert lecturer.post(url, data={**fields, **sources}).status_code == 303
    with app.app_context():
        record = db.session.scalar(db.select(QuizRecord).filter_by(slug=QUIZ))
        kept = drafts.draft_of(record)["questions"][0]["references"]
    assert [source["url"] for source in kept] == [f"https://e.org/{n}" for n in range(20)]


def test_an_expired_form_in_the_editor_leads_back_to_what_it_was_on(app, lecturer):
    """A long pause ends a session most often in the editor: the expired form's page leads back
    to the question, the quiz or the list it was on, not to the students' quizzes."""
    write_quiz(lecturer)
    question = f"/teach/quizzes/{QUIZ}/questions/what-gas-do-plants-take-in"
    stale = {"csrf_token": "stale"}
    for sent, back in [
        (question, f'<a href="{question}">Back to the question</a>'),
        (f"{question}/down", f'<a href="{question}">Back to the question</a>'),
        (EDITOR, f'<a href="{EDITOR}">Back to the quiz</a>'),
        (f"/teach/quizzes/{QUIZ}/publish", f'<a href="{EDITOR}">Back to the quiz</a>'),
        ("/teach/quizzes", '<a href="/teach/quizzes">Back to your quizzes</a>'),
        ("/teach", '<a href="/teach">Back to your classes</a>'),
    ]:
        refused = lecturer.post(sent, data=stale)
        assert refused.status_code == 400 and "This form has expired" in text(refused), sent
        assert back in text(refused), sent


def test_a_quiz_of_500_questions_takes_no_more_and_says_so_at_the_question(app, lecturer):
    with app.app_context():
        ada = db.session.scalar(db.select(factories.Instructor).filter_by(username="ada"))
        factories.owned_quiz(ada, QUIZ, questions=500, published=False)
    fields = {"csrf_token": token_of(lecturer), "base": "", **question_fields("One more?")}
    refused = lecturer.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields)
    assert refused.status_code == 400
    assert "A quiz holds at most 500 questions; the draft has 500" in said(refused)
    with app.app_context():
        record = db.session.scalar(db.select(QuizRecord).filter_by(slug=QUIZ))
        assert len(drafts.draft_of(record)["questions"]) == 500


def test_markdown_written_in_the_editor_reaches_students_as_safe_rich_text(app, lecturer):
    """Emphasis, code and a code block in the question, a list and a link in an explanation:
    the student reads them formatted, the link opens without a Referer, typed HTML stays text."""
    token = write_quiz(lecturer, questions=())
    fields = question_fields(
        "Which gas do **plants** take in? <script>alert(1)</script>\n\n```\n6 CO2 + 6 H2O\n```",
        **{"choices-0-text": "`CO2`", "choices-1-explanation": "No:\n\n- it is given off\n- see "
           "[oxygen](https://en.wikipedia.org/wiki/Oxygen)"},
    )  # fmt: skip
    saved = lecturer.post(
        f"/teach/quizzes/{QUIZ}/new-question", data={"csrf_token": token, "base": "", **fields}
    )
    assert saved.status_code == 303
    assert "<strong>plants</strong>" in lecturer.get(f"/teach/quizzes/{QUIZ}/draft").get_data(
        as_text=True
    )
    assert publish(lecturer, token).status_code == 303
    student = Student(app.test_client())
    assert student.start(name="Sam", slug=QUIZ).status_code == 303
    asked = student.client.get(student.question_url(1)).get_data(as_text=True)
    assert "Which gas do <strong>plants</strong> take in? &lt;script&gt;" in asked
    # The code after the question's first paragraph shows beneath it, as a block.
    assert '<div class="prompt-more"><pre><code>6 CO2 + 6 H2O\n</code></pre></div>' in asked
    assert "<span><code>CO2</code></span>" in asked
    with app.app_context():
        wrong = current_bank().quizzes[QUIZ].questions[0].choices[1].id
    assert student.answer(1, wrong).status_code == 303
    feedback = student.client.get(student.question_url(1)).get_data(as_text=True)
    assert "<li>it is given off</li>" in feedback
    assert (
        '<a href="https://en.wikipedia.org/wiki/Oxygen" rel="noopener noreferrer">oxygen</a>'
        in feedback
    )
    assert "<script>" not in feedback


def draft_question(app, number: int = 0) -> dict:
    with app.app_context():
        draft = db.session.scalar(db.select(QuizRecord.draft).filter_by(slug=QUIZ))
        return json.loads(draft)["questions"][number]


def test_the_editor_writes_a_true_false_question_and_its_points(app, lecturer):
    """A true/false question is chosen when it is added; it asks whether the statement is true
    and what each answer says, and keeps its points; the preview shows its key."""
    token = write_quiz(lecturer, questions=())
    adding = said(lecturer.get(EDITOR))
    assert f'href="/teach/quizzes/{QUIZ}/new-question?type=true_false">True or false</a>' in adding
    page = said(lecturer.get(f"/teach/quizzes/{QUIZ}/new-question?type=true_false"))
    assert 'name="kind" type="hidden" value="true_false"' in page and "choices-0-text" not in page
    fields = {"csrf_token": token, "base": "", "kind": "true_false",
              "prompt": "Plants take in oxygen at night.", "points": "2,5",
              "explanation": "They respire.", "sources-0-title": "Respiration",
              "sources-0-url": "https://en.wikipedia.org/wiki/Cellular_respiration"}  # fmt: skip
    refused = lecturer.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields)
    assert refused.status_code == 400
    assert "Say whether the statement is true or false." in said(refused)
    fields |= {"answer": "true", "if_true": "Yes: they respire.", "points": "2,5"}
    assert lecturer.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields).status_code == 303
    stored = draft_question(app)
    assert {k: stored[k] for k in ("type", "answer", "if_true", "points")} == {
        "type": "true_false", "answer": True, "if_true": "Yes: they respire.", "points": 2.5,
    }  # fmt: skip
    assert "if_false" not in stored
    assert "1 answer without what it says" in said(lecturer.get(EDITOR))
    editing = said(lecturer.get(f"/teach/quizzes/{QUIZ}/questions/{stored['id']}"))
    assert 'id="answer-true" value="true" checked' in editing and 'value="2.5"' in editing


def test_the_editor_writes_a_select_all_question_with_its_scoring(app, lecturer):
    """Several choices ticked right, a share of the points for one, all-or-nothing scoring;
    no right choice ticked and a share that is no percent are refused beside their fields."""
    token = write_quiz(lecturer, questions=())
    fields = {
        **question_fields("Which gases do plants exchange?", right=""),
        "csrf_token": token, "base": "", "kind": "multiple_answers",
        "choices-2-text": "Neon", "choices-2-weight": "much",
    }  # fmt: skip
    refused = lecturer.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields)
    words = said(refused)
    assert refused.status_code == 400
    assert "Tick at least one right choice." in words
    assert 'id="choices-2-weight-error">Give a percent from -100 to 100.' in words
    fields |= {"choices-0-right": "y", "choices-1-right": "y", "choices-2-weight": "-50",
               "scoring": "all_or_nothing"}  # fmt: skip
    saved = lecturer.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields)
    assert saved.status_code == 303, said(saved)
    stored = draft_question(app)
    assert stored["type"] == "multiple_answers" and stored["scoring"] == "all_or_nothing"
    assert [(c["text"], c["correct"], c.get("fraction")) for c in stored["choices"]] == [
        ("Carbon dioxide", True, None), ("Oxygen", True, None), ("Neon", False, -0.5),
    ]  # fmt: skip
    # The kind a stored question has stays, whatever the form says.
    url = f"/teach/quizzes/{QUIZ}/questions/{stored['id']}"
    again = {**fields, "kind": "single_choice", "right": "0", "base": base_of(lecturer.get(url))}
    assert lecturer.post(url, data=again).status_code == 303
    assert draft_question(app)["type"] == "multiple_answers"
    assert publish(lecturer, token).status_code == 303


def test_the_editor_refuses_shares_that_make_full_marks_impossible_or_contradict_the_ticks(
    app, lecturer
):
    """A right choice at -20%, a wrong one at +30%: each refused beside its field. Right shares
    of 30% and 30%: full marks impossible, refused. One right share of 50% and the other blank:
    the blank one takes the other 50%."""
    token = write_quiz(lecturer, questions=())
    base = {
        **question_fields("Which gases do plants exchange?", right=""),
        "csrf_token": token, "base": "", "kind": "multiple_answers",
        "choices-0-right": "y", "choices-1-right": "y", "choices-2-text": "Neon",
    }  # fmt: skip
    url = f"/teach/quizzes/{QUIZ}/new-question"
    contrary = {**base, "choices-0-weight": "-20", "choices-2-weight": "30"}
    contrary = lecturer.post(url, data=contrary)
    words = said(contrary)
    assert contrary.status_code == 400
    assert 'id="choices-0-weight-error">A right choice earns more than 0.' in words
    assert 'id="choices-2-weight-error">A wrong choice earns 0 or less.' in words
    short = lecturer.post(url, data={**base, "choices-0-weight": "30", "choices-1-weight": "30"})
    assert short.status_code == 400 and "shares make 60%, not 100%" in said(short)
    half = lecturer.post(url, data={**base, "choices-0-weight": "50"})
    assert half.status_code == 303, said(half)
    with app.app_context():
        quiz = build_quiz(json.loads(db.session.scalar(
            db.select(QuizRecord.draft).filter_by(slug=QUIZ)
        )))  # fmt: skip
    assert [c.fraction for c in quiz.questions[0].choices] == [0.5, 0.5, -0.5]


def test_the_editor_writes_a_numerical_question_with_units_and_a_partial_answer(app, lecturer):
    """Accepted numbers with a tolerance and shares, units as "m, cm = 100": a number that is
    none, a share past 100% and a unit with a digit are refused beside their fields; the saved
    question opens again as written, and a student is marked by it."""
    token = write_quiz(lecturer, questions=())
    page = said(lecturer.get(f"/teach/quizzes/{QUIZ}/new-question?type=numerical"))
    assert "Accepted answers" in page and "choices-0-text" not in page
    assert 'id="answers-0-tolerance"' in page and 'id="units"' in page
    fields = {
        "csrf_token": token, "base": "", "kind": "numerical",
        "prompt": "How tall is the seedling, in metres?", "points": "2",
        "answers-0-text": "one", "answers-0-tolerance": "0,05",
        "answers-0-feedback": "Yes: about 1.5 m.",
        "answers-1-text": "150", "answers-1-weight": "150", "answers-2-text": "1,500",
        "units": "m, c2m = 100", "otherwise": "Measure it again.",
        "explanation": "Seedlings grow.", "sources-0-title": "Seedling",
        "sources-0-url": "https://en.wikipedia.org/wiki/Seedling",
    }  # fmt: skip
    refused = lecturer.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields)
    words = said(refused)
    assert refused.status_code == 400
    assert 'id="answers-0-text-error">Give a number, such as 3.5 or 1e-3.' in words
    assert 'id="answers-1-weight-error">Give a percent from 0 to 100.' in words
    assert "“c2m” cannot be a unit" in words
    # A thousand in English, one and a half in German: asked, never guessed.
    assert 'id="answers-2-text-error">Is “1,500” a number in thousands? Write it without ' \
        "commas (1500), or with a decimal point." in words  # fmt: skip
    fields |= {"answers-0-text": "1.5", "answers-1-weight": "50", "units": "m, cm = 100",
               "answers-2-text": ""}  # fmt: skip
    saved = lecturer.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields)
    assert saved.status_code == 303, said(saved)
    stored = draft_question(app)
    assert {k: stored[k] for k in ("type", "points", "answers", "units", "otherwise")} == {
        "type": "numerical", "points": 2,
        "answers": [{"value": 1.5, "tolerance": 0.05, "feedback": "Yes: about 1.5 m."},
                    {"value": 150, "fraction": 0.5}],
        "units": [{"unit": "m"}, {"unit": "cm", "multiplier": 100}],
        "otherwise": "Measure it again.",
    }  # fmt: skip
    editing = said(lecturer.get(f"/teach/quizzes/{QUIZ}/questions/{stored['id']}"))
    assert 'value="0.05"' in editing and 'value="m, cm = 100"' in editing
    assert "(numerical, 2 accepted answers)" in said(lecturer.get(EDITOR))
    assert publish(lecturer, token).status_code == 303
    student = Student(app.test_client())
    assert student.start(slug=QUIZ).status_code == 303
    assert student.post(student.question_url(1), typed="152 cm").status_code == 303
    assert "Correct." in said(student.client.get(student.question_url(1)))


def test_the_editor_writes_a_short_answer_that_must_be_fully_possible(app, lecturer):
    """Accepted words with a wildcard and capitals that count; no answer at 100% is refused;
    a row with feedback but no answer is refused beside it; other answers' feedback missing is
    a gap in the checklist."""
    token = write_quiz(lecturer, questions=())
    fields = {
        "csrf_token": token, "base": "", "kind": "short_answer",
        "prompt": "Which gas do plants take in?", "answers-0-text": "CO2",
        "answers-0-weight": "50", "answers-1-feedback": "Said to nobody.",
        "case_sensitive": "y", "explanation": "They fix carbon.",
        "sources-0-title": "Photosynthesis",
        "sources-0-url": "https://en.wikipedia.org/wiki/Photosynthesis",
    }  # fmt: skip
    refused = lecturer.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields)
    assert refused.status_code == 400
    assert 'id="answers-1-text-error">Write the answer this is for' in said(refused)
    fields |= {"answers-1-feedback": ""}
    refused = lecturer.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields)
    assert "Give one answer 100% (or leave its share empty)" in said(refused)
    # Where capitals do not count, "co2" is "CO2" again: a row that would never mark a reply.
    fields |= {"answers-1-text": "co2", "answers-1-weight": "100", "case_sensitive": ""}
    twice = lecturer.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields)
    assert twice.status_code == 400
    assert 'id="answers-1-text-error">Another answer above says the same' in said(twice)
    fields |= {"answers-1-text": "carbon dio*ide", "answers-1-weight": "", "case_sensitive": "y"}
    assert lecturer.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields).status_code == 303
    stored = draft_question(app)
    assert stored["case_sensitive"] is True and stored["answers"] == [
        {"text": "CO2", "fraction": 0.5}, {"text": "carbon dio*ide"},
    ]  # fmt: skip
    checklist = said(lecturer.get(EDITOR))
    assert "Nothing said to other answers" in checklist
    assert "2 answers without feedback" in checklist


def test_a_draft_without_a_description_can_be_previewed(app, lecturer):
    """Lecturer review: an imported draft had no preview until its description was written."""
    write_quiz(lecturer, description="")
    preview = lecturer.get(f"/teach/quizzes/{QUIZ}/draft")
    assert preview.status_code == 200 and "What gas do plants take in?" in said(preview)
