"""The converter function's contract: an Office document in, its PDF (and, for a spreadsheet,
its cells) out, in the results bucket's work area of the job.

The processor calls the converter synchronously (`ConversionRequest` as the event) and gets a
`ConversionResponse` back: where the PDF is, or the user's error (a code from
idp.contract.errors). The converter reads the input and writes under
`work/<job_id>/converted/`; nothing else.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from idp.contract import names

CONVERTED_PREFIX: Final = "converted/"
CONVERTED_PDF: Final = "document.pdf"
CONVERTED_SHEETS: Final = "sheets.json"


def converted_key(job_id: str, name: str) -> str:
    """work/<job_id>/converted/<name>: where an Office document's conversion is written."""
    return f"{names.WORK_PREFIX}{job_id}/{CONVERTED_PREFIX}{name}"


class ConversionRequest(BaseModel):
    """The converter's event: the job's input to convert."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    bucket: str
    key: str


class ConversionInfo(BaseModel):
    """What turned an Office document into the PDF whose pages were read (result.json's
    `source.conversion`)."""

    converter: str  # "LibreOffice"
    version: str  # e.g. "7.4.7.2"
    seconds: float = Field(ge=0)  # the conversion itself (LibreOffice's run), not the transfers


class Sheet(BaseModel):
    """A spreadsheet's sheet: its cells as shown (formatted), row by row, trimmed to the used
    range; `rows[r][c]` is the cell at row r + 1, column c + 1."""

    name: str
    rows: list[list[str]] = Field(default_factory=list)

    @property
    def cells(self) -> int:
        return sum(1 for row in self.rows for text in row if text.strip())


class ConvertedSheets(BaseModel):
    """converted/sheets.json: a spreadsheet's sheets in the workbook's order."""

    sheets: list[Sheet]


class ConversionError(BaseModel):
    code: str
    message: str


class ConversionResponse(BaseModel):
    """The converter's answer: the PDF's key (and the sheets' key for a spreadsheet) in the
    results bucket, the detected media type and how it was converted; or the user's error."""

    model_config = ConfigDict(extra="forbid")

    media_type: str | None = None
    pdf_key: str | None = None
    sheets_key: str | None = None
    conversion: ConversionInfo | None = None
    error: ConversionError | None = None
