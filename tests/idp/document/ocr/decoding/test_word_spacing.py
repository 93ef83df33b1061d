"""Word spaces the recognizer saw: CTC output decoded with them (idp.document.ocr.decoding).

The decoder tests build a text line's CTC output column by column, as the recognition model
emits it (one column per 8 px of the line image, each a probability per class). The engine tests
read the demo letter and a Chinese page with real PP-OCRv5 on the offline weights, on both
inference backends the engine can run.

samples/chinese-lines.png: two lines set in Droid Sans Fallback (Debian fonts-droid-fallback,
Apache-2.0), the second with 7 px between characters, where the model gives p(space) up to 0.45
between characters it does not separate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from paddlex.inference.models.text_recognition.processors import CTCLabelDecode

from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.document.decode import PageImage
from idp.document.ocr.decoding.ctc import SpaceAwareCtcDecode
from idp.document.ocr.models.cache import ModelCache
from idp.document.ocr.models.catalogue import base_recognition_model_name, detection_model_name
from idp.document.ocr.models.onnx_export import export_onnx
from idp.document.ocr.paddle.engines import build_ocr_engine
from idp.document.ocr.pipeline import ocr_document
from idp.document.ocr.registry import EngineRegistry
from idp.document.ocr.settings import EngineSettings, InferenceBackend
from tests.paths import REPO_ROOT, SAMPLES

DEMO_LETTER = REPO_ROOT / "samples" / "sample-letter.pdf"
CHINESE_PAGE = SAMPLES / "chinese-lines.png"

CHARACTERS = [
    *"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    *",.:/%()-—–$€+&，２□•;=",
    "中",
    "文",
]
STOCK = CTCLabelDecode(character_list=CHARACTERS)  # PaddleX's decoder: adds blank and space
BLANK, SPACE = 0, len(STOCK.character) - 1
PITCH = 3  # columns from one character to the next inside a word


def _column(cls: int, p: float) -> np.ndarray:
    column = np.full(len(STOCK.character), (1.0 - p) / (len(STOCK.character) - 1))
    column[cls] = p
    return column


def _char(ch: str) -> np.ndarray:
    return _column(STOCK.character.index(ch), 0.98)


def _blank(space: float = 0.0) -> np.ndarray:
    column = _column(BLANK, 0.99 - space)
    column[SPACE] = space
    return column


def ctc_line(*words: str, space: float, gap: int = 1, pitch: int = PITCH) -> np.ndarray:
    """One line's CTC output: one column per character, `pitch` columns apart inside a word and
    `pitch` + `gap` between words, blank columns between; the blank column before each word but
    the first carries p(space) = `space`, as the model gives it at a word gap."""
    columns = [_blank() for _ in range(sum(len(word) for word in words) * (pitch + gap) * 2)]
    column = 1
    for number, word in enumerate(words):
        if number:
            column += gap
            columns[column - 1] = _blank(space)
        for ch in word:
            columns[column] = _char(ch)
            column += pitch
    return np.stack(columns[:column])


def with_dash_evidence(line: np.ndarray, first_word: str, **dashes: float) -> np.ndarray:
    """`line` (from ctc_line, gap 1) with the blank column after `first_word` giving the dash
    classes weight: keywords em (—) and hyphen (-)."""
    column = _blank()
    column[STOCK.character.index("—")] = dashes.get("em", 0.0)
    column[STOCK.character.index("-")] = dashes.get("hyphen", 0.0)
    column[BLANK] = 1.0 - column.sum() + column[BLANK]
    changed = line.copy()
    changed[1 + len(first_word) * PITCH] = column
    return changed


def line_at(characters: str, columns: list[int], blanks: dict[int, float]) -> np.ndarray:
    """One line's CTC output with each of `characters` emitted at its column of `columns` (a
    space there is one the model wrote, p 0.9) and blank columns between, those in `blanks`
    with that p(space)."""
    line = [_blank(blanks.get(column, 0.0)) for column in range(columns[-1] + 2)]
    for ch, column in zip(characters, columns, strict=True):
        line[column] = _column(SPACE, 0.9) if ch == " " else _char(ch)
    return np.stack(line)


def decode(*lines: np.ndarray, **kwargs: Any) -> list[Any]:
    """Lines decoded in one batch, padded with blank columns as the recognizer pads them."""
    width = max(len(line) for line in lines)
    batch = np.stack([np.vstack([line, *[_blank()] * (width - len(line))]) for line in lines])
    texts, _ = SpaceAwareCtcDecode(STOCK)([batch], **kwargs)
    return texts


def test_a_word_gap_the_model_half_saw_is_read_as_a_space() -> None:
    # GIVEN "EUR including" as on the demo letter: the gap no wider than the line's pitch
    # and its space column (0.23) losing to blank (0.76)
    line = ctc_line("EUR", "including", space=0.23, gap=0)
    assert STOCK([line[None]])[0] == ["EURincluding"]

    # WHEN it is decoded THEN the space is there
    assert decode(line) == ["EUR including"]


@pytest.mark.parametrize(
    ("words", "space", "expected"),
    [
        # a gap as wide as a word gap but with p(space) at the level inside a word
        pytest.param(("EUR", "including"), 0.05, "EURincluding", id="no-evidence-stays-closed"),
        # a gap whose space column the model already reads as a space
        pytest.param(("VAT", "at"), 0.8, "VAT at", id="written-space-kept-once"),
        # Chinese is written without word spaces, whatever the evidence
        pytest.param(("中", "文"), 0.4, "中文", id="no-space-between-chinese-characters"),
        # a full stop follows the word it ends
        pytest.param(("20%", "."), 0.4, "20%.", id="no-space-before-a-full-stop"),
        pytest.param(("Street,", "London"), 0.3, "Street, London", id="space-after-a-comma"),
    ],
)
def test_a_gap_between_two_words_gets_a_space_on_its_evidence(
    words: tuple[str, str], space: float, expected: str
) -> None:
    # GIVEN two words with this p(space) in the gap between them
    line = ctc_line(*words, space=space)

    # WHEN decoded THEN the space is written, or not, as the evidence and the characters say
    assert decode(line) == [expected]


def test_no_space_is_written_inside_a_number_date_or_code() -> None:
    # GIVEN the blank a narrow "1" leaves inside a date, and a gap after a thousands comma and
    # a colon, each no wider than the line's pitch and with the space evidence of a word gap
    date = ctc_line("1", "7.03.2026", space=0.4, gap=0)
    amount = ctc_line("11,", "111.11", space=0.4, gap=0)
    time = ctc_line("9:", "00", space=0.4, gap=0)

    # WHEN decoded THEN each stays one token (the same gap between words is a space)
    assert decode(date, amount, time) == ["17.03.2026", "11,111.11", "9:00"]
    assert decode(ctc_line("EUR", "including", space=0.4, gap=0)) == ["EUR including"]


def test_a_space_the_model_wrote_inside_a_number_narrower_than_the_pitch_is_dropped() -> None:
    # GIVEN "11, 111.11": the model wrote a space where the comma and the digit after it are
    # closer than any two characters of the line
    line = ctc_line("11,", "111.11", space=0.9, gap=-1)
    assert STOCK([line[None]])[0] == ["11, 111.11"]

    # WHEN decoded THEN the number is one token
    assert decode(line) == ["11,111.11"]
    # and a line too short to have a pitch, or with nothing but a space, decodes as it is
    assert decode(ctc_line("1", "2", space=0.9)) == ["1 2"]
    assert decode(ctc_line("1", "2", space=0.9), line) == ["1 2", "11,111.11"]


def test_a_space_the_model_wrote_after_a_thousands_comma_at_the_pitch_is_dropped() -> None:
    # GIVEN a water report's "5,070" as PP-OCRv5 read it: a space written (p 0.59) in the one
    # column between the comma and "070", which stands at the line's pitch from the comma
    line = ctc_line("5,", "070", space=0.59, gap=0)
    assert STOCK([line[None]])[0] == ["5, 070"]

    # WHEN decoded THEN the number is one token
    assert decode(line) == ["5,070"]
    # while a list's space a column further, or before a group that is not a thousands one,
    # stays
    assert decode(ctc_line("5,", "070", space=0.59, gap=1)) == ["5, 070"]
    assert decode(ctc_line("5,", "07", space=0.59, gap=0)) == ["5, 07"]
    assert decode(ctc_line("5,", "0700", space=0.59, gap=0)) == ["5, 0700"]


def test_spaces_around_and_between_numbers_are_still_written() -> None:
    # GIVEN word gaps the model half saw beside numbers, and wider than the pitch between two
    lines = (
        ctc_line("invoice", "3442", space=0.3),
        ctc_line("3442", "paid", space=0.3),
        ctc_line("EUR", "1,284.50", space=0.3),
        ctc_line("NW1", "6XE", space=0.3),
        ctc_line("44", "20", space=0.3),
    )

    # WHEN decoded THEN every space is written
    assert decode(*lines) == ["invoice 3442", "3442 paid", "EUR 1,284.50", "NW1 6XE", "44 20"]
    # and a space the model wrote between two numbers, at a word gap's width, is kept
    assert decode(ctc_line("2026", "11:07", space=0.8)) == ["2026 11:07"]


def test_a_gap_inside_a_number_one_column_over_the_pitch_needs_strong_evidence() -> None:
    # GIVEN "DD Form 214." as PP-OCRv5 read a form: a blank three columns after the "2", a
    # column wider than the pitch (2), with p(space) 0.153 (above a word gap's 0.15)
    weak = ctc_line("2", "14.", space=0.153, pitch=2)

    # WHEN decoded THEN the number is one token; a space the page prints there, with the
    # evidence such spaces get (0.20 and more), is still written
    assert decode(weak) == ["214."]
    assert decode(ctc_line("44", "20", space=0.2)) == ["44 20"]


def test_a_currency_sign_or_a_plus_before_a_number_is_spaced_like_a_word() -> None:
    # GIVEN "$ 10.000,00" (a donor list's amounts) and "phone +44" with the word gap the model
    # half saw, and the same signs set tight against the number
    spaced = (
        ctc_line("$", "10.000,00", space=0.3),
        ctc_line("EUR", "€12", space=0.3),
        ctc_line("phone", "+44", space=0.3),
    )
    tight = ctc_line("$", "10,000", space=0.0)

    # WHEN decoded THEN the spaces are written, and a sign without space evidence stays on
    assert decode(*spaced) == ["$ 10.000,00", "EUR €12", "phone +44"]
    assert decode(tight) == ["$10,000"]


def test_an_ampersand_is_spaced_like_a_word_where_the_model_half_saw_the_gap() -> None:
    # GIVEN a LaTeX table's "0 & 1 &" in a monospaced font with the word gaps the model half
    # saw (read "0&1&" without the rule), and "R&D" set tight
    spaced = ctc_line("0", "&", "1", "&", space=0.3)
    tight = ctc_line("R", "&", "D", space=0.0)

    # WHEN decoded THEN the spaces are written, and the tight one stays tight
    assert decode(spaced, tight) == ["0 & 1 &", "R&D"]


def test_a_check_box_or_a_bullet_is_spaced_like_a_word_where_the_model_half_saw_the_gap() -> None:
    # GIVEN IRS Form 1040's "a □ 3800" and "□ Form(s)" (read "a □3800" and "a□Form(s)" without
    # the rule, p(space) 0.17-0.49 in those gaps), a bullet before its item, and a box set tight
    spaced = (
        ctc_line("a", "□", "3800", space=0.2),
        ctc_line("a", "□", "Form", space=0.2),
        ctc_line("•", "Item", space=0.3),
    )
    tight = ctc_line("□", "Yes", space=0.0)

    # WHEN decoded THEN the box and the bullet stand apart, and the tight box stays on
    assert decode(*spaced) == ["a □ 3800", "a □ Form", "• Item"]
    assert decode(tight) == ["□Yes"]


def test_a_fullwidth_form_on_a_latin_line_reads_as_its_ascii_character() -> None:
    # GIVEN a code listing's "(13, 5, 20" as PP-OCRv5 read it, with fullwidth commas, the word
    # gaps after them half seen; "0２4" with a fullwidth digit; and a Chinese line's own comma
    listing = ctc_line("13，", "5，", "20", space=0.3)
    digit = ctc_line("0２4", space=0.0)
    chinese = ctc_line("中文，12", space=0.0)

    # WHEN decoded
    width = max(len(listing), len(digit), len(chinese))
    batch = [
        np.vstack([line, *[_blank()] * (width - len(line))]) for line in (listing, digit, chinese)
    ]
    texts, scores = SpaceAwareCtcDecode(STOCK)([np.stack(batch)])

    # THEN the Latin lines read ASCII, spaced as a list, and the digit is as sure as the model
    # was of its glyph (the inserted spaces count at their own 0.3 in the listing's score)
    assert texts == ["13, 5, 20", "024", "中文，12"]
    assert scores[1] > 0.97


def test_a_comma_between_the_numbers_of_a_list_keeps_its_space() -> None:
    # GIVEN an index's page list as a small-print scan reads it: after each comma a gap a
    # column wider than the pitch with weak space evidence (0.07-0.24)
    short_group = ctc_line("25,", "26", space=0.13)
    wide_gap = ctc_line("121,", "123", space=0.07, gap=2)

    # WHEN decoded THEN each number is its own token: a group that is not three digits cannot
    # be thousands, and two columns over the pitch is a word space before any group
    assert decode(short_group) == ["25, 26"]
    assert decode(wide_gap) == ["121, 123"]
    # while a comma as close as the digits around it stays inside its number
    assert decode(ctc_line("3,", "26", space=0.13, gap=0)) == ["3,26"]


def test_a_list_comma_two_columns_over_the_pitch_is_a_space_whatever_the_space_class_says() -> None:
    # GIVEN R's printed vector "272, 89, 407, ..., 323, 128, 423" in a monospaced font as
    # PP-OCRv5 read it on a 200-dpi scan: pitch 3, the next number five columns after each comma
    # (a comma and a space, each a character wide), p(space) 0.001-0.024 there
    vector = ctc_line("272,", "89,", "323,", "128,", "423", space=0.015, gap=2)

    # WHEN decoded THEN each number is its own token, even before a group of three digits
    assert decode(vector) == ["272, 89, 323, 128, 423"]
    # while a thousands comma a column over the pitch, even with the model's evidence there
    # (0.28 on a 150-dpi scan), stays inside its number
    assert decode(ctc_line("1,", "117,", "411.70", space=0.28, gap=1)) == ["1,117,411.70"]


def test_a_list_comma_at_the_lines_pitch_keeps_its_space_on_strong_evidence() -> None:
    # GIVEN an index's "46, 75" as PP-OCRv5 read it: the "7" two columns after the comma, at
    # the line's pitch (2), with p(space) 0.39 between them
    index = ctc_line("46,", "75", space=0.39, pitch=2, gap=0)

    # WHEN decoded THEN the page numbers are two tokens
    assert decode(index) == ["46, 75"]
    # while a decimal comma at the pitch, with the weak evidence such gaps get, stays inside
    # its number, and so does a thousands comma with the same strong evidence
    assert decode(ctc_line("10.000,", "00", space=0.04, pitch=2, gap=0)) == ["10.000,00"]
    assert decode(ctc_line("46,", "750", space=0.39, pitch=2, gap=0)) == ["46,750"]


def test_on_a_line_set_in_a_monospaced_font_a_gap_narrower_than_two_cells_is_no_space() -> None:
    # GIVEN Asymptote's code "pair a=(0,0);" as PP-OCRv5 read it from its manual: the columns
    # where it emitted each character (a cell of 2.6 columns, the written space two cells
    # wide), and p(space) 0.109 a column over the line's pitch after the comma: a list comma's
    # evidence
    code = "pair a=(0,0);"
    at = [2, 4, 7, 9, 12, 15, 17, 20, 22, 25, 28, 30, 33]
    read = line_at(code, at, {26: 0.109, 27: 0.081})

    # WHEN decoded THEN the code reads as printed: one cell from the comma is no word space
    assert decode(read) == ["pair a=(0,0);"]
    # while the same code with a printed space, two cells after the comma, keeps it
    spaced = line_at("pair a=(0, 0);", [*at[:10], 30, 33, 35, 38], {28: 0.109})
    assert decode(spaced) == ["pair a=(0, 0);"]
    # AND a line set in a proportional font, a vector in a statistics paper as PP-OCRv6 read
    # it (its written spaces narrower than two characters, its commas than one), keeps the
    # same evidence's spaces after its commas (0.135 and 0.114)
    vector = "b = (0,0.85, 0,0)T"
    columns = [3, 6, 10, 13, 17, 19, 21, 24, 26, 28, 30, 32, 33, 34, 36, 39, 41, 43]
    proportional = line_at(vector, columns, {22: 0.135, 23: 0.125, 37: 0.092, 38: 0.114})
    assert decode(proportional) == ["b = (0, 0.85, 0, 0)T"]


def test_a_negative_number_a_character_over_the_pitch_is_its_own_token() -> None:
    # GIVEN R's printed sparse matrix row "[4,] 1 -0.1 2.0" in a monospaced font as PP-OCRv5
    # read it on a 200-dpi scan: pitch 3, the minus six columns after the "1", p(space) 0.003
    row = ctc_line("1", "-0.1", space=0.003, gap=3)

    # WHEN decoded THEN the negative number is a token of its own
    assert decode(row) == ["1 -0.1"]
    # while a dash at the pitch or a column over it (a date, a range) stays inside its token,
    # even with a little evidence
    assert decode(ctc_line("2003-03-07", space=0.0)) == ["2003-03-07"]
    assert decode(ctc_line("10", "-20", space=0.1, gap=1)) == ["10-20"]
    # and a code's hyphen after a letter stays, however wide (PP-OCRv6's "AVX-512")
    assert decode(ctc_line("AVX", "-512", space=0.003, gap=3)) == ["AVX-512"]


def test_a_price_ranges_dash_ends_a_word_where_the_model_saw_the_gap_after_it() -> None:
    # GIVEN USDA's price list "1.36 - 1.41" as PP-OCRv6 read it on a 250-dpi scan: no space
    # written on either side of the dash, a blank a column over the pitch (2) after it with
    # p(space) 0.44; and the same with an en dash
    hyphen = ctc_line("1.36-", "1.41", space=0.44, pitch=2)
    en_dash = ctc_line("100.00–", "108.00", space=0.44, pitch=2)

    # WHEN decoded THEN the two prices are tokens of their own
    assert decode(hyphen, en_dash) == ["1.36- 1.41", "100.00– 108.00"]
    # while a date's or a code's dash at the pitch, or a gap with a word gap's weak evidence,
    # stays inside its token
    assert decode(ctc_line("2026-", "03-17", space=0.44, gap=0, pitch=2)) == ["2026-03-17"]
    assert decode(ctc_line("1.36-", "1.41", space=0.15, pitch=2)) == ["1.36-1.41"]


def test_digits_half_a_line_apart_are_separate_numbers() -> None:
    # GIVEN an axis's tick labels as PP-OCRv5 read them: every digit four columns from the next
    # (so the line's pitch is four), p(space) 0.12-0.16 between them
    ticks = ctc_line("0", "1", "2", "3", space=0.12, pitch=4, gap=0)

    # WHEN decoded THEN each tick label is its own token
    assert decode(ticks) == ["0 1 2 3"]
    # while digits as far apart without that evidence (a census table's numbers: 0.000) stay
    # one number
    assert decode(ctc_line("3", "45", space=0.0, pitch=4, gap=0)) == ["345"]
    assert decode(ctc_line("3", "45", space=0.08, pitch=4, gap=0)) == ["345"]


def test_digits_a_line_height_apart_are_separate_numbers_whatever_the_space_class_says() -> None:
    # GIVEN a plot's tick labels "100 150" as PP-OCRv5 read them: 12 columns between the two
    # numbers at pitch 3, p(space) 0.052; and R's printed "0 1 2 3" in a monospaced font, every
    # digit 6 columns from the next, p(space) 0.015-0.072
    ticks = ctc_line("100", "150", space=0.05, pitch=3, gap=9)
    vector = ctc_line("0", "1", "2", "3", space=0.02, pitch=6, gap=0)

    # WHEN decoded THEN each number is its own token
    assert decode(ticks, vector) == ["100 150", "0 1 2 3"]
    # while digits five columns apart without evidence stay one number
    assert decode(ctc_line("3", "45", space=0.02, pitch=5, gap=0)) == ["345"]


def test_digits_a_line_height_apart_with_no_space_evidence_at_all_stay_one_number() -> None:
    # GIVEN a hydrograph's tiny axis label "100" as PP-OCRv5 read it on a water report: scaled
    # up to the line's height, its digits six and five columns apart, p(space) 0.0002 at most
    label = ctc_line("1", "00", space=0.0002, pitch=5, gap=1)

    # WHEN decoded THEN it is one number
    assert decode(label) == ["100"]
    # while as far a gap with the least evidence a printed space had there (R's vectors, 0.015)
    # is a space, and so is one twice the line's pitch with none (Asymptote's tick labels
    # "80 100": ten columns on a pitch of three, p(space) 0.003)
    assert decode(ctc_line("1", "00", space=0.015, pitch=5, gap=1)) == ["1 00"]
    assert decode(ctc_line("80", "100", space=0.003, pitch=3, gap=7)) == ["80 100"]


def test_a_time_after_a_whole_date_is_its_own_token() -> None:
    # GIVEN "2003-03-07 08:42:38" as PP-OCRv5 read a data model's table: a column over the
    # pitch (2) after the date, p(space) 0.12
    iso = ctc_line("2003-03-07", "08:42:38", space=0.12, pitch=2)
    european = ctc_line("17/03/2026", "14:05", space=0.12, pitch=2)

    # WHEN decoded THEN the date and the time are two tokens
    assert decode(iso, european) == ["2003-03-07 08:42:38", "17/03/2026 14:05"]
    # while the same gap inside what is not yet a whole date, or in a longer number, stays
    assert decode(ctc_line("2003-03-0", "7", space=0.12, pitch=2)) == ["2003-03-07"]
    assert decode(ctc_line("12003-03-07", "08", space=0.12, pitch=2)) == ["12003-03-0708"]


def test_no_space_is_written_after_a_thousands_separator() -> None:
    # GIVEN "1,117,411.70" as a 150-dpi scan reads it: after the first comma a blank column
    # wider than the line's pitch with p(space) 0.28
    amount = ctc_line("1,", "117,411.70", space=0.28)

    # WHEN decoded THEN the amount is one token; a list of numbers keeps its space
    assert decode(amount) == ["1,117,411.70"]
    assert decode(ctc_line("17,", "71", space=0.28)) == ["17, 71"]
    # and a space the model wrote itself there, at a word gap's width, is kept
    assert decode(ctc_line("1,", "117", space=0.9)) == ["1, 117"]


def test_a_number_after_a_word_gets_its_space_on_weak_evidence() -> None:
    # GIVEN "receipt771104" as PP-OCRv5 reads it: p(space) 0.10 in the gap before the number
    line = ctc_line("receipt", "771104", space=0.10)
    assert STOCK([line[None]])[0] == ["receipt771104"]

    # WHEN decoded THEN the number is its own token
    assert decode(line) == ["receipt 771104"]
    # while a code with a letter or two before its digits, and two words, need the usual
    assert decode(ctc_line("x", "86", space=0.10), ctc_line("mp", "3", space=0.10)) == [
        "x86",
        "mp3",
    ]
    assert decode(ctc_line("receipt", "number", space=0.10)) == ["receiptnumber"]


def test_a_number_after_a_labels_colon_gets_its_space_on_weak_evidence() -> None:
    # GIVEN "SIRET : 97531086300025" as PP-OCRv6 reads it (p(space) 0.12-0.13 after the colon),
    # here with 0.08
    line = ctc_line("SIRET:", "97531086300025", space=0.08)
    assert STOCK([line[None]])[0] == ["SIRET:97531086300025"]

    # WHEN decoded THEN the number is its own token
    assert decode(line) == ["SIRET: 97531086300025"]
    assert decode(ctc_line("Approval:", "1205-0466", space=0.08)) == ["Approval: 1205-0466"]
    # while a time after a digit's colon, a scheme's lowercase word printed tight against its
    # number, and a label with no space evidence after it stay as read
    assert decode(ctc_line("12:", "30", space=0.08)) == ["12:30"]
    assert decode(ctc_line("doi:", "10.2307/1913610", space=0.08)) == ["doi:10.2307/1913610"]
    assert decode(ctc_line("ID:", "123", space=0.03)) == ["ID:123"]


def test_a_dash_the_model_half_saw_between_two_words_is_written() -> None:
    # GIVEN "recording—while" and "meant—I" as a real scan reads them: blank wins the gap
    # column, the dash classes together hold 0.2 or more of it
    lines = [
        with_dash_evidence(ctc_line("recording", "while", space=0.0), "recording", em=0.35),
        with_dash_evidence(ctc_line("meant", "I", space=0.0), "meant", em=0.16, hyphen=0.06),
        with_dash_evidence(ctc_line("well", "known", space=0.0), "well", em=0.05, hyphen=0.3),
    ]
    assert STOCK([np.stack([lines[0]])])[0] == ["recordingwhile"]

    # WHEN decoded THEN each gets the likelier dash
    assert decode(*lines) == ["recording—while", "meant—I", "well-known"]


def test_weak_dash_evidence_and_gaps_beside_punctuation_stay_as_read() -> None:
    # GIVEN dash evidence under the threshold between two words, and strong evidence after a
    # comma (not between two letters)
    lines = [
        with_dash_evidence(ctc_line("record", "ing", space=0.0), "record", em=0.1, hyphen=0.05),
        with_dash_evidence(ctc_line("say,", "one", space=0.0), "say,", em=0.4),
    ]

    # WHEN decoded THEN no dash is written
    assert decode(*lines) == ["recording", "say,one"]


def test_characters_closer_than_the_lines_pitch_are_not_separated() -> None:
    # GIVEN "fi" of a ligature: two characters closer than the line's usual distance, with
    # space evidence in the one column between them
    line = ctc_line("fi", "xed", space=0.3, gap=-1)

    # WHEN decoded THEN they stay one word
    assert decode(line) == ["fixed"]


def test_the_gap_after_an_fi_or_fl_ligature_is_not_a_word_space() -> None:
    # GIVEN "fixed", "specification" and "floating" as fonts with an fi/fl ligature glyph leave
    # them: a word-wide gap with space evidence right after the ligature
    lines = [
        ctc_line("fi", "xed", space=0.3),
        ctc_line("specifi", "cation", space=0.3),
        ctc_line("fl", "oating", space=0.3),
    ]

    # WHEN decoded THEN each stays one word
    assert decode(*lines) == ["fixed", "specification", "floating"]


def test_a_word_after_fi_or_fl_that_starts_a_sentence_or_name_is_separated() -> None:
    # GIVEN the same gaps before a capital, and a gap after "if" (not a ligature's end)
    lines = [
        ctc_line("hifi", "Systems", space=0.3),
        ctc_line("if", "it", space=0.3),
    ]

    # WHEN decoded THEN the word spaces are written
    assert decode(*lines) == ["hifi Systems", "if it"]


def test_a_space_the_model_wrote_after_an_fi_or_fl_ligature_is_dropped() -> None:
    # GIVEN "filename" and "effi cient" where the model itself wrote a space after the
    # ligature, and written spaces after "fi" before a capital and after "if"
    lines = [
        ctc_line("fi", "lename", space=0.8),
        ctc_line("effi", "cient", space=0.8),
        ctc_line("hifi", "Systems", space=0.8),
        ctc_line("if", "it", space=0.8),
    ]
    assert STOCK([np.stack([lines[0]])])[0] == ["fi lename"]

    # WHEN decoded THEN the ligature's gap is closed and the word spaces stay
    assert decode(*lines) == ["filename", "efficient", "hifi Systems", "if it"]


def test_each_line_of_a_batch_is_decoded_on_its_own_evidence() -> None:
    # GIVEN two lines batched together, the shorter one padded: one with a half-seen word gap
    spaced = ctc_line("NW1", "6XE", space=0.2)
    closed = ctc_line("London", "NW1", space=0.02)

    # WHEN decoded together THEN only the first gets its space
    assert decode(closed, spaced) == ["LondonNW1", "NW1 6XE"]


def test_a_line_without_a_new_space_keeps_its_confidence() -> None:
    # GIVEN a line where nothing is to be added
    line = ctc_line("EUR", "including", space=0.05)[None]

    # WHEN decoded THEN its confidence is PaddleX's own
    assert SpaceAwareCtcDecode(STOCK)([line])[1] == pytest.approx(STOCK([line])[1])


def test_word_boxes_split_at_the_space_found() -> None:
    # GIVEN a half-seen word gap, decoded with per-word column positions (return_word_box)
    line = ctc_line("EUR", "including", space=0.23)

    # WHEN decoded
    [(text, (_, words, _, _))] = decode(
        line, return_word_box=True, wh_ratio_list=[10.0], max_wh_ratio=10.0
    )

    # THEN the words are the two words read
    assert text == "EUR including"
    assert ["".join(word) for word in words if "".join(word).strip()] == ["EUR", "including"]


# ---- real PP-OCRv5 on the offline weights ----------------------------------------------------

BACKENDS: dict[InferenceBackend, JobOptions] = {
    "onnxruntime": JobOptions(),  # as `make demo` runs it
    # The offline text-line orientation model is ONNX only, so on Paddle pages are read as given.
    "paddle": JobOptions(use_doc_orientation_classify=False),
}


@pytest.fixture(scope="module", params=list(BACKENDS))
def backend(
    request: pytest.FixtureRequest, models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[EngineRegistry, JobOptions]:
    runtime: InferenceBackend = request.param
    if runtime == "onnxruntime":
        for model in (detection_model_name(), base_recognition_model_name()):
            assert export_onnx(models_dir / model)
    cache = ModelCache(
        local_root=tmp_path_factory.mktemp("models"),
        search_roots=[models_dir],
    )
    settings = EngineSettings(cpu_threads=2, runtime=runtime)
    return EngineRegistry(resolve=cache.fetch, settings=settings), BACKENDS[runtime]


@pytest.mark.ocr
def test_the_demo_letter_reads_with_its_word_spaces(
    backend: tuple[EngineRegistry, JobOptions],
) -> None:
    # GIVEN the demo's sample letter and the processor's engine
    registry, options = backend
    engine = registry.get(OcrModel.PP_OCRV5, "en", options)

    # WHEN it is read end to end
    document = ocr_document(DEMO_LETTER.read_bytes(), engine=engine, options=options)

    # THEN the words the stock decoding ran together are apart
    text = "\n".join(line.text for line in document.pages[0].lines)
    assert engine.info.name == f"paddleocr/{registry.settings.runtime}"
    assert "Total amount payable: 1,284.50 EUR including VAT at 20%." in text
    assert "London NW1 6XE" in text


def _chinese_page() -> PageImage:
    from PIL import Image

    with Image.open(CHINESE_PAGE) as image:
        pixels = np.asarray(image.convert("RGB"))
    return PageImage(page=1, pixels=pixels)


@pytest.mark.ocr
def test_a_chinese_page_reads_as_without_the_space_decoder(
    models_dir: Path, tmp_path: Path
) -> None:
    # GIVEN a Chinese page, one line set with wide letter-spacing, read by the processor's
    # engine and by one decoding as PaddleX does
    cache = ModelCache(local_root=tmp_path, search_roots=[models_dir])
    options = JobOptions(use_doc_orientation_classify=False)
    settings = EngineSettings(cpu_threads=2)
    stock = build_ocr_engine("ch", options, cache.fetch, EngineSettings(word_space_evidence=None))
    engine = build_ocr_engine("ch", options, cache.fetch, settings)

    # WHEN both read it
    page = _chinese_page()
    read = [line.text for line in engine.recognize(page).lines]
    expected = [line.text for line in stock.recognize(page).lines]

    # THEN the space decoder adds nothing between Chinese characters
    assert read == expected
    assert read[0] == "会议纪要：预算审查推迟到第三季度。"


def _doubtful(line: np.ndarray, position: int, read: str, behind: str, p: float) -> np.ndarray:
    """`line` (from ctc_line, gap 1) with its character at `position` (counted over all its
    words) read as `read` at 0.95 - p, with `behind` close behind at p."""
    changed = line.copy()
    column = np.full(len(STOCK.character), 0.05 / (len(STOCK.character) - 2))
    column[STOCK.character.index(read)] = 0.95 - p
    column[STOCK.character.index(behind)] = p
    emitted = np.flatnonzero(line.argmax(axis=1) != BLANK)
    changed[emitted[position]] = column
    return changed


def test_a_look_alike_letter_in_a_number_is_read_as_the_digit_close_behind_it() -> None:
    # GIVEN "2026", "1,150" and "239,839,971" where the recognizer's first choice is a letter,
    # the digit behind it
    year = _doubtful(ctc_line("2026", space=0), 1, read="O", behind="0", p=0.35)
    amount = _doubtful(ctc_line("1,150", space=0), 2, read="l", behind="1", p=0.30)
    total = _doubtful(ctc_line("239,839,971", space=0), 10, read="i", behind="1", p=0.43)
    assert STOCK([year[None]])[0] == ["2O26"]
    assert STOCK([total[None]])[0] == ["239,839,97i"]

    # WHEN decoded THEN the digits are read
    assert decode(year, amount, total) == ["2026", "1,150", "239,839,971"]


def test_a_look_alike_letter_stays_a_letter_in_a_word_or_without_a_digit_behind_it() -> None:
    # GIVEN a word and a code whose letters have a digit behind them, and a number whose
    # letter has no digit close behind
    word = _doubtful(ctc_line("BOOK", space=0), 1, read="O", behind="0", p=0.35)
    code = _doubtful(ctc_line("B2B", space=0), 0, read="B", behind="8", p=0.35)
    sure = _doubtful(ctc_line("2026", space=0), 1, read="O", behind="0", p=0.02)

    # WHEN decoded THEN they read as the recognizer read them
    assert decode(word, code, sure) == ["BOOK", "B2B", "2O26"]


def test_a_thousands_group_with_a_look_alike_letter_keeps_its_comma_tight() -> None:
    # GIVEN "122,000" as PP-OCRv5 read a water-data report's: the middle zero as "o" (p(0) 0.35
    # behind it), and p(space) 0.41 a column over the pitch after the comma
    line = _doubtful(ctc_line("122,", "000", space=0.41), 5, read="o", behind="0", p=0.35)
    assert STOCK([line[None]])[0] == ["122,0o0"]

    # WHEN decoded THEN the group counts as thousands (its letter read as the digit behind it),
    # so the comma is no list's and no space follows it
    assert decode(line) == ["122,000"]
    # while a list's comma before a group of two stays spaced
    assert decode(ctc_line("37,", "70", space=0.41)) == ["37, 70"]


def test_a_thousands_group_of_look_alike_letters_reads_as_digits_whatever_the_token() -> None:
    # GIVEN "400,000" as PP-OCRv5 read a water report's, its group as "ooo" with p(0) 0.046,
    # 0.10 and 0.21 behind the letters, and p(space) 0.41 a column over the pitch after the
    # comma; and "1,500" read "1,5oo"
    line = ctc_line("400,", "000", space=0.41)
    for position, p in ((4, 0.046), (5, 0.10), (6, 0.21)):
        line = _doubtful(line, position, read="o", behind="0", p=p)
    short = ctc_line("1,500", space=0)
    for position in (3, 4):
        short = _doubtful(short, position, read="o", behind="0", p=0.2)
    assert STOCK([line[None]])[0] == ["400,ooo"]
    assert STOCK([short[None]])[0] == ["1,5oo"]

    # WHEN decoded THEN the groups are digits and the comma stays tight
    assert decode(line, short) == ["400,000", "1,500"]
    # while letters without a digit close behind, a word after a comma, or a group that does
    # not end the token read as they were
    word = _doubtful(ctc_line("4,ooo", space=0), 2, read="o", behind="0", p=0.01)
    assert decode(word) == ["4,ooo"]
    ohio = _doubtful(ctc_line("4,Ohio", space=0), 2, read="O", behind="0", p=0.2)
    assert decode(ohio) == ["4,Ohio"]
    longer = _doubtful(ctc_line("4,ooos", space=0), 2, read="o", behind="0", p=0.2)
    assert decode(longer) == ["4,ooos"]


def test_a_point_before_three_digits_reads_as_the_thousands_comma_close_behind_it() -> None:
    # GIVEN "37,313" and "2,429,743" scanned small, read with a point where the comma is close
    # behind it (PP-OCRv5: p(,) 0.35 and 0.43)
    amount = _doubtful(ctc_line("37,313", space=0), 2, read=".", behind=",", p=0.35)
    total = _doubtful(ctc_line("2,429,743", space=0), 1, read=".", behind=",", p=0.43)
    assert STOCK([amount[None]])[0] == ["37.313"]
    assert STOCK([total[None]])[0] == ["2.429,743"]

    # WHEN decoded THEN the commas are read
    assert decode(amount, total) == ["37,313", "2,429,743"]


def test_a_printed_point_stays_a_point_and_a_comma_stays_a_comma() -> None:
    # GIVEN a European thousands point and a three-place decimal with the comma far behind
    # (PP-OCRv5's printed points left p(,) 0.068 at most), a point before two digits, and a
    # comma with a point close behind it
    european = _doubtful(ctc_line("17.233,37", space=0), 2, read=".", behind=",", p=0.07)
    decimal = _doubtful(ctc_line("3.142", space=0), 1, read=".", behind=",", p=0.01)
    cents = _doubtful(ctc_line("12.50", space=0), 2, read=".", behind=",", p=0.40)
    comma = _doubtful(ctc_line("1,250", space=0), 1, read=",", behind=".", p=0.40)

    # WHEN decoded THEN each reads as the recognizer read it
    assert decode(european, decimal, cents, comma) == ["17.233,37", "3.142", "12.50", "1,250"]
    # AND PP-OCRv6's own, lower evidence turns a point with p(,) 0.06 ("7,494") but none left
    # under 0.0023 ("7.704")
    v6 = SpaceAwareCtcDecode(STOCK, thousands_comma_evidence=0.02)
    misread = _doubtful(ctc_line("7,494", space=0), 1, read=".", behind=",", p=0.06)
    printed = _doubtful(ctc_line("7.704", space=0), 1, read=".", behind=",", p=0.002)
    assert v6([np.stack([misread, printed])])[0] == ["7,494", "7.704"]


def test_each_token_of_a_line_carries_its_least_sure_characters_confidence() -> None:
    # GIVEN "Invoice 3442" whose second "4" the recognizer is unsure of (0.55)
    line = _doubtful(ctc_line("Invoice", "3442", space=0.9), 10, read="4", behind="9", p=0.40)
    decoder = SpaceAwareCtcDecode(STOCK)

    # WHEN it is decoded while token confidences are kept
    with decoder.token_confidences() as confidences:
        texts, _ = decoder([line[None]])

    # THEN the number carries the doubtful digit's confidence, the word its own
    assert texts == ["Invoice 3442"]
    assert confidences["Invoice 3442"] == pytest.approx([0.98, 0.55])


def test_a_digit_whose_look_alike_letter_is_close_behind_is_no_doubt_in_a_number() -> None:
    # GIVEN "40" set in capitals: the recognizer gives its "0" 0.6 and the letter "O" 0.35
    line = _doubtful(ctc_line("TEA", "40", space=0.9), 5, read="0", behind="O", p=0.35)
    decoder = SpaceAwareCtcDecode(STOCK)

    # WHEN it is decoded while token confidences are kept
    with decoder.token_confidences() as confidences:
        texts, _ = decoder([line[None]])

    # THEN the number is as sure as the digit and its look-alike together
    assert texts == ["TEA 40"]
    assert confidences["TEA 40"] == pytest.approx([0.98, 0.95], abs=0.01)
