"""How the quiz's cookies are sent: first-party with SameSite=Lax, and inside a platform's
frame as partitioned cookies, the one kind Chromium keeps in a cross-site frame when the student
blocks third-party cookies."""

from urllib.parse import urlsplit

from flask import current_app, request
from flask.sessions import SecureCookieSessionInterface

LOOPBACK = ("localhost", "127.0.0.1", "::1")
"""Hosts a browser counts as secure over plain HTTP, so it keeps a Secure cookie from them."""


def in_frame() -> bool:
    """This request is a page inside a frame, on a connection that may carry a Secure cookie
    (partitioned cookies must be Secure)."""
    if request.headers.get("Sec-Fetch-Dest") != "iframe":
        return False
    return request.is_secure or urlsplit("//" + request.host).hostname in LOOPBACK


def attributes() -> dict:
    """The attributes of a cookie this response sends."""
    if in_frame():
        # Keyed to the platform's site: another site framing the quiz gets a jar of its own.
        return {"secure": True, "samesite": "None", "partitioned": True}
    return {"secure": current_app.config["SESSION_COOKIE_SECURE"], "samesite": "Lax"}


class SessionCookies(SecureCookieSessionInterface):
    """Flask's signed session cookie, with the attributes above."""

    def get_cookie_secure(self, app) -> bool:
        return attributes()["secure"]

    def get_cookie_samesite(self, app) -> str:
        return attributes()["samesite"]

    def get_cookie_partitioned(self, app) -> bool:
        return attributes().get("partitioned", False)
