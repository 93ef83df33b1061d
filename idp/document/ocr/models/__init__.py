"""Which models exist and where their weights come from: the catalogue, the language → model
choice, the S3 model cache with its archives, and ONNX exports."""
