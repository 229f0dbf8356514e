"""What the README and docs/ tell people to do works."""

import json
import re

import pytest

from app.auth import create_instructor
from app.bank import BankError, load_bank
from app.config import PROJECT_ROOT
from app.extensions import db
from app.models import Class

from helpers import SLUG

pytestmark = pytest.mark.any_database

WRITING = (PROJECT_ROOT / "docs" / "writing-quizzes.md").read_text()


def example_bank():
    return json.loads(re.search(r"```json\n(.*?)```", WRITING, re.S).group(1))


def test_readme_example_bank_is_valid(tmp_path):
    """The example quiz in docs/writing-quizzes.md loads as written."""
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(example_bank()))
    bank = load_bank(path)
    assert list(bank.quizzes) == ["photosynthesis"]


def test_readme_example_error_is_what_check_prints(tmp_path):
    """The error docs/writing-quizzes.md quotes is the one a bank with two correct choices gets."""
    data = example_bank()
    for choice in data["quizzes"][0]["questions"][0]["choices"]:
        choice["correct"] = True
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(data))
    quoted = re.search(r"`(questions\.json: quiz .*?)`", WRITING, re.S).group(1)
    with pytest.raises(BankError) as raised:
        load_bank(path)
    assert raised.value.errors == [
        f"{path}: {' '.join(quoted.split()).removeprefix('questions.json: ')}"
    ]


DOCUMENTS = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
ADDRESS = re.compile(r"`(/[^`\s]*)`")


def anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_local_links_and_images_lead_to_files(document):
    """Every relative link or image in README and docs names a file or a heading that exists."""
    source = document.read_text()
    headings = {anchor(h) for h in re.findall(r"^#+ (.*)$", source, re.M)}
    broken = []
    for target in LINK.findall(source):
        path, _, fragment = target.partition("#")
        if re.match(r"[a-z]+:", target):
            continue  # a web address, not this project's
        if path and not (document.parent / path).exists() or not path and fragment not in headings:
            broken.append(target)
    assert broken == []


def test_app_addresses_in_the_docs_answer(app, client):
    """Every address of the app that README or docs mention (`/login`, `/join/CODE`) answers.

    Server files such as `/etc/quizwright.env` are told apart by their first segment, which
    no route of the app starts with; CODE and SLUG stand for a real class code and quiz."""
    with app.app_context():
        teacher = create_instructor("teacher", "a password")
        db.session.add(Class(name="Physics", join_code="ABCDEF", instructor_id=teacher.id))
        db.session.commit()
    tops = {rule.rule.split("/")[1] for rule in app.url_map.iter_rules()}
    mentioned = {a for doc in DOCUMENTS for a in ADDRESS.findall(doc.read_text())}
    addresses = sorted(a for a in mentioned if a.split("/")[1] in tops)
    assert "/login" in addresses and len(addresses) > 5, addresses
    statuses = {
        a: client.get(a.replace("CODE", "ABCDEF").replace("SLUG", SLUG)).status_code
        for a in addresses
    }
    assert {a: s for a, s in statuses.items() if s >= 400} == {}
