"""The question bank: questions.json loaded, validated and frozen, with a version per quiz."""

import hashlib
import html
import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from pathlib import Path
from random import Random

from .question_types import DEFAULT, TYPES, Question

SCHEMA_PATH = Path(__file__).with_name("questions.schema.json")
# JSON Schema's type names, and Python's parsed JSON types, as a question writer says them.
TYPE_WORDS = {
    "object": "an object",
    "array": "a list",
    "string": "a string",
    "boolean": "true or false",
    "integer": "a whole number",
    "number": "a number",
    "null": "null",
}
# What `flask quiz import --allow-gaps` writes where the source had nothing: never served.
PLACEHOLDER = "TO WRITE:"
PLACEHOLDER_URL = "https://to-write.invalid/"
UNFILLED = "still a placeholder from `flask quiz import --allow-gaps`: write it"
MOST_QUESTIONS, MOST_CHOICES, MOST_SOURCES, MOST_CHARACTERS = 500, 20, 20, 20000
"""What the bank holds of a quiz, a question's choices and sources, and a text
(questions.schema.json says the same), so that every page stays usable."""
PARSED_TYPES = {
    dict: "object", list: "array", str: "string", bool: "boolean",
    int: "integer", float: "number", type(None): "null",
}  # fmt: skip


class BankError(Exception):
    """A question bank that cannot be used; `errors` holds every problem, each located."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Pool:
    """A named group of a quiz's questions, from which each attempt is asked `draw` at random."""

    name: str
    draw: int


@dataclass(frozen=True)
class Quiz:
    slug: str
    title: str
    description: str
    shuffle_choices: bool
    questions: tuple[Question, ...]
    version: str
    """SHA-256 of the quiz's canonical JSON: any edit makes a new version."""
    snapshot: str
    """The canonical JSON itself, stored with attempts so they can be shown again after edits."""
    shuffle_questions: bool = False
    """Whether each attempt asks the questions in an order of its own."""
    pools: tuple[Pool, ...] = ()

    @cached_property
    def _asked(self) -> list[Question]:
        """The questions one attempt is asked, as many from each pool as it draws: the first
        of each pool stand for them all, as a pool's questions are worth the same."""
        draws = {pool.name: pool.draw for pool in self.pools}
        taken: Counter[str] = Counter()
        asked = []
        # An attempt's own quiz, its draw made (attempts.service.quiz_of), lists no pools.
        for question in self.questions:
            if question.pool in draws:
                if taken[question.pool] == draws[question.pool]:
                    continue
                taken[question.pool] += 1
            asked.append(question)
        return asked

    @property
    def asked(self) -> int:
        """How many questions one attempt is asked."""
        return len(self._asked)

    @cached_property
    def out_of(self) -> float:
        """The most an attempt can score: the points of every question it is asked."""
        return sum(question.points for question in self._asked)

    def draw(self, rng: Random) -> list[str]:
        """The ids of the questions one attempt is asked, in the quiz's order: each pool's
        draw, at random, and every question in no pool."""
        drawn = {
            question_id
            for pool in self.pools
            for question_id in rng.sample(
                [q.id for q in self.questions if q.pool == pool.name], pool.draw
            )
        }
        return [q.id for q in self.questions if q.pool is None or q.id in drawn]


@dataclass(frozen=True)
class Bank:
    quizzes: dict[str, Quiz]
    """The quizzes on offer, in the bank's order."""
    generation: int | None = None
    """The release this bank was served from; None for a file not yet published."""
    retired: dict[str, Quiz] = field(default_factory=dict)
    """Quizzes no longer offered, each as last stored: their attempts still have reports."""
    listed: frozenset[str] | None = None
    """The slugs the home page lists; None for a file, whose quizzes are all listed."""

    def listed_quizzes(self) -> list[Quiz]:
        """The quizzes on the home page, and in a class that assigns none, in the bank's order."""
        return [q for q in self.quizzes.values() if self.listed is None or q.slug in self.listed]


class RepeatedKey(Exception):
    """A JSON object names the same key twice; json.loads would silently keep the last."""


def _refuse_repeated_keys(pairs: list[tuple]) -> dict:
    keys = Counter(key for key, _ in pairs)
    for key, count in keys.items():
        if count > 1:
            raise RepeatedKey(key)
    return dict(pairs)


@cache
def schema_checker(schema: Path):
    """A JSON Schema validator for `schema`. jsonschema is imported here, by what checks files
    (the command line, authoring), so that a worker serving students never loads its 3 MB."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(schema.read_text()))


def load_bank(path: str | Path) -> Bank:
    """Read and validate a question bank file; raise BankError listing every problem."""
    name = str(path)
    try:
        content = Path(path).read_bytes()
    except OSError as error:
        raise BankError([f"{name}: cannot be read: {error.strerror}"]) from None
    return _bank_from(name, content)


@lru_cache(maxsize=8)
def _bank_from(name: str, content: bytes) -> Bank:
    """The bank these bytes hold; a Bank is frozen, so the same file read again (every new
    worker, every reload) is validated once."""
    try:
        data = json.loads(content, object_pairs_hook=_refuse_repeated_keys)
        errors = [f"{name}: {problem}" for problem in problems(data)]
    except RepeatedKey as error:
        raise BankError([f'{name}: the key "{error}" appears twice in one object']) from None
    except UnicodeDecodeError as error:
        raise BankError([f"{name}: not UTF-8 text: {error.reason}"]) from None
    except json.JSONDecodeError as error:
        raise BankError(
            [f"{name}: not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"]
        ) from None
    except ValueError as error:  # a number too long for Python to convert
        raise BankError([f"{name}: not usable JSON: {error}"]) from None
    except RecursionError:
        raise BankError([f"{name}: nested too deeply to be a question bank"]) from None
    if errors:
        raise BankError(errors)
    quizzes = [build_quiz(quiz) for quiz in data["quizzes"]]
    return Bank({quiz.slug: quiz for quiz in quizzes})


GAPS = frozenset({"explanation", "references"})
"""What a quiz published from the browser may lack: students then read the feedback written."""


def problems(data, gaps_allowed: bool = False) -> list[str]:
    """Every schema violation and duplicate id in a parsed bank, each naming where it is; with
    `gaps_allowed`, a missing explanation or source is none."""
    errors = sorted(schema_checker(SCHEMA_PATH).iter_errors(data), key=_document_order)
    if gaps_allowed:
        errors = [error for error in errors if not _a_gap(error)]
    found = [_describe(error, data) for error in errors]
    # jsonschema reports each missing key separately, and each report names them all.
    unique = list(dict.fromkeys(problem for batch in found for problem in batch))
    halves = [
        _locate(path, data, "contains half a surrogate pair (\\ud800 to \\udfff)")
        for path in _not_unicode(data)
    ]
    controls = [
        _locate(path, data, f"contains {_named(codes)}, which no page shows: remove it")
        for path, codes in _control_characters(data)
        if path  # a document that is one string is refused for not being an object
    ]
    unfilled = [_locate(path, data, UNFILLED) for path in _placeholders(data)]
    unsaid = [_locate(path, data, UNSAID) for path in _unsaid_pictures(data)]
    crowded = [
        _locate(path, data, f"shows {count} pictures; a question shows at most {MOST_PICTURES}")
        for path, count in _crowded(data)
    ]
    return (
        unique + _duplicates(data) + _pooled(data) + _typed(data) + halves + controls + unfilled
        + unsaid + crowded
    )  # fmt: skip


def _typed(data) -> list[str]:
    """What each question's type finds wrong that the schema cannot say (select-all shares)."""
    found = []
    quizzes = data.get("quizzes") if isinstance(data, dict) else None
    for q, quiz in enumerate(quizzes if isinstance(quizzes, list) else []):
        questions = quiz.get("questions") if isinstance(quiz, dict) else None
        for n, question in enumerate(questions if isinstance(questions, list) else []):
            name = question.get("type", DEFAULT) if isinstance(question, dict) else None
            kind = TYPES.get(name) if isinstance(name, str) else None
            for path, words in kind.problems(question) if kind else ():
                found.append(_locate(["quizzes", q, "questions", n, *path], data, words))
    return found


def _a_gap(error) -> bool:
    """A schema error that only says an explanation or source is missing."""
    if error.validator == "required":
        missing = {key for key in error.validator_value if key not in error.instance}
        return bool(missing) and missing <= GAPS
    return error.validator == "minItems" and list(error.absolute_path)[-1:] == ["references"]


def build_quiz(data: dict) -> Quiz:
    """Freeze one validated quiz into dataclasses."""
    snapshot = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return Quiz(
        slug=data["slug"],
        title=data["title"],
        description=data["description"],
        shuffle_choices=data.get("shuffle_choices", False),
        shuffle_questions=data.get("shuffle_questions", False),
        pools=tuple(Pool(**pool) for pool in data.get("pools", ())),
        questions=tuple(
            TYPES[question.get("type", DEFAULT)].build(question) for question in data["questions"]
        ),
        version=hashlib.sha256(snapshot.encode()).hexdigest(),
        snapshot=snapshot,
    )


@lru_cache(maxsize=64)
def quiz_from_snapshot(snapshot: str) -> Quiz:
    """Rebuild the quiz an old attempt was answered against."""
    return build_quiz(json.loads(snapshot))


def _document_order(error) -> list:
    # Indexes compare as numbers, so question 10 comes after question 2.
    return [(type(key).__name__, key) for key in error.path]


def _where(path: list, data) -> tuple[str, str | None]:
    """Name the quiz and question a JSON path points into, and the field within."""
    place, node, rest = [], data, list(path)
    for kind, key in (("quiz", "slug"), ("question", "id")):
        container = "quizzes" if kind == "quiz" else "questions"
        # Only a list holds numbered quizzes or questions; a mistyped one is reported as a field.
        if len(rest) < 2 or rest[0] != container or not isinstance(rest[1], int):
            break
        index = rest[1]
        node = node[container][index]
        label = node.get(key) if isinstance(node, dict) else None
        named = isinstance(label, str) and label
        place.append(f'{kind} "{label}"' if named else f"{kind} #{index + 1}")
        rest = rest[2:]
    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in rest)
    # None when the path ends at a quiz or question; "" names a key that is empty.
    return ", ".join(place), field.removeprefix(".") if rest else None


def _locate(path: list, data, message: str) -> str:
    place, field = _where(path, data)
    parts = [part for part in (place, f'field "{field}"' if field is not None else "") if part]
    return f"{', '.join(parts)}: {message}" if parts else message


def _describe(error, data) -> list[str]:
    """Turn one schema error into messages a question writer can act on."""
    path, instance = list(error.absolute_path), error.instance
    match error.validator:
        case "required":
            missing = [key for key in error.validator_value if key not in instance]
            return [_locate([*path, key], data, "missing") for key in missing]
        case "additionalProperties":
            known = error.schema.get("properties", {})
            return [
                _locate([*path, key], data, "unknown field")
                for key in sorted(instance)
                if key not in known
            ]
        case "type":
            expected = TYPE_WORDS[error.validator_value]
            got = TYPE_WORDS[PARSED_TYPES[type(instance)]]
            return [_locate(path, data, f"expected {expected}, got {got}")]
        case "contains" if path and path[-1] == "answers":
            return [_locate(path, data, "needs an answer that earns full marks (a fraction of 1)")]
        case "contains" | "minContains" | "maxContains":
            count = sum(isinstance(c, dict) and c.get("correct") is True for c in instance)
            wanted = "exactly one" if error.schema.get("maxContains") == 1 else "at least one"
            return [_locate(path, data, f"needs {wanted} correct choice, has {count}")]
        case "enum" if path and path[-1] == "type":
            known = ", ".join(error.validator_value)
            return [
                _locate(path, data, f"{instance!r} is not a question type here: use one of {known}")
            ]
        case "pattern" if path and path[-1] == "url":
            return [_locate(path, data, "must be an https:// address")]
        case "maxLength":
            return [_locate(path, data, f"must be at most {error.validator_value} characters")]
        case "pattern" | "minLength" if isinstance(instance, str) and not instance.strip():
            return [_locate(path, data, "must not be empty")]
        case "maxItems":
            count = error.validator_value
            return [_locate(path, data, f"has {len(instance)}; at most {count} are allowed")]
        case "minItems":
            count = error.validator_value
            return [_locate(path, data, f"needs at least {plural(count, 'entry', 'entries')}")]
        case "pattern":
            hint = error.schema.get("description", f"must match {error.validator_value}")
            return [_locate(path, data, f"{instance!r} is not allowed: {hint}")]
        case _:
            return [_locate(path, data, error.message)]


def _not_unicode(data, path=()) -> list[str]:
    """Text with half a surrogate pair ("\\ud800"): valid JSON, but no database can store it."""
    if isinstance(data, str):
        try:
            data.encode()
        except UnicodeEncodeError:
            return [list(path)]
        return []
    if isinstance(data, dict | list):
        children = data.items() if isinstance(data, dict) else enumerate(data)
        return [where for key, value in children for where in _not_unicode(value, (*path, key))]
    return []


# Tabs and line breaks (a Windows editor's CR LF too) lay out text; other control characters
# (NUL, BEL, ESC...) come from damaged or hostile files, and PostgreSQL cannot even store NUL.
_LAYOUT = "\t\n\r"


def _control_characters(data, path=()) -> list[tuple[list, list[str]]]:
    """Where text holds control characters other than tab and line breaks, and which ones."""
    if isinstance(data, str):
        found = sorted(
            {char for char in data if unicodedata.category(char) == "Cc" and char not in _LAYOUT}
        )
        return [(list(path), found)] if found else []
    if isinstance(data, dict | list):
        children = data.items() if isinstance(data, dict) else enumerate(data)
        return [
            where for key, value in children for where in _control_characters(value, (*path, key))
        ]
    return []


def _named(chars: list[str]) -> str:
    codes = ", ".join(f"U+{ord(char):04X}" for char in chars)
    return f"the control character{'s' if len(chars) > 1 else ''} {codes}"


UNSAID = (
    "shows a picture without words for what it shows: write them between ![ and ], for those "
    "who cannot see it"
)
_PICTURE_WORDS = re.compile(r"!\[((?:\\.|[^\]\\])*)\]\(")
MOST_PICTURES = 10
"""The pictures one question may show: a phone loads the page in time."""


def says_nothing(words: str) -> bool:
    """Words with no letter or digit: spaces, zero-width characters, entities for them."""
    said = html.unescape(words)
    return not any(unicodedata.category(char)[0] in "LN" for char in said)


def _unsaid_pictures(data, path=()) -> list[list]:
    """Where quiz text shows a picture whose words say nothing."""
    if isinstance(data, str):
        found = _PICTURE_WORDS.findall(data) if "![" in data else []
        return [list(path)] if any(says_nothing(words) for words in found) else []
    if isinstance(data, dict | list):
        children = data.items() if isinstance(data, dict) else enumerate(data)
        return [where for key, value in children for where in _unsaid_pictures(value, (*path, key))]
    return []


def _crowded(data) -> list[tuple[list, int]]:
    """Questions that show more pictures than one may, however their addresses are written."""
    found = []
    quizzes = data.get("quizzes") if isinstance(data, dict) else None
    for q, quiz in enumerate(quizzes if isinstance(quizzes, list) else []):
        questions = quiz.get("questions") if isinstance(quiz, dict) else None
        for n, question in enumerate(questions if isinstance(questions, list) else []):
            count = json.dumps(question).count("/images/")
            if count > MOST_PICTURES:
                found.append((["quizzes", q, "questions", n], count))
    return found


def _placeholders(data, path=()) -> list[list]:
    """Where an import left text for the author to write, so an unfinished quiz is never served."""
    if isinstance(data, str):
        return [list(path)] if data.startswith((PLACEHOLDER, PLACEHOLDER_URL)) else []
    if isinstance(data, dict | list):
        children = data.items() if isinstance(data, dict) else enumerate(data)
        return [where for key, value in children for where in _placeholders(value, (*path, key))]
    return []


def _duplicates(data) -> list[str]:
    """Ids that must be unique but are not: quiz slugs, question ids in a quiz, choice ids."""

    def listed(node, key):
        value = node.get(key) if isinstance(node, dict) else None
        return value if isinstance(value, list) else []

    def repeats(path, items, key, kind):
        seen = set()
        for index, item in enumerate(items):
            value = item.get(key) if isinstance(item, dict) else None
            if not isinstance(value, str):
                continue  # missing or not text: the schema reports it, and a list is unhashable
            if value in seen:
                yield _locate([*path, index, key], data, f'"{value}" is used by another {kind}')
            seen.add(value)

    quizzes = listed(data, "quizzes")
    found = list(repeats(["quizzes"], quizzes, "slug", "quiz"))
    for q, quiz in enumerate(quizzes):
        questions = listed(quiz, "questions")
        found += repeats(["quizzes", q, "questions"], questions, "id", "question")
        found += repeats(["quizzes", q, "pools"], listed(quiz, "pools"), "name", "pool")
        for n, question in enumerate(questions):
            choices = listed(question, "choices")
            found += repeats(["quizzes", q, "questions", n, "choices"], choices, "id", "choice")
    return found


def _pooled(data) -> list[str]:
    """What the schema cannot say of a quiz's pools: a question names a pool the quiz does not
    list, a pool draws more questions than it has, or its questions are worth different points
    (every draw must be worth the same)."""
    found = []
    quizzes = data.get("quizzes") if isinstance(data, dict) else None
    for q, quiz in enumerate(quizzes if isinstance(quizzes, list) else []):
        if not isinstance(quiz, dict):
            continue
        listed = quiz.get("pools")
        pools = [p for p in listed if isinstance(p, dict)] if isinstance(listed, list) else []
        questions = quiz.get("questions")
        members: dict[str, list[int]] = {p["name"]: [] for p in pools if _has_name(p)}
        for n, question in enumerate(questions if isinstance(questions, list) else []):
            pool = question.get("pool") if isinstance(question, dict) else None
            if not isinstance(pool, str):
                continue
            if pool not in members:
                words = f'names the pool "{pool}", which the quiz\'s pools do not list'
                found.append(_locate(["quizzes", q, "questions", n, "pool"], data, words))
                continue
            members[pool].append(n)
        for i, pool in enumerate(pools):
            mine = members.get(pool["name"], []) if _has_name(pool) else []
            draw = pool.get("draw")
            if isinstance(draw, int) and draw > len(mine):
                have = plural(len(mine), "question names", "questions name")
                named = f'the pool "{pool["name"]}"' if _has_name(pool) else "the pool"
                words = f"{named} draws {draw} questions, but {have} it"
                found.append(_locate(["quizzes", q, "pools", i, "draw"], data, words))
            if len({_points(questions[n]) for n in mine}) > 1:
                words = (f'the pool "{pool["name"]}" has questions worth different points: give '
                         "every question of a pool the same points, so that every draw is worth "
                         "the same")  # fmt: skip
                found.append(_locate(["quizzes", q, "pools", i], data, words))
    return found


def _has_name(pool: dict) -> bool:
    return isinstance(pool.get("name"), str)


def _points(question: dict):
    points = question.get("points", 1)
    return points if isinstance(points, int | float) else None


def plural(count: int, one: str, many: str) -> str:
    """ "1 quiz", "2 quizzes"."""
    return f"{count} {one if count == 1 else many}"
