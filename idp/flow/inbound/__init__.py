"""What arrives from outside a function, one module per source: job messages on the job queue,
SageMaker's asynchronous-inference notifications, and Lambda's on-failure destination records."""
