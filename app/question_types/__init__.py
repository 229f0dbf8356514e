"""Question types, each as one class registered under the name a bank's "type" gives it.

Everything that depends on what a question asks goes through its type: the bank builds
questions with it, the answer page draws and reads its form, grading and the stored answer use
its verdict, and the class report and exports count with its tally, as CTFd's challenge
classes and Moodle's question/type/<name>/ folders do. A question with no "type" is
single_choice.
"""

from .base import Choice, Feedback, Question, QuestionType, Reference, Tally
from .multiple_answers import MultipleAnswers
from .numerical import Numerical
from .short_answer import ShortAnswer
from .single_choice import SingleChoice, right_choice
from .true_false import TrueFalse

TYPES: dict[str, QuestionType] = {
    kind.name: kind
    for kind in (SingleChoice(), TrueFalse(), MultipleAnswers(), Numerical(), ShortAnswer())
}
"""Every question type, by name; a new type is one module here and one entry."""
DEFAULT = SingleChoice.name

__all__ = [
    "DEFAULT", "TYPES", "Choice", "Feedback", "Question", "QuestionType", "Reference", "Tally",
    "right_choice", "type_of",
]  # fmt: skip


def type_of(question: Question) -> QuestionType:
    """The type that builds, grades and counts this question."""
    return TYPES[question.type]
