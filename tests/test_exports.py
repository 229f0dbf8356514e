"""CSV writing on plain values: no app, no database."""

import csv
import io

import pytest

from app.teach.exports import cell, csv_chunks, file_names, number


@pytest.mark.parametrize(
    ("value", "exported"),
    [("\tTab", "'\tTab"), ("\rCR", "'\rCR"), ("plain", "plain"), ("a=b", "a=b"), (3, 3)],
)
def test_cells_starting_with_tab_or_return_are_neutralised(value, exported):
    """Tab and carriage return, which the forms trim away, are neutralised too."""
    assert cell(value) == exported


def test_a_table_streams_as_one_csv_with_a_byte_order_mark():
    """Pieces of about 64 kB that join into the header and every row, formulas defused."""
    rows = [[f"=Student {n}", n, number(n / 3, 2)] for n in range(5000)]
    pieces = list(csv_chunks(["student", "n", "third"], rows))
    assert len(pieces) > 1 and all(len(piece) < 70_000 for piece in pieces)
    text = "".join(pieces)
    assert text.startswith("\ufeffstudent,n,third\r\n")
    read = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    assert len(read) == 5001
    assert read[3000] == ["'=Student 2999", "2999", "999.67"]
    assert read[4] == ["'=Student 3", "3", "1"]


@pytest.mark.parametrize(
    ("class_name", "utf8", "ascii"),
    [
        ("../Année", "Année-quiz-items.csv", "Ann-e-quiz-items.csv"),
        ("a\u202etxt.exe\n", "a-txt.exe-quiz-items.csv", "a-txt.exe-quiz-items.csv"),
        (" ...", "class-quiz-items.csv", "class-quiz-items.csv"),
    ],
)
def test_file_names_keep_letters_and_lose_paths_and_disguises(class_name, utf8, ascii):
    """No folder, leading dot, control or direction-override character reaches a file name."""
    assert file_names(class_name, "quiz", "items") == (utf8, ascii)
