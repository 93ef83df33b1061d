"""How a job moves between functions, with no document libraries.

Inbound messages, the asynchronous Lambda invoke, VL submission, chunks and their fan-in, the
result cache, and the one writer of result.json and result.md.
"""
