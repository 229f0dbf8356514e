"""The shape of the code: no module of app/ imports, however indirectly, one that imports it."""

import graphlib
import re

import grimp
import pytest

from app.config import PROJECT_ROOT


def import_graph(package: str) -> dict[str, set[str]]:
    """Each module of the package and the package's modules that importing it runs, in any
    function too.

    Importing `app.roster.store` from outside runs `app/roster/__init__.py` first, so that edge
    counts; a package's own modules find it running already, so theirs counts only when they
    import the package itself."""
    graph = grimp.build_graph(package, cache_dir=None)
    edges: dict[str, set[str]] = {module: set() for module in graph.modules}
    for importer in graph.modules:
        own = {".".join(importer.split(".")[:n]) for n in range(1, importer.count(".") + 2)}
        for imported in graph.find_modules_directly_imported_by(importer):
            parts = imported.split(".")
            runs = {".".join(parts[:n]) for n in range(1, len(parts))}
            edges[importer] |= {imported} | (runs - own)
    return edges


def test_app_has_no_import_cycles():
    try:
        order = list(graphlib.TopologicalSorter(import_graph("app")).static_order())
    except graphlib.CycleError as error:
        pytest.fail("An import cycle: " + " -> ".join(error.args[1]))
    assert "app.models" in order


def test_a_cycle_through_a_package_front_door_is_found(tmp_path, monkeypatch):
    """`a` imports a module of `b`, whose front door imports a module that imports `a`."""
    package = tmp_path / "loop"
    (package / "b").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def z():\n    from .b.store import x\n")
    (package / "b" / "__init__.py").write_text("from .signin import y\n")
    (package / "b" / "store.py").write_text("x = 1\n")
    (package / "b" / "signin.py").write_text("from ..a import z\ny = 2\n")
    monkeypatch.syspath_prepend(tmp_path)
    with pytest.raises(graphlib.CycleError):
        graphlib.TopologicalSorter(import_graph("loop")).prepare()
    (package / "b" / "signin.py").write_text("y = 2\n")
    graphlib.TopologicalSorter(import_graph("loop")).prepare()


SERVICES = (
    "app/bank.py", "app/grading.py", "app/question_types", "app/attempts/service.py",
    "app/attempts/policy.py", "app/roster/store.py",
)  # fmt: skip


def test_services_leave_pages_to_the_views():
    """The bank, grading, the question types and the stores answer with values or None; a
    404 page, the running app and the request's g are the views' (attempts/lookup.py)."""
    pages = re.compile(r"^from flask import .*\b(abort|current_app|g|request)\b", re.M)
    for folder in SERVICES:
        path = PROJECT_ROOT / folder
        for module in [path] if path.is_file() else sorted(path.glob("*.py")):
            assert not pages.search(module.read_text()), module
