"""The PaddleOCR-VL async endpoint, its scaling between 0 and 1 instance, and CPU-only mode."""

from __future__ import annotations

from typing import Any

import botocore.session
from botocore.model import StringShape

from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.env.vl import VlEnv
from idp.contract.names import Service
from idp.contract.topology import FUNCTIONS, SCALE_IN_ALARM_NAME_SUFFIX, Function, Topic
from infra.vl_endpoint import INFERENCE_AMI_VERSION, SCALABLE_DIMENSION
from tests.infra.support import Synthesized, arn_of, as_list, iter_statements, ref

ENDPOINT_NAME = f"{names.STACK_NAME}-vl"


def _topic_id(synth: Synthesized, topic: Topic) -> str:
    return synth.logical_id(f"{topic.value}/{topic.value}")


def _results_path(synth: Synthesized, prefix: str) -> dict[str, Any]:
    bucket = synth.logical_id("Storage/ResultsBucket")
    return {"Fn::Join": ["", ["s3://", ref(bucket), f"/{prefix}"]]}


def test_model_runs_the_vl_image_with_its_execution_role(full: Synthesized) -> None:
    _, model = full.only("AWS::SageMaker::Model")
    role_id = model["ExecutionRoleArn"]["Fn::GetAtt"][0]
    assert full.props(role_id)["AssumeRolePolicyDocument"]["Statement"] == [
        {
            "Action": "sts:AssumeRole",
            "Effect": "Allow",
            "Principal": {"Service": "sagemaker.amazonaws.com"},
        }
    ]
    images = full.assets_manifest["dockerImages"]
    vl_images = [i for i in images.values() if i["source"]["dockerFile"].startswith("sagemaker")]
    assert len(vl_images) == 1
    assert vl_images[0]["source"]["dockerFile"] == "sagemaker_container/Dockerfile"
    assert "container-assets" in str(model["PrimaryContainer"]["Image"])
    env = model["PrimaryContainer"]["Environment"]
    assert env[Env.MODEL_CACHE_BUCKET] == ref(full.logical_id("Storage/ModelCacheBucket"))
    assert env[Env.POWERTOOLS_SERVICE_NAME] == Service.VL_ENDPOINT.value
    assert env[VlEnv.MAX_CONCURRENT_REQUESTS] == str(names.VL_MAX_CONCURRENT_INVOCATIONS)
    assert env[VlEnv.REQUEST_TIMEOUT_SECONDS] == str(names.VL_REQUEST_TIMEOUT_SECONDS)


def test_container_gives_up_on_a_request_before_sagemaker_does(full: Synthesized) -> None:
    # GIVEN the container's own request timeout and the invocation timeout the invoker passes
    _, model = full.only("AWS::SageMaker::Model")
    container_timeout = int(model["PrimaryContainer"]["Environment"][VlEnv.REQUEST_TIMEOUT_SECONDS])
    # THEN the container's 504 (with its reason) arrives before SageMaker's bare timeout
    assert 0 < container_timeout < names.VL_INVOCATION_TIMEOUT_SECONDS


def test_endpoint_config_is_asynchronous_with_s3_paths_and_sns_notifications(
    full: Synthesized,
) -> None:
    key_id, _ = full.only("AWS::KMS::Key")
    model_id, _ = full.only("AWS::SageMaker::Model")
    _, config = full.only("AWS::SageMaker::EndpointConfig")
    assert config["AsyncInferenceConfig"] == {
        "ClientConfig": {
            "MaxConcurrentInvocationsPerInstance": names.VL_MAX_CONCURRENT_INVOCATIONS
        },
        "OutputConfig": {
            "KmsKeyId": arn_of(key_id),
            "NotificationConfig": {
                "SuccessTopic": ref(_topic_id(full, Topic.SUCCESS)),
                "ErrorTopic": ref(_topic_id(full, Topic.ERROR)),
            },
            "S3OutputPath": _results_path(full, names.VL_OUTPUT_PREFIX),
            "S3FailurePath": _results_path(full, names.VL_FAILURE_PREFIX),
        },
    }
    assert config["ProductionVariants"] == [
        {
            "VariantName": names.VL_VARIANT_NAME,
            "ModelName": {"Fn::GetAtt": [model_id, "ModelName"]},
            "InstanceType": names.VL_INSTANCE_TYPE,
            "InitialInstanceCount": 1,  # CloudFormation's minimum; scale-in takes it to 0
            "InitialVariantWeight": 1,
            "InferenceAmiVersion": INFERENCE_AMI_VERSION,
            "ContainerStartupHealthCheckTimeoutInSeconds": (
                names.VL_CONTAINER_STARTUP_TIMEOUT_SECONDS
            ),
        }
    ]
    # ml.g5 has local NVMe storage: SageMaker rejects a volume KmsKeyId for it.
    assert "KmsKeyId" not in config


def test_variant_boots_an_ami_whose_driver_runs_cuda_12_images() -> None:
    # GIVEN SageMaker's own list of inference AMIs (the API model botocore ships)
    sagemaker = botocore.session.get_session().get_service_model("sagemaker")
    shape = sagemaker.shape_for("ProductionVariantInferenceAmiVersion")
    assert isinstance(shape, StringShape)
    offered = shape.enum
    # THEN the variant names one of them, a GPU AMI newer than the default (driver 470, CUDA
    # 11.4): the gpu-2* AMIs carry driver 535 (CUDA 12.2), gpu-3-1 driver 550 (CUDA 12.4)
    assert INFERENCE_AMI_VERSION in offered
    assert INFERENCE_AMI_VERSION == "al2-ami-sagemaker-inference-gpu-3-1"


def test_endpoint_uses_the_config_under_the_name_the_functions_know(full: Synthesized) -> None:
    config_id, _ = full.only("AWS::SageMaker::EndpointConfig")
    _, endpoint = full.only("AWS::SageMaker::Endpoint")
    assert endpoint == {
        "EndpointName": ENDPOINT_NAME,
        "EndpointConfigName": {"Fn::GetAtt": [config_id, "EndpointConfigName"]},
    }
    _, scale_in = full.function_by_handler(FUNCTIONS[Function.SCALE_IN].handler)
    assert scale_in["Environment"]["Variables"][Env.VL_ENDPOINT_NAME] == ENDPOINT_NAME


def test_variant_scales_between_zero_and_one_instance(full: Synthesized) -> None:
    endpoint_id, _ = full.only("AWS::SageMaker::Endpoint")
    target_id, target = full.only("AWS::ApplicationAutoScaling::ScalableTarget")
    assert target["MinCapacity"] == 0
    assert target["MaxCapacity"] == 1
    assert target["ScalableDimension"] == SCALABLE_DIMENSION
    assert target["ServiceNamespace"] == "sagemaker"
    assert target["ResourceId"] == f"endpoint/{ENDPOINT_NAME}/variant/{names.VL_VARIANT_NAME}"
    assert "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint" in str(target["RoleARN"])
    assert endpoint_id in as_list(full.resources[target_id]["DependsOn"])


def test_step_scaling_scales_out_on_backlog_without_capacity(full: Synthesized) -> None:
    target_id, _ = full.only("AWS::ApplicationAutoScaling::ScalableTarget")
    policy_id, policy = full.only("AWS::ApplicationAutoScaling::ScalingPolicy")
    assert policy["PolicyType"] == "StepScaling"
    assert policy["ScalingTargetId"] == ref(target_id)
    assert policy["StepScalingPolicyConfiguration"]["AdjustmentType"] == "ChangeInCapacity"
    assert policy["StepScalingPolicyConfiguration"]["StepAdjustments"] == [
        {"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}
    ]
    (alarm,) = [
        a["Properties"]
        for a in full.of_type("AWS::CloudWatch::Alarm").values()
        if a["Properties"]["AlarmActions"] == [ref(policy_id)]
    ]
    assert alarm["MetricName"] == "HasBacklogWithoutCapacity"
    assert alarm["Namespace"] == "AWS/SageMaker"
    assert alarm["Dimensions"] == [{"Name": "EndpointName", "Value": ENDPOINT_NAME}]
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert alarm["Threshold"] == 1


def test_idle_backlog_alarm_notifies_the_scale_in_topic(full: Synthesized) -> None:
    _, alarm = full.scale_in_alarm()
    assert alarm == {
        "AlarmName": f"{names.STACK_NAME}-{SCALE_IN_ALARM_NAME_SUFFIX}",
        "AlarmDescription": alarm["AlarmDescription"],
        "AlarmActions": [ref(_topic_id(full, Topic.SCALE_IN))],
        "MetricName": "ApproximateBacklogSizePerInstance",
        "Namespace": "AWS/SageMaker",
        "Dimensions": [{"Name": "EndpointName", "Value": ENDPOINT_NAME}],
        "Statistic": "Average",
        "Period": names.SCALE_IN_PERIOD_SECONDS,
        "EvaluationPeriods": names.SCALE_IN_EVALUATION_PERIODS,
        "ComparisonOperator": "LessThanThreshold",
        "Threshold": names.SCALE_IN_BACKLOG_THRESHOLD,
        "TreatMissingData": "breaching",
    }
    assert (names.SCALE_IN_BACKLOG_THRESHOLD, names.SCALE_IN_EVALUATION_PERIODS) == (0.1, 10)
    assert names.SCALE_IN_PERIOD_SECONDS == 60


def test_cloudwatch_may_publish_alarms_into_the_encrypted_topic(full: Synthesized) -> None:
    _, key = full.only("AWS::KMS::Key")
    principals = {
        s["Principal"].get("Service")
        for s in iter_statements(key["KeyPolicy"])
        if s["Action"] == ["kms:Decrypt", "kms:GenerateDataKey"]
    }
    assert "cloudwatch.amazonaws.com" in principals


def test_topics_are_encrypted_and_tls_only(full: Synthesized) -> None:
    key_id, _ = full.only("AWS::KMS::Key")
    topics = full.of_type("AWS::SNS::Topic")
    assert set(topics) == {_topic_id(full, topic) for topic in Topic}
    policies = {
        p["Properties"]["Topics"][0]["Ref"]: list(
            iter_statements(p["Properties"]["PolicyDocument"])
        )
        for p in full.of_type("AWS::SNS::TopicPolicy").values()
    }
    for logical_id, topic in topics.items():
        assert topic["Properties"]["KmsMasterKeyId"] == arn_of(key_id)
        assert {
            "Action": "sns:Publish",
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            "Effect": "Deny",
            "Principal": "*",
            "Resource": ref(logical_id),
            "Sid": "AllowPublishThroughSSLOnly",
        } in policies[logical_id]


def test_endpoint_logs_are_kept_for_the_configured_retention(full: Synthesized) -> None:
    (group,) = [
        g["Properties"]
        for g in full.of_type("AWS::Logs::LogGroup").values()
        if g["Properties"].get("LogGroupName") == f"/aws/sagemaker/Endpoints/{ENDPOINT_NAME}"
    ]
    assert group["RetentionInDays"] == 30


def test_endpoint_log_group_goes_with_the_stack(full: Synthesized) -> None:
    # GIVEN the log group SageMaker's fixed name points at
    (group,) = [
        g
        for g in full.of_type("AWS::Logs::LogGroup").values()
        if g["Properties"].get("LogGroupName") == f"/aws/sagemaker/Endpoints/{ENDPOINT_NAME}"
    ]
    # THEN a rollback or a stack deletion removes it, so a redeploy can create it again
    assert group["DeletionPolicy"] == "Delete"
    assert group["UpdateReplacePolicy"] == "Delete"


def test_cloudwatch_may_publish_only_the_scale_in_alarm_into_its_topic(
    full: Synthesized,
) -> None:
    # GIVEN the scale-in topic's policy (which replaces SNS's default policy)
    topic_id = _topic_id(full, Topic.SCALE_IN)
    (policy_id, policy) = next(
        (logical_id, p["Properties"])
        for logical_id, p in full.of_type("AWS::SNS::TopicPolicy").items()
        if p["Properties"]["Topics"] == [ref(topic_id)]
    )
    # THEN it allows CloudWatch to publish, for this account's scale-in alarm only
    alarm_arn = {
        "Fn::Join": [
            "",
            [
                "arn:",
                ref("AWS::Partition"),
                ":cloudwatch:",
                ref("AWS::Region"),
                ":",
                ref("AWS::AccountId"),
                f":alarm:{names.STACK_NAME}-{SCALE_IN_ALARM_NAME_SUFFIX}",
            ],
        ]
    }
    assert {
        "Sid": "AllowCloudwatchToPublish",
        "Effect": "Allow",
        "Principal": {"Service": "cloudwatch.amazonaws.com"},
        "Action": "sns:Publish",
        "Resource": ref(topic_id),
        "Condition": {
            "ArnEquals": {"aws:SourceArn": alarm_arn},
            "StringEquals": {"aws:SourceAccount": ref("AWS::AccountId")},
        },
    } in policy["PolicyDocument"]["Statement"]
    # AND the alarm is created after that Allow, so its first notification is not refused
    alarm_id, _ = full.scale_in_alarm()
    assert policy_id in as_list(full.resources[alarm_id]["DependsOn"])


def test_scale_in_alarm_is_created_once_the_endpoint_can_be_scaled(full: Synthesized) -> None:
    # GIVEN the idle alarm, which fires soon after creation (missing data counts as idle)
    endpoint_id, _ = full.only("AWS::SageMaker::Endpoint")
    alarm_id, _ = full.scale_in_alarm()
    # THEN CloudFormation creates it only after the endpoint is in service
    assert endpoint_id in as_list(full.resources[alarm_id]["DependsOn"])


def test_invoker_can_find_the_scale_in_alarm_it_re_arms(full: Synthesized) -> None:
    alarm_id, _ = full.scale_in_alarm()
    _, invoker = full.function_by_handler(FUNCTIONS[Function.INVOKER].handler)
    assert invoker["Environment"]["Variables"][Env.VL_SCALE_IN_ALARM_NAME] == ref(alarm_id)


def test_cpu_only_mode_deploys_no_gpu_path(cpu_only: Synthesized) -> None:
    for resource_type in (
        "AWS::SageMaker::Model",
        "AWS::SageMaker::EndpointConfig",
        "AWS::SageMaker::Endpoint",
        "AWS::ApplicationAutoScaling::ScalableTarget",
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        "AWS::CloudWatch::Alarm",
    ):
        assert cpu_only.of_type(resource_type) == {}, resource_type
    assert set(cpu_only.of_type("AWS::SNS::Topic")) == {_topic_id(cpu_only, Topic.ERROR)}
    handlers = {
        f["Properties"].get("Handler") for f in cpu_only.of_type("AWS::Lambda::Function").values()
    }
    assert FUNCTIONS[Function.SCALE_IN].handler not in handlers
    assert not [
        a
        for a in cpu_only.assets_manifest["dockerImages"].values()
        if "sagemaker" in a["source"]["dockerFile"]
    ]
    _, invoker = cpu_only.function_by_handler(FUNCTIONS[Function.INVOKER].handler)
    env = invoker["Environment"]["Variables"]
    assert env[Env.VL_ENABLED] == "false"
    assert env[Env.VL_ENDPOINT_NAME] == ""
    assert env[Env.VL_SCALE_IN_ALARM_NAME] == ""


def test_cpu_only_completion_handler_still_records_processor_crashes(
    cpu_only: Synthesized,
) -> None:
    completion_id, _ = cpu_only.function_by_handler(FUNCTIONS[Function.COMPLETION].handler)
    (subscription,) = cpu_only.of_type("AWS::SNS::Subscription").values()
    assert subscription["Properties"]["Endpoint"] == arn_of(completion_id)
    assert subscription["Properties"]["TopicArn"] == ref(_topic_id(cpu_only, Topic.ERROR))
