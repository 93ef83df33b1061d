"""The completion handler: ends jobs from SageMaker async notifications and failure records."""
