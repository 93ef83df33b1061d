"""Results by content: identical bytes with the same model, language and options are OCR'd once.

A re-uploaded document (a new object, a new job) completes from the cached result, marked
`cached` in its record and its result, without loading an engine or running OCR.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError
from pydantic import ValidationError

from idp.aws.errors import is_missing_object
from idp.contract import names
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.contract.results import OcrResult

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

# Bump when a change makes earlier results wrong to reuse (schema, engine defaults).
CACHE_GENERATION = "1"


def cache_key(*, content_sha256: str, model: OcrModel, lang: str, options: JobOptions) -> str:
    identity = "|".join((CACHE_GENERATION, content_sha256, model.value, lang, options.canonical()))
    return hashlib.sha256(identity.encode()).hexdigest()


class ResultCache:
    """Finished results under results/.cache/<key>.json in the results bucket."""

    def __init__(self, s3: S3Client, bucket: str) -> None:
        self._s3 = s3
        self._bucket = bucket

    @staticmethod
    def object_key(key: str) -> str:
        return f"{names.RESULT_CACHE_PREFIX}{key}.json"

    def get(self, key: str) -> OcrResult | None:
        try:
            body = self._s3.get_object(Bucket=self._bucket, Key=self.object_key(key))["Body"]
        except ClientError as exc:
            if is_missing_object(exc):
                return None
            raise
        try:
            return OcrResult.model_validate_json(body.read())
        except ValidationError:
            return None  # written by an older schema: OCR again, then overwrite it

    def put(self, key: str, result: OcrResult) -> None:
        self._s3.put_object(
            Bucket=self._bucket,
            Key=self.object_key(key),
            Body=result.model_dump_json().encode(),
            ContentType="application/json",
        )

    def put_copy(self, key: str, *, source_key: str) -> None:
        """Fill the entry from a result already in the bucket (server-side: a large merged
        result is never read back into memory)."""
        self._s3.copy_object(
            Bucket=self._bucket,
            Key=self.object_key(key),
            CopySource={"Bucket": self._bucket, "Key": source_key},
            ContentType="application/json",
            MetadataDirective="REPLACE",
        )
