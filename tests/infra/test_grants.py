"""Least privilege: each role is granted exactly the actions on exactly the resources its
component needs, as the grant table of docs/security.md lists them (tests/infra/grant_table.py
reads both). A grant the template adds, or one the docs list and the template lacks, fails."""

from __future__ import annotations

import re
from typing import Final

import pytest

from idp.contract import names
from idp.contract.topology import Function
from tests.infra.grant_table import (
    ROLES,
    VL_ROLE,
    Grant,
    docs_grants,
    raw_grants,
    role_of,
    template_grants,
)
from tests.infra.support import Synthesized, iter_statements
from tests.paths import REPO_ROOT


@pytest.fixture(scope="module")
def granted(full: Synthesized) -> dict[str, set[Grant]]:
    return template_grants(full)


@pytest.fixture(scope="module")
def documented() -> dict[str, set[Grant]]:
    return docs_grants()


@pytest.mark.parametrize("role", ROLES)
def test_each_role_has_exactly_the_grants_the_docs_table_lists(
    role: str, granted: dict[str, set[Grant]], documented: dict[str, set[Grant]]
) -> None:
    template, docs = granted[role], documented.get(role, set())
    assert not template - docs, f"granted to {role} but not in docs/security.md: {template - docs}"
    assert not docs - template, f"in docs/security.md but not granted to {role}: {docs - template}"


def test_the_docs_table_lists_no_role_the_stack_lacks(documented: dict[str, set[Grant]]) -> None:
    assert set(documented) == set(ROLES)


def test_no_role_may_write_the_model_cache_or_call_kms_encrypt(
    granted: dict[str, set[Grant]],
) -> None:
    reads = {"s3:GetObject", "s3:ListBucket"}
    cache_writes = {
        (role, action)
        for role, grants in granted.items()
        for action, resource in grants
        if resource.startswith("model-cache-bucket") and action not in reads
    }
    assert not cache_writes
    assert not {role for role, grants in granted.items() for a, _ in grants if a == "kms:Encrypt"}


def test_cpu_only_roles_are_a_subset_without_the_vl_path(
    full: Synthesized, cpu_only: Synthesized
) -> None:
    full_grants, cpu_grants = template_grants(full), template_grants(cpu_only)
    assert VL_ROLE not in cpu_grants
    for role, grants in cpu_grants.items():
        assert grants <= full_grants[role], role
        assert not any(action.startswith("sagemaker:") for action, _ in grants), role


def test_vl_role_pulls_only_from_the_image_asset_repository(full: Synthesized) -> None:
    repositories = {
        resource
        for action, resource in raw_grants(full, role_of(full, VL_ROLE))
        if action == "ecr:BatchGetImage"
    }
    assert len(repositories) == 1
    assert "container-assets" in next(iter(repositories))


def test_prefix_listing_is_limited_to_its_prefix(full: Synthesized) -> None:
    prefixes = set()
    for policy in full.of_type("AWS::IAM::Policy").values():
        for statement in iter_statements(policy["Properties"]["PolicyDocument"]):
            if statement["Action"] == "s3:ListBucket" and "Condition" in statement:
                prefixes.update(statement["Condition"]["StringLike"]["s3:prefix"])
    assert prefixes == {
        f"{names.RESULTS_PREFIX}*",
        f"{names.WORK_PREFIX}*",
        f"{names.WORK_PREFIX}*/chunks/*",
        f"{names.MODEL_CACHE_PREFIX}*",
        f"{names.VL_OUTPUT_PREFIX}*",
        f"{names.VL_FAILURE_PREFIX}*",
    }


def test_completion_handler_lists_only_the_vl_failure_prefix(full: Synthesized) -> None:
    role_id = role_of(full, Function.COMPLETION.value)
    conditions = [
        statement["Condition"]
        for policy in full.of_type("AWS::IAM::Policy").values()
        if {"Ref": role_id} in policy["Properties"]["Roles"]
        for statement in iter_statements(policy["Properties"]["PolicyDocument"])
        if statement["Action"] == "s3:ListBucket"
    ]
    assert conditions == [{"StringLike": {"s3:prefix": [f"{names.VL_FAILURE_PREFIX}*"]}}]


# What each function's code calls on the job store, found in its source, and the DynamoDB
# action each call makes (idp/jobstore: a new record is a conditional put, a read a consistent
# get, a listing a query of the status index, every other call a conditional update).
STORE_CALL = re.compile(r"\bstore\.([a-z_]+)\(")
STORE_ACTIONS: Final = {
    "create": "dynamodb:PutItem",
    "create_failed": "dynamodb:PutItem",
    "get": "dynamodb:GetItem",
    "list_by_status": "dynamodb:Query",
    "list_all": "dynamodb:Query",
}
# The code each function runs that holds a job store (its own package, and the job flow
# modules the processor runs: a chunked job's fan-in).
FUNCTION_SOURCES: Final = {
    Function.INVOKER: ("lambdas/invoker",),
    Function.PROCESSOR: ("ocr_processor_image", "idp/flow"),
    Function.COMPLETION: ("lambdas/completion",),
    Function.SWEEPER: ("lambdas/sweeper",),
    Function.SCALE_IN: ("lambdas/scale_in",),
    Function.EVENTS: ("lambdas/events",),
    # The converter holds no job store: its code calls none, and its role has no table action.
    Function.CONVERTER: ("office_converter_image",),
}


def _store_actions_in_code(function: Function) -> set[str]:
    calls = {
        call
        for source in FUNCTION_SOURCES[function]
        for path in (REPO_ROOT / source).rglob("*.py")
        for call in STORE_CALL.findall(path.read_text(encoding="utf-8"))
    }
    return {STORE_ACTIONS.get(call, "dynamodb:UpdateItem") for call in calls}


@pytest.mark.parametrize("function", list(FUNCTION_SOURCES))
def test_job_table_actions_are_exactly_those_the_code_calls(
    function: Function, granted: dict[str, set[Grant]]
) -> None:
    table_actions = {
        action
        for action, resource in granted[function.value]
        if resource.startswith("jobs-table") and not resource.endswith("/stream")
    }
    assert table_actions == _store_actions_in_code(function)


def test_the_converter_role_holds_no_s3_kms_or_table_action(
    granted: dict[str, set[Grant]],
) -> None:
    # Its job's input and PDF are reached through the processor's presigned URLs only.
    actions = {action for action, _resource in granted[Function.CONVERTER.value]}
    assert actions == {"logs:CreateLogStream", "logs:PutLogEvents"}
