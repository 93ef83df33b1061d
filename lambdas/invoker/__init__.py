"""The invoker Lambda: validates job messages from SQS, records them QUEUED and routes them."""
