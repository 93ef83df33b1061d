"""The stack's one customer-managed KMS key, rotated yearly, shared by every data store.

One key keeps the key policy in one place: the AWS services that write into encrypted
resources on the stack's behalf (S3 events into the queue, SNS redrives and EventBridge's
undeliverable schedule events into a dead-letter queue, CloudWatch alarms into a topic) are
allowed here, each limited to this account.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from aws_cdk import Aws
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

# Exact actions (no wildcards) for principals that read and write encrypted data. Writers need
# data keys (S3, SQS and SNS ask KMS for one per object or message under the caller's identity)
# and Decrypt (a multipart upload, a message read back); no code calls kms:Encrypt itself.
_DECRYPT: Final = ("kms:Decrypt",)
_ENCRYPT_DECRYPT: Final = ("kms:Decrypt", "kms:GenerateDataKey")
# What CloudWatch Logs asks of a key that encrypts log groups (its user guide's key policy,
# written out without wildcards).
_LOGS_ACTIONS: Final = (
    "kms:Decrypt",
    "kms:DescribeKey",
    "kms:Encrypt",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyWithoutPlaintext",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
)
_SERVICE_ACTIONS: Final = ("kms:Decrypt", "kms:GenerateDataKey")


class DataKey(Construct):
    """A rotating symmetric key; `grant_*` give exact actions on this key only."""

    def __init__(self, scope: Construct, construct_id: str, *, description: str) -> None:
        super().__init__(scope, construct_id)
        self.key = kms.Key(self, "Key", description=description, enable_key_rotation=True)
        self._service_statements: dict[str, int] = {}

    def allow_service(self, service_principal: str, *, source_arns: Sequence[str]) -> None:
        """Let an AWS service use this key for the resources named in `source_arns` (e.g.
        s3.amazonaws.com for the input bucket's events into the encrypted job queue).

        The KMS call is made by SQS or SNS on the service's behalf, with the resource that
        caused it in aws:SourceArn and its account in aws:SourceAccount, AWS's confused-deputy
        guards for service principals. The ARNs are built from names, not references: every
        resource here is encrypted with this key, so a reference would be a cycle.
        """
        label = service_principal.split(".", maxsplit=1)[0].capitalize()
        count = self._service_statements.get(service_principal, 0) + 1
        self._service_statements[service_principal] = count
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                sid=f"Allow{label}ToUseKey{count if count > 1 else ''}",
                principals=[iam.ServicePrincipal(service_principal)],
                actions=list(_SERVICE_ACTIONS),
                resources=["*"],  # in a key policy "*" means this key
                conditions={
                    "ArnLike": {"aws:SourceArn": list(source_arns)},
                    "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
                },
            )
        )

    def allow_log_groups(self, name_patterns: Sequence[str]) -> None:
        """Let CloudWatch Logs encrypt the log groups named by `name_patterns` (and read them
        back for whoever may read them), as its documented key policy asks: the regional
        service principal, the log group's ARN in the encryption context."""
        arn = f"arn:{Aws.PARTITION}:logs:{Aws.REGION}:{Aws.ACCOUNT_ID}:log-group:"
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowLogsToUseKey",
                principals=[iam.ServicePrincipal(f"logs.{Aws.REGION}.amazonaws.com")],
                actions=list(_LOGS_ACTIONS),
                resources=["*"],
                conditions={
                    "ArnLike": {
                        "kms:EncryptionContext:aws:logs:arn": [
                            f"{arn}{pattern}" for pattern in name_patterns
                        ]
                    }
                },
            )
        )

    def grant_decrypt(self, grantee: iam.IGrantable) -> None:
        self._grant(grantee, _DECRYPT)

    def grant_encrypt_decrypt(self, grantee: iam.IGrantable) -> None:
        self._grant(grantee, _ENCRYPT_DECRYPT)

    def _grant(self, grantee: iam.IGrantable, actions: tuple[str, ...]) -> None:
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=list(actions), resources=[self.key.key_arn])
        )
