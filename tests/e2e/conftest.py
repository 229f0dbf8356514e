"""The browser layer: the real app under gunicorn, driven in Debian's Chromium by Playwright."""

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from app.auth import create_instructor
from app.bank import load_bank
from app.config import PROJECT_ROOT

from helpers import SLUG, gunicorn, make_app

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# No sandbox as root in CI; no calls home, which this machine's closed network would refuse.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TEACHER = ("teacher", "correct horse")
NEWCOMER = ("newcomer", "correct horse")
"""An instructor who never saves a time zone: their pages follow their browser's."""
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 667}


def fits(page, viewport=PHONE):
    """The page is no wider than the screen: nothing scrolls sideways."""
    # After a click the page's text can show before its stylesheet has loaded: measure the page
    # as styled, or an unstyled line of code is measured at its full width.
    page.wait_for_load_state()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"{page.url} is {width}px wide"


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items):
    """The browser tests run once, on SQLite (the browser layer is not about the database), on
    one xdist worker: one browser and one server serve them, in the order they are written, as
    the tests that share the server's quiz expect."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.xdist_group("browser"))
            item.add_marker(pytest.mark.any_database)


@pytest.fixture(scope="session")
def chromium():
    """Debian's Chromium, launched by Playwright; no browser is ever downloaded."""
    if not os.path.exists(CHROMIUM):
        message = "Browser tests need Chromium: sudo apt-get install chromium"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """The app under gunicorn on a fresh database, with one instructor; yields its base URL."""
    folder = tmp_path_factory.mktemp("e2e")
    # Its own SQLite file even on a PostgreSQL run: the per-test schema reset must not empty
    # a server that lives for the whole session, and the browser layer is not about the database.
    url = f"sqlite:///{folder / 'e2e.db'}"
    app = make_app(folder, SQLALCHEMY_DATABASE_URI=url, SQLALCHEMY_ENGINE_OPTIONS={})
    with app.app_context():
        create_instructor(*TEACHER)
        create_instructor(*NEWCOMER)
    with gunicorn(folder, workers=2, DATABASE_URL=url) as running:
        yield running.url


@pytest.fixture
def browse(chromium, server):
    """Open a fresh browser context (its own cookies) at some viewport; closed after the test."""
    contexts = []

    def open_page(viewport=DESKTOP, **options):
        context = chromium.new_context(viewport=viewport, base_url=server, **options)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture(scope="session")
def quiz():
    """The quiz the server serves, to know which choice is right."""
    return load_bank(PROJECT_ROOT / "questions.json").quizzes[SLUG]
