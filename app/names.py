"""Names as people type and see them: trimmed, invisible characters dropped, and the key that
makes two spellings of one name one student."""

import unicodedata

# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt): characters that
# show nothing, among them the Hangul fillers and variation selectors, which are not all "Cf".
_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)  # fmt: skip


def ignorable(char: str) -> bool:
    """Whether a character shows nothing at all: a format character or a default-ignorable one."""
    point = ord(char)
    return unicodedata.category(char) == "Cf" or any(lo <= point <= hi for lo, hi in _IGNORABLE)


def student_key(name: str) -> str:
    """Students have no accounts: within a class, a name is a student, whatever its case and
    invisible characters (a joiner the name form keeps, a zero-width space in an older name)."""
    # No ASCII character is invisible: most names skip the look at each character, which was a
    # tenth of a 500-student class page.
    shown = name if name.isascii() else "".join(char for char in name if not ignorable(char))
    return " ".join(shown.split()).casefold()


def tidy(value):
    """Trim text and fold runs of spaces, as people type names."""
    return " ".join(value.split()) if isinstance(value, str) else value


# Zero-width joiners shape Persian and Indic names and emoji, so they stay between two letters.
JOINERS = "\u200c\u200d"
# Symbols drawn as blank space (the blank Braille pattern, a null notehead): read as spaces.
BLANKS = "\u2800\U0001d159"


def _visible(char: str) -> bool:
    return unicodedata.category(char)[0] in "LNPS" and char not in BLANKS and not ignorable(char)


def _invisible(text: str, at: int) -> bool:
    char = text[at]
    if char.isspace() or not (unicodedata.category(char) == "Cc" or ignorable(char)):
        return False
    joining = char in JOINERS and 0 < at < len(text) - 1
    return not (joining and _visible(text[at - 1]) and _visible(text[at + 1]))


def tidy_name(value):
    """A name as people see it: invisible characters dropped, spaces folded, and nothing at all
    when no character would show, so a name of zero-width spaces counts as empty."""
    if not isinstance(value, str):
        return value
    kept = "".join(char for at, char in enumerate(value) if not _invisible(value, at))
    shown = tidy("".join(" " if char in BLANKS else char for char in kept))
    return shown if any(_visible(char) for char in shown) else ""
