"""Private-network mode (`-c privateNetwork=true`): nothing has a route out of the VPC, the AWS
APIs are reached through VPC endpoints whose policies admit only this account's principals and
resources, DNS answers only AWS service names, and every function and the VL endpoint run
inside it with nothing more than the EC2 actions that attach them. (cdk-nag, cfn-lint and the
rest of the security gate run on this mode too: tests/infra/test_security.py; checkov: make
checkov.)"""

from __future__ import annotations

from typing import Any, Final

import pytest
from pydantic import ValidationError

from infra.network import ALLOWED_DOMAINS, LAMBDA_VPC_ACTIONS, SAGEMAKER_VPC_ACTIONS
from infra.settings import Settings
from tests.infra.grant_table import VL_ROLE, template_grants
from tests.infra.support import Synthesized

# Anything that could carry a packet out of the VPC.
WAYS_OUT: Final = (
    "AWS::EC2::InternetGateway",
    "AWS::EC2::VPCGatewayAttachment",
    "AWS::EC2::NatGateway",
    "AWS::EC2::EgressOnlyInternetGateway",
    "AWS::EC2::EIP",
    "AWS::EC2::VPNGateway",
    "AWS::EC2::CustomerGateway",
    "AWS::EC2::TransitGatewayAttachment",
    "AWS::EC2::VPCPeeringConnection",
    "AWS::EC2::CarrierGateway",
)
INTERFACE_ENDPOINTS: Final = {
    "sqs",
    "sns",
    "kms",
    "logs",
    "lambda",
    "events",
    "monitoring",
    "sagemaker.runtime",
    "sagemaker.api",
    "ecr.api",
    "ecr.dkr",
}


def _service(endpoint: dict[str, Any]) -> str:
    """com.amazonaws.<region>.<service> → <service> (a joined name leaves the region empty)."""
    name = endpoint["Properties"]["ServiceName"]
    if not isinstance(name, str):
        name = "".join(part for part in name["Fn::Join"][1] if isinstance(part, str))
    return ".".join(name.split(".")[3:])


def _endpoints(private: Synthesized, kind: str) -> dict[str, dict[str, Any]]:
    return {
        _service(endpoint): endpoint["Properties"]
        for endpoint in private.of_type("AWS::EC2::VPCEndpoint").values()
        if endpoint["Properties"].get("VpcEndpointType", "Gateway") == kind
    }


def test_the_vpc_has_no_way_out(private: Synthesized) -> None:
    assert private.error is None, private.error
    assert len(private.of_type("AWS::EC2::VPC")) == 1
    for resource_type in WAYS_OUT:
        assert not private.of_type(resource_type), resource_type
    # The route tables hold only the VPC's own route and the gateway endpoints' (which are no
    # Route resources): no route of any kind is declared.
    assert not private.of_type("AWS::EC2::Route")
    for subnet in private.of_type("AWS::EC2::Subnet").values():
        assert subnet["Properties"].get("MapPublicIpOnLaunch", False) is False


def test_the_aws_apis_are_reached_through_endpoints(private: Synthesized) -> None:
    route_tables = {f"{{'Ref': '{rt}'}}" for rt in private.of_type("AWS::EC2::RouteTable")}
    gateways = _endpoints(private, "Gateway")
    assert set(gateways) == {"s3", "dynamodb"}
    for props in gateways.values():
        assert {str(rt) for rt in props["RouteTableIds"]} == route_tables
    interfaces = _endpoints(private, "Interface")
    assert set(interfaces) == INTERFACE_ENDPOINTS
    for props in interfaces.values():
        assert props["PrivateDnsEnabled"] is True


ACCOUNT: Final = {"Ref": "AWS::AccountId"}
# ECR's image layers live in a bucket of AWS's own account: the one other resource reachable.
ECR_LAYERS: Final = {
    "Fn::Join": ["", ["arn:aws:s3:::prod-", {"Ref": "AWS::Region"}, "-starport-layer-bucket/*"]]
}


def _only_this_account(statement: dict[str, Any]) -> bool:
    conditions = statement.get("Condition", {})
    principal = conditions.get("StringEquals", {}).get("aws:PrincipalAccount")
    resource = conditions.get("StringEquals", {}).get("s3:ResourceAccount") or conditions.get(
        "StringEqualsIfExists", {}
    ).get("aws:ResourceAccount")
    return bool(principal == ACCOUNT and resource == ACCOUNT)


def test_every_endpoint_admits_only_this_accounts_principals_and_resources(
    private: Synthesized,
) -> None:
    endpoints = private.of_type("AWS::EC2::VPCEndpoint")
    assert len(endpoints) == len(INTERFACE_ENDPOINTS) + 2
    for logical_id, endpoint in endpoints.items():
        statements = endpoint["Properties"]["PolicyDocument"]["Statement"]
        assert all(statement["Effect"] == "Allow" for statement in statements), logical_id
        others = [statement for statement in statements if not _only_this_account(statement)]
        if _service(endpoint) == "s3":
            # ECR's layer bucket, read only, and nothing else
            assert [(o["Action"], o["Resource"]) for o in others] == [("s3:GetObject", ECR_LAYERS)]
        else:
            assert others == [], logical_id


def test_dns_answers_only_aws_service_names(private: Synthesized) -> None:
    lists = {
        logical_id: resource["Properties"]["Domains"]
        for logical_id, resource in private.of_type(
            "AWS::Route53Resolver::FirewallDomainList"
        ).items()
    }
    _, group = private.only("AWS::Route53Resolver::FirewallRuleGroup")
    rules = sorted(group["FirewallRules"], key=lambda rule: rule["Priority"])
    verdicts = [
        (rule["Action"], lists[rule["FirewallDomainListId"]["Fn::GetAtt"][0]]) for rule in rules
    ]
    assert verdicts == [("ALLOW", list(ALLOWED_DOMAINS)), ("BLOCK", ["*"])]
    assert rules[1]["BlockResponse"] == "NODATA"
    _, association = private.only("AWS::Route53Resolver::FirewallRuleGroupAssociation")
    (vpc,) = private.of_type("AWS::EC2::VPC")
    assert association["VpcId"] == {"Ref": vpc}


def test_cpu_only_private_mode_has_no_sagemaker_or_ecr_endpoints(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from tests.infra.support import synthesize

    cpu = synthesize(
        tmp_path_factory.mktemp("cdk-private-cpu"), privateNetwork="true", vlEnabled="false"
    )
    assert cpu.error is None, cpu.error
    assert set(_endpoints(cpu, "Interface")) == INTERFACE_ENDPOINTS - {
        "sagemaker.runtime",
        "sagemaker.api",
        "ecr.api",
        "ecr.dkr",
    }


def test_every_function_and_the_vl_endpoint_run_in_the_isolated_subnets(
    private: Synthesized,
) -> None:
    subnets = sorted(private.of_type("AWS::EC2::Subnet"))
    (workloads,) = [
        logical_id
        for logical_id, group in private.of_type("AWS::EC2::SecurityGroup").items()
        if "functions and VL endpoint" in group["Properties"]["GroupDescription"]
    ]
    functions = private.of_type("AWS::Lambda::Function")
    assert len(functions) == 7
    for logical_id, function in functions.items():
        config = function["Properties"]["VpcConfig"]
        assert sorted(s["Ref"] for s in config["SubnetIds"]) == subnets, logical_id
        assert config["SecurityGroupIds"] == [{"Fn::GetAtt": [workloads, "GroupId"]}]
    _, model = private.only("AWS::SageMaker::Model")
    assert sorted(s["Ref"] for s in model["VpcConfig"]["Subnets"]) == subnets
    assert model["VpcConfig"]["SecurityGroupIds"] == [{"Fn::GetAtt": [workloads, "GroupId"]}]


def test_workloads_may_open_only_https_and_only_they_reach_the_endpoints(
    private: Synthesized,
) -> None:
    groups = private.of_type("AWS::EC2::SecurityGroup")
    for logical_id, group in groups.items():
        props = group["Properties"]
        assert not props.get("SecurityGroupIngress"), logical_id  # none open to an address
        for rule in props.get("SecurityGroupEgress", []):
            # "allow_all_outbound=False" leaves CDK's placeholder (ICMP 252-86 to 255.255.255.255).
            assert (rule["IpProtocol"], rule.get("FromPort"), rule.get("ToPort")) in {
                ("tcp", 443, 443),
                ("icmp", 252, 86),
            }, (logical_id, rule)
    ingress = private.of_type("AWS::EC2::SecurityGroupIngress")
    assert ingress
    for rule in ingress.values():
        props = rule["Properties"]
        assert (props["IpProtocol"], props["FromPort"], props["ToPort"]) == ("tcp", 443, 443)
        assert "SourceSecurityGroupId" in props  # from the workloads' group, never an address


def test_roles_gain_only_the_actions_that_attach_them_to_the_vpc(
    full: Synthesized, private: Synthesized
) -> None:
    default, in_vpc = template_grants(full), template_grants(private)
    assert set(in_vpc) == set(default)
    for role, grants in in_vpc.items():
        attach = SAGEMAKER_VPC_ACTIONS if role == VL_ROLE else LAMBDA_VPC_ACTIONS
        assert grants - default[role] == {(action, "*") for action in attach}, role
        assert default[role] <= grants, role


def test_hub_downloads_cannot_be_asked_of_a_private_network() -> None:
    with pytest.raises(ValidationError, match="allowHubDownload needs the internet"):
        Settings.from_context({"privateNetwork": "true", "allowHubDownload": "true"}.get)
