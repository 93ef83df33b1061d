"""The stale-job sweeper: ends jobs no worker can still be working on."""
