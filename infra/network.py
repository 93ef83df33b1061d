"""Private-network mode (`-c privateNetwork=true`): a VPC with no way out.

Isolated subnets only: no internet gateway, no NAT, no route beyond the VPC. The AWS APIs the
functions and the VL endpoint call are reached through VPC endpoints, and nothing else is:
gateway endpoints (free) for S3 and DynamoDB, interface endpoints for the rest. Every function
and the VL endpoint run in the isolated subnets, behind a security group that may reach only
the endpoints (HTTPS). The hub download is impossible in this mode (there is no internet to
download from): models come from the image or the pinned model cache.

Every endpoint has a policy that admits only this account's principals acting on this
account's resources (`aws:PrincipalAccount`, `aws:ResourceAccount`; S3 also by
`s3:ResourceAccount`), so neither a stolen presigned URL nor a role's credentials carry data
to another account's bucket, queue or topic; the one exception is the S3 bucket that holds
ECR's image layers (AWS's own), for the VL image pull. DNS goes through a Route 53 Resolver
DNS Firewall that answers only AWS service names (`*.amazonaws.com`), so DNS cannot carry data
out either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from aws_cdk import Aws, RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_route53resolver as resolver
from constructs import Construct

from infra.log_groups import LogPolicy
from infra.nag import acknowledge, wildcard_resource

AZS: Final = 2
# The APIs the code calls (and Lambda's and SageMaker's own needs), by interface endpoint.
_INTERFACE_ENDPOINTS: Final = {
    "Sqs": ec2.InterfaceVpcEndpointAwsService.SQS,  # the invoker's queue, DLQs
    "Sns": ec2.InterfaceVpcEndpointAwsService.SNS,  # error and VL notification topics
    "Kms": ec2.InterfaceVpcEndpointAwsService.KMS,  # the data key
    "Logs": ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,
    "Lambda": ec2.InterfaceVpcEndpointAwsService.LAMBDA_,  # invoker → processor, chunks
    "Events": ec2.InterfaceVpcEndpointAwsService.EVENTBRIDGE,  # job-finished events
    "Monitoring": ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING,  # alarm state, metrics
}
_VL_INTERFACE_ENDPOINTS: Final = {
    "SageMakerRuntime": ec2.InterfaceVpcEndpointAwsService.SAGEMAKER_RUNTIME,  # async submit
    "SageMakerApi": ec2.InterfaceVpcEndpointAwsService.SAGEMAKER_API,  # scale 0 ↔ 1
    # The VL model's image, should SageMaker pull it through the VPC.
    "EcrApi": ec2.InterfaceVpcEndpointAwsService.ECR,
    "EcrDocker": ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER,
}
# What Lambda needs of a function's role to attach the function to the VPC (the EC2 actions of
# AWS's AWSLambdaVPCAccessExecutionRole), and SageMaker of the VL role for the same.
LAMBDA_VPC_ACTIONS: Final = (
    "ec2:AssignPrivateIpAddresses",
    "ec2:CreateNetworkInterface",
    "ec2:DeleteNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:UnassignPrivateIpAddresses",
)
SAGEMAKER_VPC_ACTIONS: Final = (
    "ec2:CreateNetworkInterface",
    "ec2:CreateNetworkInterfacePermission",
    "ec2:DeleteNetworkInterface",
    "ec2:DeleteNetworkInterfacePermission",
    "ec2:DescribeDhcpOptions",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeSubnets",
    "ec2:DescribeVpcs",
)
HTTPS: Final = ec2.Port.tcp(443)
# The names the workloads may resolve: AWS's service endpoints (the VPC endpoints' private DNS
# names among them); everything else is answered NODATA.
ALLOWED_DOMAINS: Final = ("amazonaws.com.", "*.amazonaws.com.")
DNS_FIREWALL_PRIORITY: Final = 101  # the lowest a rule group association may take


def same_account_policy() -> iam.PolicyStatement:
    """Any action, by this account's principals, on this account's resources (the key absent,
    for an action on no resource such as PutMetricData, is the caller's own account)."""
    return iam.PolicyStatement(
        principals=[iam.AnyPrincipal()],
        actions=["*"],
        resources=["*"],
        conditions={
            "StringEquals": {"aws:PrincipalAccount": Aws.ACCOUNT_ID},
            "StringEqualsIfExists": {"aws:ResourceAccount": Aws.ACCOUNT_ID},
        },
    )


class PrivateNetwork(Construct):
    """The VPC, its endpoints, and the security group every function and the endpoint use."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        vl_enabled: bool,
        log_policy: LogPolicy,
    ) -> None:
        super().__init__(scope, construct_id)
        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            max_azs=AZS,
            nat_gateways=0,
            subnet_configuration=[
                ec2.SubnetConfiguration(
                    name="isolated", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=24
                )
            ],
            # Nothing uses the default group (every function and endpoint has its own), and
            # restricting it takes a custom-resource Lambda outside the VPC.
            restrict_default_security_group=False,
        )
        s3 = self.vpc.add_gateway_endpoint("S3", service=ec2.GatewayVpcEndpointAwsService.S3)
        s3.add_to_policy(
            iam.PolicyStatement(
                principals=[iam.AnyPrincipal()],
                actions=["s3:*"],
                resources=["*"],
                conditions={
                    "StringEquals": {
                        "aws:PrincipalAccount": Aws.ACCOUNT_ID,
                        "s3:ResourceAccount": Aws.ACCOUNT_ID,
                    }
                },
            )
        )
        if vl_enabled:
            # ECR keeps image layers in an S3 bucket of its own (AWS's account): pulling the
            # VL image through the VPC reads them, and only them.
            s3.add_to_policy(
                iam.PolicyStatement(
                    principals=[iam.AnyPrincipal()],
                    actions=["s3:GetObject"],
                    resources=[f"arn:aws:s3:::prod-{Aws.REGION}-starport-layer-bucket/*"],
                )
            )
        dynamodb = self.vpc.add_gateway_endpoint(
            "DynamoDb", service=ec2.GatewayVpcEndpointAwsService.DYNAMODB
        )
        dynamodb.add_to_policy(same_account_policy())
        self.gateway_endpoints = {"S3": s3, "DynamoDb": dynamodb}
        flow_logs = log_policy.group(self, "FlowLogs", removal_policy=RemovalPolicy.DESTROY)
        self.vpc.add_flow_log(
            "FlowLog", destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs)
        )
        self.subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)
        # The workloads may open HTTPS connections, and nothing may connect to them. The only
        # routes are the VPC's own and the gateway endpoints', so "any address" reaches no more
        # than the endpoints (the gateway endpoints' prefix lists have no ids CloudFormation
        # can name).
        self.security_group = ec2.SecurityGroup(
            self,
            "Workloads",
            vpc=self.vpc,
            description="paddle-idp functions and VL endpoint: HTTPS out to the VPC endpoints",
            allow_all_outbound=False,
        )
        self.security_group.add_egress_rule(
            ec2.Peer.any_ipv4(), HTTPS, "HTTPS to the VPC endpoints (no other route exists)"
        )
        endpoints = ec2.SecurityGroup(
            self,
            "Endpoints",
            vpc=self.vpc,
            description="paddle-idp VPC interface endpoints: HTTPS from the workloads",
            allow_all_outbound=False,
        )
        endpoints.add_ingress_rule(self.security_group, HTTPS, "HTTPS from the workloads")
        wanted = {**_INTERFACE_ENDPOINTS, **(_VL_INTERFACE_ENDPOINTS if vl_enabled else {})}
        self.interface_endpoints = {
            name: self.vpc.add_interface_endpoint(
                name,
                service=service,
                subnets=self.subnets,
                security_groups=[endpoints],
                private_dns_enabled=True,
                open=False,
            )
            for name, service in wanted.items()
        }
        for endpoint in self.interface_endpoints.values():
            endpoint.add_to_policy(same_account_policy())
        self._dns_firewall()

    def _dns_firewall(self) -> None:
        """Route 53 Resolver DNS Firewall on the VPC: AWS service names resolve, nothing else
        does (no DNS tunnel out of a VPC with no route out)."""
        allowed = resolver.CfnFirewallDomainList(
            self, "AwsServiceNames", domains=list(ALLOWED_DOMAINS), name=f"{Aws.STACK_NAME}-aws"
        )
        everything = resolver.CfnFirewallDomainList(
            self, "AllNames", domains=["*"], name=f"{Aws.STACK_NAME}-all"
        )
        rules = resolver.CfnFirewallRuleGroup(
            self,
            "DnsFirewall",
            name=f"{Aws.STACK_NAME}-dns",
            firewall_rules=[
                resolver.CfnFirewallRuleGroup.FirewallRuleProperty(
                    action="ALLOW", priority=1, firewall_domain_list_id=allowed.attr_id
                ),
                resolver.CfnFirewallRuleGroup.FirewallRuleProperty(
                    action="BLOCK",
                    priority=2,
                    firewall_domain_list_id=everything.attr_id,
                    block_response="NODATA",
                ),
            ],
        )
        resolver.CfnFirewallRuleGroupAssociation(
            self,
            "DnsFirewallAssociation",
            firewall_rule_group_id=rules.attr_id,
            vpc_id=self.vpc.vpc_id,
            priority=DNS_FIREWALL_PRIORITY,
            name=f"{Aws.STACK_NAME}-dns",
        )

    @property
    def subnet_ids(self) -> Sequence[str]:
        return self.vpc.select_subnets(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED).subnet_ids

    def allow_attach(self, role: iam.IRole, actions: Sequence[str] = LAMBDA_VPC_ACTIONS) -> None:
        """The EC2 actions with which Lambda (or SageMaker) attaches `role`'s workload to the
        VPC: they act on interfaces named at run time, and Describe takes no resource."""
        role.add_to_principal_policy(iam.PolicyStatement(actions=list(actions), resources=["*"]))
        acknowledge(
            role,
            wildcard_resource("*"),
            "The EC2 network-interface actions that attach a function or an endpoint to the "
            "private VPC act on interfaces created at run time; Describe* has no resource-level "
            "permissions.",
        )
