"""What a draft lacks of what makes a Quizwright quiz: an explanation for every choice and
question, and a source for every question."""

from dataclasses import dataclass

from ..bank import plural


@dataclass(frozen=True)
class Gap:
    """Something one question lacks, in words, and the field of the question editor to mend it."""

    question_id: str
    words: str
    field: str


def gaps(draft: dict) -> list[Gap]:
    """Every question's gaps, in the quiz's order."""
    found = []
    for question in draft.get("questions", []):
        qid = question.get("id", "")
        unexplained = [
            n for n, c in enumerate(question.get("choices", [])) if not c.get("explanation")
        ]
        if unexplained:
            words = plural(len(unexplained), "choice", "choices") + " without an explanation"
            found.append(Gap(qid, words, f"choices-{unexplained[0]}-explanation"))
        unsaid = [said for said in ("if_true", "if_false") if not question.get(said)]
        if question.get("type") == "true_false" and unsaid:
            words = plural(len(unsaid), "answer", "answers") + " without what it says"
            found.append(Gap(qid, words, unsaid[0]))
        unsaid = [n for n, a in enumerate(question.get("answers", [])) if not a.get("feedback")]
        if unsaid:
            words = plural(len(unsaid), "answer", "answers") + " without feedback"
            found.append(Gap(qid, words, f"answers-{unsaid[0]}-feedback"))
        if "answers" in question and not question.get("otherwise"):
            found.append(Gap(qid, "nothing said to other answers", "otherwise"))
        if not question.get("explanation"):
            found.append(Gap(qid, "no general explanation", "explanation"))
        if not question.get("references"):
            found.append(Gap(qid, "no source", "sources-0-title"))
    return found
