"""LTI client-side storage (1EdTech's OIDC login with LTI client-side postMessages): a login
inside the platform's frame keeps its state in the platform's storage frame instead of a cookie,
and the launch signs in only after the tool's own page read it back. Requests carry the
Sec-Fetch headers Chromium sends; the browser side is tests/e2e/test_lti_frame.py."""

import html
import json
import re
import urllib.parse
from datetime import timedelta

import pytest
import requests
import test_lti
from test_lti import (
    CLIENT_ID,
    DEPLOYMENT,
    STUDENT,
    TEACHER,
    TEACHING_ASSISTANT,
    Person,
    Platform,
    counts,
    launch,
    page_text,
)

from app.cookies import attributes
from app.extensions import db
from app.lti.launch import origin
from app.lti.models import LtiLaunchData
from app.lti.platforms import PlatformDetails, save_platform
from app.models import Assignment, Attempt, now

from helpers import SLUG, csrf_token, make_app

pytestmark = pytest.mark.any_database
# The test platform and the tool under gunicorn, as the launch tests use them.
site, tool, bare_tool, world = test_lti.site, test_lti.tool, test_lti.bare_tool, test_lti.world

FRAMED = {"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Site": "cross-site"}
"""What Chromium sends with a request for a page inside another site's frame."""
CHECK_PAGE = {"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Site": "same-origin"}
"""What it sends with the tool's own pages and forms in that frame (the check page's form too)."""


class FramedBrowser(requests.Session):
    """A browser inside the platform's frame. Chromium counts a loopback address (where these
    tools serve) as a secure context and sends Secure cookies to it over plain HTTP; the
    standard jar does so over HTTPS only, so here they are kept without the flag."""

    def send(self, request, **kwargs):
        response = super().send(request, **kwargs)
        for cookie in self.cookies:
            cookie.secure = False
        return response


FROM_THE_FRAME = {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "navigate"}
"""What Chromium sends with a window the tool's own page in the frame opened."""


def held_login(world, browser, who=STUDENT) -> dict:
    """A framed login offered client-side storage: the page's data for the storage frame."""
    start = world.platform.login_url(who.sub, f"{world.tool}/lti/launch")
    page = browser.get(f"{start}&lti_storage_target=_parent", headers=FRAMED)
    assert page.status_code == 200, page.text
    found = re.search(r'<div id="lti-storage" ([^>]*)>', page.text)
    return {
        name: html.unescape(value) for name, value in re.findall(r'data-(\w+)="([^"]*)"', found[1])
    }


def authorized(world, held, who=STUDENT, deep_link=False) -> dict:
    """The platform's answer to the login, as its authorization endpoint posts it."""
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(held["next"]).query))
    form = world.platform.authorize(query, f"{world.tool}/lti/launch", who, deep_link=deep_link)
    return {"id_token": form["id_token"], "state": form["state"]}


def test_a_framed_login_puts_its_state_in_the_platforms_frame_not_a_cookie(world):
    """The page names the storage frame, the platform's origin and the state it then sends to
    the platform's authorization endpoint; no state cookie is set."""
    browser = requests.Session()
    held = held_login(world, browser)
    assert held["mode"] == "put"
    assert held["target"] == "_parent"
    assert held["origin"] == world.platform.issuer  # the authorization endpoint's origin
    to_platform = urllib.parse.urlsplit(held["next"])
    assert f"{to_platform.scheme}://{to_platform.netloc}{to_platform.path}" == (
        f"{world.platform.issuer}/auth"
    )
    sent = dict(urllib.parse.parse_qsl(to_platform.query))
    assert (sent["state"], sent["nonce"]) == (held["state"], held["nonce"])
    assert not [name for name in browser.cookies if name.startswith("lti1p3")]
    with world.app.app_context():  # the nonce waits for its launch, as a cookie login's does
        assert db.session.get(LtiLaunchData, f"lti1p3-nonce-{held['nonce']}") is not None


def framed_cookie_login(world, browser, who=STUDENT, deep_link=False) -> dict:
    """A framed login without storage: its redirect to the platform, answered by the platform
    as its authorization endpoint posts it."""
    start = world.platform.login_url(who.sub, f"{world.tool}/lti/launch")
    sent = browser.get(start, headers=FRAMED, allow_redirects=False)
    assert sent.status_code == 302, sent.text
    return authorized(world, {"next": sent.headers["Location"]}, who, deep_link)


def framed_launch(world, browser, who, path, deep_link=False):
    """A whole launch inside the platform's frame, its state kept by `path`: the platform's
    storage frame (read back by the check page) or a partitioned cookie."""
    if path == "storage":
        return read_back(world, browser, authorized(world, held_login(world, browser, who),
                                                    who, deep_link))  # fmt: skip
    fields = framed_cookie_login(world, browser, who, deep_link)
    return browser.post(f"{world.tool}/lti/launch", data=fields, headers=FRAMED,
                        allow_redirects=False)  # fmt: skip


def test_a_framed_login_without_storage_keeps_its_state_in_a_partitioned_cookie(world):
    """No lti_storage_target: the login's state and session-id cookies go out partitioned,
    the one kind Chromium keeps in a cross-site frame with third-party cookies blocked, and the
    launch that carries them back starts the attempt inside the frame."""
    launch(world.platform, requests.Session(), TEACHER)
    browser = FramedBrowser()
    start = world.platform.login_url(STUDENT.sub, f"{world.tool}/lti/launch")
    sent = browser.get(start, headers=FRAMED, allow_redirects=False)
    assert sent.status_code == 302
    assert sent.headers["Location"].startswith(f"{world.platform.issuer}/auth?")
    set_cookies = sent.raw.headers.getlist("Set-Cookie")
    assert [line for line in set_cookies if line.startswith("lti1p3-state-")]
    for line in set_cookies:
        assert {"Secure", "SameSite=None", "Partitioned"} <= set(line.split("; ")), line
    fields = authorized(world, {"next": sent.headers["Location"]})
    landed = browser.post(f"{world.tool}/lti/launch", data=fields, headers=FRAMED,
                          allow_redirects=False)  # fmt: skip
    assert landed.status_code == 303, page_text(landed)
    assert re.search(r"/attempts/[\w-]+/questions/1$", landed.headers["Location"])


def test_a_framed_launch_whose_cookie_was_lost_offers_a_new_window(world):
    """A browser that kept not even the partitioned cookie: the launch offers the same login in
    a window of its own, carrying every login parameter; following it runs the login as usual.
    Nothing is started in the frame."""
    launch(world.platform, requests.Session(), TEACHER)
    before = counts(world.app)
    fields = framed_cookie_login(world, requests.Session())
    page = requests.post(f"{world.tool}/lti/launch", data=fields, headers=FRAMED)
    assert page.status_code == 200, page_text(page)
    assert "Open in a new window" in page.text
    href = re.search(r'id="lti-new-window" href="([^"]+)"', page.text)[1].replace("&amp;", "&")
    start = world.platform.login_url(STUDENT.sub, f"{world.tool}/lti/launch")
    asked = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(start).query))
    carried = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(href).query))
    assert carried == {**asked, "lti1p3_new_window": "1"}
    onward = requests.get(world.tool + href, allow_redirects=False)
    assert onward.status_code == 302
    assert onward.headers["Location"].startswith(f"{world.platform.issuer}/auth?")
    assert counts(world.app) == before
    # A first-party launch without its cookie is refused as before: no window to offer.
    first_party = launch(world.platform, requests.Session(), STUDENT)
    lost = requests.post(f"{world.tool}/lti/launch", data=first_party.form)
    assert lost.status_code == 401
    # Nor is a framed login's window offered outside a frame (another site posting its state).
    fields = framed_cookie_login(world, requests.Session())
    top_level = requests.post(f"{world.tool}/lti/launch", data=fields)
    assert top_level.status_code == 401 and "lti-new-window" not in top_level.text


def test_a_login_parameter_is_refused_past_four_thousand_characters(world):
    """Attacker repro: each framed login kept a 60 kB login_hint for ten minutes, 600 a minute
    from one address. A parameter that long is refused, and nothing is kept."""
    start = world.platform.login_url(STUDENT.sub, f"{world.tool}/lti/launch")
    fields = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(start).query))
    with world.app.app_context():
        before = db.session.scalar(db.select(db.func.count()).select_from(LtiLaunchData))
    for name in ("login_hint", "lti_message_hint", "lti_deployment_id"):
        sent = requests.post(start.split("?")[0], data={**fields, name: "x" * 60_000},
                             headers=FRAMED, allow_redirects=False)  # fmt: skip
        assert sent.status_code == 400, name
    with world.app.app_context():
        after = db.session.scalar(db.select(db.func.count()).select_from(LtiLaunchData))
    assert after == before


def test_the_launch_reads_the_state_back_before_signing_in(world):
    """The platform's post shows the check page and stores nothing; the check page's own
    same-origin post then starts the attempt, on cookies partitioned for the frame."""
    launch(world.platform, requests.Session(), TEACHER)
    browser = requests.Session()
    held = held_login(world, browser)
    fields = authorized(world, held)
    before = counts(world.app)

    check = browser.post(f"{world.tool}/lti/launch", data=fields, headers=FRAMED)
    assert check.status_code == 200
    assert 'data-mode="get"' in check.text and f'data-state="{held["state"]}"' in check.text
    assert f'data-origin="{world.platform.issuer}"' in check.text
    assert counts(world.app) == before
    assert "Launch not confirmed" in page_text(check)  # what shows until the state is back
    fallback = re.search(r'id="lti-new-window" href="([^"]*)"', check.text)
    assert fallback and "lti1p3_new_window=1" in fallback[1]  # and the way out if it never is

    signed_in = browser.post(
        f"{world.tool}/lti/launch",
        data={**fields, "lti_storage_checked": "1"},
        headers=CHECK_PAGE,
        allow_redirects=False,
    )
    assert signed_in.status_code == 303, page_text(signed_in)
    assert "/attempts/" in signed_in.headers["Location"]
    cookies = signed_in.raw.headers.getlist("Set-Cookie")
    assert cookies and all("Partitioned" in c and "SameSite=None" in c for c in cookies)
    assert all("Secure" in c for c in cookies)
    with world.app.app_context():
        assert db.session.scalars(db.select(Attempt)).one().student_name == STUDENT.name


@pytest.mark.parametrize(
    "headers",
    [
        FRAMED,
        {},
        {"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Site": "same-site"},
        {"Sec-Fetch-Dest": "document", "Sec-Fetch-Site": "cross-site"},
    ],
    ids=["cross-site", "no-fetch-metadata", "same-site", "top-level"],
)
def test_only_the_tools_own_page_may_say_it_read_the_state_back(world, headers):
    """Another site posting the launch with the check page's field (a forged login, say) is
    refused: nothing is signed in or stored, and the nonce stays unused."""
    launch(world.platform, requests.Session(), TEACHER)
    held = held_login(world, requests.Session())
    fields = {**authorized(world, held), "lti_storage_checked": "1"}
    before = counts(world.app)
    victim = requests.Session()
    answer = victim.post(
        f"{world.tool}/lti/launch", data=fields, headers=headers, allow_redirects=False
    )
    assert answer.status_code == 401
    assert "LTI launch refused: <code>state</code>" in answer.text
    assert counts(world.app) == before
    assert "session" not in victim.cookies
    with world.app.app_context():
        assert db.session.get(LtiLaunchData, f"lti1p3-nonce-{held['nonce']}") is not None


def test_the_check_page_is_only_for_the_platforms_frame(world):
    """Posted top-level (another site's form in a window it opened), a held state's launch gets
    no check page, whose read could then be answered by that site's frames: it is refused."""
    held = held_login(world, requests.Session())
    top = {"Sec-Fetch-Dest": "document", "Sec-Fetch-Site": "cross-site"}
    answer = requests.post(f"{world.tool}/lti/launch", data=authorized(world, held), headers=top)
    assert answer.status_code == 401
    assert 'data-mode="get"' not in answer.text


def read_back(world, browser, fields):
    """What the check page posts once the platform's frame gave the state back."""
    return browser.post(
        f"{world.tool}/lti/launch",
        data={**fields, "lti_storage_checked": "1"},
        headers=CHECK_PAGE,
        allow_redirects=False,
    )


def test_a_read_back_state_vouches_only_for_its_own_login(world):
    """The state read back proves one login: an id_token of another login (its nonce), or a
    second launch of the same state, is refused."""
    launch(world.platform, requests.Session(), TEACHER)
    victim = requests.Session()
    mine = held_login(world, victim)
    others = authorized(world, held_login(world, requests.Session()))["id_token"]
    swapped = read_back(world, victim, {"id_token": others, "state": mine["state"]})
    assert swapped.status_code == 401
    assert "LTI launch refused: <code>state</code>" in swapped.text

    browser = requests.Session()
    held = held_login(world, browser)
    assert read_back(world, browser, authorized(world, held)).status_code == 303
    again = authorized(world, held_login(world, requests.Session()))["id_token"]
    second = read_back(world, requests.Session(), {"id_token": again, "state": held["state"]})
    assert second.status_code == 401


def test_a_read_back_state_vouches_only_for_its_own_registration(world):
    """A login through another registration (whose authorization origin answered the read)
    cannot carry an id_token of this one."""
    launch(world.platform, requests.Session(), TEACHER)
    site = world.platform.site
    with world.app.app_context():
        details = PlatformDetails(
            site.url, "other-client", "https://elsewhere.example/auth", f"{site.url}/token",
            f"{site.url}/jwks.json", (DEPLOYMENT,), "Other",
        )  # fmt: skip
        save_platform(details)
    other = Platform(site, world.tool, client_id="other-client")
    browser = requests.Session()
    start = other.login_url(STUDENT.sub, f"{world.tool}/lti/launch")
    page = browser.get(f"{start}&lti_storage_target=_parent", headers=FRAMED)
    held = dict(re.findall(r'data-(\w+)="([^"]*)"', page.text))
    assert held["origin"] == "https://elsewhere.example"
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(html.unescape(held["next"])).query))
    site.platform = world.platform
    form = world.platform.authorize(
        {**query, "client_id": CLIENT_ID}, f"{world.tool}/lti/launch", STUDENT
    )
    answer = read_back(world, browser, {"id_token": form["id_token"], "state": form["state"]})
    assert answer.status_code == 401


def test_a_storage_target_is_a_frame_name(world):
    """A target that is no frame name (here 60,000 characters) is not stored: the framed login
    keeps its state in a partitioned cookie instead."""
    start = world.platform.login_url(STUDENT.sub, f"{world.tool}/lti/launch")
    fields = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(start).query))
    sent = requests.post(
        start.split("?")[0], data={**fields, "lti_storage_target": "x" * 60_000}, headers=FRAMED,
        allow_redirects=False,
    )  # fmt: skip
    assert sent.status_code == 302 and 'id="lti-storage"' not in sent.text
    assert "Partitioned" in sent.headers["Set-Cookie"]
    with world.app.app_context():
        stored = db.session.scalars(db.select(LtiLaunchData.value)).all()
    assert not any("x" * 100 in json.dumps(value) for value in stored)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://LMS.example.edu/auth", "https://lms.example.edu"),
        ("https://lms.example.edu:443/auth", "https://lms.example.edu"),
        ("https://user@lms.example.edu/auth", "https://lms.example.edu"),
        ("http://localhost:8080/auth?x=1", "http://localhost:8080"),
        ("https://[::1]:8443/auth", "https://[::1]:8443"),
    ],
)
def test_the_platforms_origin_is_written_as_a_browser_reports_it(url, expected):
    """The read's answer is matched against event.origin, which a browser serializes."""
    assert origin(url) == expected


@pytest.mark.parametrize("path", ["storage", "cookie"])
def test_an_instructors_framed_launch_goes_on_in_a_new_window(world, path):
    """The class pages refuse every frame, and Moodle's login hint works once, so a framed
    instructor's checked launch is handed to a window of their own: its link signs them in
    there, first-party, once and within two minutes. Nobody is signed in inside the frame."""
    browser = FramedBrowser()
    answer = framed_launch(world, browser, TEACHER, path)
    assert answer.status_code == 200, page_text(answer)
    assert "Your class pages open in a window of their own" in page_text(answer)
    link = html.unescape(re.search(r'id="lti-new-window" href="([^"]*)"', answer.text)[1])
    assert link.startswith("/lti/window/")
    dashboard = browser.get(f"{world.tool}/teach", allow_redirects=False)
    assert dashboard.status_code == 302 and "/login" in dashboard.headers["Location"]

    window = requests.Session()  # first-party: no cookie of the frame's
    opened = window.get(world.tool + link, headers=FROM_THE_FRAME, allow_redirects=False)
    assert opened.status_code == 303
    assert re.fullmatch(r"/teach/classes/\d+", opened.headers["Location"])
    assert window.get(world.tool + opened.headers["Location"]).status_code == 200
    again = requests.get(world.tool + link, headers=FROM_THE_FRAME, allow_redirects=False)
    assert again.status_code == 404
    code = link.rsplit("/", 1)[1]
    assert code not in world.log.read_text() and "path=/lti/window/[code]" in world.log.read_text()


def test_a_hand_over_link_works_only_from_the_tools_own_page(world):
    """Attacker repro: a teacher's own framed launch gave a code that, sent to a victim by a
    redirect, logged the victim's browser into the attacker's account (login CSRF). A link not
    followed from the tool's page in the frame (another site's, a preview's HEAD) is refused
    and stays unused."""
    victim = requests.Session()
    launch(world.platform, victim, TEACHER)

    def account_page():
        """The dashboard, without its form tokens, which change every second."""
        page = victim.get(f"{world.tool}/teach").text
        return re.sub(r'name="csrf_token" value="[^"]*"', "", page)

    theirs = account_page()
    mallory = Person("mallory-9", "Mallory Attacker", TEACHER.roles)
    answer = framed_launch(world, FramedBrowser(), mallory, "cookie")
    link = html.unescape(re.search(r'id="lti-new-window" href="([^"]*)"', answer.text)[1])
    elsewhere = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
    for headers in (elsewhere, {}):
        forged = victim.get(world.tool + link, headers=headers, allow_redirects=False)
        assert forged.status_code == 403
    assert victim.head(world.tool + link, allow_redirects=False).status_code == 403
    assert account_page() == theirs  # still their own account
    opened = requests.get(world.tool + link, headers=FROM_THE_FRAME, allow_redirects=False)
    assert opened.status_code == 303  # unused by the forgeries


def test_a_framed_launch_that_may_not_teach_is_refused_in_the_frame(world):
    """A teaching assistant before any instructor (409), or choosing an activity's quiz (403),
    is refused where they launched, not after following a hand-over link."""
    assistant = Person("ta-3", "Barbara", TEACHING_ASSISTANT)
    first = framed_launch(world, FramedBrowser(), assistant, "cookie")
    assert first.status_code == 409 and "/lti/window/" not in first.text
    launch(world.platform, requests.Session(), TEACHER)
    choosing = framed_launch(world, FramedBrowser(), assistant, "cookie", deep_link=True)
    assert choosing.status_code == 403
    assert "Only the course's instructors choose" in page_text(choosing)
    with world.app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(Assignment)) == 0


def test_a_handed_over_launch_expires(world):
    """A hand-over link left for more than two minutes signs nobody in."""
    answer = framed_launch(world, FramedBrowser(), TEACHER, "cookie")
    link = html.unescape(re.search(r'id="lti-new-window" href="([^"]*)"', answer.text)[1])
    with world.app.app_context():
        kept = db.session.get(LtiLaunchData, "lti1p3-hand-off-" + link.rsplit("/", 1)[1])
        kept.expires_at = now() - timedelta(seconds=1)
        db.session.commit()
    assert requests.get(world.tool + link, headers=FROM_THE_FRAME).status_code == 404


@pytest.mark.parametrize("path", ["storage", "cookie"])
def test_deep_linking_completes_inside_the_platforms_frame(world, path):
    """Moodle's "Select content" opens the tool in a dialog frame and takes the answer only
    from that frame: the choice is made there, on partitioned cookies, and the signed answer is
    posted from there to the platform's return address."""
    browser = FramedBrowser()
    sent = framed_launch(world, browser, TEACHER, path, deep_link=True)
    assert sent.status_code == 303 and sent.headers["Location"] == "/lti/deep-link"
    assert "Partitioned" in sent.headers["Set-Cookie"]
    choice = browser.get(f"{world.tool}/lti/deep-link", headers=CHECK_PAGE)
    assert choice.status_code == 200, page_text(choice)
    assert (
        f"frame-ancestors 'self' {world.platform.issuer}"
        in choice.headers["Content-Security-Policy"]
    )
    fields = {
        "csrf_token": csrf_token(choice.text), "quiz": SLUG, "time_zone": "UTC",
        "attempts_allowed": "1", "grade_from": "best", "feedback": "after-attempt",
    }  # fmt: skip
    answer = browser.post(f"{world.tool}/lti/deep-link", data=fields, headers=CHECK_PAGE)
    assert answer.status_code == 200, page_text(answer)
    assert f'action="{world.platform.issuer}/deep-link-return"' in answer.text
    token = html.unescape(re.search(r'name="JWT" value="([^"]+)"', answer.text)[1])
    [item] = world.platform.config().validate_deeplinking_resp({"JWT": token})
    assert item["custom"] == {"quiz": SLUG}


def test_a_cookie_login_cannot_skip_its_cookie_by_claiming_a_read_back(world):
    """A state issued with a cookie is checked against that cookie, whatever the form says:
    posted from a browser without it, even as the check page's form, the launch is refused."""
    launch(world.platform, requests.Session(), TEACHER)
    before = counts(world.app)

    started = requests.Session()
    target = f"{world.tool}/lti/launch"
    redirect = started.get(world.platform.login_url(STUDENT.sub, target), allow_redirects=False)
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(redirect.headers["Location"]).query))
    form = world.platform.authorize(query, target, STUDENT)
    fields = {"id_token": form["id_token"], "state": form["state"], "lti_storage_checked": "1"}
    other = requests.post(target, data=fields, headers=CHECK_PAGE, allow_redirects=False)
    assert other.status_code == 401
    assert "LTI launch refused: <code>state</code>" in other.text
    assert counts(world.app) == before


@pytest.mark.parametrize(
    ("base_url", "headers", "partitioned"),
    [
        ("http://127.0.0.1:8000", {"Sec-Fetch-Dest": "iframe"}, True),
        ("http://localhost", {"Sec-Fetch-Dest": "iframe"}, True),
        ("https://quiz.example.edu", {"Sec-Fetch-Dest": "iframe"}, True),
        ("http://quiz.example.edu", {"Sec-Fetch-Dest": "iframe"}, False),
        ("https://quiz.example.edu", {"Sec-Fetch-Dest": "document"}, False),
        ("http://127.0.0.1:8000", {}, False),
    ],
)
def test_cookies_are_partitioned_inside_a_frame_where_they_can_be_secure(
    tmp_path, base_url, headers, partitioned
):
    """A frame gets SameSite=None; Secure; Partitioned cookies where the browser keeps a Secure
    one (HTTPS or this machine); anywhere else the first-party SameSite=Lax ones."""
    app = make_app(tmp_path)
    with app.test_request_context("/", base_url=base_url, headers=headers):
        sent = attributes()
    if partitioned:
        assert sent == {"secure": True, "samesite": "None", "partitioned": True}
    else:
        assert sent == {"secure": False, "samesite": "Lax"}
