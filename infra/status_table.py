"""The job status table: one item per job, listed by status and creation time through a GSI."""

from __future__ import annotations

from enum import StrEnum

from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from idp.contract import names
from infra.encryption import DataKey
from infra.nag import acknowledge, wildcard_resource


class JobAccess(StrEnum):
    """What a function does with job records: the DynamoDB action each idp.jobstore call makes."""

    CREATE = "dynamodb:PutItem"  # JobStore.create, create_failed (conditional on a new id)
    READ = "dynamodb:GetItem"  # JobStore.get (consistent read)
    UPDATE = "dynamodb:UpdateItem"  # every status change and the chunk bookkeeping
    LIST_BY_STATUS = "dynamodb:Query"  # JobStore.list_by_status, on the status index only


class StatusTable(Construct):
    """On-demand, point-in-time recovery, encrypted with the stack's key, with a stream."""

    def __init__(self, scope: Construct, construct_id: str, *, data_key: DataKey) -> None:
        super().__init__(scope, construct_id)
        self._data_key = data_key
        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=dynamodb.Attribute(
                name=names.JOB_ID_ATTR, type=dynamodb.AttributeType.STRING
            ),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.CUSTOMER_MANAGED,
            encryption_key=data_key.key,
            # The outbox of job-finished events (lambdas/events): every change, before and after.
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            # Records whose retention ran out (the invoker dates each: retentionDays).
            time_to_live_attribute=names.EXPIRES_AT_ATTR,
        )
        self.table.add_global_secondary_index(
            index_name=names.STATUS_INDEX,
            partition_key=dynamodb.Attribute(
                name=names.STATUS_INDEX_PK, type=dynamodb.AttributeType.STRING
            ),
            sort_key=dynamodb.Attribute(
                name=names.STATUS_INDEX_SK, type=dynamodb.AttributeType.STRING
            ),
            projection_type=dynamodb.ProjectionType.ALL,
        )

    @property
    def status_index_arn(self) -> str:
        return Stack.of(self).format_arn(
            service="dynamodb",
            resource="table",
            resource_name=f"{self.table.table_name}/index/{names.STATUS_INDEX}",
        )

    def grant_job_access(self, grantee: iam.IGrantable, *access: JobAccess) -> None:
        """The item actions `access` names on the table (a query on the status index alone),
        and the key: decrypt to read, data keys too to write."""
        items = sorted(a.value for a in access if a is not JobAccess.LIST_BY_STATUS)
        if items:
            grantee.grant_principal.add_to_principal_policy(
                iam.PolicyStatement(actions=items, resources=[self.table.table_arn])
            )
        if JobAccess.LIST_BY_STATUS in access:
            grantee.grant_principal.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=[JobAccess.LIST_BY_STATUS.value], resources=[self.status_index_arn]
                )
            )
        if {JobAccess.CREATE, JobAccess.UPDATE} & set(access):
            self._data_key.grant_encrypt_decrypt(grantee)
        else:
            self._data_key.grant_decrypt(grantee)

    def grant_stream_read(self, role: iam.Role) -> None:
        """Read the table's stream (the events function's event source mapping) and decrypt
        its records: DescribeStream, GetRecords, GetShardIterator on the stream, and
        ListStreams, which takes no resource."""
        self.table.grant_stream_read(role)
        acknowledge(
            role,
            wildcard_resource("*"),
            "dynamodb:ListStreams has no resource-level permissions (Lambda's DynamoDB event "
            "source needs it); the stream's own actions are scoped to this table's stream.",
        )
