"""The start form; each question type brings its own answer form (app/question_types/)."""

from flask_wtf import FlaskForm
from wtforms import StringField, SubmitField
from wtforms.validators import DataRequired, Length, ValidationError

from ..models import Class
from ..names import tidy, tidy_name
from .starts import find_class


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
