"""The pipeline's S3 buckets: input, results, model cache, and their access-log bucket.

Why separate buckets rather than one bucket with prefixes:
- Only the input bucket emits job events and needs versioning (the job id derives from the
  object version), so a re-upload is a new job and nothing the pipeline writes can trigger one.
- Lifecycle and retention differ: inputs are user data kept as uploaded, results and the VL
  intermediates under sagemaker/ are pipeline output with their own expiry, the model cache is
  large, rarely written and shared by every run.
- Grants stay least-privilege and readable: one bucket ARN and one prefix per permission.
The access-log bucket is separate because S3 cannot deliver server access logs to an SSE-KMS
bucket, nor usefully to the bucket being logged; it uses S3-managed encryption.
"""

from __future__ import annotations

from aws_cdk import Aws, Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from idp.contract import names
from infra.encryption import DataKey
from infra.nag import acknowledge, arn_of, wildcard_resource
from infra.queues import allow_service_send

_INCOMPLETE_UPLOAD_DAYS = 7
_INPUT_NONCURRENT_VERSION_DAYS = 30
_MODEL_NONCURRENT_VERSION_DAYS = 90  # a replaced model archive can be restored for this long
_VL_INTERMEDIATE_DAYS = 14  # manifests, raw VL output and failures: results/ holds the outcome
_READ_ACTIONS = frozenset({"s3:GetObject"})


class Storage(Construct):
    """Input (versioned, emits job events), results, model-cache and access-log buckets."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        data_key: DataKey,
        access_log_retention: Duration,
        retention_days: int,
        input_bucket_name: str,
    ) -> None:
        super().__init__(scope, construct_id)
        self._data_key = data_key
        self.input_bucket_arn = f"arn:{Aws.PARTITION}:s3:::{input_bucket_name}"

        self.access_log_bucket = s3.Bucket(
            self,
            "AccessLogBucket",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            lifecycle_rules=[
                s3.LifecycleRule(id="expire-access-logs", expiration=access_log_retention),
                _abort_incomplete_uploads(),
            ],
        )
        # Named rather than generated, so that the job queue's policy can name it as the only
        # source of its events (a policy that referenced the bucket would be a cycle: S3
        # validates the destination when the bucket is created).
        self.input_bucket = self._data_bucket(
            "InputBucket",
            bucket_name=input_bucket_name,
            versioned=True,
            lifecycle_rules=[
                *_versioned_rules("inputs", _replaced_input_days(retention_days)),
                *_retention_rules("inputs", None, retention_days),
            ],
        )
        self.results_bucket = self._data_bucket(
            "ResultsBucket",
            lifecycle_rules=[
                *(
                    s3.LifecycleRule(
                        id=f"expire-{prefix.strip('/').replace('/', '-')}",
                        prefix=prefix,
                        expiration=Duration.days(_VL_INTERMEDIATE_DAYS),
                    )
                    for prefix in (
                        names.VL_MANIFEST_PREFIX,
                        names.VL_OUTPUT_PREFIX,
                        names.VL_FAILURE_PREFIX,
                    )
                ),
                # A large document's plan, chunk PDFs and partial results: the merge deletes
                # them, this rule whatever a failed job leaves behind.
                s3.LifecycleRule(
                    id="expire-work",
                    prefix=names.WORK_PREFIX,
                    expiration=Duration.days(names.WORK_RETENTION_DAYS),
                ),
                # Results, and the result cache under results/.cache/ with them.
                *_retention_rules("results", names.RESULTS_PREFIX, retention_days),
                _abort_incomplete_uploads(),
            ],
        )
        # Written only by an operator (`idp models sync`); versioned, so that an overwritten
        # archive can be seen and rolled back (the functions verify each one against its pin).
        self.model_cache_bucket = self._data_bucket(
            "ModelCacheBucket",
            versioned=True,
            lifecycle_rules=_versioned_rules("models", _MODEL_NONCURRENT_VERSION_DAYS),
        )

    def _data_bucket(
        self,
        construct_id: str,
        *,
        lifecycle_rules: list[s3.LifecycleRule],
        versioned: bool = False,
        bucket_name: str | None = None,
    ) -> s3.Bucket:
        return s3.Bucket(
            self,
            construct_id,
            bucket_name=bucket_name,
            encryption=s3.BucketEncryption.KMS,
            encryption_key=self._data_key.key,
            bucket_key_enabled=True,  # fewer KMS requests per object
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            versioned=versioned,
            server_access_logs_bucket=self.access_log_bucket,
            server_access_logs_prefix=f"{construct_id}/",
            lifecycle_rules=lifecycle_rules,
        )

    def send_input_events_to(self, queue: sqs.Queue, *, suffixes: tuple[str, ...]) -> None:
        """Notify `queue` of every object created under input/ with one of `suffixes`.

        Written as the bucket's own NotificationConfiguration (one filter per suffix, since an
        S3 filter holds a single suffix) rather than `add_event_notification`, which would add
        a custom-resource Lambda to the stack. The queue policy names the bucket by the ARN
        built from its name (S3 validates the destination when the bucket is created, so the
        bucket depends on the policy and the policy cannot reference it), and the account.
        """
        conditions = {
            "ArnEquals": {"aws:SourceArn": self.input_bucket_arn},
            "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
        }
        allow_service_send(
            queue,
            sid="AllowInputBucketEvents",
            service_principal="s3.amazonaws.com",
            conditions=conditions,
        )
        self._data_key.allow_service("s3.amazonaws.com", source_arns=[self.input_bucket_arn])
        cfn_bucket = self.input_bucket.node.default_child
        if not isinstance(cfn_bucket, s3.CfnBucket):
            raise TypeError(f"the input bucket's resource is a {type(cfn_bucket).__name__}")
        cfn_bucket.notification_configuration = s3.CfnBucket.NotificationConfigurationProperty(
            queue_configurations=[
                s3.CfnBucket.QueueConfigurationProperty(
                    event="s3:ObjectCreated:*",
                    queue=queue.queue_arn,
                    filter=s3.CfnBucket.NotificationFilterProperty(
                        s3_key=s3.CfnBucket.S3KeyFilterProperty(
                            rules=[
                                s3.CfnBucket.FilterRuleProperty(
                                    name="prefix", value=names.INPUT_PREFIX
                                ),
                                s3.CfnBucket.FilterRuleProperty(name="suffix", value=suffix),
                            ]
                        )
                    ),
                )
                for suffix in suffixes
            ]
        )
        # The queue's policy is created by add_to_resource_policy; find_child raises without it.
        cfn_bucket.node.add_dependency(queue.node.find_child("Policy"))

    # Grants: exact actions on one prefix each, plus the key actions they need.

    def grant_read_input(self, role: iam.Role) -> None:
        """GetObject (also HEAD) on any key, since a direct job message may name a key outside
        input/; ListBucket so that a missing key reads 404 rather than 403."""
        self._grant(role, self.input_bucket, ["s3:GetObject"], "", listing=True)

    def grant_read_write_results(self, role: iam.Role) -> None:
        actions = ["s3:GetObject", "s3:PutObject"]
        self._grant(role, self.results_bucket, actions, names.RESULTS_PREFIX, listing=True)

    def grant_chunk_work(self, role: iam.Role) -> None:
        """A large document's intermediates under work/: written by the fan-out and the
        chunks, read and deleted by the merge (ListBucket to find them)."""
        actions = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"]
        self._grant(role, self.results_bucket, actions, names.WORK_PREFIX, listing=True)

    def grant_write_vl_manifests(self, role: iam.Role) -> None:
        self._grant(role, self.results_bucket, ["s3:PutObject"], names.VL_MANIFEST_PREFIX)

    def grant_read_vl_manifests(self, role: iam.Role) -> None:
        self._grant(role, self.results_bucket, ["s3:GetObject"], names.VL_MANIFEST_PREFIX)

    def grant_read_vl_outputs(self, role: iam.Role) -> None:
        """GetObject on SageMaker's output objects, and ListBucket on their prefix: a missing
        output must read 404 (the job fails: no output) rather than 403 (retried as a denial)."""
        prefix = names.VL_OUTPUT_PREFIX
        self._grant(role, self.results_bucket, ["s3:GetObject"], prefix, listing=True)

    def grant_read_vl_failures(self, role: iam.Role) -> None:
        """GetObject on SageMaker's failure objects, and ListBucket on their prefix (404, not
        403, when a failure wrote none)."""
        prefix = names.VL_FAILURE_PREFIX
        self._grant(role, self.results_bucket, ["s3:GetObject"], prefix, listing=True)

    def grant_write_vl_outcomes(self, role: iam.Role) -> None:
        prefixes = (names.VL_OUTPUT_PREFIX, names.VL_FAILURE_PREFIX)
        self._grant(role, self.results_bucket, ["s3:PutObject"], *prefixes)

    def grant_read_chunk_plans(self, role: iam.Role) -> None:
        """A chunked job's plan (work/<job_id>/plan.json), which names each chunk's pages."""
        prefix = f"{names.WORK_PREFIX}*/{names.WORK_PLAN}"
        self._grant(role, self.results_bucket, ["s3:GetObject"], prefix)

    def grant_read_chunk_inputs(self, role: iam.Role) -> None:
        """A large document's per-chunk PDFs (work/<job_id>/chunks/), which the VL endpoint
        reads for the chunks it is sent."""
        prefix = f"{names.WORK_PREFIX}*/chunks/"
        self._grant(role, self.results_bucket, ["s3:GetObject"], prefix, listing=True)

    def grant_read_model_cache(self, role: iam.Role) -> None:
        prefix = names.MODEL_CACHE_PREFIX
        self._grant(role, self.model_cache_bucket, ["s3:GetObject"], prefix, listing=True)

    def _grant(
        self,
        role: iam.Role,
        bucket: s3.Bucket,
        actions: list[str],
        *prefixes: str,
        listing: bool = False,
    ) -> None:
        """`actions` on the objects under each prefix ("" for the whole bucket), ListBucket
        on those prefixes when `listing`, and the key: decrypt to read, encrypt too to write."""
        for prefix in prefixes:
            self._grant_objects(role, bucket, prefix, actions)
        if listing:
            self._grant_list(role, bucket, *(prefix for prefix in prefixes if prefix))
        if set(actions) <= _READ_ACTIONS:
            self._data_key.grant_decrypt(role)
        else:
            self._data_key.grant_encrypt_decrypt(role)

    @staticmethod
    def _grant_objects(role: iam.Role, bucket: s3.Bucket, prefix: str, actions: list[str]) -> None:
        role.add_to_policy(
            iam.PolicyStatement(actions=actions, resources=[bucket.arn_for_objects(f"{prefix}*")])
        )
        acknowledge(
            role,
            wildcard_resource(f"{arn_of(bucket)}/{prefix}*"),
            f"Object keys are chosen per job at run time; {', '.join(actions)} is limited to "
            + (f"the {prefix} prefix of this bucket." if prefix else "this one bucket."),
        )

    @staticmethod
    def _grant_list(role: iam.Role, bucket: s3.Bucket, *prefixes: str) -> None:
        """ListBucket, limited to `prefixes` when given (the whole bucket otherwise)."""
        conditions = (
            {"StringLike": {"s3:prefix": [f"{prefix}*" for prefix in prefixes]}}
            if prefixes
            else None
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:ListBucket"], resources=[bucket.bucket_arn], conditions=conditions
            )
        )


# S3 bucket names: at most 63 characters; the longest region name has 14, an account id 12.
_BUCKET_NAME_MAX = 63
_LONGEST_REGION = 14
_ACCOUNT_ID_LENGTH = 12


def input_bucket_name(stack_name: str, account: str, region: str) -> str:
    """`<stack>-input-<account>-<region>`, lowercase: unique per stack, account and region."""
    prefix = f"{stack_name.lower()}-input-"
    if len(prefix) + _ACCOUNT_ID_LENGTH + 1 + _LONGEST_REGION > _BUCKET_NAME_MAX:
        raise ValueError(
            f"stack name {stack_name!r} is too long for the input bucket's name "
            f"({prefix}<account>-<region> must fit {_BUCKET_NAME_MAX} characters)"
        )
    return f"{prefix}{account}-{region}"


def _versioned_rules(kind: str, noncurrent_days: int) -> list[s3.LifecycleRule]:
    """A versioned bucket's rules: replaced versions expire after `noncurrent_days`."""
    return [
        s3.LifecycleRule(
            id=f"expire-replaced-{kind}",
            noncurrent_version_expiration=Duration.days(noncurrent_days),
        ),
        _abort_incomplete_uploads(),
    ]


def _retention_rules(kind: str, prefix: str | None, days: int) -> list[s3.LifecycleRule]:
    """What the stack's retentionDays expires (none where it is 0: kept)."""
    if not days:
        return []
    return [s3.LifecycleRule(id=f"retain-{kind}", prefix=prefix, expiration=Duration.days(days))]


def _replaced_input_days(retention_days: int) -> int:
    """An expired or replaced input stays as a noncurrent version this long, to be restored:
    never longer than the retention itself."""
    if not retention_days:
        return _INPUT_NONCURRENT_VERSION_DAYS
    return min(_INPUT_NONCURRENT_VERSION_DAYS, retention_days)


def _abort_incomplete_uploads() -> s3.LifecycleRule:
    return s3.LifecycleRule(
        id="abort-incomplete-uploads",
        abort_incomplete_multipart_upload_after=Duration.days(_INCOMPLETE_UPLOAD_DAYS),
    )
