"""The stack's one customer-managed KMS key, rotated yearly, shared by every data store.

One key keeps the key policy in one place: the AWS services that write into encrypted
resources on the stack's behalf (S3 events into the queue, SNS redrives and EventBridge's
undeliverable schedule events into a dead-letter queue, CloudWatch alarms into a topic) are
allowed here, each limited to this account.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Aws
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

# Exact actions (no wildcards) for principals that read and write encrypted data.
_DECRYPT: Final = ("kms:Decrypt",)
_ENCRYPT_DECRYPT: Final = ("kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey")
_SERVICE_ACTIONS: Final = ("kms:Decrypt", "kms:GenerateDataKey")


class DataKey(Construct):
    """A rotating symmetric key; `grant_*` give exact actions on this key only."""

    def __init__(self, scope: Construct, construct_id: str, *, description: str) -> None:
        super().__init__(scope, construct_id)
        self.key = kms.Key(self, "Key", description=description, enable_key_rotation=True)
        self._allowed_services: set[str] = set()

    def allow_service(self, service_principal: str) -> None:
        """Let an AWS service encrypt messages for this account (e.g. s3.amazonaws.com).

        The KMS call is made by SQS or SNS on the service's behalf. The source resource is
        pinned where the service writes (the queue or topic policy names the bucket, topic,
        rule or alarm in aws:SourceArn); here the statement names only the account, with
        aws:SourceAccount, AWS's documented confused-deputy guard for service principals (its
        EventBridge key-policy guide shows it for events.amazonaws.com). aws:SourceArn is not
        documented for every service's KMS calls, and a condition key the request lacks would
        silently refuse every delivery, so nothing narrower is required here.
        """
        if service_principal in self._allowed_services:
            return
        self._allowed_services.add(service_principal)
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                sid=f"Allow{service_principal.split('.', maxsplit=1)[0].capitalize()}ToUseKey",
                principals=[iam.ServicePrincipal(service_principal)],
                actions=list(_SERVICE_ACTIONS),
                resources=["*"],  # in a key policy "*" means this key
                conditions={"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}},
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
