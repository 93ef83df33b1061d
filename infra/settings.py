"""Typed deployment settings: the cdk.json context keys of the stack, validated in one place.

`infra/app.py` reads the context and builds a `Settings`; the stack and its constructs only ever
see these typed values. Values passed with `cdk synth -c key=value` arrive as strings, so every
field is coerced ("false" -> False, "2" -> 2) and checked.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final, Literal

from aws_cdk import aws_logs as logs
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from idp.contract import names
from idp.contract.producers import ProducerPrefixes
from idp.contract.topology import PROCESSOR_MEMORY_MB

# CloudWatch Logs accepts only these retention periods (days).
_RETENTION: Final[dict[int, logs.RetentionDays]] = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1096: logs.RetentionDays.THREE_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
    2192: logs.RetentionDays.SIX_YEARS,
    2557: logs.RetentionDays.SEVEN_YEARS,
    2922: logs.RetentionDays.EIGHT_YEARS,
    3288: logs.RetentionDays.NINE_YEARS,
    3653: logs.RetentionDays.TEN_YEARS,
}

# The newest Powertools v3 layer for python3.12 x86_64 at the time of pinning (Powertools 3.x).
# Bump it here or with `-c powertoolsLayerVersion=N`.
POWERTOOLS_LAYER_VERSION: Final = 27


class Settings(BaseModel):
    """Everything a deployer can change without editing code (cdk.json "context")."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    vl_enabled: bool = Field(default=True, alias="vlEnabled")
    vl_instance_type: str = Field(
        default=names.VL_INSTANCE_TYPE,
        alias="vlInstanceType",
        pattern=r"^ml\.[a-z0-9]+\.[a-z0-9]+$",
    )
    invoker_batch_size: int = Field(default=1, alias="invokerBatchSize", ge=1, le=10)
    processor_ephemeral_storage_mib: int = Field(
        default=6144, alias="processorEphemeralStorageMiB", ge=4096, le=10240
    )
    # 0 leaves the processor's concurrency unreserved (account pool).
    processor_reserved_concurrency: int = Field(
        default=0, alias="processorReservedConcurrency", ge=0
    )
    log_retention_days: int = Field(default=30, alias="logRetentionDays")
    access_log_retention_days: int = Field(default=90, alias="accessLogRetentionDays", ge=1)
    # Days that inputs, results (with the result cache) and job records are kept; 0: forever.
    retention_days: int = Field(default=names.DEFAULT_RETENTION_DAYS, alias="retentionDays", ge=0)
    # The processor's memory. A page may take what the warm engine leaves (idp.document.budgets:
    # 3008 MB, the cap of a new account, allows pages of 35 MP; 4096 MB, 80 MP).
    processor_memory_mb: int = Field(
        default=PROCESSOR_MEMORY_MB, alias="processorMemoryMb", ge=3008, le=10240
    )
    # Each producer's principal id → the input key prefixes it may name (JSON object); empty:
    # one trust domain, any sender may name any input key (docs/security.md).
    producer_prefixes: str = Field(default="", alias="producerPrefixes")
    max_pages: int = Field(default=names.DEFAULT_MAX_PAGES, alias="maxPages", ge=1)
    max_input_bytes: int = Field(default=names.DEFAULT_MAX_INPUT_BYTES, alias="maxInputBytes", ge=1)
    # Pages per processor invocation for a long document (0: one invocation per document).
    chunk_pages: int = Field(default=names.DEFAULT_CHUNK_PAGES, alias="chunkPages", ge=0)
    # Off: models come from the image or the pinned cache. On: a model missing from both may
    # come from PaddleX's hub, and is loaded only if it matches its pin (manifest.json).
    allow_hub_download: bool = Field(default=False, alias="allowHubDownload")
    # PP-OCRv6's size: small ships in the image; tiny and medium come from the model cache.
    ppocrv6_size: Literal["tiny", "small", "medium"] = Field(
        default=names.DEFAULT_PPOCRV6_SIZE, alias="ppocrv6Size"
    )
    # Every function and the VL endpoint in a VPC with no route out, AWS APIs through VPC
    # endpoints (infra/network.py); hub downloads are then impossible.
    private_network: bool = Field(default=False, alias="privateNetwork")
    powertools_layer_version: int = Field(
        default=POWERTOOLS_LAYER_VERSION, alias="powertoolsLayerVersion", ge=1
    )

    @model_validator(mode="after")
    def _hub_needs_a_way_out(self) -> Settings:
        if self.private_network and self.allow_hub_download:
            raise ValueError(
                "allowHubDownload needs the internet, which privateNetwork takes away: "
                "fill the model cache with `idp models sync` and leave allowHubDownload off"
            )
        return self

    @field_validator("producer_prefixes", mode="before")
    @classmethod
    def _producer_prefixes_as_json(cls, value: object) -> str:
        """A JSON object of principal ids → key prefixes (cdk.json may hold it as an object)."""
        text = value if isinstance(value, str) else json.dumps(value or {})
        ProducerPrefixes.from_json(text)  # refuse a malformed mapping at synth
        return text if text.strip() not in ("", "{}") else ""

    @field_validator("log_retention_days")
    @classmethod
    def _known_retention(cls, days: int) -> int:
        if days not in _RETENTION:
            raise ValueError(f"logRetentionDays must be one of {sorted(_RETENTION)}")
        return days

    @property
    def log_retention(self) -> logs.RetentionDays:
        return _RETENTION[self.log_retention_days]

    @classmethod
    def context_keys(cls) -> tuple[str, ...]:
        return tuple(field.alias or name for name, field in cls.model_fields.items())

    @classmethod
    def from_context(cls, lookup: Callable[[str], object]) -> Settings:
        """Build settings from a context lookup (e.g. `app.node.try_get_context`); unset keys
        keep their defaults."""
        values = {key: value for key in cls.context_keys() if (value := lookup(key)) is not None}
        return cls.model_validate(values)
