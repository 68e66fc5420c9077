"""Tools for course authors: locked known-answer cases, mutation testing of the suites, benchmarks."""
