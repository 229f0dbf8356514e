"""Reading pasted and uploaded rosters: pure functions, tested without an app."""

import pytest

from app.roster.parse import (
    ID_OVER_EMAIL,
    MOST_BYTES,
    MOST_COLUMNS,
    MOST_STUDENTS,
    NOT_SURE,
    Entry,
    Listed,
    RosterError,
    clashes,
    column_problems,
    entries,
    read_csv,
    read_table,
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


# Header rows and the columns they name (issue 27, items 7 and 8).


@pytest.mark.parametrize(
    "header",
    [
        "Email,Full name",
        " E-MAIL: , FULL NAME ",
        "e_mail;Student name",
        "Email address\tName",
        "Courriel,Nom complet",
        "Correo electrónico,Nombre completo",
    ],
)
def test_a_header_row_names_its_columns_whatever_their_order_case_and_punctuation(header):
    """A first row of column names is never a student: "Email,Full name" reads the email first.
    Case, spaces, punctuation and accents do not matter."""
    delimiter = ";" if ";" in header else "\t" if "\t" in header else ","
    listed = f"{header}\nd@x.example{delimiter}Dana Diaz\n"
    assert read_text(listed) == [Entry(2, "Dana Diaz", "d@x.example")]


@pytest.mark.parametrize(
    ("header", "row", "student"),
    [
        ("First name,Last name,Student ID,Email", "Dana,Diaz,2023001,d@x.example",
         Entry(2, "Dana Diaz", "2023001")),
        ("Email,Surname,Given name,Student number", "d@x.example,Diaz,Dana,2023001",
         Entry(2, "Dana Diaz", "2023001")),
        ("Nachname;Vorname;Matrikelnummer", "Diaz;Dana;2023001", Entry(2, "Dana Diaz", "2023001")),
        ("Nom,Prénom,Numéro étudiant", "Diaz,Dana,2023001", Entry(2, "Dana Diaz", "2023001")),
        ("Nombre,Primer apellido,Segundo apellido,Correo", "Ana,García,López,a@x.example",
         Entry(2, "Ana García López", "a@x.example")),
        ("Username,Full name", "ddiaz,Dana Diaz", Entry(2, "Dana Diaz", "ddiaz")),
        ("Last name,First name", "Diaz,", Entry(2, "Diaz", None)),
    ],
    ids=["registrar", "any order", "German", "French", "Spanish surnames", "username", "parts"],
)  # fmt: skip
def test_first_and_last_names_are_joined_and_columns_read_by_name(header, row, student):
    """ "First Last", whatever the columns' order; a student ID rather than an email."""
    assert read_text(f"{header}\n{row}") == [student]


def test_a_student_id_is_kept_rather_than_an_email_and_the_table_says_so():
    table = read_table("Email,Name,Student ID\nd@x.example,Dana Diaz,7")
    assert (table.roles, table.sure, table.notes) == (("ignore", "name", "number"), True,
                                                      (ID_OVER_EMAIL,))  # fmt: skip
    assert "the student ID is kept" in ID_OVER_EMAIL


@pytest.mark.parametrize(
    ("listed", "guess"),
    [
        ("Dana,Diaz,2023001,d@x.example\nEli,Ek,2023002,e@x.example",
         ("first", "last", "number", "ignore")),
        ("Dana,Diaz,d@x.example\nEli,Ek,e@x.example", ("first", "last", "number")),
        ("20231234, Dana Diaz\n20231235, Eli Ek", ("number", "name")),
        ("Name,Group\nDana Diaz,A", ("name", "ignore")),
        ("ID,Student ID,Name\n1,2023001,Dana Diaz", ("number", "ignore", "name")),
        ("Name,First name,Last name\nDana Diaz,Dana,Diaz", ("name", "ignore", "ignore")),
        ("Name,Name\nDana Diaz,Dana Diaz", ("name", "ignore")),
        ("Email,Student ID\nd@x.example,7", ("ignore", "number")),
    ],
    ids=["no header", "emails", "ids first", "unknown column", "two ids", "name and parts",
         "two names", "no name"],
)  # fmt: skip
def test_columns_that_cannot_be_told_apart_are_guessed_only_to_be_confirmed(listed, guess):
    """Without a header and more than two columns, ids before names, a header naming only some
    columns or naming one kind twice: a guess for the instructor, and nothing read without."""
    table = read_table(listed)
    assert (table.roles, table.sure) == (guess, False)
    assert problems(read_text, listed) == [NOT_SURE]
    assert problems(read_csv, listed.encode()) == [NOT_SURE]


def test_the_chosen_columns_read_the_list_with_or_without_its_first_row():
    """The instructor's roles, and whether the first row is a header, decide what is read."""
    table = read_table("Apodo,Grupo,Clave\nDana Diaz,A,7\nEli Ek,B,8")
    assert not table.header
    assert table.data() == [(1, ("Apodo", "Grupo", "Clave")), (2, ("Dana Diaz", "A", "7")),
                            (3, ("Eli Ek", "B", "8"))]  # fmt: skip
    assert table.headings() == () and table.headings(True) == ("Apodo", "Grupo", "Clave")
    assert entries(table, ("name", "ignore", "number"), header=True) == [
        Entry(2, "Dana Diaz", "7"),
        Entry(3, "Eli Ek", "8"),
    ]
    assert entries(table, ("name", "ignore", "ignore"), header=False)[0] == Entry(1, "Apodo", None)


def test_short_rows_have_empty_cells_and_long_rows_are_refused_by_line():
    """A row shorter than its header misses its last cells; a longer one has a name's unquoted
    comma, which would shift the columns after it."""
    listed = "Name,ID,Email\nDana Diaz\nDiaz, Dana,7,d@x.example"
    assert problems(read_text, listed) == [
        "Line 3: 4 columns, but the list has 3 (put names with commas in double quotes)."
    ]
    assert read_text("First name,Last name,ID\nDana,Diaz") == [Entry(2, "Dana Diaz", None)]


def test_each_wrong_choice_of_columns_is_told_by_its_column():
    """An unknown role, a second full name or id, parts beside a full name, and no name."""
    assert column_problems(["bogus", "number", "number", "ignore"]) == [
        (0, "Choose what this column holds."),
        (2, "Column 2 is the student ID or email already: choose Ignore here."),
        (None, "Choose the column with the students’ names: Full name, or First name and "
               "Last name."),
    ]  # fmt: skip
    assert column_problems(["name", "name", "last"]) == [
        (1, "Column 1 is the full name already: choose Ignore here."),
        (2, "Column 1 is the full name already: choose Ignore here, or First name and Last "
            "name for the parts there."),
    ]  # fmt: skip
    assert column_problems(["last", "first", "last", "number"]) == []
    table = read_table("a,b,c\nd,e,f")
    with pytest.raises(RosterError) as refused:
        entries(table, ["name", "number", "number"])
    assert refused.value.problems == [
        "Column 3: Column 2 is the student ID or email already: choose Ignore here."
    ]
    with pytest.raises(RosterError) as refused:
        entries(table, ["name", "number"])
    assert refused.value.problems == ["The list has changed: paste or upload it again."]


def test_a_list_too_wide_or_too_large_is_refused_whole():
    """More columns than a registrar's export has, or more than 1 MB: one message each."""
    wide = ",".join(f"c{n}" for n in range(MOST_COLUMNS + 1))
    assert problems(read_text, wide) == [
        f"The list has {MOST_COLUMNS + 1} columns; keep at most {MOST_COLUMNS}, with the names "
        "in them."
    ]
    large = "\n".join(["Dana Diaz, " + "7" * 200] * (MOST_BYTES // 200))
    [problem] = problems(read_text, large)
    assert problem.startswith("The list is larger than 1 MB")


def test_line_breaks_do_not_count_twice_towards_the_size():
    """A browser sends a list's line breaks back as CRLF: the same list, the same size."""
    line = "x" * 599
    listed = "\n".join([line] * (MOST_BYTES // 600))
    assert len(listed.replace("\n", "\r\n").encode()) > MOST_BYTES
    assert read_table(listed.replace("\n", "\r\n")).width == 2
