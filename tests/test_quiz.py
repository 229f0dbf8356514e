"""The student flow through the test client: start, answer, feedback, results, retake."""

import json
import re

import factories
import pytest

from app.config import PROJECT_ROOT
from app.extensions import db
from app.models import Answer, Attempt
from app.question_types import right_choice
from app.served import current_bank

from helpers import (
    SLUG,
    Student,
    executed,
    login,
    make_app,
    queries,
    shown,
    text,
    wrong_choice,
)

pytestmark = pytest.mark.postgres


def test_home_lists_the_quiz(client):
    """The home page names the quiz, describes it and counts its questions."""
    page = text(client.get("/"))
    assert "Gradient Checkpointing Quiz" in page
    assert "8 questions" in page
    assert f'href="/quizzes/{SLUG}"' in page


def test_a_quiz_of_one_question_counts_it_in_the_singular(tmp_path):
    """Home, start, results, the instructor's quiz list and attempt page, and a roster
    student's confirmation say "1 question" (and "1 point"), not "1 questions"."""
    bank = json.loads((PROJECT_ROOT / "questions.json").read_text())
    del bank["quizzes"][0]["questions"][1:]
    (tmp_path / "one.json").write_text(json.dumps(bank))
    app = make_app(tmp_path, QUESTIONS_PATH=str(tmp_path / "one.json"))
    student = Student(app.test_client())
    assert '<p class="meta">1 question</p>' in text(student.client.get("/"))
    assert "1 question, one at a time." in text(student.client.get(f"/quizzes/{SLUG}"))
    assert student.start().status_code == 303
    assert re.search(
        r"In progress: 0 of 1 question\s+answered, 0 of 1 point so far",
        text(student.client.get(student.results_url)),
    )
    with app.app_context():
        ada = factories.instructor("ada", "ada password")
        class_ = factories.class_(ada)
        factories.assignment(class_, current_bank().quizzes[SLUG])
        [dana] = factories.roster(class_.id, "Dana Diaz")
        code = dana.sign_in_code
    teacher = app.test_client()
    assert login(teacher, "ada", "ada password").status_code == 303
    assert "(1 question)</span>" in text(teacher.get("/teach"))
    dana = Student(app.test_client())
    assert "(1 question).</p>" in text(dana.client.get(f"/s/{code}"))
    started = dana.post(f"/s/{code}", quiz=SLUG)
    token = started.location.split("/")[2]
    assert "0 of 1 point so far" in text(teacher.get(f"/teach/attempts/{token}"))


def test_start_form_has_the_named_fields(client):
    """The start form asks for a name and an optional class code."""
    page = text(client.get(f"/quizzes/{SLUG}"))
    assert re.search(r'<label for="name">Your name</label>', page)
    assert re.search(r'<label for="class_code">Class code</label>', page)
    assert 'value="Start quiz"' in page


def test_whole_quiz_with_right_and_wrong_answers(app, student, quiz):
    """A student answers all 8, reads each verdict, and the results page shows the score."""
    assert student.start(name="  Ada Lovelace  ").status_code == 303
    right = {1, 2, 4, 7, 8}
    for number, question in enumerate(quiz.questions, 1):
        page = text(student.client.get(student.question_url(number)))
        assert f"Question {number} of 8" in page
        assert f'<legend class="prompt">{shown(question.prompt)}</legend>' in page
        assert ">Check answer</button>" in page

        choice = right_choice(question) if number in right else wrong_choice(question)
        response = student.answer(number, choice.id)
        assert response.status_code == 303
        assert response.location == student.question_url(number)

        feedback = text(student.client.get(student.question_url(number)))
        verdict = re.search(
            r'<div class="verdict[^"]*" role="status"[^>]*>(.*?)</div>', feedback, re.S
        )
        words = " ".join(re.sub(r"<[^>]+>", " ", verdict.group(1)).split())
        assert words.startswith("✓ Correct." if number in right else "✗ Incorrect.")
        for each in question.choices:
            assert shown(each.explanation) in feedback
        assert shown(question.explanation) in feedback
        assert question.references[0].url in feedback
        assert ("Next question" if number < 8 else "See results") in feedback

    results = text(student.client.get(student.results_url))
    assert "You scored <strong>5 out of 8</strong> (62.5%)" in results
    assert "Time taken:" in results
    assert results.count('class="verdict') == 8
    with app.app_context():
        attempt = db.session.scalars(db.select(Attempt)).one()
        assert attempt.student_name == "Ada Lovelace"
        assert sorted(a.is_correct for a in attempt.answers) == [False] * 3 + [True] * 5


def test_feedback_marks_choices_in_words_not_only_colour(student, quiz):
    """The chosen and the right choice are labelled in text after a wrong answer."""
    student.start()
    question = quiz.questions[0]
    student.answer(1, wrong_choice(question).id)
    page = text(student.client.get(student.question_url(1)))
    assert f"The right answer is “{shown(right_choice(question).text)}”" in page
    assert ">Your answer<" in page and ">Right answer<" in page
    assert "autofocus" in page  # keyboard and screen-reader users land on the verdict


def test_retake_starts_a_fresh_attempt(app, student, quiz):
    """ "Retake quiz" gives a new attempt under the same name, starting at question 1."""
    student.start(name="Grace")
    for number, question in enumerate(quiz.questions, 1):
        student.answer(number, right_choice(question).id)
    first = student.token
    response = student.post(f"/attempts/{first}/retake")
    assert response.status_code == 303
    fresh = response.location.split("/")[2]
    assert fresh != first and response.location.endswith("/questions/1")
    page = text(student.client.get(f"/attempts/{fresh}/questions/1"))
    assert ">Check answer</button>" in page
    with app.app_context():
        names = db.session.scalars(db.select(Attempt.student_name)).all()
    assert names == ["Grace", "Grace"]


def test_unfinished_results_offer_to_continue(student, quiz):
    """Results before the end show progress, the next question to answer, and no score."""
    student.start()
    student.answer(1, right_choice(quiz.questions[0]).id)
    page = text(student.client.get(student.results_url))
    assert "1 of 8 questions answered" in page
    assert "You scored" not in page
    # A link, not a GET form: the address it leads to ends without a stray "?".
    assert f'<a class="button" href="{student.question_url(2)}">Continue quiz</a>' in page
    assert 'method="get"' not in page
    assert page.count("Not answered yet.") == 7


def test_results_link_is_read_only_for_other_browsers(app, student, quiz):
    """Someone given the results link can read them but cannot answer, retake or continue."""
    student.start(name="Ada")
    for number, question in enumerate(quiz.questions, 1):
        student.answer(number, right_choice(question).id)
    other = Student(app.test_client())

    shared = text(other.client.get(student.results_url))
    assert "Ada scored <strong>8 out of 8</strong>" in shared
    assert "Retake quiz" not in shared

    assert other.client.get(student.question_url(1)).status_code == 403
    assert other.post(f"/attempts/{student.token}/retake").status_code == 403
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count(Attempt.id))) == 1


def test_other_browser_cannot_answer(app, student, quiz):
    """An attempt token copied into another browser stores nothing."""
    student.start()
    other = Student(app.test_client())
    response = other.post(student.question_url(1), choice=right_choice(quiz.questions[0]).id)
    assert response.status_code == 403
    assert "Only the browser that started this attempt" in text(response)
    with app.app_context():
        assert db.session.scalars(db.select(Answer)).all() == []


def test_attempt_tokens_are_unguessable(student):
    """Attempts are addressed by long random tokens, not sequential ids."""
    student.start()
    first = student.token
    student.start()
    assert len(first) >= 32 and first != student.token
    assert not first.isdigit()


def test_question_page_leaks_nothing_before_answering(student, quiz):
    """Before answering, the page holds no explanation, correctness flag or hint."""
    student.start()
    for number, question in enumerate(quiz.questions, 1):
        response = student.client.get(student.question_url(number))
        page = text(response)
        for choice in question.choices:
            assert shown(choice.explanation) not in page
        assert shown(question.explanation) not in page
        assert "correct" not in page.lower()
        assert "right answer" not in page.lower()
        # The choices carry only their ids, which say nothing about which is right.
        assert sorted(re.findall(r'type="radio" value="([^"]+)"', page)) == sorted(
            choice.id for choice in question.choices
        )
    with student.client.session_transaction() as session:
        # The browser id, the CSRF token and Flask-Login's bookkeeping, nothing about answers.
        assert set(session) <= {"browser", "csrf_token", "_permanent", "_fresh", "_id"}


def test_unanswered_questions_stay_hidden_in_results(student, quiz):
    """The results page never reveals answers to questions not yet answered."""
    student.start()
    page = text(student.client.get(student.results_url))
    for question in quiz.questions:
        assert shown(right_choice(question).explanation) not in page
        assert shown(question.explanation) not in page


def test_question_pages_cost_a_fixed_number_of_queries(app, student, quiz):
    """Asking, answering and showing feedback each take a small, fixed number of queries."""
    student.start()
    student.csrf  # noqa: B018 - fetch the form token before counting
    with queries(app) as asking:
        student.client.get(student.question_url(1))
    with queries(app) as answering:
        student.answer(1, right_choice(quiz.questions[0]).id)
    with queries(app) as feedback:
        student.client.get(student.question_url(1))
    with queries(app) as results:
        student.client.get(student.results_url)
    # One query loads the attempt with its answers, one asks whether another class holds the
    # quiz's key; answering adds the answer and the tallies. The browser's answer count is kept
    # in memory (ratelimits.limited_answers): no write of its own beside the answer's.
    assert (len(asking), len(answering), len(feedback), len(results)) == (2, 4, 2, 2)


def test_question_pages_send_statements_built_once(app, quiz):
    """Each statement a student's pages send is built once, as its module loads: building the
    check for another class's hold on the key anew each request cost four times what running
    it did (bench/analysis.md)."""

    def taken(student):
        """Every statement of one attempt once started (which writes through the ORM): each
        question asked, answered and shown with its feedback, and its results."""
        student.start()
        with executed(app) as sent:
            for number, question in enumerate(quiz.questions, 1):
                student.client.get(student.question_url(number))
                student.answer(number, right_choice(question).id)
                student.client.get(student.question_url(number))
            student.client.get(student.results_url)
        return sent

    taken(Student(app.test_client()))  # the first request of all also reads the bank
    first, second = (taken(Student(app.test_client())) for _ in range(2))  # kept alive
    assert len(first) == len(second) > 8 * 8
    assert [a is b for a, b in zip(first, second, strict=True)] == [True] * len(first)


def test_a_students_pages_leave_their_cookies_alone(student, quiz):
    """Reading a question or the results sends no cookie: the session and browser id a student
    has stay as they are, so no page pays to sign a new session cookie."""
    student.start()
    student.csrf  # noqa: B018 - the form token is made once, on the first form
    for url in (student.question_url(1), student.question_url(2), student.results_url):
        assert student.client.get(url).headers.get_all("Set-Cookie") == [], url


def test_feedback_moves_on_by_link_to_clean_addresses(student, quiz):
    """ "Next question" and "See results" are links: no GET form leaves a "?" on the address."""
    student.start()
    for number, question in enumerate(quiz.questions, 1):
        student.answer(number, right_choice(question).id)
    middle = text(student.client.get(student.question_url(1)))
    last = text(student.client.get(student.question_url(8)))
    assert f'<a class="button" href="{student.question_url(2)}">Next question</a>' in middle
    assert f'<a class="button" href="{student.results_url}">See results</a>' in last
    assert 'method="get"' not in middle + last


def test_results_open_with_every_question_in_words(student, quiz):
    """The top of the results lists each question, linked to its review, marked in words."""
    student.start()
    student.answer(1, right_choice(quiz.questions[0]).id)
    student.answer(2, wrong_choice(quiz.questions[1]).id)
    page = text(student.client.get(student.results_url))
    overview = page[page.index('<ol class="overview"') : page.index("</ol>")]
    items = re.findall(
        r'<li class="([^"]+)"> <a href="#review-(\d)">(.*?)</a>.*?</span>\s*(\w[\w ]*)</span>',
        overview,
    )
    assert [(kind, n, said) for kind, n, _, said in items] == [
        ("is-right", "1", "Correct"),
        ("is-wrong", "2", "Incorrect"),
    ] + [("not-answered", str(n), "Not answered") for n in range(3, 9)]
    assert items[0][2].startswith(
        '<span class="number">1.</span> ' + shown(quiz.questions[0].prompt[:40])
    )
    for number in range(1, 9):
        assert f'id="review-{number}"' in page
    assert page.count(">Retake quiz</button>") == 2


def test_a_score_of_nothing_gets_a_kind_word_and_a_next_step(student, quiz):
    """0 out of 8 says it kindly and suggests the reviews and a retake; 8 out of 8 does not."""
    student.start()
    for number, question in enumerate(quiz.questions, 1):
        student.answer(number, wrong_choice(question).id)
    page = text(student.client.get(student.results_url))
    assert "0 out of 8" in page and "Everyone starts somewhere" in page
    assert "Read the reviews below" in page and "retake the quiz" in page
    student.start()
    for number, question in enumerate(quiz.questions, 1):
        student.answer(number, right_choice(question).id)
    assert "Read the reviews below" not in text(student.client.get(student.results_url))


def test_an_unfinished_attempt_can_be_continued(app, student, quiz):
    """After closing the tab, the home and start pages offer to continue where the student left."""
    student.start(name="Ada")
    for number in (1, 2, 3):
        student.answer(number, right_choice(quiz.questions[number - 1]).id)
    for page in (text(student.client.get("/")), text(student.client.get(f"/quizzes/{SLUG}"))):
        assert "Continue your attempt" in page
        assert "as Ada: <strong>3 of 8 answered</strong>" in page
    resumed = student.client.get(f"/attempts/{student.token}/continue")
    assert resumed.status_code == 303 and resumed.location == student.question_url(4)

    # Another browser sees nothing to continue, nor may it; a finished attempt is not offered.
    stranger = app.test_client()
    assert "Continue your attempt" not in text(stranger.get("/"))
    assert stranger.get(f"/attempts/{student.token}/continue").status_code == 403
    for number in range(4, 9):
        student.answer(number, right_choice(quiz.questions[number - 1]).id)
    assert "Continue your attempt" not in text(student.client.get("/"))
    finished = student.client.get(f"/attempts/{student.token}/continue")
    assert finished.location == student.results_url
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count(Attempt.id))) == 1


def test_continuing_resumes_at_the_first_question_left_open(student, quiz):
    """A student who skipped ahead by address goes back to the gap, not past it."""
    student.start()
    for number in (1, 2, 4):
        student.answer(number, right_choice(quiz.questions[number - 1]).id)
    resumed = student.client.get(f"/attempts/{student.token}/continue")
    assert resumed.location == student.question_url(3)


def test_home_page_looks_up_attempts_only_for_a_known_browser(app, client, student, quiz):
    """A new visitor's home page queries nothing; a returning browser's costs one query."""
    with queries(app) as fresh:
        client.get("/")
    student.start()
    with queries(app) as returning:
        student.client.get("/")
    assert (len(fresh), len(returning)) == (0, 1)
    with app.app_context():
        if db.engine.dialect.name == "sqlite":  # the plan of PostgreSQL depends on its statistics
            explain = f"EXPLAIN QUERY PLAN {returning[0]}"
            plan = db.session.connection().exec_driver_sql(explain, ("any browser",)).all()
            assert "USING INDEX ix_attempts_browser" in str(plan)


def test_favicon_is_served_from_this_site(client):
    """Every page links an icon of its own, and /favicon.ico answers instead of a 404."""
    page = text(client.get("/"))
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response.location.endswith("/static/favicon.svg")
    with client.get("/static/favicon.svg") as icon:
        assert icon.status_code == 200 and icon.mimetype == "image/svg+xml"


def test_login_page_does_not_link_to_itself(client):
    """The footer's "Instructor log in" shows on other pages, not on the login page."""
    assert 'href="/login"' in text(client.get("/"))
    assert 'href="/login"' not in text(client.get("/login"))
