"""`idp dlq`: the job queue's dead letters (messages that could not name a job)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.table import Table

from devkit.cli.common import JsonOption, StackTarget, err, out, pipeline_names, with_stack_target
from devkit.dead_letters import DeadLetters

dlq_app = typer.Typer(help="The job queue's dead letters: list them, send them back.")


def _dead_letters(stack: StackTarget) -> DeadLetters:
    endpoint = stack.endpoint
    pipeline = pipeline_names(endpoint, stack.stack_name)
    if pipeline.dlq_url is None:
        err.print("[red]the stack names no dead-letter queue (output DeadLetterQueueUrl)[/]")
        raise typer.Exit(code=2)
    return DeadLetters(
        endpoint.client("sqs"), dlq_url=pipeline.dlq_url, queue_url=pipeline.queue_url
    )


def _sent(epoch_ms: str) -> str:
    if not epoch_ms.isdigit():
        return ""
    moment = datetime.fromtimestamp(int(epoch_ms) / 1000, tz=UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


@dlq_app.command("list")
@with_stack_target
def list_(
    limit: Annotated[int, typer.Option(min=1, help="show at most this many")] = 50,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Show the dead letters without taking them off the queue."""
    dead_letters = _dead_letters(stack)
    letters = dead_letters.peek(limit)
    if as_json:
        print(json.dumps([letter.__dict__ for letter in letters]))
        return
    table = Table(title=f"{dead_letters.depth()} dead letters (showing {len(letters)})")
    for column in ("message id", "sent", "received", "body"):
        table.add_column(column)
    for letter in letters:
        body = letter.body if len(letter.body) <= 120 else letter.body[:119] + "…"
        table.add_row(letter.message_id, _sent(letter.sent_at), str(letter.receive_count), body)
    out.print(table)


@dlq_app.command()
@with_stack_target
def redrive(
    limit: Annotated[int | None, typer.Option(min=1, help="send back at most this many")] = None,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Send the dead letters back to the job queue (after fixing what made them fail)."""
    moved = _dead_letters(stack).redrive(limit)
    if as_json:
        print(json.dumps({"redriven": moved}))
    else:
        out.print(f"{moved} messages sent back to the job queue")
