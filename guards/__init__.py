"""guards: lint docker-compose LLM-serving estates and the claims they carry."""

__version__ = "0.1.0"
