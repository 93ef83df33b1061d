"""AWS helpers shared by every function, the processor image and the VL container.

- `clients`: boto3 clients with the shared retry and timeout settings;
- `errors`: which AWS errors are transient, which mean "not found", and how to record them;
- `s3`: S3 URIs;
- `settings`: function settings read from the environment;
- `telemetry`: business metrics as CloudWatch EMF lines;
- `endpoint`, `alarms`: the VL endpoint's capacity and its scale-in alarm.
"""
