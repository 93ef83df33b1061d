"""Office documents (DOCX, DOC, ODT, RTF, PPTX, PPT, ODP, XLSX, XLS, ODS) turned into what the
pipeline reads: a PDF of their pages and, for a spreadsheet, its cells.

`preflight` refuses what must never reach the converter (a ZIP bomb, an encrypted or broken
package), `libreoffice` converts under a time limit with macros and links off, `sheets` turns a
spreadsheet's cells into the table blocks of its pages. The conversion runs in a function of
its own (office_converter_image/); the processor only reads its PDF.
"""
