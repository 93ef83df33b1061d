"""The local runtime cannot drift from the stack: every function and topic of the synthesized
template has its local counterpart, with the same handler, size, environment and subscriptions."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devkit.local.emulator import EmbeddedAws
from devkit.local.resources import LocalResources, provision
from devkit.local.settings import LocalSettings
from idp.contract.env.functions import Env
from idp.contract.topology import (
    EVENTS_BATCH_SIZE,
    EVENTS_RETRY_ATTEMPTS,
    FUNCTIONS,
    QUEUE_MAX_RECEIVE_COUNT,
    Function,
    Topic,
)
from tests.infra.support import Synthesized, ref


@pytest.fixture(scope="module")
def local() -> Iterator[LocalResources]:
    with EmbeddedAws() as aws:
        yield provision(aws.endpoint)


def _pipeline_functions(full: Synthesized) -> dict[str, dict[str, object]]:
    """The template's functions that run pipeline code (not CDK's own helper functions)."""
    return {
        logical_id: resource["Properties"]
        for logical_id, resource in full.of_type("AWS::Lambda::Function").items()
        if "Environment" in resource["Properties"]
        and Env.POWERTOOLS_SERVICE_NAME.value in resource["Properties"]["Environment"]["Variables"]
    }


def test_every_template_function_has_a_local_counterpart_with_the_same_shape(
    full: Synthesized, local: LocalResources
) -> None:
    # GIVEN the synthesized stack's functions and the local runtime's function table
    deployed = _pipeline_functions(full)

    # THEN each topology function is deployed once, as the local runtime runs it
    assert len(deployed) == len(FUNCTIONS) == len(local.function_names)
    for function, spec in FUNCTIONS.items():
        _, props = full.function_by_handler(spec.handler)
        assert props["MemorySize"] == spec.memory_mb
        assert props["Timeout"] == spec.timeout_seconds
        deployed_env = set(props["Environment"]["Variables"])
        local_env = set(local.function_env(function, vl_enabled=True))
        assert {key.value for key in spec.env} <= deployed_env
        assert local_env == {key.value for key in spec.env}
        assert function in local.function_names


def test_every_template_topic_and_subscription_exists_locally(
    full: Synthesized, local: LocalResources
) -> None:
    # GIVEN the template's topics and Lambda subscriptions
    topics = full.of_type("AWS::SNS::Topic")
    subscriptions = [
        resource["Properties"] for resource in full.of_type("AWS::SNS::Subscription").values()
    ]

    # THEN the same topics exist locally, and each subscribed function has a local delivery
    assert len(topics) == len(Topic) == len(local.topic_arns)
    for function, spec in FUNCTIONS.items():
        function_id, _ = full.function_by_handler(spec.handler)
        subscribed = {
            sub["TopicArn"]["Ref"]
            for sub in subscriptions
            if sub["Protocol"] == "lambda"
            and sub["Endpoint"] == {"Fn::GetAtt": [function_id, "Arn"]}
        }
        expected = {full.logical_id(f"{topic.value}/{topic.value}") for topic in spec.topics}
        assert subscribed == expected, function
        assert (function in local.delivery_queue_urls) == bool(spec.topics)


def test_queue_and_event_source_settings_match(full: Synthesized, local: LocalResources) -> None:
    # GIVEN the job queue and the invoker's event source in the template
    _, queue = full.job_queue()
    mappings = full.of_type("AWS::Lambda::EventSourceMapping").values()
    invoker_id, _ = full.function_by_handler(FUNCTIONS[Function.INVOKER].handler)
    (mapping,) = [m for m in mappings if m["Properties"]["FunctionName"] == ref(invoker_id)]
    events_id, _ = full.function_by_handler(FUNCTIONS[Function.EVENTS].handler)
    (stream,) = [m for m in mappings if m["Properties"]["FunctionName"] == ref(events_id)]

    # THEN the local runtime uses the same redrive, visibility and batch settings
    assert queue["RedrivePolicy"]["maxReceiveCount"] == QUEUE_MAX_RECEIVE_COUNT
    assert queue["VisibilityTimeout"] == local.visibility_timeout_seconds
    assert mapping["Properties"]["FunctionName"] == ref(invoker_id)
    assert (
        mapping["Properties"]["BatchSize"]
        == LocalSettings.model_fields["invoker_batch_size"].default
    )
    # AND the jobs table's stream reaches the events function as the local runtime reads it
    assert stream["Properties"]["BatchSize"] == EVENTS_BATCH_SIZE
    assert stream["Properties"]["MaximumRetryAttempts"] == EVENTS_RETRY_ATTEMPTS
    assert stream["Properties"]["StartingPosition"] == "TRIM_HORIZON"
    assert local.table_stream_arn.startswith("arn:aws:dynamodb:")
