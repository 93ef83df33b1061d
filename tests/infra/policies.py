"""A small IAM policy evaluator over a synthesized template, for proving service-to-service edges.

The emulator the project runs on never evaluates resource or key policies, so these helpers do
it on the template instead. The template is "deployed" into one fictional account and region:
every Ref, Fn::GetAtt, Fn::Join and Fn::Sub resolves to the concrete name or ARN CloudFormation
would produce there, so an ARN built from a name (`format_arn`) and the same resource's
`Fn::GetAtt Arn` compare equal, as they would in AWS.

Evaluation follows AWS's same-account logic, reduced to what this stack uses:
- an explicit Deny in any applicable policy wins;
- otherwise a request is allowed by an Allow in the caller's identity policy or by an Allow in
  the resource policy that names the caller (a service principal or the role itself);
- a KMS key is special: the key policy must allow the caller itself, or allow the account
  (delegating to IAM) while the caller's identity policy allows the action.
Conditions are honoured: a condition key the request does not carry fails the statement, as in
AWS, so a policy that requires aws:SourceArn only matches a service that sends it.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from tests.infra.support import Synthesized, as_list, iter_statements

ACCOUNT: Final = "111122223333"
REGION: Final = "us-east-1"
PARTITION: Final = "aws"
ACCOUNT_ROOT: Final = f"arn:{PARTITION}:iam::{ACCOUNT}:root"
PSEUDO: Final = {
    "AWS::AccountId": ACCOUNT,
    "AWS::Region": REGION,
    "AWS::Partition": PARTITION,
    "AWS::URLSuffix": "amazonaws.com",
}

Document = dict[str, Any]
Statement = dict[str, Any]


# Principals and requests -------------------------------------------------------------------


@dataclass(frozen=True)
class Service:
    """An AWS service acting as its service principal (e.g. cloudwatch.amazonaws.com)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Role:
    """An IAM role of the template, by logical id."""

    logical_id: str

    @property
    def arn(self) -> str:
        return f"arn:{PARTITION}:iam::{ACCOUNT}:role/{self.logical_id}"

    def __str__(self) -> str:
        return f"role {self.logical_id}"


Principal = Service | Role


@dataclass(frozen=True)
class Request:
    """One API call: who, what, on which concrete ARN, with which condition keys."""

    principal: Principal
    action: str
    resource: str
    context: Mapping[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        keys = ", ".join(f"{k}={v}" for k, v in sorted(self.context.items()))
        return f"{self.principal} {self.action} on {self.resource} [{keys}]"


class Via(StrEnum):
    """Which policy must grant a request."""

    IDENTITY = "identity policy"
    RESOURCE = "resource policy"
    KEY = "key policy"


# Resolving intrinsics ----------------------------------------------------------------------


class Resolver:
    """Concrete values of a template's intrinsics in the fictional account and region."""

    def __init__(self, synth: Synthesized) -> None:
        self.resources = synth.resources

    def resolve(self, value: Any) -> Any:
        if isinstance(value, str | int | float | bool):
            return value
        if isinstance(value, list):
            return [self.resolve(item) for item in value]
        if not isinstance(value, dict):
            raise AssertionError(f"cannot resolve {value!r}")
        if len(value) == 1 and next(iter(value)) in self._intrinsics:
            (function, argument), *_ = value.items()
            return self._intrinsics[function](argument)
        return {key: self.resolve(item) for key, item in value.items()}

    @property
    def _intrinsics(self) -> dict[str, Callable[[Any], Any]]:
        return {
            "Ref": lambda name: PSEUDO[name] if name in PSEUDO else self.ref(name),
            "Fn::GetAtt": lambda target: self.get_att(
                *(target.split(".", 1) if isinstance(target, str) else target)
            ),
            "Fn::Join": lambda args: str(args[0]).join(str(self.resolve(part)) for part in args[1]),
            "Fn::Sub": self._sub,
            "Fn::Select": lambda args: self.resolve(args[1])[int(args[0])],
            "Fn::Split": lambda args: str(self.resolve(args[1])).split(args[0]),
        }

    def _sub(self, argument: Any) -> str:
        template, variables = argument if isinstance(argument, list) else (argument, {})
        return re.sub(
            r"\$\{([^}]+)\}",
            lambda match: str(self._sub_variable(match.group(1), variables)),
            template,
        )

    def _sub_variable(self, name: str, variables: Mapping[str, Any]) -> Any:
        if name in variables:
            return self.resolve(variables[name])
        if name in PSEUDO:
            return PSEUDO[name]
        if "." in name:
            logical_id, attribute = name.split(".", 1)
            return self.get_att(logical_id, attribute)
        return self.ref(name)

    def _props(self, logical_id: str) -> dict[str, Any]:
        props: dict[str, Any] = self.resources[logical_id].get("Properties", {})
        return props

    def _name(self, logical_id: str, name_property: str) -> str:
        return str(self.resolve(self._props(logical_id).get(name_property, logical_id)))

    def ref(self, logical_id: str) -> str:
        kind = self.resources[logical_id]["Type"]
        names = {
            "AWS::S3::Bucket": lambda: self._name(logical_id, "BucketName").lower(),
            "AWS::Lambda::Function": lambda: self._name(logical_id, "FunctionName"),
            "AWS::IAM::Role": lambda: self._name(logical_id, "RoleName"),
            "AWS::KMS::Key": lambda: logical_id,
            "AWS::Events::Rule": lambda: self._name(logical_id, "Name"),
            "AWS::Events::EventBus": lambda: self._name(logical_id, "Name"),
            "AWS::CloudWatch::Alarm": lambda: self._name(logical_id, "AlarmName"),
            "AWS::Logs::LogGroup": lambda: self._name(logical_id, "LogGroupName"),
            "AWS::DynamoDB::Table": lambda: self._name(logical_id, "TableName"),
            "AWS::SQS::Queue": lambda: (
                f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/"
                + self._name(logical_id, "QueueName")
            ),
            # These return their ARN.
            "AWS::SNS::Topic": lambda: self.get_att(logical_id, "TopicArn"),
            "AWS::SageMaker::Endpoint": lambda: self._arn("sagemaker", "endpoint/", logical_id),
            "AWS::SageMaker::EndpointConfig": lambda: self._arn(
                "sagemaker", "endpoint-config/", logical_id
            ),
            "AWS::SageMaker::Model": lambda: self._arn("sagemaker", "model/", logical_id),
            "AWS::ApplicationAutoScaling::ScalingPolicy": lambda: self._arn(
                "autoscaling", "scalingPolicy:", logical_id
            ),
        }
        if kind not in names:
            raise AssertionError(f"no Ref value for {kind} {logical_id}")
        return names[kind]()

    def _arn(self, service: str, prefix: str, logical_id: str) -> str:
        name = {
            "AWS::SageMaker::Endpoint": "EndpointName",
            "AWS::SageMaker::EndpointConfig": "EndpointConfigName",
            "AWS::SageMaker::Model": "ModelName",
        }.get(self.resources[logical_id]["Type"], "")
        # SageMaker lowercases names in its ARNs.
        resource = self._name(logical_id, name).lower() if name else logical_id
        return f"arn:{PARTITION}:{service}:{REGION}:{ACCOUNT}:{prefix}{resource}"

    def get_att(self, logical_id: str, attribute: str) -> str:
        kind = self.resources[logical_id]["Type"]
        base = f"{PARTITION}:{{}}:{REGION}:{ACCOUNT}"
        attributes = {
            ("AWS::SNS::Topic", "TopicArn"): lambda: (
                f"arn:{base.format('sns')}:" + self._name(logical_id, "TopicName")
            ),
            ("AWS::SNS::Topic", "TopicName"): lambda: self._name(logical_id, "TopicName"),
            ("AWS::SQS::Queue", "Arn"): lambda: (
                f"arn:{base.format('sqs')}:" + self._name(logical_id, "QueueName")
            ),
            ("AWS::SQS::Queue", "QueueName"): lambda: self._name(logical_id, "QueueName"),
            ("AWS::S3::Bucket", "Arn"): lambda: f"arn:{PARTITION}:s3:::{self.ref(logical_id)}",
            ("AWS::Lambda::Function", "Arn"): lambda: (
                f"arn:{base.format('lambda')}:function:{self.ref(logical_id)}"
            ),
            ("AWS::IAM::Role", "Arn"): lambda: Role(self.ref(logical_id)).arn,
            ("AWS::KMS::Key", "Arn"): lambda: f"arn:{base.format('kms')}:key/{logical_id}",
            ("AWS::Events::Rule", "Arn"): lambda: (
                f"arn:{base.format('events')}:rule/{self.ref(logical_id)}"
            ),
            ("AWS::CloudWatch::Alarm", "Arn"): lambda: (
                f"arn:{base.format('cloudwatch')}:alarm:{self.ref(logical_id)}"
            ),
            ("AWS::Logs::LogGroup", "Arn"): lambda: (
                f"arn:{base.format('logs')}:log-group:{self.ref(logical_id)}:*"
            ),
            ("AWS::DynamoDB::Table", "Arn"): lambda: (
                f"arn:{base.format('dynamodb')}:table/{self.ref(logical_id)}"
            ),
            ("AWS::DynamoDB::Table", "StreamArn"): lambda: (
                f"arn:{base.format('dynamodb')}:table/{self.ref(logical_id)}"
                "/stream/2026-01-01T00:00:00.000"
            ),
            ("AWS::Events::EventBus", "Arn"): lambda: (
                f"arn:{base.format('events')}:event-bus/{self.ref(logical_id)}"
            ),
            ("AWS::Events::EventBus", "Name"): lambda: self.ref(logical_id),
            ("AWS::SageMaker::Model", "ModelName"): lambda: self._name(logical_id, "ModelName"),
            ("AWS::SageMaker::EndpointConfig", "EndpointConfigName"): lambda: self._name(
                logical_id, "EndpointConfigName"
            ),
            ("AWS::SageMaker::Endpoint", "EndpointName"): lambda: self._name(
                logical_id, "EndpointName"
            ),
        }
        if (kind, attribute) not in attributes:
            raise AssertionError(f"no {attribute} value for {kind} {logical_id}")
        return attributes[(kind, attribute)]()


# Matching statements -----------------------------------------------------------------------


def _glob(pattern: str, value: str, *, case_sensitive: bool = True) -> bool:
    """IAM wildcards: * and ? only (fnmatch's [] classes never occur in ARNs we compare)."""
    if not case_sensitive:
        pattern, value = pattern.lower(), value.lower()
    return fnmatch.fnmatchcase(value, pattern)


_OPERATORS: Final[dict[str, Callable[[str, str], bool]]] = {
    "StringEquals": lambda expected, actual: expected == actual,
    "StringLike": _glob,
    "ArnEquals": _glob,  # IAM's ArnEquals takes wildcards too
    "ArnLike": _glob,
    "Bool": lambda expected, actual: expected.lower() == actual.lower(),
}


def conditions_hold(conditions: Mapping[str, Any], context: Mapping[str, str]) -> bool:
    """Every operator and key must hold; any one of a key's values may match. A key missing
    from the request fails the condition (unless the operator ends in IfExists)."""
    lowered = {key.lower(): value for key, value in context.items()}
    for operator, clauses in conditions.items():
        base, if_exists = operator.removesuffix("IfExists"), operator.endswith("IfExists")
        if base not in _OPERATORS:
            raise NotImplementedError(f"condition operator {operator}")
        for key, expected in clauses.items():
            actual = lowered.get(key.lower())
            if actual is None:
                if if_exists:
                    continue
                return False
            if not any(_OPERATORS[base](str(e), actual) for e in as_list(expected)):
                return False
    return True


def _action_matches(statement: Statement, action: str) -> bool:
    if "NotAction" in statement:
        raise NotImplementedError("NotAction")
    return any(_glob(a, action, case_sensitive=False) for a in as_list(statement["Action"]))


def _resource_matches(statement: Statement, resource: str) -> bool:
    if "NotResource" in statement:
        raise NotImplementedError("NotResource")
    return any(_glob(r, resource) for r in as_list(statement.get("Resource", "*")))


class Named(StrEnum):
    """How a resource-policy statement's Principal relates to a caller."""

    NO = "no"
    DIRECTLY = "directly"  # the caller itself, or everyone ("*")
    ACCOUNT = "account"  # the caller's account: delegates to the caller's identity policy


def names_principal(statement: Statement, principal: Principal) -> Named:
    if "NotPrincipal" in statement:
        raise NotImplementedError("NotPrincipal")
    named = statement.get("Principal")
    if named == "*":
        return Named.DIRECTLY
    assert isinstance(named, dict), statement
    if isinstance(principal, Service) and principal.name in as_list(named.get("Service", [])):
        return Named.DIRECTLY
    aws = as_list(named.get("AWS", []))
    if "*" in aws or (isinstance(principal, Role) and principal.arn in aws):
        return Named.DIRECTLY
    if isinstance(principal, Role) and ({ACCOUNT, ACCOUNT_ROOT} & set(aws)):
        return Named.ACCOUNT
    return Named.NO


def statement_applies(statement: Statement, request: Request) -> bool:
    """Action, resource and conditions match (the principal is checked separately)."""
    return (
        _action_matches(statement, request.action)
        and _resource_matches(statement, request.resource)
        and conditions_hold(statement.get("Condition", {}), request.context)
    )


# The policies of a template ----------------------------------------------------------------


@dataclass
class Decision:
    request: Request
    via: Via
    allowed_by: list[str]
    denied_by: list[str]
    considered: list[str]

    @property
    def allowed(self) -> bool:
        return bool(self.allowed_by) and not self.denied_by

    def explain(self) -> str:
        if self.denied_by:
            return f"{self.request}: explicitly denied by {', '.join(self.denied_by)}"
        return (
            f"{self.request}: no Allow in the {self.via.value} grants it "
            f"(looked at: {', '.join(self.considered) or 'no policy'})"
        )


@dataclass
class _ResourcePolicy:
    label: str
    document: Document
    covers: tuple[str, ...]  # ARN patterns the policy governs

    def governs(self, resource: str) -> bool:
        return any(_glob(pattern, resource) for pattern in self.covers)


class Policies:
    """Every identity, resource and key policy of a synthesized template, resolved."""

    def __init__(self, synth: Synthesized) -> None:
        self.resolver = Resolver(synth)
        resolve = self.resolver.resolve
        self._identity: dict[str, list[tuple[str, Statement]]] = {}
        self._resource: list[_ResourcePolicy] = []
        self._keys: dict[str, Document] = {}
        for logical_id, resource in synth.resources.items():
            kind, props = resource["Type"], resource.get("Properties", {})
            if kind == "AWS::IAM::Policy":
                for role in props.get("Roles", []):
                    self._add_identity(role["Ref"], logical_id, resolve(props["PolicyDocument"]))
            elif kind == "AWS::IAM::Role":
                assert not props.get("ManagedPolicyArns"), f"{logical_id}: managed policies"
                for inline in props.get("Policies", []):
                    self._add_identity(logical_id, logical_id, resolve(inline["PolicyDocument"]))
                self._add_resource(
                    f"trust policy of {logical_id}",
                    resolve(props["AssumeRolePolicyDocument"]),
                    [Role(logical_id).arn],
                )
            elif kind == "AWS::SNS::TopicPolicy":
                self._add_resource(
                    f"topic policy {logical_id}",
                    resolve(props["PolicyDocument"]),
                    resolve(props["Topics"]),
                )
            elif kind == "AWS::SQS::QueuePolicy":
                arns = [self.resolver.get_att(q["Ref"], "Arn") for q in props["Queues"]]
                self._add_resource(
                    f"queue policy {logical_id}", resolve(props["PolicyDocument"]), arns
                )
            elif kind == "AWS::S3::BucketPolicy":
                bucket = f"arn:{PARTITION}:s3:::{resolve(props['Bucket'])}"
                self._add_resource(
                    f"bucket policy {logical_id}",
                    resolve(props["PolicyDocument"]),
                    [bucket, f"{bucket}/*"],
                )
            elif kind == "AWS::KMS::Key":
                self._keys[self.resolver.get_att(logical_id, "Arn")] = resolve(props["KeyPolicy"])
            elif kind == "AWS::Lambda::Permission":
                self._add_lambda_permission(logical_id, resolve(props))

    def _add_identity(self, role_id: str, policy_id: str, document: Document) -> None:
        statements = self._identity.setdefault(role_id, [])
        statements.extend((policy_id, s) for s in iter_statements(document))

    def _add_resource(self, label: str, document: Document, covers: list[str]) -> None:
        self._resource.append(_ResourcePolicy(label, document, tuple(covers)))

    def _add_lambda_permission(self, logical_id: str, props: dict[str, Any]) -> None:
        """A Lambda permission is one resource-policy statement of its function."""
        function = props["FunctionName"]
        if not function.startswith("arn:"):
            function = f"arn:{PARTITION}:lambda:{REGION}:{ACCOUNT}:function:{function}"
        condition: dict[str, dict[str, str]] = {}
        if "SourceArn" in props:
            condition["ArnLike"] = {"aws:SourceArn": props["SourceArn"]}
        if "SourceAccount" in props:
            condition["StringEquals"] = {"aws:SourceAccount": props["SourceAccount"]}
        principal = props["Principal"]
        statement = {
            "Effect": "Allow",
            "Principal": (
                {"Service": principal}
                if principal.endswith(".amazonaws.com")
                else {"AWS": principal}
            ),
            "Action": props["Action"],
            "Resource": function,
            **({"Condition": condition} if condition else {}),
        }
        self._add_resource(
            f"Lambda permission {logical_id}", {"Statement": [statement]}, [function]
        )

    # Queries ----------------------------------------------------------------------------

    def identity_statements(self, principal: Principal) -> Iterator[tuple[str, Statement]]:
        if isinstance(principal, Role):
            yield from self._identity.get(principal.logical_id, [])

    def resource_policies(self, resource: str) -> list[_ResourcePolicy]:
        return [policy for policy in self._resource if policy.governs(resource)]

    def key_policy(self, key_arn: str) -> Document | None:
        return self._keys.get(key_arn)

    def authorize(self, request: Request, *, via: Via) -> Decision:
        """Whether `request` is allowed, granted by the `via` policy, and denied by none."""
        decision = Decision(request, via, allowed_by=[], denied_by=[], considered=[])
        identity_allows = self._identity_verdicts(request, decision)
        resource_allows, account_delegations = self._resource_verdicts(request, decision)
        if via is Via.IDENTITY:
            decision.allowed_by = identity_allows
        elif via is Via.RESOURCE:
            decision.allowed_by = resource_allows
        else:
            assert self.key_policy(request.resource) is not None, f"{request.resource}: no key"
            # The key policy allows the caller itself, or delegates to the caller's IAM policy.
            delegated = account_delegations and identity_allows
            decision.allowed_by = resource_allows + (
                [f"key policy (account) + {identity_allows[0]}"] if delegated else []
            )
        return decision

    def _identity_verdicts(self, request: Request, decision: Decision) -> list[str]:
        """The identity policies that allow `request`; their Denies go to the decision."""
        allows: list[str] = []
        if isinstance(request.principal, Role):
            decision.considered.append(f"identity policies of {request.principal}")
        for policy_id, statement in self.identity_statements(request.principal):
            if statement_applies(statement, request):
                verdicts = decision.denied_by if statement["Effect"] == "Deny" else allows
                verdicts.append(f"identity policy {policy_id}")
        return allows

    def _resource_verdicts(
        self, request: Request, decision: Decision
    ) -> tuple[list[str], list[str]]:
        """(resource policies that allow the caller itself, those that allow its account);
        their Denies go to the decision."""
        documents = [(p.label, p.document) for p in self.resource_policies(request.resource)]
        key = self.key_policy(request.resource)
        if key is not None:
            documents.append(("key policy", key))
        allows: list[str] = []
        delegations: list[str] = []
        for label, document in documents:
            decision.considered.append(label)
            for statement in iter_statements(document):
                named = names_principal(statement, request.principal)
                if named is Named.NO or not statement_applies(statement, request):
                    continue
                if statement["Effect"] == "Deny":
                    decision.denied_by.append(label)
                else:
                    (allows if named is Named.DIRECTLY else delegations).append(label)
        return allows, delegations
