"""Every page, light and dark: nothing serious for axe, nothing from elsewhere, all small."""

import io
import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from PIL import Image
from playwright.sync_api import expect

from app.config import PROJECT_ROOT
from app.question_types import right_choice

from conftest import PHONE, fits
from student import answer, start
from test_instructor import create_class, log_in

# HTML and the one stylesheet as sent, without their indentation and comments, the stylesheet
# gzipped (app/pages.py): the heaviest page here, a finished attempt's results with every
# explanation, is 36.4 KB (37,226 bytes).
PAGE_BUDGET = 50 * 1024
axe = Axe()
# Dark mode changes colours only: it is checked for what colours decide, the rest in light.
EVERY_RULE = {"resultTypes": ["violations"]}
COLOUR_RULES = {**EVERY_RULE, "runOnly": ["color-contrast", "link-in-text-block"]}


class Inspector:
    """Checks each page a visit reaches and keeps what it found, to report it all at once."""

    def __init__(self, server, rules=EVERY_RULE):
        self.server = server
        self.rules = rules
        self.problems = []
        self.checked = []
        self.stylesheet = 0

    def watch(self, page):
        def outside(request):
            if not request.url.startswith(self.server):
                self.problems.append(f"{page.url}: fetched {request.url}")

        page.on("request", outside)
        return page

    def check(self, page, name):
        self.checked.append(name)
        # After a form's submit the next page may still be loading its stylesheet: axe then
        # measured the header's contrast against unstyled colours (seen once in dark mode).
        page.wait_for_load_state()
        violations = axe.run(page, options=self.rules).response["violations"]
        for violation in violations:
            if violation["impact"] in ("serious", "critical"):
                targets = [node["target"] for node in violation["nodes"]][:3]
                self.problems.append(f"{name}: {violation['id']} ({violation['impact']}) {targets}")
        if not self.stylesheet:  # as sent: gzipped to a browser, which all of these take
            sent = page.request.get("/static/quizwright.css")
            self.stylesheet = int(sent.headers["content-length"])
        weight = len(page.content().encode()) + self.stylesheet
        if weight > PAGE_BUDGET:
            self.problems.append(f"{name}: {weight} bytes of HTML and CSS")


def test_dark_mode_changes_only_colours():
    """Why dark mode's axe pass checks the colour rules only: its one block sets the colour
    variables and nothing else."""
    css = (PROJECT_ROOT / "app" / "static" / "quizwright.css").read_text()
    blocks = re.findall(r"@media \(prefers-color-scheme: dark\) \{\s*:root \{([^}]*)\}\s*\}", css)
    assert len(blocks) == css.count("prefers-color-scheme") == 1
    declarations = [part.strip() for part in blocks[0].split(";") if part.strip()]
    assert declarations
    assert all(re.fullmatch(r"--[a-z-]+: #[0-9a-f]{6}", part) for part in declarations)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_is_accessible_local_and_light(browse, quiz, server, scheme):
    """Home, quiz pages, instructor pages (assignments too) and error pages pass axe and the
    page budget."""
    inspect = Inspector(server, COLOUR_RULES if scheme == "dark" else EVERY_RULE)
    student = inspect.watch(browse(color_scheme=scheme))
    student.goto("/")
    inspect.check(student, "home")
    student.get_by_role("link", name="Gradient Checkpointing Quiz", exact=True).click()
    student.get_by_role("button", name="Start quiz").click()
    inspect.check(student, "start form with an error")
    start(student, "Ada")
    inspect.check(student, "question")
    student.get_by_role("button", name="Check answer").click()
    inspect.check(student, "question: choose one answer")
    answer(student, right_choice(quiz.questions[0]).text)
    inspect.check(student, "feedback")
    question_url = student.url
    student.goto("/")
    expect(student.get_by_text("1 of 8 answered")).to_be_visible()
    inspect.check(student, "home with an attempt to continue")
    student.goto(question_url.split("/questions/")[0] + "/results")
    inspect.check(student, "results")
    student.get_by_role("link", name="What we measured").first.click()
    inspect.check(student, "measurements")

    stranger = inspect.watch(browse(color_scheme=scheme))
    stranger.goto(question_url)
    inspect.check(stranger, "403 error page")
    stranger.goto("/no/such/page")
    inspect.check(stranger, "404 error page")
    stranger.goto("/logout")
    inspect.check(stranger, "405 error page")
    stranger.goto("/quizzes/gradient-checkpointing")
    stranger.context.clear_cookies()
    stranger.get_by_role("button", name="Start quiz").click()
    expect(stranger.get_by_role("heading", name="Form expired")).to_be_visible()
    inspect.check(stranger, "400 form expired page")

    teacher = inspect.watch(browse(color_scheme=scheme))
    teacher.goto("/login")
    inspect.check(teacher, "login")
    log_in(teacher)
    inspect.check(teacher, "dashboard")
    code = create_class(teacher, f"Class {scheme}")
    class_url = teacher.url
    joiner = inspect.watch(browse(color_scheme=scheme, viewport=PHONE))
    start(joiner, "Bo", code=code)
    for number, question in enumerate(quiz.questions, 1):
        answer(joiner, right_choice(question).text)
        joiner.get_by_role("link", name="Next question" if number < 8 else "See results").click()
    inspect.check(joiner, "results of every question, explained")
    teacher.goto(class_url)
    inspect.check(teacher, "class page")
    teacher.get_by_role("link", name="Show the code full screen").click()
    inspect.check(teacher, "join screen")
    teacher.goto(class_url)
    teacher.get_by_role("link", name="Attempt 1").click()
    inspect.check(teacher, "attempt review")
    teacher.goto(class_url)
    teacher.get_by_role("link", name=re.compile("^Preview")).click()
    inspect.check(teacher, "quiz preview")

    teacher.goto(class_url)
    teacher.get_by_role("link", name="Assign a quiz").click()
    inspect.check(teacher, "assignment form")
    teacher.get_by_label("Time limit (minutes)").fill("2000")
    teacher.get_by_role("button", name="Save assignment").click()
    inspect.check(teacher, "assignment form with an error")
    teacher.get_by_label("Time limit (minutes)").fill("30")
    teacher.get_by_label("Opens").fill("2099-01-05T09:00")
    teacher.get_by_label("Attempts allowed").fill("1")
    teacher.get_by_label("After the quiz closes").check()
    teacher.get_by_role("button", name="Save assignment").click()
    expect(teacher.get_by_text("1 attempt allowed")).to_be_visible()
    inspect.check(teacher, "class page with an assignment")
    late = inspect.watch(browse(color_scheme=scheme, viewport=PHONE))
    late.goto(f"/join/{code}")
    expect(late.get_by_role("heading", name="is not open yet")).to_be_visible()
    inspect.check(late, "quiz not open yet")
    # Held feedback would refuse later tests' starts outside a class on this shared server.
    teacher.locator("summary", has_text="Remove…").first.click()
    teacher.get_by_role("button", name=re.compile(r"^Remove the assignment")).first.click()
    expect(teacher.get_by_text("Removed", exact=True)).to_be_visible()

    # The quiz editor's pages, on a quiz of this run's own.
    teacher.goto("/teach/quizzes")
    inspect.check(teacher, "your quizzes")
    teacher.get_by_label("Title").fill(f"Axe quiz {scheme}")
    teacher.get_by_role("button", name="Create quiz").click()
    inspect.check(teacher, "quiz editor")
    editor = teacher.url
    teacher.get_by_role("link", name="Single choice").click()
    teacher.get_by_role("button", name="Save question").click()
    inspect.check(teacher, "question editor with errors")
    teacher.goto("/teach/quizzes/import")
    inspect.check(teacher, "import a file")

    # A typed answer's pages: its editor, then the question as a student on a phone meets it.
    teacher.goto(editor)
    teacher.get_by_label("Description").fill("Moons.")
    teacher.get_by_role("button", name="Save settings").click()
    teacher.get_by_role("link", name="Numerical").click()
    inspect.check(teacher, "numerical question editor")
    teacher.get_by_label("Question", exact=True).fill("How many moons has Mars?")
    teacher.get_by_label("Answer 1", exact=True).fill("2")
    teacher.get_by_label("Said to a student whose answer matches none of these").fill("Two.")
    picture = io.BytesIO()
    Image.new("RGB", (320, 180), "firebrick").save(picture, "PNG")
    teacher.get_by_label("Add a picture (optional)").set_input_files(
        {"name": "mars.png", "mimeType": "image/png", "buffer": picture.getvalue()}
    )
    teacher.get_by_label("What the picture shows").fill("Mars, a red disc")
    teacher.get_by_role("button", name="Save question").click()
    teacher.get_by_role("button", name="Publish", exact=True).click()
    expect(teacher.get_by_text("Published: students are served this version now.")).to_be_visible()
    teacher.wait_for_timeout(2500)  # every worker's next check of the bank
    phone = inspect.watch(browse(color_scheme=scheme, viewport=PHONE))
    phone.goto(editor.replace("/teach/quizzes/", "/quizzes/").removesuffix("/edit"))
    phone.get_by_label("Your name").fill("Ada")
    phone.get_by_role("button", name="Start quiz").click()
    expect(phone.get_by_role("heading", name="Question 1 of 1")).to_be_visible()
    expect(phone.get_by_role("img", name="Mars, a red disc")).to_be_visible()
    inspect.check(phone, "numerical question with a picture")
    phone.get_by_label("How many moons has Mars?").fill("two")
    phone.get_by_role("button", name="Check answer").click()
    inspect.check(phone, "numerical question: not a number")
    expect(phone.get_by_role("alert")).to_contain_text("Type a number")
    phone.get_by_label("How many moons has Mars?").fill("2")
    phone.get_by_role("button", name="Check answer").click()
    expect(phone.get_by_text("Correct.")).to_be_visible()
    inspect.check(phone, "numerical feedback")
    fits(phone)

    assert len(inspect.checked) == 31
    assert inspect.problems == [], "\n".join(inspect.problems)
