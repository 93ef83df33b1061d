"""Deployment settings: cdk.json context parsed into typed, validated values."""

from __future__ import annotations

import pytest
from aws_cdk import aws_logs as logs
from pydantic import ValidationError

from idp.contract import names
from infra.settings import Settings
from tests.infra.support import cdk_json_context


def test_cdk_json_sets_every_setting_to_its_default() -> None:
    context = cdk_json_context()
    assert set(Settings.context_keys()) <= set(context)
    assert Settings.from_context(context.get) == Settings()


def test_defaults_follow_the_spec() -> None:
    settings = Settings()
    assert settings.vl_enabled is True
    assert settings.vl_instance_type == names.VL_INSTANCE_TYPE
    assert settings.invoker_batch_size == 1
    assert settings.processor_ephemeral_storage_mib >= 4096
    assert settings.processor_reserved_concurrency == 0
    assert settings.log_retention == logs.RetentionDays.ONE_MONTH


def test_cli_strings_are_coerced() -> None:
    # GIVEN values as `cdk synth -c key=value` passes them
    context = {"vlEnabled": "false", "invokerBatchSize": "4", "logRetentionDays": "7"}
    # WHEN parsed
    settings = Settings.from_context(context.get)
    # THEN they are typed
    assert settings.vl_enabled is False
    assert settings.invoker_batch_size == 4
    assert settings.log_retention == logs.RetentionDays.ONE_WEEK


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("logRetentionDays", 10),  # not a CloudWatch Logs retention
        ("invokerBatchSize", 11),  # above 10 needs a batching window
        ("invokerBatchSize", 0),
        ("processorEphemeralStorageMiB", 1024),  # too small for the model cache
        ("processorReservedConcurrency", -1),
        ("vlInstanceType", "g5.xlarge"),
        ("vlEnabled", "maybe"),
    ],
)
def test_invalid_values_are_rejected(key: str, value: object) -> None:
    with pytest.raises(ValidationError):
        Settings.from_context({key: value}.get)
