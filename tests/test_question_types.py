"""The question-type seam: every type is complete, the bank knows each, and the student's
answer goes through the question's type from form to verdict to stored answer."""

import json
from collections import Counter
from dataclasses import replace

import pytest

from app import formats
from app.bank import BankError, build_quiz, load_bank
from app.config import PROJECT_ROOT
from app.question_types import DEFAULT, TYPES, Question, QuestionType, right_choice, type_of
from app.question_types.single_choice import SingleChoice
from app.teach import exports

from helpers import SLUG, wrong_choice

pytestmark = pytest.mark.any_database

MACROS = ("answer", "verdict", "review")
"""What templates/questions/<type>.html draws for the pages."""


def seed() -> dict:
    return json.loads((PROJECT_ROOT / "questions.json").read_text())


def test_every_type_is_whole_and_the_bank_schema_names_it(app):
    """Each registered type implements the interface, has its template's macros, and is a
    "type" the bank schema accepts; the schema accepts no other."""
    schema = json.loads((PROJECT_ROOT / "app/questions.schema.json").read_text())
    assert schema["$defs"]["question"]["properties"]["type"]["enum"] == sorted(TYPES)
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
        "'essay' is not a question type here: use one of single_choice"
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
    answer = ("Ada", None, 1, 7, question.id, wrong.id, False, 0.0, None)
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
    other = replace(quiz.questions[1], type="numerical")
    mixed = replace(quiz, questions=(quiz.questions[0], other))
    with pytest.raises(formats.FormatError) as refused:
        formats.export_quiz(mixed, "gift")
    assert refused.value.errors == [f'question "{other.id}" is numerical, which gift cannot hold']
