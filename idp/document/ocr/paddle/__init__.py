"""PaddleOCR's engines: the only code here that imports paddle, paddleocr, paddlex, onnxruntime or
cv2 (tests/idp/test_layers.py), and only when an engine is built."""
