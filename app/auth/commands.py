"""Instructor accounts from the command line: there is no sign-up page."""

import click
from flask.cli import with_appcontext
from sqlalchemy.exc import IntegrityError

from ..audit import audit_command
from ..models import Instructor
from .accounts import (
    check_password,
    create_instructor,
    end_sessions,
    find_instructor,
    normal_username,
    set_password,
)


def _acceptable_password(password: str) -> str:
    problem = check_password(password)
    if problem:
        raise click.BadParameter(problem)
    return password


@click.command("create-instructor")
@click.argument("username")
@click.option("--admin", is_flag=True, help="May see every class and attempts without a class.")
@click.option("--password", help="Without it, you are asked twice, with the typing hidden.")
@with_appcontext
def create_instructor_command(username, admin, password):
    """Create an instructor account; there is no sign-up page."""
    name = normal_username(username)
    if not name or len(name) > 64:
        raise click.BadParameter("Use 1 to 64 characters.", param_hint="USERNAME")
    password = _asked_password(password)
    try:
        create_instructor(name, password, is_admin=admin)
    except IntegrityError:
        raise click.ClickException(f"An instructor named “{name}” already exists.") from None
    click.echo(f"Created {'admin' if admin else 'instructor'} “{name}”. They can log in at /login.")


def _asked_password(password: str | None) -> str:
    """The --password given, checked, or one typed twice with the typing hidden."""
    if password is None:
        return click.prompt(
            "Password", hide_input=True, confirmation_prompt=True, value_proc=_acceptable_password
        )
    return _acceptable_password(password)


def _instructor_named(username: str) -> Instructor:
    instructor = find_instructor(username)
    if instructor is None:
        raise click.ClickException(f"There is no instructor named “{normal_username(username)}”.")
    return instructor


@click.command("set-password")
@click.argument("username")
@click.option("--password", help="Without it, you are asked twice, with the typing hidden.")
@with_appcontext
def set_password_command(username, password):
    """Give an instructor a new password and log them out everywhere."""
    instructor = _instructor_named(username)
    set_password(instructor, _asked_password(password))
    audit_command("password set", instructor.username)
    click.echo(f"Set a new password for “{instructor.username}”; their sessions have ended.")


@click.command("disable-instructor")
@click.argument("username")
@click.option("--enable", is_flag=True, help="Let a disabled instructor log in again.")
@with_appcontext
def disable_instructor_command(username, enable):
    """Stop an instructor logging in and end their sessions; their classes stay."""
    instructor = _instructor_named(username)
    instructor.is_active = enable
    end_sessions(instructor)
    audit_command("instructor enabled" if enable else "instructor disabled", instructor.username)
    if enable:
        click.echo(f"“{instructor.username}” can log in again.")
    else:
        click.echo(f"“{instructor.username}” can no longer log in; their sessions have ended.")


@click.command("grant-instructor")
@click.argument("username")
@click.option("--revoke", is_flag=True, help="Back to rights in their LMS courses' classes only.")
@with_appcontext
def grant_instructor_command(username, revoke):
    """Let an account an LMS launch made preview and export quizzes and create classes."""
    instructor = _instructor_named(username)
    instructor.course_only = revoke
    end_sessions(instructor)
    audit_command("instructor revoked" if revoke else "instructor granted", instructor.username)
    if revoke:
        click.echo(f"“{instructor.username}” now reaches only their LMS courses' classes.")
    else:
        click.echo(f"“{instructor.username}” may now preview quizzes and create classes.")


account_commands = (
    create_instructor_command,
    set_password_command,
    disable_instructor_command,
    grant_instructor_command,
)
