"""`flask lti`: register platforms, list and remove them, rotate the tool's key."""

import time
from datetime import timedelta

import click
from flask import current_app, url_for
from flask.cli import AppGroup

from ..auth import find_instructor
from ..extensions import db
from .keys import GRACE, rotate, signing_key
from .models import LtiPlatform
from .people import link_instructor
from .platforms import (
    PlatformDetails,
    PlatformError,
    find_platform,
    is_web_address,
    remove_platform,
    save_platform,
)
from .registration import LINK_LIFETIME, new_link_code

lti_cli = AppGroup("lti", help="Connect learning platforms (Moodle, Canvas, ...) over LTI 1.3.")


def _log(event: str) -> None:
    current_app.logger.warning("%s: by=command line", event)


@lti_cli.command("add-platform")
@click.option("--issuer", required=True, help="The platform's issuer (Platform ID in Moodle).")
@click.option("--client-id", required=True, help="The client id the platform gave the tool.")
@click.option("--auth-login-url", required=True, help="The platform's authentication request URL.")
@click.option("--auth-token-url", required=True, help="The platform's access token URL.")
@click.option("--key-set-url", required=True, help="The platform's public keyset URL.")
@click.option(
    "--deployment-id",
    "deployment_ids",
    required=True,
    multiple=True,
    help="A deployment id of the tool in the platform; repeat it, or run again, to add more.",
)
@click.option("--name", help="What the admin page calls the platform (default: its host).")
def add_platform(issuer, client_id, auth_login_url, auth_token_url, key_set_url, deployment_ids,
                 name):  # fmt: skip
    """Register a platform, or add deployments to one registered before."""
    details = PlatformDetails(
        issuer, client_id, auth_login_url, auth_token_url, key_set_url, deployment_ids, name
    )
    try:
        platform, added = save_platform(details)
    except PlatformError as error:
        for problem in error.errors:
            click.echo(problem, err=True)
        raise click.exceptions.Exit(2) from None
    kid = signing_key().kid  # made on first use, so the platform can fetch it right away
    _log(f"lti platform saved: {issuer} {client_id} deployments {', '.join(added) or 'none new'}")
    click.echo(f"Registered “{platform.name}” ({issuer}, client id {client_id}).")
    click.echo(f"Deployments: {', '.join(d.deployment_id for d in platform.deployments)}.")
    click.echo(f"The tool signs with key {kid}; its keys are at /lti/jwks.json.")


@lti_cli.command("list-platforms")
def list_platforms():
    """List the registered platforms and their deployments."""
    platforms = db.session.scalars(db.select(LtiPlatform).order_by(LtiPlatform.name)).all()
    if not platforms:
        click.echo("No platforms registered. Add one with `flask lti add-platform`.")
    for platform in platforms:
        click.echo(f"{platform.name}")
        click.echo(f"  issuer:          {platform.issuer}")
        click.echo(f"  client id:       {platform.client_id}")
        click.echo(f"  auth login URL:  {platform.auth_login_url}")
        click.echo(f"  auth token URL:  {platform.auth_token_url}")
        click.echo(f"  key set URL:     {platform.key_set_url}")
        deployments = ", ".join(d.deployment_id for d in platform.deployments)
        click.echo(f"  deployments:     {deployments}")


@lti_cli.command("remove-platform")
@click.option("--issuer", required=True)
@click.option("--client-id", help="Needed when the issuer is registered more than once.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def remove_platform_command(issuer, client_id, yes):
    """Forget a platform: its launches stop working; the classes it made stay."""
    if not yes:
        click.confirm(f"Remove {issuer}? Launches from it will be refused.", abort=True)
    platform = remove_platform(issuer, client_id)
    if platform is None:
        raise click.ClickException(
            f"No platform {issuer}{' with client id ' + client_id if client_id else ''} is "
            "registered (or the issuer has several: give --client-id). See `flask lti "
            "list-platforms`."
        )
    _log(f"lti platform removed: {issuer} {platform.client_id}")
    click.echo(f"Removed “{platform.name}”. Its classes and attempts stay.")


@lti_cli.command("link-instructor")
@click.option("--issuer", required=True)
@click.option("--client-id", help="Needed when the issuer is registered more than once.")
@click.option("--sub", required=True, help="The platform's user id, as the LTI page lists it.")
@click.argument("username")
def link_instructor_command(issuer, client_id, sub, username):
    """Have a platform user's launches log in as an existing instructor account."""
    platform = find_platform(issuer, client_id)
    if platform is None:
        raise click.ClickException(f"No platform {issuer} is registered (see list-platforms).")
    account = find_instructor(username)
    if account is None:
        raise click.ClickException(f"There is no instructor named “{username}”.")
    user = link_instructor(platform, sub, account)
    if user is None:
        raise click.ClickException(
            f"{sub} has never launched from {platform.name}: link them after their first launch."
        )
    _log(f"lti user {issuer} {sub} linked to {account.username}")
    click.echo(f"{user.name}'s launches from {platform.name} now log in as “{account.username}”.")


@lti_cli.command("rotate-key")
@click.option(
    "--grace-days",
    type=click.IntRange(0, 365),
    default=GRACE.days,
    show_default=True,
    help="Days the replaced key stays published for platforms that cached it.",
)
def rotate_key(grace_days):
    """Sign with a new key; the old one stays published for the grace period, then retires."""
    fresh, replaced = rotate(timedelta(days=grace_days))
    _log(f"lti key rotated: {fresh.kid}")
    click.echo(f"Now signing with key {fresh.kid}.")
    for key in replaced:
        click.echo(f"Key {key.kid} stays published until {key.retired_at:%Y-%m-%d %H:%M} UTC.")


@lti_cli.command("registration-link")
@click.option(
    "--site",
    required=True,
    help="Quizwright's address as platforms reach it, e.g. https://quiz.example.edu",
)
def registration_link(site):
    """Print a dynamic registration link for one platform: it works once, within a day."""
    if not is_web_address(site):
        raise click.BadParameter(
            f"{site!r} is not an http:// or https:// address.", param_hint="--site"
        )
    code = new_link_code()
    with current_app.test_request_context(base_url=site):
        link = url_for("lti.register", code=code, _external=True)
    _log("lti registration link made")
    click.echo(f"Paste this into the platform's tool registration field; it works once, within "
               f"{LINK_LIFETIME.days * 24} hours:")  # fmt: skip
    click.echo(link)


@lti_cli.command("send-scores")
@click.option("--loop", is_flag=True, help="Keep sending as scores come, until stopped.")
@click.option(
    "--every",
    type=click.IntRange(1, 3600),
    default=10,
    show_default=True,
    help="With --loop: seconds between passes.",
)
def send_scores(loop, every):
    """Send waiting grades to the platforms' gradebooks; run it from cron or systemd."""
    from .sending import send_due  # the LTI library, which a server's workers load only if used

    while True:
        done = send_due()
        if done.sent or done.retrying or done.failed:
            _log(f"lti scores: {done.sent} sent, {done.retrying} to retry, {done.failed} failed")
        click.echo(
            f"Sent {done.sent} score{'s' if done.sent != 1 else ''}; {done.retrying} waiting to "
            f"retry; {done.failed} failed; {done.held} held until feedback is released."
        )
        for name in sorted(done.down):
            click.echo(f"{name} did not answer; its scores wait for the next try.", err=True)
        if not loop:
            return
        time.sleep(every)
