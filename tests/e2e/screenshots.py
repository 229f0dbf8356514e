"""`make screenshots`: the main pages at desktop and phone sizes, into docs/screenshots/."""

import random
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parent.parent)]

import factories  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from app.authoring import drafts  # noqa: E402
from app.extensions import db  # noqa: E402
from app.models import FeedbackWhen, Instructor  # noqa: E402
from app.question_types import right_choice  # noqa: E402
from app.served import current_bank  # noqa: E402

from conftest import CHROMIUM, CHROMIUM_ARGS, DESKTOP, PHONE, TEACHER  # noqa: E402
from helpers import SLUG, gunicorn, make_app  # noqa: E402
from student import answer, start  # noqa: E402
from test_instructor import log_in  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
FEATURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats" / "features.gift"
NAMES = [
    "Amara", "Ben", "Chen", "Dara", "Eli", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kofi",
    "Lena", "Mateo", "Nia", "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tara", "Uma", "Vik",
]  # fmt: skip


def seed(app) -> None:
    """A class of 22 who have taken the quiz, the way a real class spreads out."""
    rng = random.Random(7)
    with app.app_context():
        teacher = factories.instructor(*TEACHER)
        class_ = factories.class_(teacher, "Deep Learning, Autumn", join_code="K7M2QX")
        quiz = current_bank().quizzes[SLUG]
        for name in NAMES:
            skill = rng.random()
            picks = []
            for number, question in enumerate(quiz.questions, 1):
                hard = 0.35 if number in (4, 7) else 0
                wrong = [c for c in question.choices if not c.correct]
                choice = right_choice(question) if rng.random() < 0.4 + 0.6 * skill - hard else (
                    wrong[0] if rng.random() < 0.6 else rng.choice(wrong))  # fmt: skip
                picks.append(choice.id)
            factories.attempt(quiz, name, answers=picks, class_id=class_.id, browser="seed")


def seed_graded(app) -> tuple[int, dict[str, tuple[str, str]]]:
    """A class graded with the quiz: a roster, and the quiz timed, once, feedback after the
    close. Returns the class's id and, for each screen size, a roster student's name and code
    (each may take the quiz once)."""
    with app.app_context():
        teacher = factories.instructor("grader", TEACHER[1])
        class_ = factories.class_(teacher, "Physics 101", join_code="P4HQ7W")
        students = factories.roster(
            class_.id, "\n".join(f"{n}, 2026{i:04d}" for i, n in enumerate(NAMES[:6]))
        )
        factories.assignment(
            class_,
            current_bank().quizzes[SLUG],
            closes_at=datetime.now(UTC) + timedelta(days=3),
            time_limit_minutes=30,
            attempts_allowed=1,
            feedback=FeedbackWhen.AFTER_CLOSE,
        )
        signing_in = zip(("desktop", "phone"), students, strict=False)
        return class_.id, {size: (s.name, s.sign_in_code) for size, s in signing_in}


def graded_pages(browser, base, viewport, size, quiz, class_id, signing_in) -> None:
    """A student signs in by code and answers with feedback held; the instructor's roster and
    assignment form."""
    student = browser.new_context(viewport=viewport, base_url=base).new_page()
    name, code = signing_in[size]
    student.goto(f"/s/{code}")
    student.screenshot(path=OUT / f"sign-in-{size}.png")
    student.get_by_role("button", name=f"I am {name}").click()
    for question in quiz.questions:
        student.get_by_role("radio", name=right_choice(question).text, exact=True).check()
        student.get_by_role("button", name="Save and next").click()
    student.screenshot(path=OUT / f"summary-{size}.png")
    student.get_by_role("button", name="Finish attempt").first.click()
    student.screenshot(path=OUT / f"results-held-{size}.png")
    teacher = browser.new_context(viewport=viewport, base_url=base).new_page()
    teacher.goto("/login")
    teacher.get_by_label("Username").fill("grader")
    teacher.get_by_label("Password").fill(TEACHER[1])
    teacher.get_by_role("button", name="Log in").click()
    teacher.goto(f"/teach/classes/{class_id}")
    teacher.get_by_role("heading", name="Roster").evaluate("heading => heading.scrollIntoView()")
    teacher.screenshot(path=OUT / f"class-assignments-{size}.png")
    teacher.goto(f"/teach/classes/{class_id}/assignments/new")
    teacher.screenshot(path=OUT / f"assign-{size}.png")
    teacher.goto(f"/teach/classes/{class_id}/roster")
    teacher.get_by_role("heading", name="Students (6)").evaluate("h => h.scrollIntoView()")
    teacher.screenshot(path=OUT / f"roster-{size}.png")


def seed_owned(app) -> None:
    """The teacher's own quiz, published once, then changed in a draft with gaps to write."""
    with app.app_context():
        teacher = db.session.scalar(db.select(Instructor).filter_by(username=TEACHER[0]))
        record = factories.owned_quiz(teacher, "optics", questions=3)
        drafts.save(record, _optics, teacher.id)
        drafts.publish(record, teacher.id)
        drafts.save(record, _unexplained, teacher.id)


def _optics(draft: dict) -> None:
    draft["title"], draft["description"] = "Optics basics", "Light, lenses and colour."
    for question, (prompt, right, wrong) in zip(draft["questions"], OPTICS, strict=False):
        question["prompt"] = prompt
        question["choices"][0].update(text=right, explanation=f"Right: {right.lower()}.")
        question["choices"][1].update(text=wrong, explanation=f"No: {wrong.lower()} is not it.")


def _unexplained(draft: dict) -> None:
    question = dict(draft["questions"][0], id="focus", references=[])
    question["prompt"] = "Where do parallel rays meet after a convex lens?"
    question["choices"] = [
        {key: value for key, value in choice.items() if key != "explanation"}
        for choice in question["choices"]
    ]
    draft["questions"].append(question)


OPTICS = [
    ("What is the speed of light in vacuum, roughly?", "300,000 km/s", "300 km/s"),
    ("Which colour has the longest wavelength?", "Red", "Blue"),
    ("What does a prism do to white light?", "Splits it into colours", "Makes it brighter"),
]


def authoring_pages(browser, base, viewport, size) -> None:
    """Your quizzes, the editor and a question; on a desktop, an import's report and history."""
    teacher = browser.new_context(viewport=viewport, base_url=base).new_page()
    log_in(teacher)
    teacher.goto("/teach/quizzes")
    teacher.screenshot(path=OUT / f"quizzes-{size}.png")
    teacher.goto("/teach/quizzes/optics/edit")
    teacher.get_by_role("heading", name="Questions (4)").evaluate("h => h.scrollIntoView()")
    teacher.screenshot(path=OUT / f"editor-{size}.png")
    teacher.goto("/teach/quizzes/optics/questions/focus")
    teacher.screenshot(path=OUT / f"question-editor-{size}.png")
    if size == "desktop":
        teacher.goto("/teach/quizzes/import")
        teacher.get_by_label("Quiz file").set_input_files(FEATURES)
        teacher.get_by_role("button", name="Check the file").click()
        teacher.screenshot(path=OUT / "import-report-desktop.png", full_page=True)
        teacher.goto("/teach/quizzes/optics/history")
        teacher.screenshot(path=OUT / "history-desktop.png")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="quizwright-shots-"))
    app = make_app(folder)
    seed(app)
    seed_owned(app)
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    with gunicorn(folder, workers=2) as server, sync_playwright() as playwright:
        base = server.url
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for size, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            page = browser.new_context(viewport=viewport, base_url=base).new_page()
            start(page, "Ada")
            page.screenshot(path=OUT / f"question-{size}.png")
            wrong = next(c for c in quiz.questions[0].choices if not c.correct)
            answer(page, wrong.text)
            if size == "desktop":
                # A whole-page picture draws the sticky "Next question" bar mid-page: unstick it.
                page.locator(".next-step").evaluate("bar => { bar.style.position = 'static'; }")
            page.screenshot(path=OUT / f"feedback-{size}.png", full_page=size == "desktop")
            # Another tab on the quiz's start page: it offers to continue the unfinished attempt.
            other_tab = page.context.new_page()
            other_tab.goto(f"/quizzes/{SLUG}")
            other_tab.screenshot(path=OUT / f"continue-{size}.png")
            other_tab.close()
            for number, question in enumerate(quiz.questions, 1):
                if number > 1:
                    answer(page, right_choice(question).text)
                page.get_by_role(
                    "link", name="Next question" if number < 8 else "See results"
                ).click()
            page.screenshot(path=OUT / f"results-{size}.png")
            teacher = browser.new_context(viewport=viewport, base_url=base).new_page()
            log_in(teacher)
            teacher.get_by_role("link", name="Deep Learning, Autumn").click()
            teacher.screenshot(path=OUT / f"class-{size}.png")
            glance = teacher.get_by_role("heading", name="At a glance")
            glance.evaluate("heading => heading.scrollIntoView()")
            teacher.screenshot(path=OUT / f"class-results-{size}.png")
            if size == "desktop":
                teacher.get_by_role("link", name="Show the code full screen").click()
                teacher.set_viewport_size({"width": 1280, "height": 800})
                teacher.screenshot(path=OUT / "projector-desktop.png")
        # Only now: while a class holds the quiz's feedback back, nobody starts it without a
        # class code, as the student pages above do.
        for size, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            authoring_pages(browser, base, viewport, size)
        graded = seed_graded(app)
        for size, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            graded_pages(browser, base, viewport, size, quiz, *graded)
        browser.close()
    print(f"Screenshots in {OUT}")


if __name__ == "__main__":
    main()
