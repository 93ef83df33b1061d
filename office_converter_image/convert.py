"""The converter's logic: one Office document of a job, read from the input bucket, checked,
converted to PDF by LibreOffice and written to the job's work area; a user's error comes back
as the response's `error`, never raised (a retry could not change it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from idp.aws.s3 import read_input
from idp.contract.conversion import (
    CONVERTED_PDF,
    CONVERTED_SHEETS,
    ConversionError,
    ConversionInfo,
    ConversionRequest,
    ConversionResponse,
    ConvertedSheets,
    converted_key,
)
from idp.contract.errors import JobError, UnsupportedMediaType
from idp.contract.names import Service
from idp.document.media_types import SUPPORTED_FORMATS, detect_media_type
from idp.document.office.libreoffice import CONVERTER, LibreOffice
from idp.document.office.preflight import PackageLimits, check_office_file

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

logger = Logger(service=Service.CONVERTER.value, child=True)


@dataclass(frozen=True, kw_only=True)
class OfficeConverter:
    """Takes its client, buckets and converter; reads no environment."""

    s3: S3Client
    input_bucket: str
    results_bucket: str
    libreoffice: LibreOffice
    max_input_bytes: int
    limits: PackageLimits = field(default_factory=PackageLimits)

    def convert(self, request: ConversionRequest) -> ConversionResponse:
        try:
            return self._convert(request)
        except JobError as error:
            logger.warning("conversion refused: %s %s", error.code, error.message)
            return ConversionResponse(error=ConversionError(code=error.code, message=error.message))

    def _convert(self, request: ConversionRequest) -> ConversionResponse:
        if request.bucket != self.input_bucket:
            # The processor only asks for its job's input; anything else is a bug.
            raise ValueError(f"the converter reads only s3://{self.input_bucket}")
        data = read_input(self.s3, request.bucket, request.key, max_bytes=self.max_input_bytes)
        media_type = detect_media_type(data)
        if not media_type.is_office:
            raise UnsupportedMediaType(
                f"the converter takes Office documents; the content is {media_type.label}, "
                f"which the processor reads itself ({SUPPORTED_FORMATS})"
            )
        check_office_file(data, media_type, self.limits)
        converted = self.libreoffice.convert(data, media_type)
        pdf_key = converted_key(request.job_id, CONVERTED_PDF)
        self.s3.put_object(
            Bucket=self.results_bucket,
            Key=pdf_key,
            Body=converted.pdf,
            ContentType="application/pdf",
        )
        sheets_key = None
        if converted.sheets:
            sheets_key = converted_key(request.job_id, CONVERTED_SHEETS)
            self.s3.put_object(
                Bucket=self.results_bucket,
                Key=sheets_key,
                Body=ConvertedSheets(sheets=converted.sheets).model_dump_json().encode(),
                ContentType="application/json",
            )
        logger.info(
            "converted %s to PDF in %.1f s (%d bytes)",
            media_type.label,
            converted.seconds,
            len(converted.pdf),
        )
        return ConversionResponse(
            media_type=media_type.value,
            pdf_key=pdf_key,
            sheets_key=sheets_key,
            conversion=ConversionInfo(
                converter=CONVERTER, version=converted.version, seconds=round(converted.seconds, 3)
            ),
        )
