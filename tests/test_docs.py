"""What the README tells people to do works."""

import json
import re

import pytest

from app.bank import BankError, load_bank
from app.config import PROJECT_ROOT

README = (PROJECT_ROOT / "README.md").read_text()


def example_bank():
    return json.loads(re.search(r"```json\n(.*?)```", README, re.S).group(1))


def test_readme_example_bank_is_valid(tmp_path):
    """The example quiz in "Writing a quiz" loads as written."""
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(example_bank()))
    bank = load_bank(path)
    assert list(bank.quizzes) == ["photosynthesis"]


def test_readme_example_error_is_what_check_prints(tmp_path):
    """The error the README quotes is the one a bank with two correct choices gets."""
    data = example_bank()
    for choice in data["quizzes"][0]["questions"][0]["choices"]:
        choice["correct"] = True
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(data))
    quoted = re.search(r"`(questions\.json: quiz .*?)`", README, re.S).group(1)
    with pytest.raises(BankError) as raised:
        load_bank(path)
    assert raised.value.errors == [
        f"{path}: {' '.join(quoted.split()).removeprefix('questions.json: ')}"
    ]
