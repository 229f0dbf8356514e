"""Every response's Content-Security-Policy and X-Frame-Options, built by one function from the
app's policy and what the page itself allows: who may frame it, where its forms may post.
Talisman sets the other security headers (HSTS, Referrer-Policy, nosniff)."""

from flask import Flask, g

from .signals import response_headers

POLICY = {
    "default-src": ("'self'",),
    "frame-ancestors": ("'none'",),
    "form-action": ("'self'",),
    "base-uri": ("'none'",),
    "object-src": ("'none'",),
}


def allow_framing(*origins: str) -> None:
    """Let these origins, and the app itself, frame the page being answered."""
    g.frame_ancestors = (*g.get("frame_ancestors", ("'self'",)), *origins)


def allow_posting_to(origin: str) -> None:
    """Let the page's forms post to this origin as well as to the app."""
    g.form_action = ("'self'", origin)


def content_security_policy() -> str:
    """The policy for the page being answered."""
    policy = POLICY | {
        "frame-ancestors": g.get("frame_ancestors", POLICY["frame-ancestors"]),
        "form-action": g.get("form_action", POLICY["form-action"]),
    }
    return "; ".join(f"{name} {' '.join(values)}" for name, values in policy.items())


def set_headers(response):
    response_headers.send()
    response.headers["Content-Security-Policy"] = content_security_policy()
    if "frame_ancestors" not in g:
        response.headers["X-Frame-Options"] = "DENY"
    return response


def init_app(app: Flask) -> None:
    app.after_request(set_headers)
