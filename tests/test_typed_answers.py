"""Numerical and short-answer questions: what students type, how it is read and marked, what
the pages and the statistics say of it, and that held feedback keeps their keys."""

import csv
import io
import json
import re
from collections import Counter

import factories
import pytest
from test_question_types import held_feedback_student
from test_question_types import typed_bank as types_bank
from wtforms import ValidationError

from app.bank import build_quiz, problems
from app.config import PROJECT_ROOT
from app.extensions import db
from app.models import Answer
from app.question_types import TYPES
from app.question_types.short_answer import readable
from app.reports import ItemRow
from app.served import current_bank

from helpers import SLUG, Student, login, make_app, queries, text

SOURCE = [{"title": "Moodle docs", "url": "https://docs.moodle.org/en/Numerical_question_type"}]
DISTANCE = {
    "id": "distance", "type": "numerical", "prompt": "How far, in metres?", "points": 2,
    "answers": [
        {"value": 1.5, "tolerance": 0.1, "feedback": "Yes: one and a half metres."},
        {"value": 15, "fraction": 0.5, "feedback": "Ten times too far: check the unit."},
    ],
    "units": [{"unit": "m"}, {"unit": "cm", "multiplier": 100}],
    "otherwise": "Measure it again: it is under two metres.",
    "explanation": "Metres are the base unit.", "references": SOURCE,
}  # fmt: skip
CAPITAL = {
    "id": "capital", "type": "short_answer", "prompt": "Which city is the capital of France?",
    "answers": [
        {"text": "Paris", "feedback": "Paris it is."},
        {"text": "Par*", "fraction": 0.5, "feedback": "Nearly: the city's name is Paris."},
    ],
    "otherwise": "It is Paris.", "explanation": "Paris has been the capital since 987.",
    "references": SOURCE,
}  # fmt: skip
NUMERICAL, SHORT = TYPES["numerical"], TYPES["short_answer"]


def typed_quiz(**changes):
    return build_quiz({"slug": "typed", "title": "Typed", "description": "", "questions": [
        {**DISTANCE, **changes.get("distance", {})}, {**CAPITAL, **changes.get("capital", {})},
    ]})  # fmt: skip


def read(typed: str, language: str = "en", **changes) -> str:
    """What a numerical answer is stored as, typed in a browser of this language."""
    return NUMERICAL.read(typed_quiz(**changes).questions[0], typed, language)


@pytest.mark.parametrize(
    ("typed", "language", "stored"),
    [
        ("3.5", "en", "3.5"), ("-2", "en", "-2"), ("1e-3", "en", "0.001"), (".5", "en", "0.5"),
        ("3,5", "de-DE", "3.5"), ("1.000,5", "de", "1000.5"), ("1 000,5", "fr", "1000.5"),
        ("1,000", "en-GB", "1000"), ("3.5", "de", "3.5"),  # the dot is read in every language
        ("150 cm", "en", "150 cm"), ("150cm", "en", "150 cm"), ("1.5 m", "en", "1.5 m"),
    ],
)  # fmt: skip
def test_a_number_is_read_as_its_writer_writes_it(typed, language, stored):
    assert read(typed, language) == stored


def test_a_unit_with_a_micro_sign_may_be_typed_without_one():
    """New-instructor review: "15 um" was refused where the unit is µm, which most keyboards
    cannot type; the Greek letter μ, which looks the same, counts too."""
    cell = {"units": [{"unit": "µm"}, {"unit": "mm", "multiplier": 0.001}],
            "answers": [{"value": 15, "tolerance": 1}]}  # fmt: skip
    question = typed_quiz(distance=cell).questions[0]
    for typed in ("15 um", "15um", "15 μm", "15 µm"):
        stored = NUMERICAL.read(question, typed, "en")
        assert stored == "15 µm" and NUMERICAL.grade(question, stored).correct, typed
    assert NUMERICAL.read(question, "0.015 mm", "en") == "0.015 mm"


@pytest.mark.parametrize(
    ("typed", "language"),
    [("three", "en"), ("inf", "en"), ("nan", "en"), ("1e999", "en"),
     ("5 kg", "en"), ("1,2,3", "de"), ("0x10", "en"), ("3.5.1", "en"),
     # Past what Babel's decimal context holds: once a 500 (attacker review).
     ("1,0E1000", "en"), ("-1,0E1000", "en"), ("1,000,000,000,000,000,000,000,000,000", "en")],
)  # fmt: skip
def test_what_is_not_a_number_is_refused_with_what_to_type(typed, language):
    with pytest.raises(ValidationError, match="Type a number, such as 3.5, and a unit if you"):
        read(typed, language)


@pytest.mark.parametrize(("typed", "language"), [("3,5", "en"), ("-7,25", "en-US"),
                                                 ("3,5", "xx-invalid"), ("3,5", "*")])  # fmt: skip
def test_a_decimal_comma_where_the_language_writes_a_point_is_told_so(typed, language):
    """New-instructor review: "7,2" in an English browser was told to type a number."""
    with pytest.raises(ValidationError, match="Write the decimals after a point, not a comma"):
        read(typed, language)


def test_a_number_goes_into_a_spreadsheet_as_typed():
    """New-instructor review: "3" came out of the responses CSV as 3.0. Still a number."""
    distance = typed_quiz().questions[0]
    cells = [NUMERICAL.in_a_cell(distance, typed) for typed in ("3", "-15", "3.5", "150 cm")]
    assert [str(cell) for cell in cells] == ["3", "-15", "3.5", "150 cm"]
    assert all(isinstance(cell, int | float) for cell in cells[:3])


def test_a_number_matches_within_its_tolerance_in_any_unit_first_answer_first():
    quiz = typed_quiz()
    distance = quiz.questions[0]
    marks = {r: NUMERICAL.grade(distance, r).mark for r in
             ("1.5", "1.6", "1.4", "140 cm", "1.61", "15", "1500 cm", "2", "-1.5")}  # fmt: skip
    assert marks == {"1.5": 1, "1.6": 1, "1.4": 1, "140 cm": 1, "1.61": 0, "15": 0.5,
                     "1500 cm": 0.5, "2": 0, "-1.5": 0}  # fmt: skip
    # On the tolerance's edge in floating point (0.1 + 0.2 is 0.30000000000000004).
    edge = typed_quiz(distance={"answers": [{"value": 0.1, "tolerance": 0.2}]}).questions[0]
    assert NUMERICAL.grade(edge, "0.3").correct and not NUMERICAL.grade(edge, "0.31").correct
    feedback = NUMERICAL.grade(distance, "2")
    assert feedback.matched is None and feedback.said == DISTANCE["otherwise"]


def test_short_answers_match_as_moodles_wildcards_and_cases_say():
    capital = typed_quiz().questions[1]
    marks = {r: SHORT.grade(capital, r).mark for r in
             ("Paris", "paris", "  PARIS ", "Parisian", "par", "Lyon", "Pa ris")}  # fmt: skip
    assert marks == {"Paris": 1, "paris": 1, "  PARIS ": 1, "Parisian": 0.5, "par": 0.5,
                     "Lyon": 0, "Pa ris": 0}  # fmt: skip
    strict = typed_quiz(capital={"case_sensitive": True}).questions[1]
    assert SHORT.grade(strict, "paris").mark == 0 and SHORT.grade(strict, "Paris").correct
    star = typed_quiz(capital={"answers": [{"text": "a\\*b   c"}]}).questions[1]
    assert SHORT.grade(star, "a*b c").correct and not SHORT.grade(star, "axb c").correct
    dots = typed_quiz(capital={"answers": [{"text": "3.14"}]}).questions[1]
    assert not SHORT.grade(dots, "3x14").correct  # only * is special


@pytest.mark.timeout(20)
def test_many_wildcards_against_a_long_answer_cost_no_backtracking():
    """An accepted answer of many stars once became a regular expression that backtracked for
    as long as the typed answer let it: 200 characters took longer than any request may."""
    stars = typed_quiz(capital={"answers": [{"text": "*a" * 12 + "*b"}]}).questions[1]
    assert SHORT.grade(stars, "a" * 200).mark == 0
    assert SHORT.grade(stars, "a" * 199 + "b").correct
    middle = typed_quiz(capital={"answers": [{"text": "x*yz*z"}]}).questions[1]
    assert [SHORT.grade(middle, t).correct for t in ("xyzz", "xyz", "xayzbz", "xyzyz")] == [
        True, False, True, True,
    ]  # fmt: skip


def test_the_statistics_count_typed_answers_alike_and_name_a_popular_wrong_one():
    quiz = typed_quiz()
    capital = quiz.questions[1]
    counts = Counter({"Lyon": 6, "lyon": 3, "Paris": 3, "Parisian": 1, "Nice": 1, "Lille": 1,
                      "Tours": 1, "Metz": 1})  # fmt: skip
    tally = SHORT.tally(capital, counts)
    assert [(t.text, t.count, t.right, t.mark) for t in tally[:3]] == [
        ("Lyon", 9, False, 0.0), ("Paris", 3, True, 1), ("Parisian", 1, False, 0.5),
    ]
    assert tally[-1].text == "Other answers" and sum(t.count for t in tally) == 17
    item = ItemRow(capital, 2, 17, 0.3, 0.1, counts)
    assert item.flags[0] == "Most students answered “Lyon”"
    # Half is not most: no flag names it.
    assert SHORT.misread(capital, counts + Counter({"Paris": 6})) is None
    distance = quiz.questions[0]
    same = NUMERICAL.tally(distance, Counter({"150 cm": 2, "1.5": 1, "2": 2}))
    assert [(t.text, t.count) for t in same] == [("150 cm", 3), ("2", 2)]
    assert NUMERICAL.misread(distance, Counter({"150 cm": 2, "1.5": 1, "2": 2})) is None


def test_the_bank_says_what_is_wrong_with_a_typed_question():
    def found(**changes):
        quiz = {"slug": "typed", "title": "T", "description": "D", "questions": [
            {**DISTANCE, **changes}]}  # fmt: skip
        return problems({"quizzes": [quiz]})

    assert found() == []
    half = [{"value": 1, "fraction": 0.5}]
    assert "needs an answer that earns full marks" in found(answers=half)[0]
    assert "the first unit is the base unit" in found(units=[{"unit": "cm", "multiplier": 100}])[0]
    assert "another unit has this name" in found(units=[{"unit": "m"}, {"unit": "m"}])[0]
    assert found(answers=[{"value": 1, "tolerance": -1}])
    for entry in (DISTANCE, CAPITAL, {**CAPITAL, "case_sensitive": True, "points": 0.5}):
        kind = TYPES[entry["type"]]
        assert kind.data(kind.build(entry)) == entry


def typed_bank(tmp_path) -> str:
    """The seed quiz with question 1 numerical (2 points) and question 2 short answer."""
    bank = json.loads((PROJECT_ROOT / "questions.json").read_text())
    questions = bank["quizzes"][0]["questions"]
    questions[0], questions[1] = DISTANCE, CAPITAL
    path = tmp_path / "typed.json"
    path.write_text(json.dumps(bank))
    return str(path)


@pytest.mark.postgres
def test_a_student_types_answers_and_a_bad_number_stores_nothing(tmp_path):
    """The number field brings up a decimal keyboard and says the units; "3,5" from an English
    browser is refused beside the field and stores nothing; "150 cm" is right; "Parisian"
    earns half of question 2's point, with what that answer is told."""
    app = make_app(tmp_path, QUESTIONS_PATH=typed_bank(tmp_path))
    student = Student(app.test_client())
    student.start()
    page = text(student.client.get(student.question_url(1)))
    # A text field: a phone's decimal keypad has no minus sign and no letters for a unit.
    assert 'id="typed"' in page and "inputmode" not in page
    assert "Units: m, cm (m when you give none)." in page
    assert '<label class="prompt" for="typed">' in page and '<p class="meta">2 points</p>' in page
    refused = student.post(student.question_url(1), typed="3,5")
    assert refused.status_code == 400
    assert 'id="typed-error" role="alert">Write the decimals after a point' in text(refused)
    assert 'aria-invalid="true"' in text(refused) and 'value="3,5"' in text(refused)
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(Answer)) == 0
    assert student.post(student.question_url(1), typed=" 150  cm ").status_code == 303
    feedback = text(student.client.get(student.question_url(1)))
    assert "Correct.</strong> You answered “150 cm”." in feedback
    # In its own span, out of the tag's capitals: "cm" is not "CM".
    assert 'Your answer: <span class="as-typed">“150 cm”</span>' in feedback
    assert "Yes: one and a half metres." in feedback
    assert "1.5 m, give or take 0.1" in feedback

    too_long = student.post(student.question_url(2), typed="x" * 201)
    assert too_long.status_code == 400 and "Type at most 200 characters." in text(too_long)
    german = student.client.post(
        student.question_url(2), data={"csrf_token": student.csrf, "typed": "parisian"},
        headers={"Accept-Language": "de-DE,de;q=0.9"},
    )  # fmt: skip
    assert german.status_code == 303
    feedback = text(student.client.get(student.question_url(2)))
    assert "Partly correct (0.5 of 1 point).</strong>" in feedback
    assert "A right answer is “Paris”." in feedback and "Nearly: the city" in feedback
    with app.app_context():
        answers = db.session.scalars(db.select(Answer))
        stored = {a.question_id: (a.response, a.mark) for a in answers}
    assert stored == {"distance": ("150 cm", 1), "capital": ("parisian", 0.5)}
    results = text(student.client.get(student.results_url))
    assert "2.5 of 9 points so far" in results
    # Beside each verdict, the points where they are not simply one or none.
    assert "Correct: 2 of 2</span>" in results and "Partly correct: 0.5 of 1</span>" in results


@pytest.mark.postgres
def test_a_german_browser_may_type_a_decimal_comma(tmp_path):
    app = make_app(tmp_path, QUESTIONS_PATH=typed_bank(tmp_path))
    student = Student(app.test_client())
    student.start()
    sent = student.client.post(
        student.question_url(1), data={"csrf_token": student.csrf, "typed": "1,45"},
        headers={"Accept-Language": "de-DE,de;q=0.9"},
    )  # fmt: skip
    assert sent.status_code == 303
    with app.app_context():
        assert db.session.scalars(db.select(Answer.response)).one() == "1.45"


@pytest.mark.postgres
def test_held_feedback_keeps_typed_keys_until_the_attempt_ends(tmp_path):
    """Under feedback after the attempt, the typed answers are saved in the student's words and
    nothing on the pages tells an accepted answer, a mark or what an answer is told."""
    _, student = held_feedback_student(make_app(tmp_path, QUESTIONS_PATH=typed_bank(tmp_path)))
    assert student.post(student.question_url(1), typed="2").status_code == 303
    assert student.post(student.question_url(2), typed="Lyon").status_code == 303
    pages = [text(student.client.get(student.question_url(n))) for n in (1, 2)]
    pages.append(text(student.client.get(student.results_url)))
    # Offered again to change, as typed.
    assert 'type="text" value="2"' in pages[0] and 'type="text" value="Lyon"' in pages[1]
    for page in pages:
        for words in ("Correct", "Incorrect", "Right answer", "right answer", "1.5 m", "Paris",
                      "Measure it again", "It is Paris", "give or take", "Metres are"):
            assert words not in page, words


@pytest.mark.postgres
def test_the_class_page_lists_what_was_typed_and_names_a_popular_wrong_answer(tmp_path):
    """Four students type their answers to question 2: "Lyon" twice and "lyon" once count as
    one answer, flagged as what most students answered; a typed tag is shown as text; the
    responses CSV has each answer as typed with its mark."""
    app = make_app(tmp_path, QUESTIONS_PATH=typed_bank(tmp_path))
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
        class_ = factories.class_(factories.instructor(), join_code="ABCDEF")
        factories.assignment(class_, quiz)
        class_id = class_.id
    answers = [("Ann", "Lyon", "1.5"), ("Ben", "lyon", "1.5"), ("Cy", "Lyon", "150 cm"),
               ("Di", "<b>Paris</b>", "-1.5")]  # fmt: skip
    for name, typed, number in answers:
        student = Student(app.test_client())
        assert student.start(name=name, class_code="ABCDEF").status_code == 303
        assert student.post(student.question_url(1), typed=number).status_code == 303
        assert student.post(student.question_url(2), typed=typed).status_code == 303
        for number, question in enumerate(quiz.questions[2:], 3):  # finished: counted
            assert student.answer(number, question.choices[0].id).status_code == 303
    teacher = app.test_client()
    assert login(teacher, "teacher", "correct horse").status_code == 303
    page = teacher.get(f"/teach/classes/{class_id}?quiz={SLUG}").get_data(as_text=True)
    assert "⚑ Most students answered “Lyon”" in page
    # A mark that may be partial is an average, not a count of the right (lecturer review).
    assert "% of the points on average</strong>" in page and "% right</strong>" in page
    assert re.search(r"Question 2</a>: \d+% of the points on average", page)  # at a glance
    assert '<th scope="col">Answer</th><th scope="col" class="num">Given</th>' in page
    assert "&lt;b&gt;Paris&lt;/b&gt;" in page and "<b>Paris</b>" not in page
    responses = teacher.get(f"/teach/classes/{class_id}/responses.csv?quiz={SLUG}")
    rows = list(csv.DictReader(io.StringIO(responses.get_data().decode("utf-8-sig"))))
    capital = [row for row in rows if row["question"] == "capital"]
    typed = sorted((row["choice_text"], row["mark"]) for row in capital)
    assert typed == [("<b>Paris</b>", "0"), ("Lyon", "0"), ("Lyon", "0"), ("lyon", "0")]
    assert {row["question_points"] for row in capital} == {"1"}
    distance = next(row for row in rows if row["question"] == "distance")
    assert (distance["points"], distance["question_points"]) == ("2", "2")
    # A number stays a number a spreadsheet sums, a negative one too (attacker review).
    numbers = sorted(row["choice_text"] for row in rows if row["question"] == "distance")
    assert numbers == ["-1.5", "1.5", "1.5", "150 cm"]
    items = teacher.get(f"/teach/classes/{class_id}/items.csv?quiz={SLUG}")
    stats = list(csv.DictReader(io.StringIO(items.get_data().decode("utf-8-sig"))))
    assert [(row["question"], row["points"]) for row in stats[:2]] == [
        ("distance", "2"), ("capital", "1"),
    ]  # fmt: skip
    assert (stats[1]["choice_1"], stats[1]["choice_1_count"]) == ("Lyon", "3")


def test_a_wildcard_answer_is_named_to_students_in_words_they_can_read():
    """Lecturer review: "A right answer is “colo*r”" read as a typo. The answer named is one
    without a wildcard where there is one; a wildcard shows as "…", an escaped star as "*"."""
    both = typed_quiz(capital={"answers": [{"text": "colo*r"}, {"text": "colour"}]})
    assert both.questions[1].best.text == "colour"
    only = typed_quiz(capital={"answers": [{"text": "colo*r"}, {"text": "hue", "fraction": 0.5}]})
    assert only.questions[1].best.text == "colo*r"
    assert (readable("colo*r"), readable("a\\*b*")) == ("colo…r", "a*b…")


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("bank", "number", "answer"),
    [(typed_bank, 1, {"typed": "150 cm"}), (typed_bank, 2, {"typed": "Paris"}),
     (types_bank, 1, {"choice": "false"}), (types_bank, 2, {"choice": "missing"})],
    ids=["numerical", "short answer", "true or false", "select all"],
)  # fmt: skip
def test_every_question_type_costs_the_queries_of_single_choice(tmp_path, bank, number, answer):
    """Asking, answering, the feedback and the results cost what a single-choice question's do
    (test_quiz.py): no type adds a query to a student's page."""
    app = make_app(tmp_path, QUESTIONS_PATH=bank(tmp_path))
    student = Student(app.test_client())
    student.start()
    if answer.get("choice") == "missing":
        with app.app_context():
            answer = {"choice": current_bank().quizzes[SLUG].questions[1].choices[0].id}
    student.csrf  # noqa: B018 - fetch the form token before counting
    with queries(app) as asking:
        assert student.client.get(student.question_url(number)).status_code == 200
    with queries(app) as answering:
        assert student.post(student.question_url(number), **answer).status_code == 303
    with queries(app) as feedback:
        assert student.client.get(student.question_url(number)).status_code == 200
    with queries(app) as results:
        assert student.client.get(student.results_url).status_code == 200
    assert (len(asking), len(answering), len(feedback), len(results)) == (2, 4, 2, 2)
