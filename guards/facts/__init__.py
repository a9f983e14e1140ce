"""What a compose ships and what its prose says: pure functions over sources' objects."""
