"""The VL inference container: the SageMaker serving contract over PaddleOCR-VL and vLLM."""
