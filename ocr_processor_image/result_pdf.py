"""result.pdf in the results bucket: written whole, or in parts (one per chunk of a large
document) that the merge joins. The PDF itself is idp.document.searchable_pdf's."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING

from botocore.exceptions import ClientError
from pypdf.errors import PyPdfError

from idp.aws.errors import is_missing_object
from idp.aws.s3 import s3_uri
from idp.document.searchable_pdf import concatenate_pdfs, write_searchable_pdf
from idp.flow.chunks.plan import searchable_part_key

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

    from idp.contract.results import PageResult

PDF_CONTENT_TYPE = "application/pdf"

logger = logging.getLogger(__name__)


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
