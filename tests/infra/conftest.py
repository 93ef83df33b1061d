"""Synthesize the stack once per session for the full deployment and once for CPU-only mode."""

from __future__ import annotations

import os

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

import pytest

from tests.infra.support import Synthesized, synthesize

# The CPU-only synth also exercises context flowing into the stack with non-default values.
CPU_ONLY_CONTEXT = {
    "vlEnabled": "false",  # as `cdk synth -c vlEnabled=false` passes it: a string
    "invokerBatchSize": 5,
    "processorReservedConcurrency": 3,
    "processorEphemeralStorageMiB": 8192,
    "logRetentionDays": 14,
    "retentionDays": 0,  # keep inputs, results and records
}


@pytest.fixture(scope="session")
def full(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    """The default deployment (cdk.json context): VL endpoint included."""
    return synthesize(tmp_path_factory.mktemp("cdk-full"))


@pytest.fixture(scope="session")
def cpu_only(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    return synthesize(tmp_path_factory.mktemp("cdk-cpu"), **CPU_ONLY_CONTEXT)


@pytest.fixture(scope="session")
def private(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    """Private-network mode: every function and the VL endpoint in a VPC with no route out."""
    return synthesize(tmp_path_factory.mktemp("cdk-private"), privateNetwork="true")
