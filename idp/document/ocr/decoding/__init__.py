"""The CTC decoding rules of a text recognizer's output, one module per rule family: engine-neutral
(numpy only), installed into PaddleX by idp.document.ocr.paddle.decoder."""
