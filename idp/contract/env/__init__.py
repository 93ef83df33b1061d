"""Environment-variable keys, one module per deployable that reads them: the functions
(functions.py), the OCR processor image (processor.py) and the VL container (vl.py)."""
