"""A compose file -> Compose: header, comments, services and their knobs."""
