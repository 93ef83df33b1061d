"""Searchable PDF output (result.pdf): the input's pages with an invisible, selectable text layer.

`write_searchable_pdf` builds it from the input and its recognized pages; a chunked document's
chunks each write a part (`upload_searchable_part`) that the merge concatenates
(`merge_searchable_parts`), reading one part at a time.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING

from botocore.exceptions import ClientError
from pypdf.errors import PyPdfError

from idp.aws.errors import is_missing_object
from idp.aws.s3 import s3_uri
from idp.chunks import work_prefix
from idp.searchable_pdf.document import concatenate_pdfs, write_searchable_pdf

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

    from idp.results import PageResult

PDF_CONTENT_TYPE = "application/pdf"

logger = logging.getLogger(__name__)

__all__ = [
    "concatenate_pdfs",
    "merge_searchable_parts",
    "searchable_part_key",
    "upload_searchable_pdf",
    "write_searchable_pdf",
]


def searchable_part_key(job_id: str, index: int) -> str:
    """work/<job_id>/searchable/<n>.pdf: chunk n's pages of result.pdf."""
    return f"{work_prefix(job_id)}searchable/{index:05d}.pdf"


def upload_searchable_pdf(
    s3: S3Client,
    bucket: str,
    key: str,
    *,
    data: bytes,
    pages: Sequence[PageResult],
    first_page: int = 1,
) -> str | None:
    """Write the searchable PDF of `data` (pages `first_page`.. as `pages`) to s3://bucket/key
    through a temporary file; returns its URI.

    A PDF that PDFium rendered but pypdf cannot read gets no searchable PDF (None, logged): the
    OCR result stands without it.
    """
    with tempfile.TemporaryFile() as pdf:
        try:
            write_searchable_pdf(data, pages, pdf, first_page=first_page)
        except PyPdfError as exc:
            logger.warning("no searchable PDF for s3://%s/%s: %s", bucket, key, exc)
            return None
        pdf.seek(0)
        s3.upload_fileobj(pdf, bucket, key, ExtraArgs={"ContentType": PDF_CONTENT_TYPE})
    return s3_uri(bucket, key)


def merge_searchable_parts(
    s3: S3Client, bucket: str, *, job_id: str, chunk_count: int, key: str
) -> str | None:
    """Concatenate the chunks' parts into s3://bucket/key, one part on disk at a time.

    A chunk that could not write its part (see `upload_searchable_pdf`) leaves the document
    without a searchable PDF: None, logged.
    """

    def parts() -> Iterator[IO[bytes]]:
        for index in range(chunk_count):
            with tempfile.TemporaryFile() as part:
                s3.download_fileobj(bucket, searchable_part_key(job_id, index), part)
                part.seek(0)
                yield part

    with tempfile.TemporaryFile() as pdf:
        try:
            concatenate_pdfs(parts(), pdf)
        except ClientError as exc:
            if not is_missing_object(exc):
                raise
            logger.warning("no searchable PDF for job %s: a chunk wrote no part", job_id)
            return None
        pdf.seek(0)
        s3.upload_fileobj(pdf, bucket, key, ExtraArgs={"ContentType": PDF_CONTENT_TYPE})
    return s3_uri(bucket, key)
