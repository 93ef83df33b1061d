"""Lambda functions: sizes, handlers, environment, triggers, async config, logs, no tracing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.topology import (
    EVENTS_BATCH_SIZE,
    EVENTS_RETRY_ATTEMPTS,
    FUNCTIONS,
    PROCESSOR_ASYNC_MAX_EVENT_AGE_SECONDS,
    PROCESSOR_ASYNC_RETRY_ATTEMPTS,
    Function,
    FunctionSpec,
    Topic,
    converter_ephemeral_storage_mib,
)
from infra.functions import powertools_layer_arn
from infra.settings import POWERTOOLS_LAYER_VERSION, Settings
from tests.infra.conftest import CPU_ONLY_CONTEXT
from tests.infra.support import Synthesized, arn_of, ref, synthesize

IMAGE_FUNCTIONS = (Function.PROCESSOR, Function.CONVERTER)
ZIP_FUNCTIONS = [f for f in Function if f not in IMAGE_FUNCTIONS]
EXTRA_ENV = {
    Function.PROCESSOR: {"HOME": "/tmp", "PADDLE_PDX_CACHE_HOME": "/tmp/paddlex"},
    Function.CONVERTER: {"HOME": "/tmp"},
}


def _topic_id(synth: Synthesized, topic: Topic) -> str:
    return synth.logical_id(f"{topic.value}/{topic.value}")


@pytest.mark.parametrize("function", list(Function))
def test_function_matches_its_topology_spec(full: Synthesized, function: Function) -> None:
    spec: FunctionSpec = FUNCTIONS[function]
    _, props = full.function_by_handler(spec.handler)
    assert props["MemorySize"] == spec.memory_mb
    assert props["Timeout"] == spec.timeout_seconds
    assert "TracingConfig" not in props  # no active tracing: no handler uses a Tracer
    assert props["Architectures"] == ["x86_64"]
    env: dict[str, Any] = props["Environment"]["Variables"]
    extra = EXTRA_ENV.get(function, {})
    assert set(env) == {key.value for key in spec.env} | set(extra)
    assert env[Env.POWERTOOLS_SERVICE_NAME] == spec.service.value
    assert env[Env.POWERTOOLS_METRICS_NAMESPACE] == names.METRICS_NAMESPACE
    for key, value in extra.items():
        assert env[key] == value


def test_sizes_are_those_of_the_spec() -> None:
    sizes = {f: (FUNCTIONS[f].memory_mb, FUNCTIONS[f].timeout_seconds) for f in Function}
    assert sizes == {
        Function.INVOKER: (256, 60),
        Function.PROCESSOR: (4096, 900),
        Function.COMPLETION: (256, 300),
        Function.SCALE_IN: (128, 30),
        Function.SWEEPER: (256, 120),
        Function.EVENTS: (256, 60),
        Function.CONVERTER: (2048, 180),
    }


@pytest.mark.parametrize("function", ZIP_FUNCTIONS)
def test_zip_functions_run_python_312_with_the_pinned_powertools_layer(
    full: Synthesized, function: Function
) -> None:
    _, props = full.function_by_handler(FUNCTIONS[function].handler)
    assert props["Runtime"] == "python3.12"
    assert props["Handler"] == FUNCTIONS[function].handler
    assert full.stack.resolve(powertools_layer_arn(POWERTOOLS_LAYER_VERSION)) in props["Layers"]
    assert "S3Key" in props["Code"]


def test_zip_functions_share_one_code_asset(full: Synthesized) -> None:
    keys = {
        full.function_by_handler(FUNCTIONS[f].handler)[1]["Code"]["S3Key"] for f in ZIP_FUNCTIONS
    }
    assert len(keys) == 1


@pytest.mark.parametrize("function", IMAGE_FUNCTIONS)
def test_image_functions_are_container_images_running_the_spec_handler(
    full: Synthesized, function: Function
) -> None:
    spec = FUNCTIONS[function]
    _, props = full.function_by_handler(spec.handler)
    assert props["PackageType"] == "Image"
    assert props["ImageConfig"] == {"Command": [spec.handler]}
    assert "ImageUri" in props["Code"]
    assert "Runtime" not in props
    assert "Layers" not in props


def test_processor_has_ephemeral_storage_for_its_model_cache(
    full: Synthesized, cpu_only: Synthesized
) -> None:
    handler = FUNCTIONS[Function.PROCESSOR].handler
    assert full.function_by_handler(handler)[1]["EphemeralStorage"] == {"Size": 6144}
    assert cpu_only.function_by_handler(handler)[1]["EphemeralStorage"] == {
        "Size": CPU_ONLY_CONTEXT["processorEphemeralStorageMiB"]
    }


def test_the_converters_tmp_holds_the_largest_document_and_its_pdf(full: Synthesized) -> None:
    # a 500 MiB document (maxInputBytes), its PDF at up to twice that, LibreOffice's scratch
    handler = FUNCTIONS[Function.CONVERTER].handler
    size = full.function_by_handler(handler)[1]["EphemeralStorage"]["Size"]
    assert size == converter_ephemeral_storage_mib(names.DEFAULT_MAX_INPUT_BYTES) == 1756
    assert size * 2**20 >= 3 * names.DEFAULT_MAX_INPUT_BYTES


def test_processor_reserved_concurrency_is_optional(
    full: Synthesized, cpu_only: Synthesized
) -> None:
    handler = FUNCTIONS[Function.PROCESSOR].handler
    assert "ReservedConcurrentExecutions" not in full.function_by_handler(handler)[1]
    assert (
        cpu_only.function_by_handler(handler)[1]["ReservedConcurrentExecutions"]
        == CPU_ONLY_CONTEXT["processorReservedConcurrency"]
    )


def test_processor_async_failures_go_to_the_error_topic_after_retries(
    full: Synthesized,
) -> None:
    processor_id, _ = full.function_by_handler(FUNCTIONS[Function.PROCESSOR].handler)
    _, config = full.only("AWS::Lambda::EventInvokeConfig")
    assert config == {
        "FunctionName": ref(processor_id),
        "Qualifier": "$LATEST",
        "MaximumRetryAttempts": PROCESSOR_ASYNC_RETRY_ATTEMPTS,
        "MaximumEventAgeInSeconds": PROCESSOR_ASYNC_MAX_EVENT_AGE_SECONDS,
        "DestinationConfig": {"OnFailure": {"Destination": ref(_topic_id(full, Topic.ERROR))}},
    }


def test_invoker_consumes_the_job_queue_with_partial_batch_responses(
    full: Synthesized, cpu_only: Synthesized
) -> None:
    for synth, batch_size in ((full, 1), (cpu_only, CPU_ONLY_CONTEXT["invokerBatchSize"])):
        invoker_id, _ = synth.function_by_handler(FUNCTIONS[Function.INVOKER].handler)
        queue_id, _ = synth.job_queue()
        mapping = _mapping_from(synth, arn_of(queue_id))
        assert mapping == {
            "BatchSize": batch_size,
            "EventSourceArn": arn_of(queue_id),
            "FunctionName": ref(invoker_id),
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
        }


def test_events_function_reads_the_status_table_stream_filtered_to_terminal_records(
    full: Synthesized,
) -> None:
    events_id, _ = full.function_by_handler(FUNCTIONS[Function.EVENTS].handler)
    table_id, _ = full.only("AWS::DynamoDB::Table")
    failures = full.logical_id("AsyncFailureQueue/Queue")
    mapping = _mapping_from(full, {"Fn::GetAtt": [table_id, "StreamArn"]})
    assert mapping == {
        "BatchSize": EVENTS_BATCH_SIZE,
        "BisectBatchOnFunctionError": True,
        "DestinationConfig": {"OnFailure": {"Destination": arn_of(failures)}},
        "EventSourceArn": {"Fn::GetAtt": [table_id, "StreamArn"]},
        "FilterCriteria": {
            "Filters": [
                {"Pattern": '{"dynamodb":{"NewImage":{"status":{"S":["COMPLETED","FAILED"]}}}}'}
            ]
        },
        "FunctionName": ref(events_id),
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "MaximumRetryAttempts": EVENTS_RETRY_ATTEMPTS,
        "StartingPosition": "TRIM_HORIZON",
    }
    _, table = full.only("AWS::DynamoDB::Table")
    assert table["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}


def _mapping_from(synth: Synthesized, source_arn: Any) -> dict[str, Any]:
    mappings = [
        props
        for props in (
            r["Properties"] for r in synth.of_type("AWS::Lambda::EventSourceMapping").values()
        )
        if props["EventSourceArn"] == source_arn
    ]
    assert len(mappings) == 1, mappings
    mapping: dict[str, Any] = mappings[0]
    return mapping


def test_environment_names_the_stack_resources(full: Synthesized) -> None:
    _, invoker = full.function_by_handler(FUNCTIONS[Function.INVOKER].handler)
    processor_id, processor = full.function_by_handler(FUNCTIONS[Function.PROCESSOR].handler)
    table_id, _ = full.only("AWS::DynamoDB::Table")
    _, endpoint = full.only("AWS::SageMaker::Endpoint")
    env = invoker["Environment"]["Variables"]
    assert env[Env.JOBS_TABLE] == ref(table_id)
    assert env[Env.INPUT_BUCKET] == ref(full.logical_id("Storage/InputBucket"))
    assert Env.RESULTS_BUCKET not in env  # it never reads a document nor writes a result
    assert env[Env.PROCESSOR_FUNCTION] == ref(processor_id)
    assert env[Env.VL_ENABLED] == "true"
    assert env[Env.VL_ENDPOINT_NAME] == endpoint["EndpointName"]
    assert env[Env.VL_VARIANT_NAME] == names.VL_VARIANT_NAME
    assert env[Env.MAX_INPUT_BYTES] == str(names.DEFAULT_MAX_INPUT_BYTES)
    assert env[Env.PRODUCER_PREFIXES] == ""  # one trust domain unless configured
    processor_env = processor["Environment"]["Variables"]
    assert processor_env[Env.MODEL_CACHE_BUCKET] == ref(full.logical_id("Storage/ModelCacheBucket"))
    assert processor_env[Env.MAX_PAGES] == str(names.DEFAULT_MAX_PAGES)
    assert processor_env[Env.ALLOW_HUB_DOWNLOAD] == "false"


@pytest.mark.parametrize(
    ("function", "topics"),
    [
        (Function.COMPLETION, {Topic.SUCCESS, Topic.ERROR}),
        (Function.SCALE_IN, {Topic.SCALE_IN}),
    ],
)
def test_topic_handlers_are_subscribed_to_their_topics_with_a_dead_letter_queue(
    full: Synthesized, function: Function, topics: set[Topic]
) -> None:
    function_id, props = full.function_by_handler(FUNCTIONS[function].handler)
    failures = props["DeadLetterConfig"]["TargetArn"]
    subscribed = {
        s["Properties"]["TopicArn"]["Ref"]
        for s in full.of_type("AWS::SNS::Subscription").values()
        if s["Properties"]["Endpoint"] == arn_of(function_id)
        and s["Properties"]["Protocol"] == "lambda"
        and s["Properties"]["RedrivePolicy"] == {"deadLetterTargetArn": failures}
    }
    assert subscribed == {_topic_id(full, topic) for topic in topics}


def test_sns_may_invoke_each_subscribed_function(full: Synthesized) -> None:
    permissions = {
        (p["Properties"]["FunctionName"]["Fn::GetAtt"][0], p["Properties"]["SourceArn"]["Ref"])
        for p in full.of_type("AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == "sns.amazonaws.com"
    }
    subscriptions = {
        (s["Properties"]["Endpoint"]["Fn::GetAtt"][0], s["Properties"]["TopicArn"]["Ref"])
        for s in full.of_type("AWS::SNS::Subscription").values()
    }
    assert permissions == subscriptions


@pytest.mark.parametrize(("fixture", "days"), [("full", 30), ("cpu_only", 14)])
def test_every_function_logs_to_its_own_group_with_retention(
    request: pytest.FixtureRequest, fixture: str, days: int
) -> None:
    synth: Synthesized = request.getfixturevalue(fixture)
    functions = synth.of_type("AWS::Lambda::Function")
    assert functions
    groups = set()
    for logical_id, function in functions.items():
        group_id = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert synth.props(group_id)["RetentionInDays"] == days, logical_id
        groups.add(group_id)
    assert len(groups) == len(functions)
    for logical_id, group in synth.of_type("AWS::Logs::LogGroup").items():
        assert group["Properties"]["RetentionInDays"] == days, logical_id


def test_async_functions_dead_letter_into_the_encrypted_failure_queue(full: Synthesized) -> None:
    key_id, _ = full.only("AWS::KMS::Key")
    for function in (Function.COMPLETION, Function.SCALE_IN):
        _, props = full.function_by_handler(FUNCTIONS[function].handler)
        queue_id = props["DeadLetterConfig"]["TargetArn"]["Fn::GetAtt"][0]
        assert full.props(queue_id)["KmsMasterKeyId"] == arn_of(key_id)


def test_producer_prefixes_reach_the_invoker_and_a_malformed_mapping_stops_synth(
    tmp_path: Path,
) -> None:
    mapping = {"AROAEXAMPLETEAMA": ["uploads/team-a/"]}
    synth = synthesize(tmp_path / "producers", producerPrefixes=json.dumps(mapping))
    _, invoker = synth.function_by_handler(FUNCTIONS[Function.INVOKER].handler)
    assert json.loads(invoker["Environment"]["Variables"][Env.PRODUCER_PREFIXES]) == mapping
    with pytest.raises(ValidationError, match="producerPrefixes"):
        Settings.from_context({"producerPrefixes": '{"AROAX": []}'}.get)


def test_the_processors_memory_is_a_setting_that_fits_a_new_account(tmp_path: Path) -> None:
    # GIVEN a stack for an account capped at 3,008 MB of Lambda memory
    synth = synthesize(tmp_path / "small", processorMemoryMb="3008")
    _, processor = synth.function_by_handler(FUNCTIONS[Function.PROCESSOR].handler)
    # THEN the processor gets it (its image budgets read it from Lambda's environment at run
    # time: idp.document.budgets), and less than that is refused at synth
    assert processor["MemorySize"] == 3008
    with pytest.raises(ValidationError, match="processorMemoryMb"):
        Settings.from_context({"processorMemoryMb": "2048"}.get)
