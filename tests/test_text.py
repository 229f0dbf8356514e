"""Quiz text (app/text.py): Markdown in a safe subset, plain text that stays as written, and
imported HTML kept in the same subset."""

import re

import pytest

from app.bank import load_bank
from app.config import PROJECT_ROOT
from app.formats import gift
from app.text import from_html, from_plain, phrase, plain, prompt_parts, rich

SEED = load_bank(PROJECT_ROOT / "questions.json").quizzes["gradient-checkpointing"]
LINK = '<a href="https://example.org/a" rel="noopener noreferrer">'


def test_the_subset_renders_and_links_open_without_a_referer():
    """Emphasis, code, links and line breaks in a phrase; paragraphs, lists and code blocks in
    an explanation too."""
    assert phrase("*a* **b** `c`\n[d](https://example.org/a)") == (
        f"<em>a</em> <strong>b</strong> <code>c</code><br>\n{LINK}d</a>"
    )
    assert rich("One.\n\n- two\n- three\n\n```\nfour\n```") == (
        "<p>One.</p>\n<ul>\n<li>two</li>\n<li>three</li>\n</ul>\n<pre><code>four\n</code></pre>"
    )
    assert phrase("<https://example.org/a>") == f"{LINK}https://example.org/a</a>"


@pytest.mark.parametrize(
    "source",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "[x](javascript:alert(1))",
        "[x](JAVASCRIPT:alert(1))",
        "[x](data:text/html,<script>alert(1)</script>)",
        "[x](vbscript:msgbox(1))",
        "<javascript:alert(1)>",
        "![x](https://example.org/tracker.png)",
        '<a href="https://example.org" onclick="alert(1)">x</a>',
        "<style>*{display:none}</style>",
    ],
)
def test_nothing_in_quiz_text_runs(source):
    """Raw HTML shows as typed; script, data and vbscript links, images and handlers never
    become elements."""
    for shown in (rich(source), phrase(source)):
        for tag, attributes in re.findall(r"<(\w+)([^>]*)>", shown):
            assert tag in {"p", "a"}, shown
            # An image's Markdown is a link to it at most: nothing loads with the page.
            assert not attributes or re.fullmatch(
                r' href="https://example\.org[^"]*" rel="noopener noreferrer"', attributes
            )


def test_headings_rules_and_programming_types_stay_text():
    """What the subset leaves out shows as typed, so plain text keeps its meaning."""
    for source in ("# 1 is the answer", "List<String> and <T>", "---", "> not a quote"):
        assert plain(source) == source
        assert rich(source).startswith("<p>")


def test_a_phrase_stands_in_a_heading_or_label_without_blocks():
    """A prompt with paragraphs or a list still makes phrasing content: no <p>, <ul> or <pre>."""
    shown = phrase("First.\n\n- one\n- two\n\n```\ncode\n```")
    assert not any(tag in shown for tag in ("<p>", "<ul>", "<pre>"))
    assert "one" in shown and "code" in shown


def test_a_prompt_keeps_the_code_after_its_question():
    """The first paragraph stands in the heading; a code block or list after it shows beneath,
    as a block; a prompt of one paragraph is all heading."""
    assert prompt_parts("What does this print?\n\n```\nprint(1)\n```") == (
        "What does this print?", "<pre><code>print(1)\n</code></pre>"
    )
    assert prompt_parts("One *line*\nand two") == ("One <em>line</em><br>\nand two", "")


@pytest.mark.parametrize(
    "text",
    [
        "plain words",
        "2*3*4 and _x_ [y] `z`",
        "- not a list\n1. not a list either",
        "a & b &amp; c &lt; d",
        "C:\\path\\to\\file",
        "Sources: Chen https://arxiv.org/abs/1604.06174; see https://example.org/a_b_c*",
        "**stars** and __underscores__ !",
    ],
)
def test_plain_text_as_markdown_shows_exactly_what_was_written(text):
    """Imported plain text is escaped only where Markdown would misread it."""
    markdown = from_plain(text)
    if text == "plain words":
        assert markdown == text  # untouched when nothing needs it
    assert plain(markdown) == " ".join(text.split())
    assert "<em>" not in rich(markdown) and "<strong>" not in rich(markdown)
    assert "<li>" not in rich(markdown)


def test_every_text_of_the_seed_quiz_reads_as_written():
    """Markdown changes nothing the Gradient Checkpointing Quiz says."""
    for question in SEED.questions:
        texts = [question.prompt, question.explanation]
        texts += [t for c in question.choices for t in (c.text, c.explanation)]
        for text in texts:
            assert from_plain(text) == text
            assert plain(text) == " ".join(text.split())


def test_imported_html_keeps_the_subset_and_drops_the_rest():
    """Bold, italics, code, lists and links stay; scripts, handlers, script links, images and
    unknown elements keep only their words; headings read as bold."""
    markdown = from_html(
        '<h3>Head</h3><p>See <a href="https://example.org/a" onclick="x()">the <b>paper</b></a>'
        " and <i>this</i>, <code>a*b</code>.<br>Next line.</p><ul><li>one</li><li>two</li></ul>"
        '<script>alert(1)</script><a href="javascript:alert(1)">js</a><img src="x.png" alt="y">'
        "<font color=red>red</font> 2*3*4&nbsp;kg"
    )
    assert markdown == (
        "**Head**\n\nSee [the **paper**](https://example.org/a) and *this*, `a*b`.\nNext line."
        "\n\n- one\n- two\n\njsyred 2\\*3\\*4 kg"
    )
    assert "2*3*4 kg" in plain(markdown)


def test_a_gift_link_shows_as_a_link_titled_by_its_text():
    """A lecturer's <a href> in GIFT shows students the link, and its source is titled by the
    link's words, not by its address."""
    data = (
        '::q:: Read <a href\\="https://example.org/a">the chapter</a> first. Which? '
        '{=Yes #Right ~No #Wrong\n####Read <a href\\="https://example.org/a">Chapter 2</a>.}\n'
    )
    [question] = gift.parse(data.encode(), "t.gift").questions
    assert phrase(question.prompt) == f"Read {LINK}the chapter</a> first. Which?"
    assert rich(question.explanation) == f"<p>Read {LINK}Chapter 2</a>.</p>"
    assert [(r.title, r.url) for r in question.references] == [
        ("Chapter 2", "https://example.org/a")
    ]


def test_links_keep_only_an_address_of_another_site():
    """No title or other attribute; an address of this site written without "//" is refused."""
    assert phrase('[x](https://example.org/a "t")') == f"{LINK}x</a>"
    for own in ("[x](https:/logout)", "[x](https:logout)", "[x](/logout)"):
        assert phrase(own) == '<a rel="noopener noreferrer">x</a>'


def test_an_imported_link_stays_whole_whatever_its_address_and_words_hold():
    """Parentheses and spaces in an address, brackets in a link's words: one link still."""
    assert phrase(from_html('<a href="https://example.org/a_(b) c">x [1]</a>')) == (
        '<a href="https://example.org/a_%28b%29%20c" rel="noopener noreferrer">x [1]</a>'
    )


def test_html_nested_past_any_converter_imports_as_its_words():
    """A lecturer's HTML of hundreds of unclosed <p> or <b> is read, not a crash."""
    data = ("::q:: [html]" + "<p>a" * 400 + "? {=Yes #Right ~No #Wrong}\n").encode()
    [question] = gift.parse(data, "t.gift").questions
    assert plain(question.prompt) == " ".join(["a"] * 400) + "?"
