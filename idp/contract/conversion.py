"""The converter function's contract: an Office document in, its PDF (and, for a spreadsheet,
its cells) out, in the results bucket's work area of the job.

The processor calls the converter synchronously (`ConversionRequest` as the event) and gets a
`ConversionResponse` back: how the document was converted, or the user's error (a code from
idp.contract.errors). The converter holds no AWS grant of its own: the request carries one
presigned GET of the job's input and presigned PUTs of the two objects it may write under
`work/<job_id>/converted/`, all signed by the processor, so a document that subverts the
converter reaches that one input and those two keys, for as long as the URLs last.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from idp.contract import names

CONVERTED_PREFIX: Final = "converted/"
CONVERTED_PDF: Final = "document.pdf"
CONVERTED_SHEETS: Final = "sheets.json"
# The Content-Type each presigned PUT is signed for, and so must send.
PDF_CONTENT_TYPE: Final = "application/pdf"
SHEETS_CONTENT_TYPE: Final = "application/json"


def converted_key(job_id: str, name: str) -> str:
    """work/<job_id>/converted/<name>: where an Office document's conversion is written."""
    return f"{names.WORK_PREFIX}{job_id}/{CONVERTED_PREFIX}{name}"


class ConversionRequest(BaseModel):
    """The converter's event: the job, and the URLs of its input and of what it may write.

    The URLs are credentials while they last: never logged (`repr=False`)."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    input_url: str = Field(repr=False)  # presigned GET of the job's input
    pdf_url: str = Field(repr=False)  # presigned PUT of converted/document.pdf
    sheets_url: str = Field(repr=False)  # presigned PUT of converted/sheets.json


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
    """The converter's answer: the detected media type, how it was converted and whether it
    wrote the sheets (a spreadsheet); or the user's error. The PDF and the sheets are at the
    keys the processor chose (`converted_key`), whatever the answer says."""

    model_config = ConfigDict(extra="forbid")

    media_type: str | None = None
    sheets: bool = False
    conversion: ConversionInfo | None = None
    error: ConversionError | None = None
