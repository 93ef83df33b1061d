"""Born-digital PDF pages read from their own text layer instead of OCR (pypdfium2's text API)."""
