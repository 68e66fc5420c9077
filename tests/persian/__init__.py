"""The Persian course: translations, message catalogs, glossary, right-to-left layout."""
