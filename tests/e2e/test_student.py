"""A student in a real browser: mouse, no JavaScript, keyboard only, and a phone."""

import pytest
from playwright.sync_api import expect

from app.question_types import right_choice

from conftest import PHONE, fits
from student import answer, start, take_quiz

RIGHT = {1, 2, 4, 7, 8}


def test_whole_quiz_with_feedback_results_and_retake(browse, quiz):
    """Right and wrong answers get their verdicts and explanations; results add up; retake."""
    page = browse()
    start(page, "Ada Lovelace")
    verdict = answer(page, right_choice(quiz.questions[0]).text)
    assert verdict.startswith("Correct.")
    for choice in quiz.questions[0].choices:
        expect(page.get_by_text(choice.explanation)).to_be_visible()
    page.get_by_role("link", name="Next question").click()
    wrong = next(c for c in quiz.questions[1].choices if not c.correct)
    verdict = answer(page, wrong.text)
    assert verdict.startswith("Incorrect.")
    assert f"The right answer is “{right_choice(quiz.questions[1]).text}”" in verdict
    page.get_by_role("link", name="Next question").click()
    rest = [verdict.split(" ")[0] for verdict in take_quiz(page, quiz, RIGHT, first=3)]
    assert rest == ["Incorrect.", "Correct.", "Incorrect.", "Incorrect.", "Correct.", "Correct."]
    expect(page.get_by_text("You scored 4 out of 8 (50%)")).to_be_visible()
    page.get_by_role("button", name="Retake quiz").first.click()
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
        answer(page, right_choice(question).text)  # the old form, from the browser's cache
    expect(page.locator(".verdict p")).to_contain_text("Incorrect.")
    page.goto(page.url.split("/questions/")[0] + "/results")
    expect(page.get_by_text("1 of 8 questions answered, 0 of 8 points so far")).to_be_visible()


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
            if checked == right_choice(question).id:
                break
            page.keyboard.press("ArrowDown")
        tab_to(page, lambda f: f["text"] == "Check answer")
        page.keyboard.press("Enter")
        expect(page.locator(".verdict")).to_be_focused()
        # A calm ring in the page's accent (the button's colour), not the warning orange.
        ring, accent = page.evaluate(
            """() => [getComputedStyle(document.activeElement).outlineColor,
                getComputedStyle(document.querySelector('.next-step .button')).backgroundColor]"""
        )
        assert ring == accent, (ring, accent)
        assert page.locator(".verdict p").inner_text().startswith("Correct.")
        label = "Next question" if number < 8 else "See results"
        tab_to(page, lambda f, label=label: f["text"] == label, limit=40)
        page.keyboard.press("Enter")
    expect(page.get_by_text("You scored 8 out of 8 (100%)")).to_be_visible()


def test_phone_feedback_keeps_the_way_on_in_reach(browse, quiz):
    """At 375x667, without JavaScript, every feedback page shows its way on in the first screen,
    and following it leaves a clean address."""
    page = browse(viewport=PHONE, java_script_enabled=False)
    page.goto("/")
    fits(page)
    start(page, "Phone")
    fits(page)
    for number, question in enumerate(quiz.questions, 1):
        answer(page, right_choice(question).text)
        fits(page)
        way_on = page.get_by_role("link", name="Next question" if number < 8 else "See results")
        top = way_on.evaluate("link => link.getBoundingClientRect().top + window.scrollY")
        bottom = way_on.evaluate("link => link.getBoundingClientRect().bottom")
        assert top < 1000 and bottom <= PHONE["height"], (number, top, bottom)
        way_on.click()
        assert "?" not in page.url, page.url
    assert page.url.endswith("/results")
    expect(page.get_by_text("You scored 8 out of 8 (100%)")).to_be_visible()
    fits(page)


def test_measurements_fold_where_they_repeat_and_read_on_a_phone(browse, quiz):
    """The first panel is open, later ones folded; its chart text is 12 px or more, its table
    scrolls in a labelled region the keyboard reaches, and the legend dashes what the chart does."""
    page = browse(viewport=PHONE)
    start(page, "Reader")
    measured = [n for n, q in enumerate(quiz.questions, 1) if q.evidence]
    token = page.url.split("/")[4]
    for number, question in enumerate(quiz.questions, 1):
        page.goto(f"/attempts/{token}/questions/{number}")
        answer(page, right_choice(question).text)
        if number not in measured:
            continue
        panel = page.locator("details.measured")
        assert panel.evaluate("details => details.open") == (number == measured[0])
        if number == measured[0]:
            sizes = page.locator(".chart text").evaluate_all(
                """texts => texts.map(t => parseFloat(getComputedStyle(t).fontSize)
                    * t.ownerSVGElement.getBoundingClientRect().width
                    / t.ownerSVGElement.viewBox.baseVal.width)"""
            )
            assert min(sizes) >= 12, sizes
            dashed = page.locator(".chart .line-2").first.evaluate(
                "line => getComputedStyle(line).strokeDasharray"
            )
            key = page.locator(".key-2").first.evaluate(
                "key => getComputedStyle(key, '::before').borderTopStyle"
            )
            assert dashed != "none" and key == "dashed"
            region = page.get_by_role("region", name="64 MLP blocks")
            assert region.get_attribute("tabindex") == "0"
            region.focus()
            expect(region).to_be_focused()
            fits(page)


def test_results_open_with_a_summary_that_links_to_each_review(browse, quiz):
    """The results list every question in words, each a link to its review; Retake twice."""
    page = browse(viewport=PHONE)
    start(page, "Summary")
    take_quiz(page, quiz, right={1, 3})
    overview = page.locator("ol.overview li")
    expect(overview).to_have_count(8)
    expect(overview.nth(0)).to_contain_text("Correct")
    expect(overview.nth(1)).to_contain_text("Incorrect")
    page.locator("ol.overview").get_by_role("link").nth(6).click()
    assert page.url.endswith("#review-7")
    expect(page.get_by_role("heading", name=quiz.questions[6].prompt)).to_be_in_viewport()
    expect(page.get_by_role("button", name="Retake quiz")).to_have_count(2)
    fits(page)


def test_a_closed_tab_can_be_continued(browse, quiz):
    """Closing the tab mid-quiz, the home and start pages offer to continue at question 4."""
    page = browse()
    start(page, "Tab Closer")
    for number in (1, 2, 3):
        answer(page, right_choice(quiz.questions[number - 1]).text)
        page.get_by_role("link", name="Next question").click()
    context = page.context
    page.close()
    page = context.new_page()
    page.goto("/")
    expect(page.get_by_text("3 of 8 answered")).to_be_visible()
    page.get_by_role("link", name="Gradient Checkpointing Quiz", exact=True).click()
    expect(page.get_by_text("3 of 8 answered")).to_be_visible()
    page.get_by_role("link", name="Continue your attempt").click()
    expect(page.get_by_role("heading", name="Question 4 of 8")).to_be_visible()
    expect(page.get_by_role("button", name="Check answer")).to_be_visible()


def test_pages_ask_for_nothing_that_is_missing(browse, server):
    """No page load logs a 404: the icon is this site's own, /favicon.ico included."""
    page = browse()
    missing = []
    page.on("response", lambda r: missing.append(r.url) if r.status >= 400 else None)
    page.goto("/")
    page.goto("/login")
    icon = page.request.get("/favicon.ico")
    assert icon.ok and icon.headers["content-type"].startswith("image/svg+xml")
    assert missing == []
