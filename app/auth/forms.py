"""The login and password forms: each validates its own input, so views only ask whether it is
valid."""

from flask_wtf import FlaskForm
from werkzeug.security import check_password_hash
from wtforms import PasswordField, StringField, SubmitField
from wtforms.validators import DataRequired, EqualTo, Length, ValidationError

from ..models import PASSWORD_LENGTH, Instructor


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
