"""The job status store in DynamoDB: the store, its table layout, a long document's chunk
counters."""
