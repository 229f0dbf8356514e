"""A student in a real browser: mouse, no JavaScript, keyboard only, and a phone."""

import pytest
from playwright.sync_api import expect

from conftest import PHONE
from student import answer, start, take_quiz

RIGHT = {1, 2, 4, 7, 8}


def test_whole_quiz_with_feedback_results_and_retake(browse, quiz):
    """Right and wrong answers get their verdicts and explanations; results add up; retake."""
    page = browse()
    start(page, "Ada Lovelace")
    verdict = answer(page, quiz.questions[0].right_choice.text)
    assert verdict.startswith("Correct.")
    for choice in quiz.questions[0].choices:
        expect(page.get_by_text(choice.explanation)).to_be_visible()
    page.get_by_role("button", name="Next question").click()
    wrong = next(c for c in quiz.questions[1].choices if not c.correct)
    verdict = answer(page, wrong.text)
    assert verdict.startswith("Incorrect.")
    assert f"The right answer is “{quiz.questions[1].right_choice.text}”" in verdict
    page.get_by_role("button", name="Next question").click()
    rest = [verdict.split(" ")[0] for verdict in take_quiz(page, quiz, RIGHT, first=3)]
    assert rest == ["Incorrect.", "Correct.", "Incorrect.", "Incorrect.", "Correct.", "Correct."]
    expect(page.get_by_text("You scored 4 out of 8 (50%)")).to_be_visible()
    page.get_by_role("button", name="Retake quiz").click()
    expect(page.get_by_role("heading", name="Question 1 of 8")).to_be_visible()
    expect(page.get_by_role("button", name="Check answer")).to_be_visible()


def test_refresh_and_back_button_change_nothing(browse, quiz):
    """Reloading feedback, or going back and answering again, keeps the first answer."""
    page = browse()
    start(page, "Grace")
    question = quiz.questions[0]
    wrong = next(c for c in question.choices if not c.correct)
    assert answer(page, wrong.text).startswith("Incorrect.")
    page.reload()
    expect(page.locator(".verdict p")).to_contain_text("Incorrect.")
    page.go_back()
    if page.get_by_role("button", name="Check answer").is_visible():
        answer(page, question.right_choice.text)  # the old form, from the browser's cache
    expect(page.locator(".verdict p")).to_contain_text("Incorrect.")
    page.goto(page.url.split("/questions/")[0] + "/results")
    expect(page.get_by_text("1 of 8 questions answered, 0 correct so far")).to_be_visible()


def test_quiz_works_without_javascript(browse, quiz):
    """With JavaScript off the whole quiz works: forms, redirects, feedback, results."""
    page = browse(java_script_enabled=False)
    start(page, "No Script")
    verdicts = take_quiz(page, quiz, right=set(range(1, 9)))
    assert all(v.startswith("Correct.") for v in verdicts)
    expect(page.get_by_text("You scored 8 out of 8 (100%)")).to_be_visible()


def focused(page) -> dict:
    return page.evaluate(
        """() => { const e = document.activeElement; const s = getComputedStyle(e);
        return {tag: e.tagName, id: e.id, name: e.name || '', cls: e.className,
                outline: s.outlineStyle, text: (e.value || e.innerText || '').slice(0, 40)}; }"""
    )


def tab_to(page, wanted, limit=15) -> None:
    """Press Tab until `wanted(focused)` holds; every stop must show a visible focus ring."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        now = focused(page)
        assert now["outline"] != "none", f"no visible focus on {now}"
        if wanted(now):
            return
    pytest.fail(f"Tab never reached the element; stopped at {focused(page)}")


def test_keyboard_only(browse, quiz):
    """Tab, arrows, Space and Enter take the quiz; focus always shows; the verdict gets it."""
    page = browse()
    page.goto("/quizzes/gradient-checkpointing")
    tab_to(page, lambda f: f["id"] == "name")
    page.keyboard.type("Keys Only")
    tab_to(page, lambda f: f["text"] == "Start quiz")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Question 1 of 8")).to_be_visible()
    for number, question in enumerate(quiz.questions, 1):
        expect(page.get_by_role("heading", name=f"Question {number} of 8")).to_be_visible()
        expect(page.get_by_role("button", name="Check answer")).to_be_visible()
        tab_to(page, lambda f: f["name"] == "choice")
        page.keyboard.press("Space")
        for _ in range(4):
            checked = page.evaluate("document.querySelector('input[name=choice]:checked').value")
            if checked == question.right_choice.id:
                break
            page.keyboard.press("ArrowDown")
        tab_to(page, lambda f: f["text"] == "Check answer")
        page.keyboard.press("Enter")
        expect(page.locator(".verdict")).to_be_focused()
        assert page.locator(".verdict p").inner_text().startswith("Correct.")
        label = "Next question" if number < 8 else "See results"
        tab_to(page, lambda f, label=label: f["text"] == label, limit=40)
        page.keyboard.press("Enter")
    expect(page.get_by_text("You scored 8 out of 8 (100%)")).to_be_visible()


def test_phone_layout_never_scrolls_sideways(browse, quiz):
    """At 375x667 every student page fits the screen's width."""
    page = browse(viewport=PHONE)

    def fits():
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"{page.url} is {width}px wide"

    page.goto("/")
    fits()
    start(page, "Phone")
    fits()
    for number, question in enumerate(quiz.questions, 1):
        answer(page, question.right_choice.text)
        fits()
        page.get_by_role("button", name="Next question" if number < 8 else "See results").click()
    fits()
    expect(page.get_by_text("You scored 8 out of 8 (100%)")).to_be_visible()
