"""Everything that changes a file, and nothing else writes."""
