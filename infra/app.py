"""The CDK app (cdk.json "app"): reads the context into typed settings, builds the stack and
runs the cdk-nag AwsSolutions and Serverless packs on it (synth fails on any finding)."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import App, Validations
from cdk_nag import AwsSolutionsChecks, ServerlessChecks

from idp.contract import names
from infra.settings import Settings
from infra.stack import PaddleIdpStack


def build_app(
    *,
    context: Mapping[str, object] | None = None,
    outdir: str | None = None,
    builtin_validation: bool = True,
) -> tuple[App, PaddleIdpStack]:
    """The app and its one stack.

    Under the CLI the context comes from cdk.json and `-c` flags; tests pass it in. The CDK's
    built-in CloudFormation validation runs on every synth unless `builtin_validation` is off.
    """
    app = App(
        context=dict(context) if context is not None else None,
        outdir=outdir,
        builtin_cloud_formation_validation=builtin_validation,
    )
    settings = Settings.from_context(app.node.try_get_context)
    stack = PaddleIdpStack(
        app,
        names.STACK_NAME,
        settings=settings,
        description=f"{names.PROJECT}: serverless PaddleOCR document pipeline",
    )
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), ServerlessChecks(app))
    return app, stack


def main() -> None:
    app, _ = build_app()
    app.synth()


if __name__ == "__main__":
    main()
