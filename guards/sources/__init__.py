"""Bytes -> objects: the only code that opens a file to read it."""
