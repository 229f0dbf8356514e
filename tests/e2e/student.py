"""A student at the keyboard and mouse: the steps every browser test shares."""

from playwright.sync_api import Page, expect

from app.question_types import right_choice


def start(page: Page, name: str, code: str | None = None) -> None:
    """Open the quiz from the home page (or a join link) and start it."""
    if code is None:
        page.goto("/")
        page.get_by_role("link", name="Gradient Checkpointing Quiz", exact=True).click()
    else:
        page.goto(f"/join/{code}")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name="Start quiz").click()
    expect(page.get_by_role("heading", name="Question 1 of 8")).to_be_visible()


def answer(page: Page, choice_text: str) -> str:
    """Choose a choice by its label, check it, and return the verdict line."""
    page.get_by_role("radio", name=choice_text, exact=True).check()
    page.get_by_role("button", name="Check answer").click()
    verdict = page.locator(".verdict p")
    expect(verdict).to_be_visible()
    return verdict.inner_text()


def take_quiz(page: Page, quiz, right: set[int], first: int = 1) -> list[str]:
    """Answer the questions from `first` on, right for the numbers in `right`; return verdicts."""
    verdicts = []
    for number in range(first, len(quiz.questions) + 1):
        question = quiz.questions[number - 1]
        expect(page.get_by_role("heading", name=f"Question {number} of 8")).to_be_visible()
        wrong = next(c for c in question.choices if not c.correct)
        verdicts.append(answer(page, (right_choice(question) if number in right else wrong).text))
        button = "Next question" if number < 8 else "See results"
        page.get_by_role("link", name=button).click()
    return verdicts
