"""The question-type seam: every type is complete, the bank knows each, and the student's
answer goes through the question's type from form to verdict to stored answer."""

import json
import random
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import factories
import pytest

from app import formats
from app.bank import BankError, build_quiz, load_bank
from app.config import PROJECT_ROOT
from app.extensions import db
from app.models import Answer, FeedbackWhen
from app.question_types import DEFAULT, TYPES, Question, QuestionType, right_choice, type_of
from app.question_types.single_choice import SingleChoice
from app.served import current_bank
from app.teach import exports

from helpers import SLUG, Student, login, make_app, text, wrong_choice

pytestmark = pytest.mark.any_database

MACROS = ("answer", "verdict", "review")
"""What templates/questions/<type>.html draws for the pages."""


def seed() -> dict:
    return json.loads((PROJECT_ROOT / "questions.json").read_text())


def test_every_type_is_whole_and_the_bank_schema_names_it(app):
    """Each registered type implements the interface, has its template's macros, and is a
    "type" the bank schema accepts, with its fields in a definition of its own; the schema
    accepts no other."""
    schema = json.loads((PROJECT_ROOT / "app/questions.schema.json").read_text())
    assert sorted(schema["$defs"]["question"]["properties"]["type"]["enum"]) == sorted(TYPES)
    branches = [branch["then"]["$ref"] for branch in schema["$defs"]["question"]["allOf"]]
    assert branches == [f"#/$defs/{name}" for name in TYPES]
    assert DEFAULT in TYPES
    for name, kind in TYPES.items():
        assert isinstance(kind, QuestionType) and kind.name == name
        module = app.jinja_env.get_template(f"questions/{name}.html").module
        assert all(callable(getattr(module, macro, None)) for macro in MACROS), name


def test_a_question_without_a_type_is_single_choice():
    """Banks written before types existed keep their meaning, and their version."""
    data = seed()["quizzes"][0]
    typed = json.loads(json.dumps(data))
    for question in typed["questions"]:
        question["type"] = "single_choice"
    plain, explicit = build_quiz(data), build_quiz(typed)
    assert {type(type_of(q)) for q in plain.questions} == {SingleChoice}
    assert plain.questions == explicit.questions
    assert plain.version != explicit.version  # the file changed, so the version does


def test_an_unknown_type_is_refused_where_it_is_written(tmp_path):
    """A type the install does not have is named, with the question it is on."""
    data = seed()
    data["quizzes"][0]["questions"][1]["type"] = "essay"
    bank = tmp_path / "questions.json"
    bank.write_text(json.dumps(data))
    with pytest.raises(BankError) as refused:
        load_bank(bank)
    question = data["quizzes"][0]["questions"][1]["id"]
    assert refused.value.errors == [
        f'{bank}: quiz "{SLUG}", question "{question}", field "type": '
        "'essay' is not a question type here: "
        f"use one of {', '.join(TYPES)}"
    ]


class Watched(SingleChoice):
    """Single choice, noting which of its methods the app called."""

    def __init__(self):
        self.calls = Counter()

    def answer_form(self, *args, **kwargs):
        self.calls["answer_form"] += 1
        return super().answer_form(*args, **kwargs)

    def grade(self, question, response):
        self.calls["grade"] += 1
        return super().grade(question, response)

    def describe(self, question, response):
        self.calls["describe"] += 1
        return super().describe(question, response)


def test_answering_goes_through_the_questions_type(app, student, quiz, monkeypatch):
    """The answer page's form, the verdict stored and shown, all come from the type."""
    watched = Watched()
    monkeypatch.setitem(TYPES, "single_choice", watched)
    student.start()
    question = quiz.questions[0]
    refused = student.answer(1, "no-such-choice")
    assert refused.status_code == 400
    assert "<title>Choose one answer · Question 1 of 8" in refused.get_data(as_text=True)
    assert watched.calls == {"answer_form": 1}
    assert student.answer(1, right_choice(question).id).status_code == 303
    assert watched.calls["answer_form"] == 2 and watched.calls["grade"] >= 1
    page = student.client.get(student.question_url(1)).get_data(as_text=True)
    assert "Correct." in page


def test_the_responses_export_words_answers_through_the_type(monkeypatch):
    """The responses CSV names each answer as its question's type describes it."""
    quiz = load_bank(PROJECT_ROOT / "questions.json").quizzes[SLUG]
    question = quiz.questions[0]
    watched = Watched()
    monkeypatch.setitem(TYPES, "single_choice", watched)
    wrong = wrong_choice(question)
    answer = ("Ada", None, 1, 7, question.id, wrong.id, False, 0.0, None, None, None, None)
    _, rows = exports.responses("Physics", {7: quiz}, [answer])
    [row] = list(rows)
    assert wrong.text in row and watched.calls == {"describe": 1}


def test_the_tally_lists_every_choice_and_the_warning_names_a_popular_wrong_one():
    """Counts come back in the order shown, the key marked; a wrong choice chosen more than
    any other is named, and a tie names none."""
    question: Question = load_bank(PROJECT_ROOT / "questions.json").quizzes[SLUG].questions[0]
    kind = type_of(question)
    wrong, right = wrong_choice(question), right_choice(question)
    counts = Counter({wrong.id: 3, right.id: 1})
    tally = kind.tally(question, counts)
    assert [line.text for line in tally] == [choice.text for choice in question.choices]
    assert [line.count for line in tally if line.right] == [1]
    assert kind.misread(question, counts) == wrong.text
    assert kind.misread(question, Counter({wrong.id: 2, right.id: 2})) is None


def test_a_format_refuses_a_type_it_cannot_hold_and_knows_only_registered_ones():
    """Each format says which types it reads and writes; an export of any other names the
    question rather than writing it wrong."""
    quiz = load_bank(PROJECT_ROOT / "questions.json").quizzes[SLUG]
    for name, module in formats.FORMATS.items():
        assert set(TYPES) >= module.TYPES, name
    other = replace(quiz.questions[1], type="multiple_answers")
    mixed = replace(quiz, questions=(quiz.questions[0], other))
    with pytest.raises(formats.FormatError) as refused:
        formats.export_quiz(mixed, "aiken")
    assert refused.value.errors == [
        f'question "{other.id}" is multiple_answers, which aiken cannot hold'
    ]


def several(scoring: str = "partial", **fractions: float) -> Question:
    """A select-all-that-apply question: a and b right, c and d wrong."""
    choices = [
        {"id": key, "text": key.upper(), "correct": key in "ab", "explanation": f"Why {key}."}
        for key in "abcd"
    ]
    for choice in choices:
        if choice["id"] in fractions:
            choice["fraction"] = fractions[choice["id"]]
    data = {"id": "q", "type": "multiple_answers", "prompt": "Which?", "scoring": scoring,
            "points": 2, "choices": choices, "explanation": "Both.", "references": []}  # fmt: skip
    return TYPES["multiple_answers"].build(data)


@pytest.mark.parametrize(
    ("response", "mark"),
    [("a,b", 1), ("a", 0.5), ("a,c", 0), ("a,b,c", 0.5), ("c,d", 0), ("b", 0.5)],
)
def test_several_answers_earn_partial_credit_floored_at_nothing(response, mark):
    """By default each right choice earns its share and each wrong one takes as much away,
    never below 0; the mark is a share of the question's 2 points."""
    feedback = TYPES["multiple_answers"].grade(several(), response)
    assert feedback.mark == mark and feedback.points == 2 * mark
    assert feedback.correct is (mark == 1) and feedback.partial is (0 < mark < 1)


def test_several_answers_all_or_nothing_and_the_authors_fractions():
    """All or nothing gives the points only for exactly the right choices; fractions the author
    gives are Moodle's, summed; three thirds make a whole mark."""
    kind = TYPES["multiple_answers"]
    strict = several("all_or_nothing")
    assert [kind.grade(strict, r).mark for r in ("a,b", "a", "a,b,c")] == [1, 0, 0]
    thirds = several(a=1 / 3, b=2 / 3, c=-0.25)
    assert kind.grade(thirds, "a,b").mark == 1 and kind.grade(thirds, "a,b,c").mark == 0.75
    written = several(a=0.3333333, b=0.6666666)  # as GIFT and Moodle XML write thirds
    assert kind.grade(written, "a,b").correct and kind.grade(written, "a,b").points == 2
    # Nothing, a choice the question lacks, or one twice: not an answer to this question.
    assert [kind.grade(strict, r) for r in ("", "a,x", "a,a")] == [None, None, None]


def test_several_answers_are_counted_per_choice_and_a_popular_wrong_one_is_named():
    """The class page counts how many ticked each choice; a wrong one ticked by most of the
    class, and more often than every right one, is named."""
    question, kind = several(), TYPES["multiple_answers"]
    counts = Counter({"c,d": 3, "a,c": 1, "b": 1})
    assert [(line.text, line.count, line.right) for line in kind.tally(question, counts)] == [
        ("A", 1, True), ("B", 1, True), ("C", 4, False), ("D", 3, False),
    ]  # fmt: skip
    assert kind.misread(question, counts) == "C"
    # C ticked by most, but A as often: the class did not prefer the wrong one.
    assert kind.misread(question, Counter({"a,c": 3, "a,b": 1, "b,c": 1})) is None
    assert kind.describe(question, "a,c") == "A; C"


def test_true_false_is_two_fixed_answers_with_their_own_feedback():
    """True comes first in every attempt, each answer says its own words, and the key is the
    answer the author gave."""
    data = {"id": "t", "type": "true_false", "prompt": "Checkpointing saves memory.",
            "answer": True, "if_true": "Yes: it stores less.", "if_false": "It does save it.",
            "explanation": "It trades compute for memory.", "references": []}  # fmt: skip
    kind = TYPES["true_false"]
    question = kind.build(data)
    assert [(c.id, c.text, c.correct) for c in question.choices] == [
        ("true", "True", True), ("false", "False", False),
    ]  # fmt: skip
    assert question.choices[1].explanation == "It does save it."
    assert kind.arrangement(question, random.Random(1)) is None
    assert kind.grade(question, "false").mark == 0 and kind.grade(question, "true").correct
    assert kind.grade(question, "maybe") is None


def typed_bank(tmp_path) -> str:
    """The seed quiz with question 1 a true/false and question 2 a select-all worth 2 points."""
    bank = seed()
    questions = bank["quizzes"][0]["questions"]
    first, second = questions[0], questions[1]
    questions[0] = {
        "id": first["id"], "type": "true_false", "prompt": "Checkpointing stores every activation.",
        "answer": False, "if_true": "It keeps only some.", "if_false": "Right: only some.",
        "explanation": first["explanation"], "references": first["references"],
    }  # fmt: skip
    questions[1] = {
        **second, "type": "multiple_answers", "points": 2,
        "choices": [{**c, "correct": n < 2} for n, c in enumerate(second["choices"])],
    }  # fmt: skip
    path = tmp_path / "typed.json"
    path.write_text(json.dumps(bank))
    return str(path)



def test_the_preview_says_how_each_question_is_marked(tmp_path):
    """New-instructor review: the preview hid a question's points and how a select-all is
    marked, which students read on their question page."""
    app = make_app(tmp_path, QUESTIONS_PATH=typed_bank(tmp_path))
    with app.app_context():
        factories.instructor()
    teacher = app.test_client()
    assert login(teacher, "teacher", "correct horse").status_code == 303
    page = text(teacher.get(f"/teach/quizzes/{SLUG}/preview"))
    assert '<p class="meta">1 point.</p>' in page  # the true/false
    assert ("2 points: partial credit, never below 0; each choice ticked adds +50%, +50%, "
            "-50%, -50% of the points, in the order below.") in page  # fmt: skip


@pytest.mark.postgres
def test_a_student_answers_each_type_and_is_scored_in_points(tmp_path):
    """True/false by radio, select-all by checkboxes: a form with nothing ticked is refused
    where the choices are and stores nothing; one right of two earns 1 of 2 points, shown as
    partly correct with the missed answer named; the score is out of 9."""
    app = make_app(tmp_path, QUESTIONS_PATH=typed_bank(tmp_path))
    student = Student(app.test_client())
    student.start()
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    page = text(student.client.get(student.question_url(1)))
    assert 'type="radio" value="true"' in page and page.index(">True<") < page.index(">False<")
    assert 'class="meta">1 point' not in page
    assert student.answer(1, "false").status_code == 303
    checked = text(student.client.get(student.question_url(1)))
    assert "Correct.</strong> You answered False." in checked

    page = text(student.client.get(student.question_url(2)))
    assert '<p class="meta">2 points</p>' in page  # before answering, as question 1 has none
    assert page.count('type="checkbox"') == len(quiz.questions[1].choices)
    assert "Choose every answer that applies." in page
    refused = student.post(student.question_url(2))
    assert refused.status_code == 400 and "Choose at least one answer." in text(refused)
    right = quiz.questions[1].choices[0]
    assert student.post(student.question_url(2), choice=[right.id]).status_code == 303
    feedback = text(student.client.get(student.question_url(2)))
    assert "Partly correct (1 of 2 points).</strong>" in feedback
    assert feedback.count("Not chosen") == 1 and "The right answers are" in feedback
    with app.app_context():
        stored = {a.question_id: a for a in db.session.scalars(db.select(Answer))}
        assert (stored[quiz.questions[1].id].mark, stored[quiz.questions[1].id].response) == (
            0.5, right.id,
        )  # fmt: skip
    results = text(student.client.get(student.results_url))
    assert "2 of 9 points so far" in results and "Partly correct" in results


def held_feedback_student(app) -> tuple:
    """The quiz, and a student who started it in a class that holds feedback until the
    attempt ends."""
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
        class_ = factories.class_(factories.instructor(), join_code="ABCDEF")
        factories.assignment(class_, quiz, feedback=FeedbackWhen.AFTER_ATTEMPT)
    student = Student(app.test_client())
    assert student.start(class_code="ABCDEF").status_code == 303
    return quiz, student


@pytest.mark.postgres
def test_held_feedback_keeps_each_types_key_until_the_attempt_ends(tmp_path):
    """Under feedback after the attempt, a true/false and a select-all answer are saved in the
    student's own words; neither page, nor the results before finishing, tells what is right."""
    quiz, student = held_feedback_student(make_app(tmp_path, QUESTIONS_PATH=typed_bank(tmp_path)))
    several = quiz.questions[1]
    assert student.answer(1, "true").status_code == 303
    assert student.post(student.question_url(2), choice=[c.id for c in several.choices[1:3]])
    pages = [text(student.client.get(student.question_url(n))) for n in (1, 2)]
    pages.append(text(student.client.get(student.results_url)))
    # Offered again to change, as chosen: nothing but the student's own choice is marked.
    assert re.findall(r'checked id="choice-\d" name="choice" [^>]*value="(\w+)"', pages[0]) == [
        "true"
    ]
    ticked = re.findall(r'checked id="choice-\d" name="choice" [^>]*value="([\w-]+)"', pages[1])
    assert sorted(ticked) == sorted(c.id for c in several.choices[1:3])
    for page in pages:
        for words in ("Correct", "Incorrect", "Partly correct", "Right answer", "right answers",
                      "statement is", "Not chosen", "It keeps only some.", "Right: only some."):
            assert words not in page, words


def test_each_type_writes_back_the_entry_it_was_built_from(tmp_path):
    """A type's data is the bank entry its build reads: the seed's questions, a true/false and
    a select-all with one fraction of the author's come back as written."""
    questions = json.loads(Path(typed_bank(tmp_path)).read_text())["quizzes"][0]["questions"]
    questions[1]["choices"][2]["fraction"] = -0.25
    questions[1]["scoring"] = "all_or_nothing"
    for entry in questions:
        kind = TYPES[entry.get("type", DEFAULT)]
        assert kind.data(kind.build(entry)) == entry
