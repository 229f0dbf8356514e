"""The quiz editor's forms: each checks its own fields, so a save stores nothing while any
field has a problem, and every problem stands next to its field."""

import re

from flask_wtf import FlaskForm
from flask_wtf.file import FileField
from werkzeug.datastructures import FileStorage
from wtforms import (
    BooleanField,
    FieldList,
    Form,
    FormField,
    HiddenField,
    RadioField,
    SelectChoice,
    SelectField,
    StringField,
    SubmitField,
    TextAreaField,
)
from wtforms.validators import DataRequired, Length, Optional, Regexp, ValidationError

from .. import images
from ..auth import find_instructor
from ..bank import MOST_CHARACTERS, MOST_CHOICES, MOST_PICTURES, MOST_SOURCES, says_nothing
from ..formats import slugify
from ..names import tidy
from ..question_types import TYPES
from ..question_types.numerical import as_written, number_text
from .access import SHARE_ROLES

SPARE_CHOICES = 2
"""Empty choice rows the editor offers after the written ones; an empty row is no choice."""
NEW_CHOICES = 4
"""Choice rows a new question starts with."""
FORMAT_LABELS = {
    "gift": "GIFT",
    "moodle-xml": "Moodle XML",
    "aiken": "Aiken",
    "qti": "QTI 1.2 package",
    "qti3": "QTI 3.0 package",
}
SLUG_HINT = "Lower-case letters and digits, words joined by '-'."


def _text(label: str, required: str | None = None, limit: int = MOST_CHARACTERS):
    checks = [Length(max=limit, message=f"Use at most {limit:,} characters.")]
    checks.insert(0, DataRequired(required) if required else Optional())
    return TextAreaField(label, filters=[stripped], validators=checks)


def stripped(value):
    """A field's text without the spaces around it."""
    return value.strip() if isinstance(value, str) else value


def _slug(label: str, presence, **kwargs):
    """A quiz's address: lower-case words joined by '-', as the bank's schema holds it."""
    checks = [
        presence,
        Length(max=64, message="Use at most 64 characters."),
        Regexp(r"^[a-z0-9]+(-[a-z0-9]+)*\Z", message=SLUG_HINT),
    ]
    return StringField(label, filters=[stripped], validators=checks, **kwargs)


class NewQuizForm(FlaskForm):
    title = StringField(
        "Title",
        filters=[tidy],
        validators=[
            DataRequired("Give the quiz a title."),
            Length(max=200, message="Use at most 200 characters."),
        ],
    )
    slug = _slug(
        "Address (optional)",
        Optional(),
        description="Students open the quiz at /quizzes/ followed by this; "
        "left empty, it is made from the title.",
    )
    submit = SubmitField("Create quiz")

    def validate_title(self, field):
        if field.data and not self.slug.data and not slugify(field.data):
            raise ValidationError("This title makes no address: write one below.")

    def chosen_slug(self) -> str:
        return self.slug.data or slugify(self.title.data)


def pools_read(written: str) -> list[dict]:
    """The quiz's pools from their lines ("Basics: 3"), as the bank's JSON holds them; a
    ValidationError naming the line that is not one."""
    pools = []
    for number, line in enumerate(written.splitlines(), 1):
        if not line.strip():
            continue
        name, colon, draw = line.rpartition(":")
        name, draw = name.strip(), draw.strip()
        if not colon or not name or ":" in name or not (draw.isascii() and draw.isdecimal()):
            raise ValidationError(
                f"Line {number}: write one pool a line, its name, a colon and how many of its "
                "questions each attempt draws, as in “Basics: 3”."
            )
        if not 1 <= int(draw) <= 500 or len(name) > 80:
            raise ValidationError(
                f"Line {number}: a pool's name has at most 80 characters, and it draws 1 to "
                "500 questions."
            )
        if any(pool["name"] == name for pool in pools):
            raise ValidationError(f"Line {number}: the pool “{name}” is listed twice.")
        pools.append({"name": name, "draw": int(draw)})
    return pools


def pools_written(pools: list[dict]) -> str:
    """The quiz's pools as their lines, the inverse of pools_read."""
    return "\n".join(f"{pool['name']}: {pool['draw']}" for pool in pools)


class SettingsForm(FlaskForm):
    base = HiddenField()
    title = NewQuizForm.title
    slug = _slug("Address", DataRequired("Give the quiz an address."))
    description = _text("Description")
    shuffle_choices = BooleanField(
        "Shuffle the choices: each student sees them in an order of their own"
    )
    shuffle_questions = BooleanField(
        "Shuffle the questions: each attempt asks them in an order of its own"
    )
    pools = TextAreaField("Pools (optional)", filters=[stripped])

    def validate_pools(self, field):
        self.read_pools = pools_read(field.data or "")
    submit = SubmitField("Save settings")


KINDS = {
    "single_choice": "Single choice",
    "multiple_answers": "Select all that apply",
    "true_false": "True or false",
    "numerical": "Numerical",
    "short_answer": "Short answer",
}
"""The question types the editor writes, as it names them."""
TYPED = frozenset({"numerical", "short_answer"})
"""The kinds answered by typing, which list accepted answers instead of choices."""
SAID_ABOVE = (
    "Another answer above says the same: the first one marks every reply it matches, so this "
    "one never would."
)
PICTURE_TYPES = "image/png,image/jpeg,image/gif,image/webp"
SPARE_ANSWERS = 2
"""Empty accepted-answer rows the editor offers after the written ones."""


class ChoiceRow(Form):
    id = HiddenField()
    text = _text("Choice")
    right = BooleanField("Right")
    weight = StringField("Share of the points, in % (optional)", filters=[stripped])
    explanation = _text("Why it is right or wrong")

    def validate(self, extra_validators=None):
        valid = super().validate(extra_validators)
        if self.explanation.data and not self.text.data:
            self.text.errors.append("Write the choice this explains, or clear both.")
            return False
        return valid


class AcceptedRow(Form):
    """One accepted answer of a typed question: what matches, its share, what it says."""

    text = StringField("Answer", filters=[stripped], validators=[Length(max=200)])
    tolerance = StringField("Give or take (optional)", filters=[stripped])
    weight = StringField("Share of the points, in % (100 when left empty)", filters=[stripped])
    feedback = _text("Said to a student who gives it")


class SourceRow(Form):
    title = StringField(
        "Source title", filters=[stripped], validators=[Optional(), Length(max=MOST_CHARACTERS)]
    )
    url = StringField(
        "Address (https://)",
        filters=[stripped],
        validators=[Optional(), Regexp(r"^https://\S+\Z", message="Give an https:// address.")],
    )

    def validate(self, extra_validators=None):
        valid = super().validate(extra_validators)
        if self.url.data and not self.title.data:
            self.title.errors.append("Name the source this address leads to.")
        if self.title.data and not self.url.data:
            self.url.errors.append("Give the source's https:// address.")
        return valid and bool(self.url.data) == bool(self.title.data)


THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+")
"""1,000 or 12,345,678: a thousand in English, one in German, so the editor asks which."""


def number_typed(text: str | None, low: float, high: float, wrong: str) -> float | None:
    """A number as people type it (a decimal comma too), within [low, high]; None when empty."""
    if not text:
        return None
    if THOUSANDS.fullmatch(text):
        raise ValidationError(
            f"Is “{text}” a number in thousands? Write it without commas ({text.replace(',', '')}),"
            " or with a decimal point."
        )
    try:
        value = float(text.replace(",", ".", 1) if text.count(",") == 1 else text)
    except ValueError:
        raise ValidationError(wrong) from None
    if not low <= value <= high or value != value:
        raise ValidationError(wrong)
    return as_written(value)


class QuestionForm(FlaskForm):
    """One question of any type the editor writes: which fields count depends on its kind,
    fixed when the question is made (a different kind is a new question, as in Moodle)."""

    base = HiddenField()
    kind = HiddenField(default="single_choice")
    prompt = _text("Question", "Write the question.")
    points = StringField("Points for a full mark", filters=[stripped], default="1")
    pool = StringField("Pool (optional)", [Length(max=80)], filters=[stripped])
    choices = FieldList(FormField(ChoiceRow), min_entries=2, max_entries=MOST_CHOICES)
    right = RadioField("Which choice is right", choices=[], validate_choice=False)
    scoring = RadioField(
        "Scoring",
        choices=[
            SelectChoice("partial", "Partial credit: each right choice earns its share, each "
                         "wrong one takes as much away, never below 0"),
            SelectChoice("all_or_nothing", "All or nothing: full points only for exactly the "
                         "right choices"),
        ],  # fmt: skip
        default="partial",
    )
    answer = RadioField(
        "The statement is",
        choices=[SelectChoice("true", "True"), SelectChoice("false", "False")],
        validate_choice=False,
    )
    answers = FieldList(FormField(AcceptedRow), min_entries=1, max_entries=MOST_CHOICES)
    units = StringField(
        "Units (optional)",
        filters=[stripped],
        description="The base unit first, then others with how many make one of it: m, cm = 100",
    )
    case_sensitive = BooleanField("Capitals must match")
    otherwise = _text("Said to a student whose answer matches none of these")
    if_true = _text("Said to a student who answers True")
    if_false = _text("Said to a student who answers False")
    explanation = _text("General explanation, shown after any answer")
    sources = FieldList(FormField(SourceRow), min_entries=1, max_entries=MOST_SOURCES)
    picture = FileField("Add a picture (optional)", render_kw={"accept": PICTURE_TYPES})
    picture_alt = StringField("What the picture shows, for those who cannot see it",
                              filters=[tidy], validators=[Length(max=300)])  # fmt: skip
    picture_into = SelectField("Add it to", choices=[
        SelectChoice("prompt", "The question"),
        SelectChoice("explanation", "The general explanation"),
    ], default="prompt")  # fmt: skip
    submit = SubmitField("Save question")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.kind.data not in KINDS:
            self.kind.data = "single_choice"
        self.right.choices = [
            SelectChoice(str(n), f"Choice {n + 1}") for n in range(len(self.choices))
        ]
        for number, row in enumerate(self.answers, 1):
            row.form.text.label.text = f"Answer {number}"
            row.form.tolerance.label.text = f"Answer {number}: give or take (optional)"
            row.form.weight.label.text = f"Answer {number}: share of the points, in %"
            row.form.feedback.label.text = f"Said to a student who gives answer {number}"
        for number, row in enumerate(self.choices, 1):
            row.form.text.label.text = f"Choice {number}"
            row.form.right.label.text = f"Choice {number} is right"
            row.form.explanation.label.text = f"Why choice {number} is right or wrong"

    @property
    def has_choices(self) -> bool:
        return self.kind.data in ("single_choice", "multiple_answers")

    def validate_answers(self, field):
        if self.kind.data not in TYPED:
            return
        numerical, wrong, full = self.kind.data == "numerical", False, False
        seen: set = set()
        for row in self.answers:
            entry = row.form
            if not entry.text.data:
                if entry.tolerance.data or entry.weight.data or entry.feedback.data:
                    entry.text.errors.append("Write the answer this is for, or clear the row.")
                    wrong = True
                continue
            checks = [(entry.weight, 0, 100, "Give a percent from 0 to 100.")]
            if numerical:
                checks += [(entry.text, -1e300, 1e300, "Give a number, such as 3.5 or 1e-3."),
                           (entry.tolerance, 0, 1e300, "Give a number from 0 up.")]  # fmt: skip
            elif entry.tolerance.data:
                entry.tolerance.errors.append("Only a number has a tolerance.")
                wrong = True
            for box, low, high, words in checks:
                try:
                    number_typed(box.data, low, high, words)
                except ValidationError as error:
                    box.errors.append(str(error))
                    wrong = True
            weight = number_typed(entry.weight.data, 0, 100, "") if not entry.weight.errors else 0
            full = full or weight is None or weight == 100
            if entry.text.errors:
                continue
            # The first answer that matches marks a reply: the same one again never would.
            same = number_typed(entry.text.data, -1e300, 1e300, "") if numerical else (
                entry.text.data if self.case_sensitive.data else entry.text.data.casefold())
            if same in seen:
                entry.text.errors.append(SAID_ABOVE)
                wrong = True
            seen.add(same)
        if wrong:  # each problem stands beside its field
            raise ValidationError("Mend the answers marked below.")
        if not any(row.form.text.data for row in self.answers):
            raise ValidationError("Write at least one accepted answer.")
        if not full:
            raise ValidationError("Give one answer 100% (or leave its share empty): "
                                  "full marks must be possible.")  # fmt: skip

    def validate_picture(self, field):
        upload = field.data
        if not isinstance(upload, FileStorage) or not upload.filename:
            return
        with upload.stream:  # a large upload is a temporary file: closed once read
            self.picture_bytes = upload.stream.read(images.MOST_BYTES + 1)
        try:
            images.read(self.picture_bytes)
        except images.NotAPicture as refused:
            raise ValidationError(str(refused)) from None
        shown = str(self.data).count("/images/")  # in every text of the form, however written
        if shown >= MOST_PICTURES:
            raise ValidationError(f"A question shows at most {MOST_PICTURES} pictures.")

    def validate_picture_alt(self, field):
        upload = self.picture.data
        if isinstance(upload, FileStorage) and upload.filename and says_nothing(field.data or ""):
            raise ValidationError(
                "Say what the picture shows: a student who cannot see it reads or hears these "
                "words."
            )

    def add_picture(self) -> None:
        """Keep the uploaded picture and show it at the end of the chosen text."""
        if not getattr(self, "picture_bytes", None) or self.errors:
            return
        shown = images.markdown(images.store(self.picture_bytes), self.picture_alt.data)
        into = self.explanation if self.picture_into.data == "explanation" else self.prompt
        into.data = f"{into.data}\n\n{shown}" if into.data else shown

    def validate_units(self, field):
        if self.kind.data != "numerical" or not field.data:
            return
        entry = {"units": _units(field.data)}
        for _path, words in TYPES["numerical"].problems(entry):
            raise ValidationError(words[0].upper() + words[1:] + ".")

    def written(self) -> list:
        """The choice rows with text: an empty row is no choice."""
        return [row for row in self.choices if row.form.text.data]

    def validate_points(self, field):
        number_typed(field.data or "1", 0.01, 1000, "Give a number of points from 0.01 to 1000.")

    def validate_pool(self, field):
        pools = getattr(self, "pools", None)
        if field.data and pools is not None and field.data not in pools:
            listed = ", ".join(f"“{name}”" for name in pools)
            raise ValidationError(
                f"The quiz has no pool named “{field.data}”: "
                + (f"its pools are {listed}." if pools else "add it in the quiz's settings first.")
            )

    def validate_choices(self, field):
        if not self.has_choices:
            return
        if len(self.written()) < 2:
            raise ValidationError("Write at least two choices.")
        seen, twice = set(), False
        for row in self.written():
            if row.form.text.data in seen:
                row.form.text.errors.append("Another choice says the same: change or clear one.")
                twice = True
            seen.add(row.form.text.data)
        if twice:
            raise ValidationError("Two choices say the same: students could not tell them apart.")
        if self.kind.data == "multiple_answers":
            self._several_right()

    def _several_right(self) -> None:
        """At least one written choice ticked right; each share a percent from -100 to 100."""
        found = []
        for row in self.choices:
            try:
                number_typed(row.form.weight.data, -100, 100, "Give a percent from -100 to 100.")
            except ValidationError as error:
                row.form.weight.errors.append(str(error))
                found = ["A share of the points is not a percent from -100 to 100."]
        if not any(row.form.right.data for row in self.written()):
            found.insert(0, "Tick at least one right choice.")
        if found:
            raise ValidationError(" ".join(found))
        written = self.written()
        entry = {"choices": self._choices("multiple_answers")}
        for path, words in TYPES["multiple_answers"].problems(entry):
            if len(path) == 3:  # one choice's share, beside its field
                written[path[1]].form.weight.errors.append(words[0].upper() + words[1:] + ".")
            found.append(words[0].upper() + words[1:] + ".")
        if found:
            raise ValidationError(found[-1] if len(found) == 1 else "Mend the shares marked below.")

    def validate_right(self, field):
        if self.kind.data != "single_choice":
            return
        rows = list(self.choices)
        written = field.data or ""
        if not (written.isascii() and written.isdigit()) or int(written) >= len(rows):
            raise ValidationError("Choose which choice is right.")
        if not rows[int(field.data)].form.text.data:
            raise ValidationError("The right choice has no text: write it, or choose another.")

    def validate_answer(self, field):
        if self.kind.data == "true_false" and field.data not in ("true", "false"):
            raise ValidationError("Say whether the statement is true or false.")

    def question(self, question_id: str) -> dict:
        """The question as the bank's JSON holds it; parts left empty are left out."""
        kind = self.kind.data
        question: dict = {"id": question_id}
        if kind != "single_choice":
            question["type"] = kind
        question["prompt"] = self.prompt.data
        points = number_typed(self.points.data or "1", 0.01, 1000, "")
        if points != 1:
            question["points"] = points
        if self.pool.data:
            question["pool"] = self.pool.data
        if kind in TYPED:
            question.update(self._typed(kind))
        elif kind == "true_false":
            question["answer"] = self.answer.data == "true"
            for said in (self.if_true, self.if_false):
                if said.data:
                    question[said.name] = said.data
        else:
            question["choices"] = self._choices(kind)
            if kind == "multiple_answers" and self.scoring.data == "all_or_nothing":
                question["scoring"] = "all_or_nothing"
        if self.explanation.data:
            question["explanation"] = self.explanation.data
        question["references"] = [
            {"title": row.form.title.data, "url": row.form.url.data}
            for row in self.sources
            if row.form.url.data
        ]
        return question

    def _typed(self, kind: str) -> dict:
        """A typed question's own fields, in the order the bank writes them."""
        own: dict = {}
        if kind == "short_answer" and self.case_sensitive.data:
            own["case_sensitive"] = True
        if kind == "numerical" and self.units.data:
            own["units"] = _units(self.units.data)
        answers = []
        for row in self.answers:
            entry = row.form
            if not entry.text.data:
                continue
            if kind == "numerical":
                answer: dict = {"value": number_typed(entry.text.data, -1e300, 1e300, "")}
                if tolerance := number_typed(entry.tolerance.data, 0, 1e300, ""):
                    answer["tolerance"] = tolerance
            else:
                answer = {"text": entry.text.data}
            weight = number_typed(entry.weight.data, 0, 100, "")
            if weight is not None and weight != 100:
                answer["fraction"] = weight / 100
            if entry.feedback.data:
                answer["feedback"] = entry.feedback.data
            answers.append(answer)
        own["answers"] = answers
        if self.otherwise.data:
            own["otherwise"] = self.otherwise.data
        return own

    def _choices(self, kind: str) -> list[dict]:
        right = int(self.right.data) if kind == "single_choice" else None
        used, choices = set(), []
        for n, row in enumerate(self.choices):
            if not row.form.text.data:
                continue
            choice_id = row.form.id.data
            if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", choice_id or "") or choice_id in used:
                choice_id = _free_id(used)
            used.add(choice_id)
            correct = n == right if right is not None else row.form.right.data
            choice = {"id": choice_id, "text": row.form.text.data, "correct": correct}
            weight = number_typed(row.form.weight.data, -100, 100, "") if right is None else None
            if weight is not None:
                choice["fraction"] = weight / 100
            if row.form.explanation.data:
                choice["explanation"] = row.form.explanation.data
            choices.append(choice)
        return choices


def _units(written: str) -> list[dict]:
    """Units as the editor takes them, "m, cm = 100", as the bank holds them."""
    units = []
    for part in filter(None, (part.strip() for part in written.split(","))):
        name, _, many = (bit.strip() for bit in part.partition("="))
        wrong = f"“{many}” is not a number above 0: write units as m, cm = 100."
        multiplier = number_typed(many, 1e-300, 1e300, wrong) if many else 1
        if not re.fullmatch(r"[^\s\d.,+-][^\d]{0,19}", name):
            raise ValidationError(
                f"“{name}” cannot be a unit: a unit begins with a letter or a symbol, has no "
                "digits and is at most 20 characters."
            )
        units.append({"unit": name} | ({"multiplier": multiplier} if multiplier != 1 else {}))
    return units


def _units_text(units: list[dict]) -> str:
    return ", ".join(
        u["unit"] + (f" = {number_text(u['multiplier'])}" if u.get("multiplier", 1) != 1 else "")
        for u in units
    )


def _free_id(used: set[str]) -> str:
    n = 1
    while f"c{n}" in used:
        n += 1
    return f"c{n}"


def question_form_data(question: dict, kind: str | None = None) -> dict:
    """What the question form shows for a stored question (or a new one of `kind`), with spare
    empty rows."""
    choices = [
        {
            "id": c["id"],
            "text": c["text"],
            "right": c.get("correct", False),
            "weight": _percent(c["fraction"]) if "fraction" in c else "",
            "explanation": c.get("explanation", ""),
        }
        for c in question.get("choices", [])
    ]
    rows = max(len(choices) + SPARE_CHOICES, NEW_CHOICES)
    spare = min(rows, MOST_CHOICES) - len(choices)
    right = next((n for n, c in enumerate(question.get("choices", [])) if c.get("correct")), None)
    sources = [dict(r) for r in question.get("references", [])]
    answer = question.get("answer")
    blank = {"id": "", "text": "", "right": False, "weight": "", "explanation": ""}
    answers = [
        {
            "text": number_text(a["value"]) if "value" in a else a.get("text", ""),
            "tolerance": number_text(a["tolerance"]) if a.get("tolerance") else "",
            "weight": _percent(a["fraction"]) if "fraction" in a else "",
            "feedback": a.get("feedback", ""),
        }
        for a in question.get("answers", [])
    ]
    spare_answers = min(len(answers) + SPARE_ANSWERS, MOST_CHOICES) - len(answers)
    empty = {"text": "", "tolerance": "", "weight": "", "feedback": ""}
    return {
        "kind": question.get("type", kind or "single_choice"),
        "prompt": question.get("prompt", ""),
        "points": _decimal(question.get("points", 1)),
        "pool": question.get("pool", ""),
        "choices": choices + [blank] * spare,
        "right": str(right) if right is not None else None,
        "scoring": question.get("scoring", "partial"),
        "answer": None if answer is None else ("true" if answer else "false"),
        "answers": answers + [empty] * max(spare_answers, 3 - len(answers)),
        "units": _units_text(question.get("units", [])),
        "case_sensitive": question.get("case_sensitive", False),
        "otherwise": question.get("otherwise", ""),
        "if_true": question.get("if_true", ""),
        "if_false": question.get("if_false", ""),
        "explanation": question.get("explanation", ""),
        # A row to add one more, while the question may hold another.
        "sources": sources + [{"title": "", "url": ""}] * (len(sources) < MOST_SOURCES),
    }


def _percent(fraction: float) -> str:
    """A fraction as the percent a person types: 0.5 -> "50", 1/3 -> "33.3333"."""
    return _decimal(fraction * 100)


def _decimal(value: float) -> str:
    return f"{round(value, 4):g}"


class ShareForm(FlaskForm):
    username = StringField(
        "Instructor's username",
        filters=[tidy],
        validators=[DataRequired("Say who: their username.")],
    )
    role = SelectField(
        "They",
        choices=[SelectChoice(value, label) for value, label in SHARE_ROLES.items()],
        default="use",
    )
    submit = SubmitField("Share")

    def validate_username(self, field):
        found = find_instructor(field.data)
        if found is None or not found.is_active:
            raise ValidationError("There is no instructor with this username.")
        self.instructor = found


class ImportForm(FlaskForm):
    upload = FileField(
        "Quiz file",
        description="GIFT, Moodle XML, Aiken, or a QTI 1.2 or 3.0 package (.zip)",
        render_kw={"accept": ".txt,.gift,.xml,.zip"},
    )
    format_name = SelectField(
        "Format",
        choices=[SelectChoice("", "Tell from the file")]
        + [SelectChoice(name, label) for name, label in FORMAT_LABELS.items()],
        default="",
    )
    submit = SubmitField("Check the file")

    def validate_upload(self, field):
        if not isinstance(field.data, FileStorage) or not field.data.filename:
            raise ValidationError("Choose the file to import.")


class ImportedForm(FlaskForm):
    """The second step of an import: what to do with the questions the report showed."""

    parsed = HiddenField()
    into = SelectField("Import into", validate_choice=False)
    title = StringField(
        "Title of the new quiz",
        filters=[tidy],
        validators=[Length(max=200, message="Use at most 200 characters.")],
    )
    submit = SubmitField("Import")
