"""The codes students type: a class's join code and a roster student's sign-in code."""

import secrets

# No 0/O, 1/I/L, so a code read off a projector or a card cannot be mistyped.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
JOIN_CODE_LENGTH = 6
# 31^8, about 850 billion codes: guessing one at the unknown-code rate limit takes millennia.
SIGN_IN_CODE_LENGTH = 8
# A join code clash is rare (31^6 codes); each try draws afresh, and the column's unique
# constraint catches the clash.
JOIN_TRIES = 10
# Among so many sign-in codes a clash is rarer still; each try draws every code afresh.
SIGN_IN_TRIES = 5


def new_join_code() -> str:
    """A fresh join code for a class."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))


def new_sign_in_code() -> str:
    """A fresh personal sign-in code for a roster student."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(SIGN_IN_CODE_LENGTH))


def spaced(code: str) -> str:
    """A sign-in code as printed on a card, in two easy halves: "ABCD EFGH"."""
    return f"{code[:4]} {code[4:]}"
