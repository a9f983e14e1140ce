"""A stand-in for the cache's kept data (:class:`guards.run.cache.Kept`), in memory."""

import json


class Shelf:
    """What :class:`guards.run.cache.Kept` does, in memory: the data as JSON, by text."""

    def __init__(self) -> None:
        self.data: dict[str, str] = {}

    def get(self, text):
        return json.loads(self.data[text]) if text in self.data else None

    def put(self, text, values):
        self.data[text] = json.dumps(values)
