"""The IAM policy that gives one producer its own slice of a stack: send jobs, upload under its
input prefixes, and read its own results, no one else's ([Jobs and owners] in docs/security.md).

A job's results sit under results/<owner>/<job_id>/, `<owner>` being the principal id AWS gave
its sender, so a grant on results/<principal id>… is the producer's slice. A role's id
(`AROA…`) covers every session of the role; `AROA…:session` or a user's `AIDA…` covers that
caller only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from idp.contract import names
from idp.contract.results import results_prefix

if TYPE_CHECKING:
    from devkit.client import PipelineNames

POLICY_VERSION = "2012-10-17"


def owner_pattern(principal_id: str) -> str:
    """The start of every owner slice of `principal_id`: `AROA…:` for all of a role's
    sessions, `<id>/` for one session or a user (so AIDAX never matches AIDAXY)."""
    results_prefix("job", owner=principal_id)  # refuses what is no principal id
    if principal_id.startswith("AROA") and ":" not in principal_id:
        return f"{principal_id}:"
    return f"{principal_id}/"


def queue_arn(queue_url: str, *, region: str, partition: str = "aws") -> str:
    """arn:aws:sqs:<region>:<account>:<name> of a queue URL (https://…/<account>/<name>)."""
    account, name = urlsplit(queue_url).path.strip("/").split("/")[-2:]
    return f"arn:{partition}:sqs:{region}:{account}:{name}"


def producer_policy(
    principal_id: str,
    pipeline: PipelineNames,
    *,
    region: str,
    input_prefixes: Sequence[str] = (),
    partition: str = "aws",
) -> dict[str, Any]:
    """An identity policy for the producer `principal_id`: sqs:SendMessage on the job queue,
    s3:PutObject under each of `input_prefixes` (as in the stack's producerPrefixes), and
    s3:GetObject / s3:ListBucket on its own results only. The data key (the stack's, by its
    ARN; any key, where the stack gives none) is usable only through S3 and SQS, which hold
    the slice."""
    results = f"{names.RESULTS_PREFIX}{owner_pattern(principal_id)}*"
    statements: list[dict[str, Any]] = [
        {
            "Sid": "SubmitJobs",
            "Effect": "Allow",
            "Action": "sqs:SendMessage",
            "Resource": queue_arn(pipeline.queue_url, region=region, partition=partition),
        },
        {
            "Sid": "ReadOwnResults",
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": f"arn:{partition}:s3:::{pipeline.results_bucket}/{results}",
        },
        {
            "Sid": "ListOwnResults",
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": f"arn:{partition}:s3:::{pipeline.results_bucket}",
            "Condition": {"StringLike": {"s3:prefix": results}},
        },
    ]
    if input_prefixes:
        statements.append(
            {
                "Sid": "UploadOwnInputs",
                "Effect": "Allow",
                "Action": "s3:PutObject",
                "Resource": [
                    f"arn:{partition}:s3:::{pipeline.input_bucket}/{prefix}*"
                    for prefix in input_prefixes
                ],
            }
        )
    statements.append(
        {
            "Sid": "UseTheDataKeyThroughS3AndSqs",
            "Effect": "Allow",
            "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
            "Resource": pipeline.data_key_arn or "*",
            "Condition": {
                "StringEquals": {
                    "kms:ViaService": [
                        f"s3.{region}.amazonaws.com",
                        f"sqs.{region}.amazonaws.com",
                    ]
                }
            },
        }
    )
    return {"Version": POLICY_VERSION, "Statement": statements}
