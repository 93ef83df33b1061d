"""Least privilege: each role is granted exactly the actions on exactly the resources its
component needs (rendered as strings: <LogicalId.Arn>/prefix/*)."""

from __future__ import annotations

from typing import Any

import pytest

from idp.contract import names
from idp.contract.topology import FUNCTIONS, Function
from tests.infra.support import Synthesized, as_list, iter_statements

Grant = tuple[str, str]  # (action, resource)

KMS_USE = ("kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey")
JOB_STORE = ("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem")


def render(value: Any) -> str:
    if isinstance(value, str):
        return value
    if "Ref" in value:
        return f"<{value['Ref']}>"
    if "Fn::GetAtt" in value:
        logical_id, attribute = value["Fn::GetAtt"]
        return f"<{logical_id}.{attribute}>"
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(render(part) for part in parts)
    if "Fn::Sub" in value:
        return str(value["Fn::Sub"])
    raise AssertionError(f"cannot render {value}")


def grants_of(synth: Synthesized, role_id: str) -> set[Grant]:
    granted: set[Grant] = set()
    for policy in synth.of_type("AWS::IAM::Policy").values():
        if {"Ref": role_id} not in policy["Properties"]["Roles"]:
            continue
        for statement in iter_statements(policy["Properties"]["PolicyDocument"]):
            assert statement["Effect"] == "Allow"
            for action in as_list(statement["Action"]):
                for resource in as_list(statement["Resource"]):
                    granted.add((action, render(resource)))
    return granted


def pairs(actions: tuple[str, ...] | list[str], *resources: str) -> set[Grant]:
    return {(action, resource) for action in actions for resource in resources}


class Arns:
    """Rendered ARNs of the full stack's resources."""

    def __init__(self, synth: Synthesized) -> None:
        self.synth = synth
        self.key = f"<{synth.only('AWS::KMS::Key')[0]}.Arn>"
        self.input = f"<{synth.logical_id('Storage/InputBucket')}.Arn>"
        self.results = f"<{synth.logical_id('Storage/ResultsBucket')}.Arn>"
        self.models = f"<{synth.logical_id('Storage/ModelCacheBucket')}.Arn>"
        table_id = synth.only("AWS::DynamoDB::Table")[0]
        self.table = f"<{table_id}.Arn>"
        self.status_index = (
            "arn:<AWS::Partition>:dynamodb:<AWS::Region>:<AWS::AccountId>:table/"
            f"<{table_id}>/index/{names.STATUS_INDEX}"
        )
        self.job_queue = f"<{synth.job_queue()[0]}.Arn>"
        self.endpoint = f"<{synth.only('AWS::SageMaker::Endpoint')[0]}>"
        self.scale_in_alarm = f"<{synth.scale_in_alarm()[0]}.Arn>"

    def function(self, function: Function) -> tuple[str, str, str]:
        """(role id, log group ARN, function ARN) of a function."""
        function_id, props = self.synth.function_by_handler(FUNCTIONS[function].handler)
        role_id = props["Role"]["Fn::GetAtt"][0]
        log_group = f"<{props['LoggingConfig']['LogGroup']['Ref']}.Arn>"
        return role_id, log_group, f"<{function_id}.Arn>"

    def dead_letter_queue(self, function: Function) -> str:
        _, props = self.synth.function_by_handler(FUNCTIONS[function].handler)
        return render(props["DeadLetterConfig"]["TargetArn"])

    def topic(self, construct_id: str) -> str:
        return f"<{self.synth.logical_id(f'{construct_id}/{construct_id}')}>"

    def logs(self, log_group: str) -> set[Grant]:
        return pairs(("logs:CreateLogStream", "logs:PutLogEvents"), log_group)

    def granted(self, function: Function) -> set[Grant]:
        """What a function's role is granted besides writing its own log group (which every
        function's role is granted)."""
        role_id, log_group, _ = self.function(function)
        granted = grants_of(self.synth, role_id)
        assert self.logs(log_group) <= granted
        return granted - self.logs(log_group)

    def job_store(self) -> set[Grant]:
        return pairs(JOB_STORE, self.table, self.status_index)


@pytest.fixture(scope="module")
def arns(full: Synthesized) -> Arns:
    return Arns(full)


def test_invoker_reads_inputs_routes_jobs_and_scales_the_endpoint(arns: Arns) -> None:
    _, _, processor = arns.function(Function.PROCESSOR)
    assert arns.granted(Function.INVOKER) == (
        pairs(
            (
                "sqs:ChangeMessageVisibility",
                "sqs:DeleteMessage",
                "sqs:GetQueueAttributes",
                "sqs:GetQueueUrl",
                "sqs:ReceiveMessage",
            ),
            arns.job_queue,
        )
        | pairs(KMS_USE, arns.key)
        | pairs(("s3:GetObject", "s3:GetObjectVersion"), f"{arns.input}/*")
        | {("s3:ListBucket", arns.input)}
        | arns.job_store()
        | {("lambda:InvokeFunction", processor)}
        # VL jobs go to the processor too (it submits them); the invoker only scales out.
        | pairs(
            ("sagemaker:DescribeEndpoint", "sagemaker:UpdateEndpointWeightsAndCapacities"),
            arns.endpoint,
        )
        # Scaling out re-arms the scale-in alarm, and only that alarm.
        | {("cloudwatch:SetAlarmState", arns.scale_in_alarm)}
    )


def test_processor_reads_inputs_writes_results_and_caches_models(arns: Arns) -> None:
    _, _, processor = arns.function(Function.PROCESSOR)
    assert arns.granted(Function.PROCESSOR) == (
        {("sns:Publish", arns.topic("ErrorTopic"))}  # its on-failure destination
        | {("lambda:InvokeFunction", processor)}  # a long document's chunks
        | pairs(
            ("s3:GetObject", "s3:PutObject", "s3:DeleteObject"),
            f"{arns.results}/{names.WORK_PREFIX}*",
        )
        | pairs(KMS_USE, arns.key)
        | pairs(("s3:GetObject", "s3:GetObjectVersion"), f"{arns.input}/*")
        | {("s3:ListBucket", arns.input)}
        | pairs(("s3:GetObject", "s3:PutObject"), f"{arns.results}/{names.RESULTS_PREFIX}*")
        | {("s3:ListBucket", arns.results)}
        | pairs(
            ("s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"),
            f"{arns.models}/{names.MODEL_CACHE_PREFIX}*",
        )
        | {("s3:ListBucket", arns.models)}
        | arns.job_store()
        # PaddleOCR-VL jobs: their manifests, the async inference of each (or each chunk), and
        # the outputs it finishes them from (ListBucket on that prefix: a missing one reads 404).
        | {("s3:PutObject", f"{arns.results}/{names.VL_MANIFEST_PREFIX}*")}
        | {("sagemaker:InvokeEndpointAsync", arns.endpoint)}
        | {("s3:GetObject", f"{arns.results}/{names.VL_OUTPUT_PREFIX}*")}
    )


def test_completion_handler_reads_failures_and_plans_and_hands_results_over(arns: Arns) -> None:
    _, _, processor = arns.function(Function.PROCESSOR)
    assert arns.granted(Function.COMPLETION) == (
        {("sqs:SendMessage", arns.dead_letter_queue(Function.COMPLETION))}
        | pairs(KMS_USE, arns.key)
        # A failed inference's failure object; a missing one must read 404, not 403.
        | {("s3:GetObject", f"{arns.results}/{names.VL_FAILURE_PREFIX}*")}
        | {("s3:ListBucket", arns.results)}
        # A chunked VL job's plan, which names each chunk's pages; nothing else under work/.
        | {("s3:GetObject", f"{arns.results}/{names.WORK_PREFIX}*/{names.WORK_PLAN}*")}
        | arns.job_store()
        # A successful inference is the processor's to finish: it writes every result file.
        | {("lambda:InvokeFunction", processor)}
    )


def test_scale_in_handler_only_describes_and_scales_the_endpoint(arns: Arns) -> None:
    assert arns.granted(Function.SCALE_IN) == (
        {("sqs:SendMessage", arns.dead_letter_queue(Function.SCALE_IN))}
        | pairs(KMS_USE, arns.key)
        | pairs(
            ("sagemaker:DescribeEndpoint", "sagemaker:UpdateEndpointWeightsAndCapacities"),
            arns.endpoint,
        )
        | {("cloudwatch:SetAlarmState", arns.scale_in_alarm)}
    )


def test_vl_execution_role_is_least_privilege(full: Synthesized, arns: Arns) -> None:
    _, model = full.only("AWS::SageMaker::Model")
    role_id = model["ExecutionRoleArn"]["Fn::GetAtt"][0]
    granted = grants_of(full, role_id)
    repositories = {r for a, r in granted if a == "ecr:BatchGetImage"}
    assert len(repositories) == 1
    (repository,) = repositories
    assert "container-assets" in repository
    (log_group,) = [
        f"<{logical_id}.Arn>"
        for logical_id, group in full.of_type("AWS::Logs::LogGroup").items()
        if "/aws/sagemaker/Endpoints/" in group["Properties"].get("LogGroupName", "")
    ]
    assert granted == (
        pairs(
            ("ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"),
            repository,
        )
        | {("ecr:GetAuthorizationToken", "*"), ("cloudwatch:PutMetricData", "*")}
        | pairs(("logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"), log_group)
        | pairs(("sns:Publish",), arns.topic("VlSuccessTopic"), arns.topic("ErrorTopic"))
        | pairs(KMS_USE, arns.key)
        | pairs(("s3:GetObject", "s3:GetObjectVersion"), f"{arns.input}/*")
        | {("s3:ListBucket", arns.input)}
        | {("s3:GetObject", f"{arns.results}/{names.VL_MANIFEST_PREFIX}*")}
        # The per-chunk PDFs of a large document, and only those.
        | {("s3:GetObject", f"{arns.results}/{names.WORK_PREFIX}*/chunks/*")}
        | {("s3:ListBucket", arns.results)}
        | pairs(
            ("s3:PutObject",),
            f"{arns.results}/{names.VL_OUTPUT_PREFIX}*",
            f"{arns.results}/{names.VL_FAILURE_PREFIX}*",
        )
        | {("s3:GetObject", f"{arns.models}/{names.MODEL_CACHE_PREFIX}*")}
        | {("s3:ListBucket", arns.models)}
    )


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


def test_completion_handler_lists_only_the_vl_failure_prefix(full: Synthesized, arns: Arns) -> None:
    role_id, _, _ = arns.function(Function.COMPLETION)
    conditions = [
        statement["Condition"]
        for policy in full.of_type("AWS::IAM::Policy").values()
        if {"Ref": role_id} in policy["Properties"]["Roles"]
        for statement in iter_statements(policy["Properties"]["PolicyDocument"])
        if statement["Action"] == "s3:ListBucket"
    ]
    assert conditions == [{"StringLike": {"s3:prefix": [f"{names.VL_FAILURE_PREFIX}*"]}}]
