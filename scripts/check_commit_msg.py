#!/usr/bin/env python3
"""A commit message's shape, checked by the commit-msg hook (.pre-commit-config.yaml): a subject of
at most 72 characters in the imperative mood, without a closing full stop, and a blank line
before the body, where the why and the figures go (docs/development.md).

    scripts/check_commit_msg.py MESSAGE_FILE
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

MAX_SUBJECT = 72
# First words that end like a past tense or a gerund but are imperatives themselves.
IMPERATIVE_LOOKALIKES = frozenset({"bed", "embed", "feed", "need", "seed", "speed", "shed", "ping"})
IMPERATIVE_LOOKALIKES |= {"bring", "string", "ring", "sing"}


def problems(message: str) -> list[str]:
    """What is wrong with the message, each in one line; none for a good one. Lines git strips
    (comments) and a merge's or a revert's own subject are not judged."""
    lines = [line for line in message.splitlines() if not line.startswith("#")]
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines or not lines[0].strip():
        return ["the message has no subject line"]
    subject = lines[0]
    if re.match(r"(Merge|Revert|fixup!|squash!) ", subject):
        return []
    found = []
    if len(subject) > MAX_SUBJECT:
        found.append(
            f"the subject is {len(subject)} characters, more than {MAX_SUBJECT}: "
            "keep it short and put the details in the body"
        )
    if subject.rstrip().endswith("."):
        found.append("the subject ends in a full stop")
    words = re.sub(r"^[\w./-]+: ", "", subject).split()
    first = words[0].lower() if words else ""
    if re.fullmatch(r"[a-z]+(ed|ing)", first) and first not in IMPERATIVE_LOOKALIKES:
        found.append(f"the subject starts with {words[0]!r}: say what the commit does")
    if len(lines) > 1 and lines[1].strip():
        found.append("the subject and the body need a blank line between them")
    return found


def main() -> int:
    message = Path(sys.argv[1]).read_text(encoding="utf-8")
    found = problems(message)
    for problem in found:
        print(f"commit message: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
