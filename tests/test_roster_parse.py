"""Reading pasted and uploaded rosters: pure functions, tested without an app."""

import pytest

from app.roster.parse import (
    MOST_STUDENTS,
    Entry,
    Listed,
    RosterError,
    clashes,
    read_csv,
    read_text,
)


def problems(read, data) -> list[str]:
    with pytest.raises(RosterError) as refused:
        read(data)
    return refused.value.problems


def test_a_pasted_list_gives_names_and_optional_ids():
    """One student a line; a comma then an id or email; blank lines and spaces are ignored."""
    assert read_text("Dana Diaz, 20231234\n\n  Eli   Ek  \nFay Fox,fay@school.example\n") == [
        Entry(1, "Dana Diaz", "20231234"),
        Entry(3, "Eli Ek", None),
        Entry(4, "Fay Fox", "fay@school.example"),
    ]


def test_a_quoted_name_keeps_its_comma_and_a_header_row_is_skipped():
    """ "Diaz, Dana" in quotes is one name; a first row "Name, Student id" names the columns."""
    assert read_text('Name, Student id\n"Diaz, Dana", 7\n') == [Entry(2, "Diaz, Dana", "7")]


@pytest.mark.parametrize(
    "pasted",
    ["Dana Diaz\t7\nEli Ek\t8", "Dana Diaz;7\nEli Ek;8", "Dana Diaz,7\nEli Ek,8"],
    ids=["tabs from a spreadsheet", "semicolons", "commas"],
)
def test_columns_pasted_from_a_spreadsheet_are_read_whatever_their_separator(pasted):
    """Copying two spreadsheet columns pastes tabs; some locales save CSV with semicolons."""
    assert read_text(pasted) == [Entry(1, "Dana Diaz", "7"), Entry(2, "Eli Ek", "8")]


def test_a_csv_file_may_start_with_a_byte_order_mark():
    """Excel's "CSV UTF-8" writes one; names keep their accents."""
    data = "\ufeffname,email\r\nZoë Zander,zoe@school.example\r\n".encode()
    assert read_csv(data) == [Entry(2, "Zoë Zander", "zoe@school.example")]


def test_a_file_that_is_not_utf8_is_refused_with_what_to_do():
    """Latin-1 bytes are not guessed at: the instructor is told to save as CSV UTF-8."""
    [problem] = problems(read_csv, "Zoë Zander\n".encode("latin-1"))
    assert "not UTF-8" in problem and "CSV UTF-8" in problem


def test_a_binary_file_is_refused():
    """A spreadsheet uploaded as .xlsx bytes, or anything with NUL bytes, is not a roster."""
    assert "not a CSV file" in problems(read_csv, b"PK\x03\x04\x00\x00name")[0]


def test_every_problem_is_reported_at_once_with_its_line():
    """Empty names, formulas, long names, long ids and extra columns: all of them, located."""
    pasted = "\n".join(
        [
            "Dana Diaz, 1",
            ", 2",
            '=HYPERLINK("http://evil"), 3',
            "Eli Ek, +44 20 7946",
            "x" * 81,
            "Fay Fox, " + "9" * 255,
            "Gus Gray, 4, extra",
            "@Hal",
            "-Ivy",
        ]
    )
    found = problems(read_text, pasted)
    assert found == [
        "Line 2: the name is empty.",
        "Line 3: “=HYPERLINK(\"http://evil\")” begins with '=', which spreadsheets run as a "
        "formula; remove it.",
        "Line 4: “+44 20 7946” begins with '+', which spreadsheets run as a formula; remove it.",
        "Line 5: the name is longer than 80 characters.",
        "Line 6: the student id or email is longer than 254.",
        "Line 7: use at most two columns, a name and a student id or email (put names with "
        "commas in double quotes).",
        "Line 8: “@Hal” begins with '@', which spreadsheets run as a formula; remove it.",
        "Line 9: “-Ivy” begins with '-', which spreadsheets run as a formula; remove it.",
    ]


def test_a_name_of_invisible_characters_counts_as_empty():
    """Zero-width spaces show nothing, so they are no name."""
    assert problems(read_text, "\u200b\u200b, 5") == ["Line 1: the name is empty."]


def test_duplicate_names_need_ids_to_tell_them_apart():
    """Two Dana Diaz without ids are refused; with an id each they are two students."""
    assert problems(read_text, "Dana Diaz\nEli Ek\ndana  DIAZ") == [
        "Line 3: dana DIAZ is also on line 1. Give each a student id or email, so their "
        "results can be told apart."
    ]
    assert len(read_text("Dana Diaz, 1\nDana Diaz, 2")) == 2
    assert len(problems(read_text, "Dana Diaz, 1\nDana Diaz")) == 1


def test_duplicate_ids_are_refused_whatever_their_case():
    """An email given twice is one student twice."""
    assert problems(read_text, "Dana Diaz, d@x.example\nEli Ek, D@X.example") == [
        "Line 2: the student id D@X.example is also on line 1."
    ]


def test_more_than_the_most_students_is_refused_whole():
    """2,001 students are refused in one message, before each line is read."""
    fine = "\n".join(f"Student {n}" for n in range(MOST_STUDENTS))
    assert len(read_text("Name\n" + fine)) == MOST_STUDENTS  # a header row does not count
    [problem] = problems(read_text, fine + "\nOne More")
    assert problem == "The list has 2,001 students; add at most 2,000 at a time, then the rest."


@pytest.mark.parametrize("empty", ["", "\n \n", "Name, Email\n"])
def test_an_empty_list_is_refused(empty):
    assert problems(read_text, empty) == ["The list is empty: give one student a line."]


def test_clashes_with_the_roster_name_the_student_already_there():
    """The same id, a removed student's id, or the same name without ids to tell them apart."""
    roster = [
        Listed("Dana Diaz", None),
        Listed("Eli Ek", "E1"),
        Listed("Old Owl", "O1", removed=True),
        Listed("Removed Ray", None, removed=True),
    ]
    entries = [
        Entry(1, "dana diaz", "D9"),
        Entry(2, "Eli Ek", "E2"),
        Entry(3, "Someone", "e1"),
        Entry(4, "Olga", "O1"),
        Entry(5, "Removed Ray", None),
    ]
    assert clashes(entries, roster) == [
        "Line 1: dana diaz is on the roster already.",
        "Line 3: the student id e1 belongs to Eli Ek, already on this class's roster.",
        "Line 4: the student id O1 belongs to Old Owl, removed from this class's roster.",
    ]


@pytest.mark.parametrize(
    ("pasted", "problem"),
    [
        ("Dana Diaz, 20231234\nEli Ek\t20231235",
         "Line 2: separated by a tab, but line 1 by a comma."),
        ("Dana Diaz;7\nEli Ek\t8",
         "Line 2: separated by a tab, but line 1 by a semicolon."),
        ("\nDana Diaz, 7\nFay Fox, 9\nEli Ek; 8",
         "Line 4: separated by a semicolon, but line 2 by a comma."),
    ],
)  # fmt: skip
def test_a_line_separated_unlike_the_first_is_refused_not_glued_into_a_name(pasted, problem):
    """ "Eli Ek<TAB>20231235" in a comma list would be one name with the id inside: refused,
    located, nothing read."""
    assert problems(read_text, pasted) == [f"{problem} Use the same separator on every line."]


def test_a_comma_in_a_name_of_a_tab_list_is_the_names():
    """A tab list's line without an id may be a name written "Surname, Given"."""
    assert read_text('Dana Diaz\t7\n"Ek, Eli"') == [
        Entry(1, "Dana Diaz", "7"),
        Entry(2, "Ek, Eli", None),
    ]


def test_names_alone_before_the_first_id_take_the_separator_of_the_first_id():
    """The first lines without ids say nothing about the separator: the first id's line does."""
    assert read_text("Dana Diaz\nEli Ek\t8") == [
        Entry(1, "Dana Diaz", None),
        Entry(2, "Eli Ek", "8"),
    ]
