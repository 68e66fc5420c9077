"""The instructor's real-tokenizer tools; the student release does not ship them."""
