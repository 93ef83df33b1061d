"""The PaddleOCR-VL SageMaker asynchronous endpoint, scaled between zero and one GPU instance.

Scale-out is driven by the invoker (DesiredInstanceCount 0 -> 1 before InvokeEndpointAsync),
with step scaling on HasBacklogWithoutCapacity as the safety net. Scale-in is an alarm on
ApproximateBacklogSizePerInstance (idle for 10 minutes, missing data counts as idle) that
notifies the scale-in topic; the scale-in handler then sets the count to 0.

The 3600 s invocation timeout is not an endpoint-config property (AsyncInferenceConfig has no
such field in CloudFormation): it is InvokeEndpointAsync's InvocationTimeoutSeconds, which the
invoker passes on every call (names.VL_INVOCATION_TIMEOUT_SECONDS).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from aws_cdk import ArnFormat, Aws, Duration, RemovalPolicy, Stack
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk import aws_sns as sns
from constructs import Construct

from idp.contract import names
from infra.encryption import DataKey
from infra.log_groups import LogPolicy
from infra.nag import acknowledge, wildcard_resource
from infra.network import SAGEMAKER_VPC_ACTIONS, PrivateNetwork

DOCKERFILE: Final = "sagemaker_container/Dockerfile"
SAGEMAKER_NAMESPACE: Final = "AWS/SageMaker"
ENDPOINT_INSTANCE_NAMESPACE: Final = "/aws/sagemaker/Endpoints"
SCALABLE_DIMENSION: Final = "sagemaker:variant:DesiredInstanceCount"
# ml.g5 instances boot SageMaker's default inference AMI with NVIDIA driver 470 (CUDA 11.4),
# which cannot run the container's CUDA 12 builds (vLLM, paddlepaddle-gpu cu126). This AMI has
# driver 550 (CUDA 12.4; newer CUDA 12.x runtimes run on it through CUDA's minor-version
# compatibility) and supports ml.g5. The API also offers al2023-ami-sagemaker-inference-gpu-4-1
# (driver 580, CUDA 13.0); move to it once it is documented for ml.g5.
INFERENCE_AMI_VERSION: Final = "al2-ami-sagemaker-inference-gpu-3-1"
# Application Auto Scaling creates this service-linked role when a template names it.
_SCALING_ROLE_PATH: Final = (
    "role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/"
    "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"
)
_SCALE_OUT_COOLDOWN: Final = Duration.minutes(5)
_ONE_MINUTE: Final = Duration.minutes(1)


class VlEndpoint(Construct):
    """Image asset, execution role, model, async endpoint config, endpoint, scaling, alarm."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        repo_root: Path,
        endpoint_name: str,
        instance_type: str,
        environment: Mapping[str, str],
        output_bucket: s3.IBucket,
        data_key: DataKey,
        success_topic: sns.ITopic,
        error_topic: sns.ITopic,
        scale_in_topic: sns.ITopic,
        scale_in_alarm_name: str,
        log_policy: LogPolicy,
        network: PrivateNetwork | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.endpoint_name = endpoint_name
        self.variant_name = names.VL_VARIANT_NAME

        image = ecr_assets.DockerImageAsset(
            self,
            "Image",
            directory=str(repo_root),
            file=DOCKERFILE,
            platform=ecr_assets.Platform.LINUX_AMD64,
        )
        # SageMaker writes the container's logs here; created up front to set the retention.
        # The name is SageMaker's, not ours: a retained group would outlive a rolled-back or
        # deleted stack and make the next deploy fail with "already exists", so it goes with
        # the stack (the endpoint, deleted first, writes nothing more into it).
        self.log_group = log_policy.group(
            self,
            "LogGroup",
            log_group_name=f"{ENDPOINT_INSTANCE_NAMESPACE}/{endpoint_name}",
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.execution_role = self._execution_role(
            image, data_key, notification_topics=(success_topic, error_topic)
        )

        if network is not None:
            network.allow_attach(self.execution_role, SAGEMAKER_VPC_ACTIONS)
        model = sagemaker.CfnModel(
            self,
            "Model",
            execution_role_arn=self.execution_role.role_arn,
            primary_container=sagemaker.CfnModel.ContainerDefinitionProperty(
                image=image.image_uri, environment=dict(environment)
            ),
            # Private-network mode: the isolated subnets, no route out. (Network isolation is
            # not set: the container reads each job's document from S3 itself.)
            vpc_config=(
                sagemaker.CfnModel.VpcConfigProperty(
                    security_group_ids=[network.security_group.security_group_id],
                    subnets=list(network.subnet_ids),
                )
                if network is not None
                else None
            ),
        )
        # The model is validated against its role at creation: wait for the role's policy.
        model.node.add_dependency(self.execution_role.node.find_child("DefaultPolicy"))

        results = f"s3://{output_bucket.bucket_name}"
        # No KmsKeyId for the ML storage volume: SageMaker rejects one for instance types with
        # local NVMe storage such as ml.g5 (their volumes are encrypted by the service).
        endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "EndpointConfig",
            production_variants=[
                sagemaker.CfnEndpointConfig.ProductionVariantProperty(
                    variant_name=self.variant_name,
                    model_name=model.attr_model_name,
                    instance_type=instance_type,
                    # CloudFormation requires >= 1 here; the scale-in alarm brings it to 0.
                    initial_instance_count=1,
                    initial_variant_weight=1,
                    inference_ami_version=INFERENCE_AMI_VERSION,
                    # Start-up covers the weights fetch, vLLM loading and a warm-up inference.
                    container_startup_health_check_timeout_in_seconds=(
                        names.VL_CONTAINER_STARTUP_TIMEOUT_SECONDS
                    ),
                )
            ],
            async_inference_config=sagemaker.CfnEndpointConfig.AsyncInferenceConfigProperty(
                output_config=sagemaker.CfnEndpointConfig.AsyncInferenceOutputConfigProperty(
                    s3_output_path=f"{results}/{names.VL_OUTPUT_PREFIX}",
                    s3_failure_path=f"{results}/{names.VL_FAILURE_PREFIX}",
                    kms_key_id=data_key.key.key_arn,
                    notification_config=sagemaker.CfnEndpointConfig.AsyncInferenceNotificationConfigProperty(
                        success_topic=success_topic.topic_arn,
                        error_topic=error_topic.topic_arn,
                    ),
                ),
                client_config=sagemaker.CfnEndpointConfig.AsyncInferenceClientConfigProperty(
                    max_concurrent_invocations_per_instance=names.VL_MAX_CONCURRENT_INVOCATIONS
                ),
            ),
        )
        self.endpoint = sagemaker.CfnEndpoint(
            self,
            "Endpoint",
            endpoint_name=endpoint_name,
            endpoint_config_name=endpoint_config.attr_endpoint_config_name,
        )
        self.endpoint.node.add_dependency(self.log_group)

        self._scaling(scale_in_topic=scale_in_topic, alarm_name=scale_in_alarm_name)

    @property
    def endpoint_arn(self) -> str:
        return self.endpoint.ref  # Ref of AWS::SageMaker::Endpoint is its ARN

    def _execution_role(
        self,
        image: ecr_assets.DockerImageAsset,
        data_key: DataKey,
        *,
        notification_topics: tuple[sns.ITopic, ...],
    ) -> iam.Role:
        """ECR pull of this image, its log group, metrics, notifications, the key. The stack
        adds the S3 prefixes (input, manifests, output/failure, model cache)."""
        role = iam.Role(
            self, "ExecutionRole", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com")
        )
        image.repository.grant_pull(role)
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["sns:Publish"],
                resources=[topic.topic_arn for topic in notification_topics],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
                resources=[self.log_group.log_group_arn],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["cloudwatch:PutMetricData"],
                resources=["*"],  # PutMetricData has no resource-level permissions
                conditions={
                    "StringEquals": {
                        "cloudwatch:namespace": [
                            names.METRICS_NAMESPACE,
                            ENDPOINT_INSTANCE_NAMESPACE,
                        ]
                    }
                },
            )
        )
        data_key.grant_encrypt_decrypt(role)
        acknowledge(
            role,
            wildcard_resource("*"),
            "ecr:GetAuthorizationToken and cloudwatch:PutMetricData have no resource-level "
            "permissions; PutMetricData is limited by a cloudwatch:namespace condition.",
        )
        return role

    def _scaling(self, *, scale_in_topic: sns.ITopic, alarm_name: str) -> None:
        # Built from the name rather than read from the alarm, so that the scale-in topic's
        # policy can name the alarm while the alarm waits for that policy (no cycle).
        self.scale_in_alarm_arn = Stack.of(self).format_arn(
            service="cloudwatch",
            resource="alarm",
            resource_name=alarm_name,
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        scaling_role = iam.Role.from_role_arn(
            self,
            "ScalingRole",
            f"arn:{Aws.PARTITION}:iam::{Aws.ACCOUNT_ID}:{_SCALING_ROLE_PATH}",
            mutable=False,
        )
        self.scalable_target = appscaling.ScalableTarget(
            self,
            "ScalableTarget",
            service_namespace=appscaling.ServiceNamespace.SAGEMAKER,
            resource_id=f"endpoint/{self.endpoint_name}/variant/{self.variant_name}",
            scalable_dimension=SCALABLE_DIMENSION,
            min_capacity=0,
            max_capacity=1,
            role=scaling_role,
        )
        self.scalable_target.node.add_dependency(self.endpoint)
        # Safety net for scale-out: requests queued while no instance runs.
        self.scalable_target.scale_on_metric(
            "ScaleOutOnBacklog",
            metric=self.metric("HasBacklogWithoutCapacity", statistic="Average"),
            scaling_steps=[
                appscaling.ScalingInterval(upper=1, change=0),
                appscaling.ScalingInterval(lower=1, change=1),
            ],
            adjustment_type=appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
            cooldown=_SCALE_OUT_COOLDOWN,
            evaluation_periods=2,
            datapoints_to_alarm=2,
            metric_aggregation_type=appscaling.MetricAggregationType.MAXIMUM,
        )
        self.scale_in_alarm = cloudwatch.Alarm(
            self,
            "ScaleInAlarm",
            alarm_name=alarm_name,
            alarm_description="The VL endpoint has had no backlog for 10 minutes: scale in to 0",
            metric=self.metric(
                "ApproximateBacklogSizePerInstance",
                statistic="Average",
                period=Duration.seconds(names.SCALE_IN_PERIOD_SECONDS),
            ),
            comparison_operator=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
            threshold=names.SCALE_IN_BACKLOG_THRESHOLD,
            evaluation_periods=names.SCALE_IN_EVALUATION_PERIODS,
            treat_missing_data=cloudwatch.TreatMissingData.BREACHING,
        )
        self.scale_in_alarm.add_alarm_action(cw_actions.SnsAction(scale_in_topic))
        # Missing data counts as idle, so the alarm fires soon after it exists: created before
        # the endpoint is in service, its one notification would meet an endpoint that cannot
        # be scaled yet, and the alarm, left in ALARM, would not notify again.
        self.scale_in_alarm.node.add_dependency(self.endpoint)

    def metric(
        self, metric_name: str, *, statistic: str, period: Duration = _ONE_MINUTE
    ) -> cloudwatch.Metric:
        """An AWS/SageMaker endpoint metric (async backlog metrics live at endpoint level)."""
        return cloudwatch.Metric(
            namespace=SAGEMAKER_NAMESPACE,
            metric_name=metric_name,
            dimensions_map={"EndpointName": self.endpoint_name},
            statistic=statistic,
            period=period,
        )

    def metric_instance_count(self) -> cloudwatch.Metric:
        """Running instances: each instance reports CPUUtilization once a minute."""
        return cloudwatch.Metric(
            namespace=ENDPOINT_INSTANCE_NAMESPACE,
            metric_name="CPUUtilization",
            dimensions_map={"EndpointName": self.endpoint_name, "VariantName": self.variant_name},
            statistic="SampleCount",
            period=Duration.minutes(1),
            label="Running instances",
        )

    def grant_invoke_async(self, grantee: iam.IGrantable) -> None:
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["sagemaker:InvokeEndpointAsync"], resources=[self.endpoint_arn]
            )
        )

    def grant_scale(self, grantee: iam.IGrantable) -> None:
        """Read and set the variant's desired instance count (scale-out 0->1, scale-in 1->0),
        and set the scale-in alarm back to OK: whoever scales re-arms it, so that the next idle
        period notifies again (an alarm left in ALARM sends nothing; see the scale-in handler)."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=[
                    "sagemaker:DescribeEndpoint",
                    "sagemaker:UpdateEndpointWeightsAndCapacities",
                ],
                resources=[self.endpoint_arn],
            )
        )
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["cloudwatch:SetAlarmState"], resources=[self.scale_in_alarm.alarm_arn]
            )
        )
