"""Deep Linking 2.0: an instructor's deep linking launch chooses a quiz and its assignment
settings, and the tool answers the platform with a signed LtiDeepLinkingResponse holding one
resource link, whose line item is out of the quiz's number of questions."""

from urllib.parse import urlsplit

from flask import abort, redirect, render_template, request, session, url_for
from flask_login import current_user, login_required

from ..audit import audit
from ..auth import class_or_404
from ..extensions import db
from ..formatting import page_zone
from ..headers import allow_posting_to
from ..models import Class, Role
from ..served import current_bank
from ..teach.assignments import AlreadyAssigned, AssignmentForm, save_assignment
from .blueprint import bp
from .models import LtiPlatform
from .rules import CLAIM

SETTINGS_CLAIM = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
SESSION_KEY = "lti_deep_link"
"""The deep linking request this browser's instructor is answering."""


def choose_quiz(platform: LtiPlatform, class_: Class, claims: dict):
    """Keep what the answer needs from the validated request, then show the choice."""
    settings = claims[SETTINGS_CLAIM]
    session[SESSION_KEY] = {
        "platform": platform.id,
        "deployment": claims[CLAIM + "deployment_id"],
        "class": class_.id,
        "return_url": settings["deep_link_return_url"],
        "data": settings.get("data"),
    }
    audit("lti deep linking request", current_user.username)
    return redirect(url_for("lti.deep_link"), 303)


def _form(class_: Class) -> AssignmentForm:
    """The assignment form; for a quiz the class assigns already, that assignment's edit."""
    assigned = {assignment.quiz_slug: assignment for assignment in class_.assignments}
    editing = assigned.get(request.form.get("quiz", ""))
    form = AssignmentForm(class_, editing=editing)
    if editing is not None:
        form.quiz.data = editing.quiz_slug
    return form


@bp.route("/deep-link", methods=["GET", "POST"])
@login_required
def deep_link():
    """Choose the quiz an activity opens and its assignment settings; answer the platform."""
    asked = session.get(SESSION_KEY)
    if asked is None:
        abort(404, description="There is no deep linking request to answer here: add the "
              "activity again from your course.")  # fmt: skip
    class_ = class_or_404(asked["class"], Role.MANAGE)
    form = _form(class_)
    if form.time_zone.data is None:
        form.time_zone.data = page_zone()
    if form.validate_on_submit():
        slug = form.quiz.data
        try:
            save_assignment(class_, slug, form.settings(), editing=form.editing)
        except AlreadyAssigned:
            form.quiz.errors.append(f"{class_.name} assigned this quiz meanwhile: choose it again.")
        else:
            audit(f"lti deep link: class {class_.id}, quiz {slug}")
            return _answer(asked, slug)
    page = render_template("lti/deep_link.html", class_=class_, form=form)
    return page, 400 if form.errors else 200


def _answer(asked: dict, slug: str):
    """The signed LtiDeepLinkingResponse, in a form the browser posts to the platform."""
    from pylti1p3.deep_link import DeepLink  # the LTI library, if this worker has not loaded it
    from pylti1p3.deep_link_resource import DeepLinkResource
    from pylti1p3.lineitem import LineItem

    from .config import DatabaseToolConf

    platform = db.session.get(LtiPlatform, asked["platform"])
    if platform is None:
        abort(410, description="The platform that asked has been removed from Quizwright.")
    quiz = current_bank().quizzes[slug]
    registration = DatabaseToolConf().find_registration_by_params(
        platform.issuer, platform.client_id
    )
    settings = {"deep_link_return_url": asked["return_url"], "data": asked["data"]}
    resource = (
        DeepLinkResource()
        .set_title(quiz.title)
        .set_url(url_for("lti.launch", _external=True))
        .set_custom_params({"quiz": slug})
        .set_lineitem(
            LineItem()
            .set_label(quiz.title)
            .set_score_maximum(quiz.out_of)
            .set_resource_id(slug)
        )
    )
    answer = DeepLink(registration, asked["deployment"], settings).get_response_jwt([resource])
    del session[SESSION_KEY]  # answered once: a reload cannot send a second link
    return_url = asked["return_url"]
    parts = urlsplit(return_url)
    allow_posting_to(f"{parts.scheme}://{parts.netloc}")
    return render_template(
        "lti/deep_link_return.html", return_url=return_url, answer=answer, title=quiz.title
    )
