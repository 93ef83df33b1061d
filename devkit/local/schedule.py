"""EventBridge's schedule rule: a scheduled function invoked every interval, asynchronously."""

from __future__ import annotations

import uuid

from devkit.local.context import Trigger
from idp.contract.timestamps import utc_now


class Schedule(Trigger):
    """Sends `target` a Scheduled Event every sweep interval until the runtime stops."""

    def run(self) -> None:
        interval = self.context.settings.sweep_interval_seconds
        while not self.context.stop.wait(interval):
            event = {
                "version": "0",
                "id": str(uuid.uuid4()),
                "detail-type": "Scheduled Event",
                "source": "aws.events",
                "time": utc_now(),
                "region": self.context.resources.region,
                "resources": [],
                "detail": {},
            }
            self.invoke(self.target, event)
