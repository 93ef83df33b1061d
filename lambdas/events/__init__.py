"""Job-finished events: the status table's stream → the pipeline's EventBridge bus."""
