"""OCR of a document's pages, shaped like an OCR library:

pipeline.py  a document's bytes → its pages, each read by page.py
page.py      one page, step by step: orient → recognize → split gutters → reading order →
             verdict → second read where doubtful
registry.py  the warm engines of a process
engine.py    the seam every engine implements
steps/       the engine-neutral steps (numpy only)
paddle/      PaddleOCR's engines and classifiers: the only code that imports the libraries
models/      the model catalogue, the language → model choice and the model cache
"""
