"""discover -> estate -> suite -> Run: the check run and what it keeps."""
