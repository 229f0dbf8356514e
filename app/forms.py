"""The student and login forms: each validates its own input, so views only ask whether it is
valid."""

import re
import unicodedata

from flask_wtf import FlaskForm
from werkzeug.security import check_password_hash
from wtforms import PasswordField, RadioField, SelectChoice, StringField, SubmitField
from wtforms.validators import AnyOf, DataRequired, EqualTo, InputRequired, Length, ValidationError

from .bank import Choice
from .extensions import db
from .models import PASSWORD_LENGTH, Class, Instructor, ignorable
from .ratelimits import note_code


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


def find_class(code: str) -> Class | None:
    """The class with this join code, however it was typed (case, spaces, dashes)."""
    normal = re.sub(r"[\s-]", "", code).upper()
    found = db.session.scalar(db.select(Class).filter_by(join_code=normal))
    note_code(found)  # counted against guessing (ratelimits.UNKNOWN_CODES_PER_ADDRESS)
    return found


class StartForm(FlaskForm):
    class_: Class | None = None
    """The class the code names, once the form has validated it (even when closed)."""

    name = StringField(
        "Your name",
        filters=[tidy_name],
        validators=[
            DataRequired("Enter your name."),
            Length(max=80, message="Use at most 80 characters for your name."),
        ],
    )
    class_code = StringField("Class code", filters=[tidy])
    submit = SubmitField("Start quiz")

    def validate_class_code(self, field):
        if not field.data:
            return
        self.class_ = find_class(field.data)
        if self.class_ is None:
            raise ValidationError(
                f"No class has the code “{field.data}”. Check it, or leave the field empty."
            )
        if self.class_.archived_at is not None:
            raise ValidationError(
                f"{self.class_.name} has ended: its instructor archived it, so no attempts can "
                "start. Ask your instructor for the code of your current class."
            )
        if not self.class_.is_open:
            raise ValidationError(
                f"{self.class_.name} is closed, so no new attempts can start. Ask your instructor."
            )


class AnswerForm(FlaskForm):
    """Validates an answer; quiz/question.html draws it by hand, for speed."""

    choice = RadioField(validate_choice=False)

    def __init__(self, choices: list[Choice], **kwargs):
        super().__init__(**kwargs)
        ids = [choice.id for choice in choices]
        self.choice.choices = [SelectChoice(choice.id, choice.text) for choice in choices]
        self.choice.validators = [
            InputRequired("Choose one answer."),
            AnyOf(ids, message="Choose one answer."),
        ]


class LoginForm(FlaskForm):
    username = StringField(
        "Username",
        validators=[DataRequired("Enter your username.")],
        render_kw={"autocomplete": "username"},
    )
    password = PasswordField(
        "Password",
        validators=[DataRequired("Enter your password.")],
        render_kw={"autocomplete": "current-password"},
    )
    submit = SubmitField("Log in")


class ChangePasswordForm(FlaskForm):
    current_password = PasswordField(
        "Current password",
        validators=[DataRequired("Enter your current password.")],
        render_kw={"autocomplete": "current-password"},
    )
    new_password = PasswordField(
        "New password",
        validators=[
            DataRequired("Enter a new password."),
            Length(*PASSWORD_LENGTH, message="A password needs %(min)d to %(max)d characters."),
        ],
        render_kw={"autocomplete": "new-password"},
    )
    repeat_password = PasswordField(
        "Repeat new password",
        validators=[
            DataRequired("Type the new password again."),
            EqualTo("new_password", message="The two new passwords differ: type the same twice."),
        ],
        render_kw={"autocomplete": "new-password"},
    )
    submit = SubmitField("Change password")

    def __init__(self, instructor: Instructor, **kwargs):
        super().__init__(**kwargs)
        self.instructor = instructor

    def validate_current_password(self, field):
        if not check_password_hash(self.instructor.password_hash, field.data):
            raise ValidationError("This is not your current password.")
