"""A lecturer with no shell, in a real browser: writes a quiz, imports a GIFT file into it,
publishes, assigns it, edits it mid-term, and shares it."""


from playwright.sync_api import expect

from conftest import NEWCOMER, PHONE, fits
from test_instructor import create_class, log_in

# Served within BANK_CHECK_SECONDS (2) by every worker: the test waits that long after a publish.
PROPAGATION_MS = 2500

GIFT = b"""// Written by the lecturer in Moodle, exported as GIFT.
::refraction::What bends light as it enters glass? {
  =A change of speed#Right: light slows in glass, so the wavefront turns.
  ~Gravity#Far too weak at this scale.
  ####Snell's law follows from the change of speed. Sources: Refraction <https://en.wikipedia.org/wiki/Refraction>
}

::essay::Explain in your own words why the sky is blue. {}
"""


def write_question(page, prompt, right, wrong, number_right=1):
    """Fill in the question editor as a lecturer would, and save."""
    page.get_by_role("link", name="Single choice").click()
    page.get_by_label("Question", exact=True).fill(prompt)
    page.locator("#choices-0-text").fill(right)
    page.locator("#choices-0-explanation").fill(f"Right: {right.lower()}.")
    page.locator("#choices-1-text").fill(wrong)
    page.locator("#choices-1-explanation").fill(f"No: {wrong.lower()} is not it.")
    page.get_by_label(f"Choice {number_right} is the right one").check()
    page.get_by_label("General explanation, shown after any answer").fill("Optics, in short.")
    page.get_by_label("Source title").fill("Optics")
    page.get_by_label("Address (https://)").fill("https://en.wikipedia.org/wiki/Optics")
    page.get_by_role("button", name="Save question").click()
    expect(page.get_by_text("Question saved in the draft.")).to_be_visible()


def test_a_lecturer_owns_a_quiz_from_first_draft_to_mid_term_edit(browse):
    teacher = browse()
    log_in(teacher)
    teacher.get_by_role("link", name="Your quizzes").click()
    teacher.get_by_label("Title").fill("Optics basics")
    teacher.get_by_role("button", name="Create quiz").click()
    expect(teacher.get_by_role("heading", name="Edit Optics basics")).to_be_visible()
    editor = teacher.url
    teacher.get_by_label("Description").fill("Light, lenses and colour.")
    teacher.get_by_role("button", name="Save settings").click()
    for prompt, right, wrong in [
        ("What is the speed of light in vacuum, roughly?", "300,000 km/s", "300 km/s"),
        # Markdown, with a line of code too long for a phone.
        ("Which colour has the **longest** wavelength?\n\n```\nwavelength_in_nanometres = "
         "{'red': 700, 'blue': 450, 'violet': 380}\n```", "Red", "Blue"),
        ("What does a convex lens do to parallel rays?", "Brings them to a focus", "Spreads them"),
    ]:
        write_question(teacher, prompt, right, wrong)

    # Import a GIFT file into the draft: the report says what it leaves out, and where.
    teacher.goto("/teach/quizzes/import")
    teacher.get_by_label("Quiz file").set_input_files(
        {"name": "optics.gift", "mimeType": "text/plain", "buffer": GIFT}
    )
    teacher.get_by_role("button", name="Check the file").click()
    expect(teacher.get_by_role("heading", name="Left out (1)")).to_be_visible()
    skipped = teacher.get_by_role("region", name="Left out (1)")
    expect(skipped).to_contain_text("optics.gift:8: an essay question")
    teacher.get_by_label("Import into").select_option(label="The draft of Optics basics")
    teacher.get_by_role("button", name="Import").click()
    expect(teacher.get_by_role("heading", name="Questions (4)")).to_be_visible()

    teacher.get_by_role("button", name="Publish", exact=True).click()
    expect(teacher.get_by_text("Published: students are served this version now.")).to_be_visible()
    teacher.wait_for_timeout(PROPAGATION_MS)

    # Assign it to a class; a student takes it by the class's link.
    teacher.goto("/teach")
    code = create_class(teacher, "Optics 1")
    teacher.get_by_role("link", name="Assign a quiz").click()
    teacher.get_by_label("Quiz", exact=True).select_option(label="Optics basics")
    teacher.get_by_role("button", name="Save assignment").click()
    student = browse(viewport=PHONE)
    student.goto(f"/join/{code}")
    student.get_by_label("Your name").fill("Grace")
    student.get_by_role("button", name="Start quiz").click()
    expect(student.get_by_role("heading", name="Question 1 of 4")).to_be_visible()
    expect(student.get_by_text("What is the speed of light in vacuum, roughly?")).to_be_visible()
    student.get_by_role("radio", name="300,000 km/s").check()
    student.get_by_role("button", name="Check answer").click()
    expect(student.get_by_text("Right: 300,000 km/s.")).to_be_visible()
    attempt = student.url
    # Question 2 reads formatted, its code beneath it, and the phone's page does not scroll
    # sideways: the code block scrolls inside itself.
    student.get_by_role("link", name="Next question").click()
    expect(student.locator("legend strong")).to_have_text("longest")
    expect(student.locator(".prompt-more pre")).to_contain_text("wavelength_in_nanometres")
    fits(student)

    # Mid-term, the lecturer rewords question 1 and publishes again.
    teacher.goto(editor)
    teacher.get_by_role("link", name="What is the speed of light in vacuum, roughly?").click()
    teacher.get_by_label("Question", exact=True).fill("How fast does light travel in vacuum?")
    teacher.get_by_role("button", name="Save question").click()
    teacher.get_by_role("button", name="Publish", exact=True).click()
    expect(teacher.get_by_text("Published: students are served this version now.")).to_be_visible()
    teacher.wait_for_timeout(PROPAGATION_MS)
    student.goto(attempt)
    expect(student.get_by_text("What is the speed of light in vacuum, roughly?")).to_be_visible()
    teacher.goto(editor.replace("/edit", "/history"))
    expect(teacher.get_by_text("Changed: How fast does light travel in vacuum?")).to_be_visible()

    # A colleague cannot find it until it is shared with them.
    colleague = browse()
    log_in(colleague, NEWCOMER)
    colleague.goto("/teach/quizzes")
    expect(colleague.get_by_text("Optics basics")).to_have_count(0)
    assert colleague.goto(editor.replace("/edit", "/preview")).status == 404
    teacher.goto(editor.replace("/edit", "/share"))
    teacher.get_by_label("Instructor's username").fill(NEWCOMER[0])
    teacher.get_by_role("button", name="Share").click()
    colleague.goto("/teach/quizzes")
    expect(colleague.get_by_role("heading", name="Optics basics")).to_be_visible()
    assert colleague.goto(editor.replace("/edit", "/preview")).status == 200
