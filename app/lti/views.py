"""The addresses a platform uses (/lti/login, /lti/launch, /lti/jwks.json, /lti/register) and
the admin's LTI page. LTI's POSTs come from the platform, so those alone skip the CSRF check:
the state, nonce and signature protect them instead."""

import re
from datetime import UTC, datetime
from urllib.parse import urlencode, urlsplit

from flask import (
    abort,
    jsonify,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_login import login_required, login_user
from sqlalchemy.orm import joinedload, selectinload

from ..attempts.browser import this_browser
from ..attempts.service import move_to_browser
from ..attempts.starts import start_in_class
from ..audit import audit
from ..auth import idle_minute, require_admin, share_class
from ..cookies import in_frame
from ..extensions import csrf, db, limiter
from ..headers import allow_framing
from ..models import Class, ClassShare, Instructor, Role, now
from ..served import current_bank
from .blueprint import bp
from .deep_linking import choose_quiz
from .keys import key_set, published_keys, signing_key
from .models import LtiPlatform, LtiUser
from .people import (
    course_class,
    instructor_for,
    launched_from,
    open_course,
    platform_of,
    remember_members_url,
    roster_student_for,
    unfinished_attempt,
    user_for,
)
from .registration import LINK_LIFETIME, new_link_code
from .rules import (
    AGS_CLAIM,
    CLAIM,
    NRPS_CLAIM,
    REASONS,
    STORAGE_CHECKED,
    Refusal,
    chosen_quiz,
    display_name,
    quizwright_role,
    share_role,
)
from .storage import hand_off, purge_expired, take_hand_off

LOGIN_PARAMETERS = (
    "iss",
    "login_hint",
    "target_link_uri",
    "lti_message_hint",
    "lti_deployment_id",
    "client_id",
)
"""What an OIDC login initiation carries, passed on unchanged when it moves to a new window."""
MAX_PARAMETER = 4096
"""Characters a login parameter may have: hints are ids or signed tokens of a few hundred."""
STORAGE_TARGET = re.compile(r"_parent|[A-Za-z0-9_.-]{1,64}")
"""The frame names a platform's lti_storage_target may give: _parent, or a plain name."""
NEW_WINDOW = "lti1p3_new_window"
"""The login parameter of a login moved out of the platform's frame into a window of its own."""
FRAMED_SESSION_KEY = "lti_framed"
"""Set by a launch: this browser's student pages may be shown inside its platform."""


@bp.errorhandler(Refusal)
def refused(error: Refusal):
    """A refused login or launch: what was wrong, logged, with the status the check calls for."""
    status, title, message = REASONS[error.reason]
    # repr: the detail quotes what the request sent, which must not be able to forge a log line.
    audit(f"lti launch refused ({error.reason}): {error.detail!r}")
    page = render_template("lti/refused.html", title=title, message=message, reason=error.reason)
    return page, status


def addresses() -> dict[str, str]:
    """The tool's fixed addresses, as a platform's admin types them in."""
    return {
        "login": url_for("lti.login", _external=True),
        "launch": url_for("lti.launch", _external=True),
        "jwks": url_for("lti.jwks", _external=True),
    }


@bp.route("/login", methods=["GET", "POST"])
@csrf.exempt
# Each login stores a nonce for ten minutes; a whole lecture theatre behind one school address
# launching at once stays far below this.
@limiter.limit("600 per minute")
def login():
    """OIDC third-party login initiation: check the platform, then send the browser to it."""
    purge_expired()
    if any(len(request.values.get(name, "")) > MAX_PARAMETER for name in LOGIN_PARAMETERS):
        # Each is kept with the login for minutes: a flood of huge ones would fill the table.
        raise Refusal("no_launch", f"a login parameter is over {MAX_PARAMETER} characters")
    target = request.values.get("target_link_uri", "")
    if not target or urlsplit(target).netloc != request.host:
        raise Refusal("no_launch", f"target_link_uri {target!r} is not on {request.host}")
    # The LTI library loads with a worker's first login that passes the checks above.
    from .launch import login_redirect, storage_login

    launch_url = url_for("lti.launch", _external=True)
    if request.headers.get("Sec-Fetch-Dest") != "iframe" or request.values.get(NEW_WINDOW):
        return login_redirect(launch_url)
    # Inside another site's frame the browser may keep no cookie of the quiz's: the state goes
    # to the platform's frame where it offers client-side storage, else into a partitioned
    # cookie (which Chromium keeps with third-party cookies blocked). Where neither can hold,
    # the page offers the same login in a window of the quiz's own.
    passed = {name: request.values[name] for name in LOGIN_PARAMETERS if name in request.values}
    here = url_for("lti.login") + "?" + urlencode({**passed, NEW_WINDOW: "1"})
    target = request.values.get("lti_storage_target", "")
    if STORAGE_TARGET.fullmatch(target):
        held = storage_login(launch_url, target, here)
        return render_template("lti/storage_put.html", held=held, here=here)
    if in_frame():
        return login_redirect(launch_url, new_window=here)
    return render_template("lti/framed.html", here=here)


@bp.route("/launch", methods=["GET", "POST"])
@csrf.exempt
def launch():
    """A launch from a platform: every Security Framework check, then the class or the quiz."""
    if request.method != "POST":
        # A platform checks the address when an activity is saved (Moodle does), and people
        # open it by hand: answered plainly, and no refusal in the log.
        return render_template("lti/launch_here.html")
    from .launch import framed_new_window, held_state, read_back, validated_launch

    held = held_state()
    if held and not read_back(held):
        if request.form.get(STORAGE_CHECKED) or request.headers.get("Sec-Fetch-Dest") != "iframe":
            # Only the check page, inside the platform's frame, may vouch for a held state.
            raise Refusal("state", "a held state's launch outside its check page or frame")
        # No state cookie was set: this page asks the platform's frame for it, then posts the
        # launch here again.
        return render_template(
            "lti/storage_get.html", held=held, form=request.form, checked=STORAGE_CHECKED
        )
    try:
        claims = validated_launch().claims()
    except Refusal as refusal:
        new_window = framed_new_window()
        framed = request.headers.get("Sec-Fetch-Dest") == "iframe"
        if refusal.reason != "state" or new_window is None or not framed:
            raise
        # The login's partitioned cookie did not come back: this browser keeps no cookie in
        # the platform's frame, so the same login goes on in a window of its own.
        audit("lti framed launch without its cookie: offered a new window")
        return render_template("lti/framed.html", here=new_window)
    platform = platform_of(claims)
    role = quizwright_role(claims.get(CLAIM + "roles", []))
    context = claims.get(CLAIM + "context")
    if role is None:
        audit("lti launch without a role", claims["sub"])
        abort(403, description="Your role in this course has no page in Quizwright. "
              "Instructors and learners can open this activity.")  # fmt: skip
    if not context or not context.get("id"):
        abort(400, description="The launch names no course (context), so Quizwright cannot "
              "tell which class it belongs to.")  # fmt: skip
    name = display_name(claims) or ("Instructor" if role == "instructor" else "Student")
    user = user_for(platform, claims["sub"], name)
    members_at = (claims.get(NRPS_CLAIM) or {}).get("context_memberships_url")
    session[FRAMED_SESSION_KEY] = platform.id
    roles = claims.get(CLAIM + "roles", [])
    # pylti1p3 checked that the deployment is registered; a context id is unique only in it.
    deployment = claims[CLAIM + "deployment_id"]
    if claims.get(CLAIM + "message_type") == "LtiDeepLinkingRequest":
        if role != "instructor" or share_role(roles) == Role.VIEW:
            # An assistant's share views the class: choosing its quiz would change it.
            abort(403, description="Only the course's instructors choose which quiz an "
                  "activity opens.")  # fmt: skip
        class_ = _log_in(platform, deployment, context, user, roles)
        remember_members_url(class_, members_at)
        return choose_quiz(platform, class_, claims)
    if role == "instructor":
        if request.headers.get("Sec-Fetch-Dest") == "iframe":
            # The class pages refuse every frame, and running the login again in a new window
            # fails where the platform's login hint works once (Moodle's): the checked launch
            # is handed to a window of the instructor's own, once, for a short while.
            _refuse_teacher(platform, deployment, context, user, roles)
            launched = {"platform": platform.id, "deployment": deployment, "context": context,
                        "user": user.id, "roles": roles, "members_at": members_at}  # fmt: skip
            window = url_for("lti.window", code=hand_off(launched))
            return render_template("lti/framed.html", here=window, class_pages=True)
        return _teach(platform, deployment, context, user, roles, members_at)
    return _learn(platform, deployment, context, user, claims)


@bp.get("/window/<code>")
def window(code: str):
    """The instructor's launch handed over from the platform's frame: logged in here, first-
    party, on the course's class page. A code works once, within HAND_OFF_SECONDS."""
    if request.headers.get("Sec-Fetch-Site") != "same-origin":
        # The link is followed from the tool's own page in the platform's frame. From anywhere
        # else it could log a victim's browser into someone else's account (login CSRF), and a
        # link preview would use it up; it stays unused.
        abort(403, description="Open this link from Quizwright's page inside your course.")
    launched = take_hand_off(code)
    if launched is None:
        abort(404, description="This link has been used or is more than two minutes old. "
              "Open the activity again from your course.")  # fmt: skip
    platform = db.session.get(LtiPlatform, launched["platform"])
    user = db.session.get(LtiUser, launched["user"])
    if platform is None or user is None:
        abort(410, description="The platform that launched you has been removed from Quizwright.")
    return _teach(platform, launched["deployment"], launched["context"], user,
                  launched["roles"], launched["members_at"])  # fmt: skip


def _teach(platform, deployment, context, user, roles, members_at):
    """Log the instructor in and open their course's class page."""
    class_ = _log_in(platform, deployment, context, user, roles)
    remember_members_url(class_, members_at)
    return redirect(url_for("teach.class_page", class_id=class_.id), 303)


def _refuse_teacher(platform, deployment, context, user, roles) -> None:
    """Abort, changing nothing, if this teaching launch may not log in: checked before a
    framed launch is handed to a window too, so that the refusal shows where it happened."""
    found = course_class(platform, deployment, context["id"])
    if share_role(roles) == Role.VIEW and found is None:
        # The first launch makes the class and owns it: an assistant would own more than the
        # LMS gives them (view), so they wait for an instructor as learners do.
        abort(409, description="This course has no Quizwright class yet: an instructor of the "
              "course opens the activity once first. Try again after that.")  # fmt: skip
    account = db.session.get(Instructor, user.instructor_id) if user.instructor_id else None
    if account is not None and not account.is_active:
        audit("lti login refused, account disabled", account.username)
        abort(403, description="Your Quizwright account is disabled. Ask the admin.")
    if found is not None and found.archived_at is not None:
        # An archived class changes in nothing, its shares included.
        owner = account is not None and (found.instructor_id == account.id or account.is_admin)
        shared = account is not None and db.session.get(ClassShare, (found.id, account.id))
        if not (owner or shared):
            abort(403, description=f"{found.name} is archived in Quizwright, so it is shared "
              "with nobody new. Its owner can restore it.")  # fmt: skip


def _log_in(platform, deployment, context, user, roles) -> Class:
    """Log the launching instructor in as their linked account; their course's class, shared
    with them if another teacher of the course made it."""
    _refuse_teacher(platform, deployment, context, user, roles)
    account = instructor_for(user)
    class_ = open_course(platform, deployment, context, account)
    outsider = class_.instructor_id != account.id and not account.is_admin
    archived = class_.archived_at is not None
    framed = session.get(FRAMED_SESSION_KEY)
    session.clear()  # a fresh session at login, as the login form starts one
    login_user(account)
    session["seen"] = idle_minute()
    session[FRAMED_SESSION_KEY] = framed
    audit("lti login", account.username)
    if outsider and not archived:
        _share_with(class_, account, share_role(roles))
    return class_


def _share_with(class_: Class, account: Instructor, role: str) -> None:
    """Share the course's class with another of its teachers as their LTI role allows; a share
    the owner made for more is kept."""
    held = db.session.get(ClassShare, (class_.id, account.id))
    if held is None or (held.role == Role.VIEW and role == Role.MANAGE):
        share_class(class_.id, account.id, Role(role))
        audit(f"lti class {class_.id} shared to {role}", account.username)


def _learn(platform, deployment, context, user, claims):
    """Start (or continue) the learner's attempt at the linked quiz in the course's class."""
    class_ = course_class(platform, deployment, context["id"])
    if class_ is None:
        abort(409, description="This course has no Quizwright class yet: your instructor "
              "opens the activity once first. Try again after that.")  # fmt: skip
    if class_.archived_at is not None:
        abort(403, description="Your class has ended, so no new attempts can start.")
    if not class_.is_open:
        abort(403, description="Your class is closed, so no new attempts can start.")
    offered = list(current_bank().quizzes)
    slug = chosen_quiz(claims.get(CLAIM + "custom"), claims.get(CLAIM + "target_link_uri"), offered)
    if slug is None:
        abort(404, description="This activity names no quiz Quizwright offers. Ask your "
              "instructor to check the link's quiz setting.")  # fmt: skip
    quiz = current_bank().quizzes[slug]
    link = claims[CLAIM + "resource_link"]["id"]
    student = roster_student_for(user, class_.id)
    if student.removed_at is not None:
        abort(403, description=f"You were removed from {class_.name}'s roster, so no new "
              "attempts can start. Ask your instructor.")  # fmt: skip
    attempt = unfinished_attempt(user, quiz, class_.id, link)
    if attempt is None:
        line_item = (claims.get(AGS_CLAIM) or {}).get("lineitem")
        audit("lti attempt start", user.name)
        return start_in_class(
            quiz, class_, student.name, student, launched_from(user.id, link, line_item)
        )
    # The platform vouches for who this is: their attempt follows them to this browser.
    move_to_browser(attempt.token, attempt.roster_student_id, this_browser())
    return redirect(url_for("quiz.resume", token=attempt.token), 303)


@bp.get("/jwks.json")
def jwks():
    """The tool's public keys, which platforms check its signed messages with."""
    response = jsonify(key_set())
    response.cache_control.max_age = 3600
    response.cache_control.public = True
    return response


@bp.route("/admin")
@login_required
def admin():
    """The admin's LTI page: the addresses to give a platform, the platforms, the keys, and
    which account each teaching platform user is logged in as."""
    require_admin()
    platforms = db.session.scalars(
        db.select(LtiPlatform)
        .options(selectinload(LtiPlatform.deployments))
        .order_by(LtiPlatform.name, LtiPlatform.id)
    ).all()
    teachers = db.session.scalars(
        db.select(LtiUser)
        .where(LtiUser.instructor_id.is_not(None))
        .options(joinedload(LtiUser.platform), joinedload(LtiUser.instructor))
        .order_by(LtiUser.name, LtiUser.id)
    ).all()
    signing = signing_key()
    made = session.pop(MADE_LINK, None)
    return render_template(
        "lti/admin.html",
        made=(made[0], datetime.fromtimestamp(made[1], UTC)) if made else None,
        link_hours=int(LINK_LIFETIME.total_seconds() // 3600),
        addresses=addresses(),
        platforms=platforms,
        teachers=teachers,
        keys=published_keys(),
        signing_kid=signing.kid,
    )


MADE_LINK = "lti_registration_link"
"""Under which the session carries a link the admin just made to the LTI page, shown once."""


@bp.post("/admin/registration-link")
@login_required
def new_registration_link():
    """Make a dynamic registration link, which works once within a day, and show it on the LTI
    page: what `flask lti registration-link` prints, without a shell."""
    require_admin()
    link = url_for("lti.register", code=new_link_code(), _external=True)
    session[MADE_LINK] = (link, (now() + LINK_LIFETIME).timestamp())
    audit("lti registration link made")
    return redirect(url_for(".admin"), 303)


def frame_ancestors() -> list[str]:
    """Origins of every registered platform: the only sites that may frame LTI pages."""
    origins = set()
    for url in db.session.scalars(db.select(LtiPlatform.issuer)):
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.netloc:
            origins.add(f"{parts.scheme}://{parts.netloc}")
    return sorted(origins)


def allow_platform_frames(_sender=None) -> None:
    """Let registered platforms frame LTI pages, and student pages a launch led to; every
    other page keeps `frame-ancestors 'none'` (app/headers.py)."""
    endpoint = request.endpoint or ""
    framed = endpoint.startswith("lti.") and endpoint not in (
        "lti.admin",
        "lti.new_registration_link",
    )
    if framed or (endpoint.startswith("quiz.") and FRAMED_SESSION_KEY in session):
        allow_framing(*frame_ancestors())
