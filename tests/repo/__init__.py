"""The repository itself: the engine's layout, the docs, the dev loop, the private internals it relies on."""
