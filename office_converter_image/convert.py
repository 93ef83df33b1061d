"""The converter's logic: one Office document of a job, read from its presigned GET, checked,
converted to PDF by LibreOffice and written to its presigned PUTs; a user's error comes back
as the response's `error`, never raised (a retry could not change it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aws_lambda_powertools import Logger

from idp.contract.conversion import (
    PDF_CONTENT_TYPE,
    SHEETS_CONTENT_TYPE,
    ConversionError,
    ConversionInfo,
    ConversionRequest,
    ConversionResponse,
    ConvertedSheets,
)
from idp.contract.errors import JobError, UnsupportedMediaType
from idp.contract.names import Service
from idp.document.media_types import SUPPORTED_FORMATS, detect_media_type
from idp.document.office.libreoffice import CONVERTER, LibreOffice
from idp.document.office.preflight import PackageLimits, check_office_file
from office_converter_image.transfer import download, upload

logger = Logger(service=Service.CONVERTER.value, child=True)


@dataclass(frozen=True, kw_only=True)
class OfficeConverter:
    """Takes its converter and limits; reads no environment and holds no credentials."""

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
        data = download(request.input_url, max_bytes=self.max_input_bytes)
        media_type = detect_media_type(data)
        if not media_type.is_office:
            raise UnsupportedMediaType(
                f"the converter takes Office documents; the content is {media_type.label}, "
                f"which the processor reads itself ({SUPPORTED_FORMATS})"
            )
        check_office_file(data, media_type, self.limits)
        converted = self.libreoffice.convert(data, media_type)
        upload(request.pdf_url, converted.pdf, content_type=PDF_CONTENT_TYPE)
        if converted.sheets:
            sheets = ConvertedSheets(sheets=converted.sheets).model_dump_json().encode()
            upload(request.sheets_url, sheets, content_type=SHEETS_CONTENT_TYPE)
        logger.info(
            "converted %s to PDF in %.1f s (%d bytes)",
            media_type.label,
            converted.seconds,
            len(converted.pdf),
        )
        return ConversionResponse(
            media_type=media_type.value,
            sheets=bool(converted.sheets),
            conversion=ConversionInfo(
                converter=CONVERTER, version=converted.version, seconds=round(converted.seconds, 3)
            ),
        )
