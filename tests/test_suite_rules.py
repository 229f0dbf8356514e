"""The suite's own rule: a test whose app runs SQL says which database its outcome depends on."""

from pathlib import Path

TESTS = Path(__file__).parent

CONFTEST = f"""
import importlib.util, sys
sys.path.insert(0, {str(TESTS)!r})
spec = importlib.util.spec_from_file_location("suite_conftest", {str(TESTS / "conftest.py")!r})
suite = importlib.util.module_from_spec(spec)
spec.loader.exec_module(suite)
globals().update({{name: value for name, value in vars(suite).items() if not name[0] == "_"}})
"""

CASES = """
import pytest
from helpers import make_app

def test_unmarked(tmp_path):
    make_app(tmp_path).test_client().get("/")

@pytest.mark.any_database
def test_marked(tmp_path):
    make_app(tmp_path).test_client().get("/")

def test_pure():
    assert True
"""


def test_a_test_running_sql_without_a_database_mark_fails(pytester, monkeypatch):
    """The unmarked test that queried fails with the rule; the marked and the pure ones pass."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_cases=CASES)
    monkeypatch.delenv("TEST_DATABASE_URL", raising=False)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        ["*ERROR at teardown of test_unmarked*", "*marked neither `postgres` nor `any_database`*"]
    )


def test_a_hanging_test_fails_instead_of_holding_ci(pytester):
    """The suite's own timeout ends a test that never returns, and the run goes on to the next."""
    timeout = pytester.parseconfig(TESTS.parent).getini("timeout")
    assert 0 < float(timeout) <= 600, "CI has 90 minutes: a hang must fail within 10"
    pytester.makepyfile(
        test_hang="import time\n\ndef test_hangs():\n    time.sleep(60)\n\n"
        "def test_after():\n    assert True\n"
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "-o", "timeout=1"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*Timeout*"])
