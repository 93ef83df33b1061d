"""AWS helpers shared by every function, the processor image and the VL container.

- `clients`: boto3 clients (and the jobs table) with the shared retry and timeout settings;
- `errors`: which AWS errors are transient, which mean "not found", and how to record them;
- `s3`: S3 URIs, and reading a job's input object within its size limit;
- `settings`: settings read from the environment (every function's, the processor's, the VL
  container's);
- `telemetry`: business metrics as CloudWatch EMF lines;
- `endpoint`, `alarms`: the VL endpoint's capacity and its scale-in alarm.
"""
