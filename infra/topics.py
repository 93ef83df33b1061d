"""An SNS topic of the pipeline: KMS-encrypted with the stack's key, TLS-only publishing."""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from aws_cdk import aws_sns as sns
from constructs import Construct

from infra.encryption import DataKey


class PipelineTopic(Construct):
    """One notification channel (VL success, errors, scale-in alarm)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, data_key: DataKey, display_name: str
    ) -> None:
        super().__init__(scope, construct_id)
        self._data_key = data_key
        # The topic's own id names its subscriptions, so it must be unique across topics.
        self.topic = sns.Topic(
            self,
            construct_id,
            display_name=display_name,
            master_key=data_key.key,
            enforce_ssl=True,
        )

    def grant_publish(self, grantee: iam.IGrantable) -> None:
        """sns:Publish on this topic and the key actions an encrypted publish needs."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=["sns:Publish"], resources=[self.topic.topic_arn])
        )
        self._data_key.grant_encrypt_decrypt(grantee)
