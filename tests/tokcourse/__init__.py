"""The tokcourse package: course data, the tokenizer registry and the tools."""
