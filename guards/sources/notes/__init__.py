"""Markdown notes -> Note: blocks, sections and what they mark."""
