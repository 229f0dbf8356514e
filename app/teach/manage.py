"""Managing a class: rename, new join code, merge students, share, archive, restore and delete;
and voiding attempts. Every change here is a logged POST that redirects."""

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy.exc import IntegrityError

from ..audit import audit
from ..auth import class_or_404, may, role_in, share_class
from ..extensions import db
from ..models import Attempt, ClassShare, Instructor, Role, now
from .blueprint import bp
from .forms import SHARE_ROLES, DeleteForm, MergeForm, RenameForm, ShareForm, StopSharingForm
from .students import (
    delete_class_attempts,
    kept_student,
    merge_students,
    restore_attempt,
    seen_students,
    void_attempt,
)
from .views import back_to_table, class_attempt_or_404, new_join_code


def _manage_page(class_id: int, status: int = 200, **forms):
    """The class's management page, with the forms given (filled in, maybe with errors)."""
    class_ = class_or_404(class_id, Role.MANAGE, archived_ok=True)
    owner = may(role_in(class_), Role.OWN)
    shares = db.session.execute(
        db.select(ClassShare.role, Instructor.id, Instructor.username)
        .join(Instructor, Instructor.id == ClassShare.instructor_id)
        .where(ClassShare.class_id == class_.id)
        .order_by(Instructor.username)
    ).all()
    students = seen_students(class_.id)
    page = render_template(
        "teach/manage.html",
        class_=class_,
        owner=owner,
        shares=shares,
        share_roles=SHARE_ROLES,
        rename_form=forms.get("rename_form") or RenameForm(formdata=None, name=class_.name),
        merge_form=forms.get("merge_form") or MergeForm(students, formdata=None),
        share_form=forms.get("share_form") or ShareForm(class_, formdata=None),
        delete_form=forms.get("delete_form") or DeleteForm(class_, formdata=None),
    )
    return page, status


def _back(scope_id: int):
    return redirect(url_for(".manage_class", class_id=scope_id), 303)


@bp.get("/classes/<int:class_id>/manage")
def manage_class(class_id):
    """Rename, join code, merging students, sharing, archiving and deleting, on one page."""
    return _manage_page(class_id)


@bp.post("/classes/<int:class_id>/rename")
def rename_class(class_id):
    """Give the class a new name; its attempts, code and link stay."""
    class_ = class_or_404(class_id, Role.MANAGE)
    form = RenameForm()
    if not form.validate_on_submit():
        return _manage_page(class_id, 400, rename_form=form)
    old, class_.name = class_.name, form.name.data
    db.session.commit()
    audit(f"class {class_.id} renamed from {old!r} to {class_.name!r}")
    flash(f"The class is now called {class_.name}.")
    return _back(class_id)


@bp.post("/classes/<int:class_id>/join-code")
def replace_join_code(class_id):
    """A new join code and link; the old ones stop working at once."""
    class_ = class_or_404(class_id, Role.MANAGE)
    old = class_.join_code
    new_join_code(class_)
    audit(f"class {class_.id} join code {old} replaced by {class_.join_code}")
    flash(f"The new join code is {class_.join_code}. The old code and link no longer work.")
    return redirect(url_for(".class_page", class_id=class_id), 303)


@bp.post("/classes/<int:class_id>/merge")
def merge(class_id):
    """Count two students of the class as one, under the roster's or the first-seen spelling."""
    class_ = class_or_404(class_id, Role.MANAGE)
    form = MergeForm(seen_students(class_.id))
    if not form.validate_on_submit():
        return _manage_page(class_id, 400, merge_form=form)
    kept, folded = kept_student(form.students[form.first.data], form.students[form.second.data])
    moved = merge_students(class_.id, kept, folded)
    audit(f"class {class_.id} students merged: {folded.name!r} into {kept.name!r}")
    attempts = "1 attempt" if moved == 1 else f"{moved} attempts"
    flash(f"{folded.name} now counts as {kept.name}: {attempts} moved.")
    return _back(class_id)


@bp.post("/classes/<int:class_id>/shares")
def share(class_id):
    """Share the class with another instructor, or change what a share lets them do."""
    class_ = class_or_404(class_id, Role.OWN)
    form = ShareForm(class_)
    if not form.validate_on_submit():
        return _manage_page(class_id, 400, share_form=form)
    try:
        share_class(class_.id, form.instructor.id, Role(form.role.data))
    except IntegrityError:  # shared at the same moment by another request: say it again
        db.session.rollback()
        return share(class_id)
    label = SHARE_ROLES[Role(form.role.data)].lower()
    audit(f"class {class_.id} shared with {form.instructor.username!r}: {label}")
    flash(f"{form.instructor.username} {label} {class_.name} now.")
    return _back(class_id)


@bp.post("/classes/<int:class_id>/shares/stop")
def stop_sharing(class_id):
    """Take the class back from an instructor it was shared with."""
    class_ = class_or_404(class_id, Role.OWN)
    form = StopSharingForm()
    if not form.validate_on_submit() or not form.instructor.data.isdigit():
        abort(400, description="Choose whom to stop sharing with from the list.")
    found = db.session.get(ClassShare, (class_.id, int(form.instructor.data)))
    if found is not None:
        who = db.session.get(Instructor, found.instructor_id).username
        db.session.delete(found)
        db.session.commit()
        audit(f"class {class_.id} no longer shared with {who!r}")
        flash(f"{class_.name} is no longer shared with {who}.")
    return _back(class_id)


@bp.post("/classes/<int:class_id>/archive", defaults={"archived": True})
@bp.post("/classes/<int:class_id>/restore", defaults={"archived": False})
def archive(class_id, archived):
    """Archive a class (hidden, read-only, join link off), or restore it."""
    class_ = class_or_404(class_id, Role.OWN, archived_ok=not archived)
    class_.archived_at = now() if archived else None
    db.session.commit()
    audit(f"class {class_.id} {'archived' if archived else 'restored'}")
    if archived:
        flash(f"{class_.name} is archived: read-only, and its join link and code no longer work.")
        return redirect(url_for(".dashboard"), 303)
    flash(f"{class_.name} is restored.")
    return redirect(url_for(".class_page", class_id=class_id), 303)


@bp.post("/classes/<int:class_id>/delete")
def delete_class(class_id):
    """Delete a class with its attempts and answers, once its name is typed."""
    class_ = class_or_404(class_id, Role.OWN, archived_ok=True)
    form = DeleteForm(class_)
    if not form.validate_on_submit():
        return _manage_page(class_id, 400, delete_form=form)
    name = class_.name
    attempts = delete_class_attempts(class_.id)
    db.session.delete(class_)
    db.session.commit()
    audit(f"class {class_id} {name!r} deleted with {attempts} attempts")
    flash(f"{name} is deleted, with its {attempts} attempts.")
    return redirect(url_for(".dashboard"), 303)


def managed_attempt(token: str) -> Attempt:
    """An attempt the logged-in instructor may void, restore or mark: a manager of its class, or
    an admin for attempts without a class."""
    return class_attempt_or_404(token, Role.MANAGE)[0]


@bp.post("/attempts/<token>/void")
def void(token):
    """Take a junk attempt or an accidental retake out of the class's numbers, once the
    instructor has confirmed it: the first press asks, as removing and deleting do."""
    attempt = managed_attempt(token)
    if attempt.voided_at is None and request.form.get("confirm") != "yes":
        return render_template(
            "teach/confirm_void.html", attempt=attempt, back=back_to_table(request.args)
        )
    if attempt.voided_at is None:
        void_attempt(attempt, current_user)
        audit(f"attempt {attempt.id} of {attempt.student_name!r} voided")
        flash(f"This attempt of {attempt.student_name}'s is voided: it no longer counts.")
    return redirect(url_for(".attempt_review", token=token, **back_to_table(request.args)), 303)


@bp.post("/attempts/<token>/restore")
def restore(token):
    """Count a voided attempt again, if its student has an attempt left to hold it."""
    attempt = managed_attempt(token)
    if attempt.voided_at is not None:
        name = attempt.student_name
        if not restore_attempt(attempt):
            abort(
                409,
                description=f"{name} has used every attempt this assignment allows since this "
                "one was voided: void one of those first to restore this one.",
            )
        audit(f"attempt {attempt.id} of {name!r} restored")
        flash(f"This attempt of {name}'s counts again.")
    return redirect(url_for(".attempt_review", token=token, **back_to_table(request.args)), 303)
