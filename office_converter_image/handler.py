"""Lambda entry point of the Office converter (container image): invoked synchronously by the
processor with a ConversionRequest; answers a ConversionResponse.

Thin: parse the event, hand it to `OfficeConverter` (created once per container). The function's
role holds no S3, KMS or table grant: it reads the job's input and writes the job's
`work/<job_id>/converted/` objects through the presigned URLs of its event, and nothing else
(docs/security.md).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from idp.contract.conversion import ConversionRequest
from idp.contract.names import Service
from idp.document.office.libreoffice import LibreOffice
from office_converter_image.convert import OfficeConverter
from office_converter_image.settings import ConverterSettings

logger = Logger(service=Service.CONVERTER.value)


@cache
def office_converter() -> OfficeConverter:
    settings = ConverterSettings.from_env()
    return OfficeConverter(
        # Its scratch directories go to the temp directory: Lambda's one writable one, /tmp.
        libreoffice=LibreOffice(time_limit_s=settings.time_limit_seconds),
        max_input_bytes=settings.max_input_bytes,
    )


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    # A malformed event is a bug of the caller (the processor): let it raise.
    request = ConversionRequest.model_validate(event)
    logger.append_keys(job_id=request.job_id)
    return office_converter().convert(request).model_dump(exclude_none=True)
