"""LTI client-side storage (1EdTech's OIDC login with LTI client-side postMessages): a login
inside the platform's frame keeps its state in the platform's storage frame instead of a cookie,
and the launch signs in only after the tool's own page read it back. Requests carry the
Sec-Fetch headers Chromium sends; the browser side is tests/e2e/test_lti_frame.py."""

import html
import re
import urllib.parse

import pytest
import requests
import test_lti
from test_lti import STUDENT, TEACHER, counts, launch, page_text

from app.cookies import attributes
from app.extensions import db
from app.lti.models import LtiLaunchData
from app.models import Attempt

from helpers import make_app

pytestmark = pytest.mark.usefixtures("quick_passwords")
# The test platform and the tool under gunicorn, as the launch tests use them.
site, world = test_lti.site, test_lti.world

FRAMED = {"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Site": "cross-site"}
"""What Chromium sends with a request for a page inside another site's frame."""
CHECK_PAGE = {"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Site": "same-origin"}
"""What it sends with the check page's form, posted from the tool's own page in that frame."""


def held_login(world, browser, who=STUDENT) -> dict:
    """A framed login offered client-side storage: the page's data for the storage frame."""
    start = world.platform.login_url(who.sub, f"{world.tool}/lti/launch")
    page = browser.get(f"{start}&lti_storage_target=_parent", headers=FRAMED)
    assert page.status_code == 200, page.text
    found = re.search(r'<div id="lti-storage" ([^>]*)>', page.text)
    return {
        name: html.unescape(value) for name, value in re.findall(r'data-(\w+)="([^"]*)"', found[1])
    }


def authorized(world, held, who=STUDENT) -> dict:
    """The platform's answer to the login, as its authorization endpoint posts it."""
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(held["next"]).query))
    form = world.platform.authorize(query, f"{world.tool}/lti/launch", who)
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


def test_a_framed_login_without_storage_offers_a_new_window(world):
    """No lti_storage_target: the framed page offers a window of the quiz's own."""
    start = world.platform.login_url(STUDENT.sub, f"{world.tool}/lti/launch")
    page = requests.get(start, headers=FRAMED)
    assert page.status_code == 200
    assert "Open in a new window" in page.text
    assert 'id="lti-storage"' not in page.text


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
    [FRAMED, {}, {"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Site": "same-site"}],
    ids=["cross-site", "no-fetch-metadata", "same-site"],
)
def test_only_the_tools_own_page_may_say_it_read_the_state_back(world, headers):
    """Another site posting the launch with the check page's field (a forged login, say) gets
    the check page again, whose read fails in a browser that never stored the state; nothing
    is signed in or stored and the nonce stays unused."""
    launch(world.platform, requests.Session(), TEACHER)
    held = held_login(world, requests.Session())
    fields = {**authorized(world, held), "lti_storage_checked": "1"}
    before = counts(world.app)
    victim = requests.Session()
    answer = victim.post(
        f"{world.tool}/lti/launch", data=fields, headers=headers, allow_redirects=False
    )
    assert answer.status_code == 200 and 'data-mode="get"' in answer.text
    assert counts(world.app) == before
    assert "session" not in victim.cookies
    with world.app.app_context():
        assert db.session.get(LtiLaunchData, f"lti1p3-nonce-{held['nonce']}") is not None


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
