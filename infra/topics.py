"""An SNS topic of the pipeline: KMS-encrypted with the stack's key, TLS-only publishing."""

from __future__ import annotations

from aws_cdk import Aws, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sns as sns
from constructs import Construct, IConstruct

from infra.encryption import DataKey


class PipelineTopic(Construct):
    """One notification channel (VL success, errors, scale-in alarm).

    `enforce_ssl` gives the topic a policy holding only the TLS Deny, and that policy replaces
    SNS's default one: a role of this account still publishes through its identity policy
    (`grant_publish`), but an AWS service publishing as its service principal is refused unless
    `allow_service_publish` names it.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        data_key: DataKey,
        display_name: str,
        topic_name: str,
    ) -> None:
        super().__init__(scope, construct_id)
        self._data_key = data_key
        # Named, so that the key's policy can name the topic by ARN (a reference would be a
        # cycle: the topic is encrypted with that key).
        self.topic_arn = Stack.of(self).format_arn(service="sns", resource=topic_name)
        # The topic's own id names its subscriptions, so it must be unique across topics.
        self.topic = sns.Topic(
            self,
            construct_id,
            display_name=display_name,
            topic_name=topic_name,
            master_key=data_key.key,
            enforce_ssl=True,
        )

    @property
    def policy(self) -> IConstruct:
        """The topic policy resource (created with the topic, since `enforce_ssl` adds to it)."""
        return self.topic.node.find_child("Policy")

    def grant_publish(self, grantee: iam.IGrantable) -> None:
        """sns:Publish on this topic and the key actions an encrypted publish needs."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=["sns:Publish"], resources=[self.topic.topic_arn])
        )
        self._data_key.grant_encrypt_decrypt(grantee)

    def allow_service_publish(self, *, service_principal: str, source_arn: str) -> None:
        """Let an AWS service publish here on behalf of one resource of this account (e.g.
        CloudWatch for one alarm), and use the key that encrypts the topic."""
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid=f"Allow{service_principal.split('.', maxsplit=1)[0].capitalize()}ToPublish",
                principals=[iam.ServicePrincipal(service_principal)],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                # Both keys guard against a confused deputy: another account's resource with
                # the same service cannot publish here.
                conditions={
                    "ArnEquals": {"aws:SourceArn": source_arn},
                    "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
                },
            )
        )
        self._data_key.allow_service(service_principal, source_arns=[source_arn])
