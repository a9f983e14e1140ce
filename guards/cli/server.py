"""``guards server``: the editor server (Language Server Protocol), on stdio or TCP."""

import typer

from ..errors import GuardsError

TCP = typer.Option(
    None,
    "--tcp",
    metavar="HOST:PORT",
    help="Listen for one editor on this TCP address instead of talking over stdio.",
)


def server(tcp: str | None = TCP) -> None:
    """Serve diagnostics, quick fixes and rule explanations to an editor (LSP)."""
    address = _address(tcp) if tcp is not None else None
    try:
        from ..server.app import serve
    except ModuleNotFoundError as missing:
        if missing.name not in ("pygls", "lsprotocol"):
            raise
        raise GuardsError(
            f"`guards server` needs {missing.name}: pip install 'compose-guards[server]'"
        ) from None
    if address is None:
        return serve(None)
    try:
        serve(address)
    except OSError as exc:  # the address is taken, or not this machine's
        raise GuardsError(f"--tcp {tcp}: cannot listen: {_reason(exc)}") from None


def _address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise GuardsError(f"--tcp {value!r}: expected HOST:PORT, a port from 1 to 65535")
    return host.strip("[]"), int(port)


def _reason(error: OSError) -> str:
    """What the system says (asyncio wraps a bind error in a sentence that repeats the
    address; a name that does not resolve has a negative code of its own)."""
    import os

    if isinstance(error.errno, int) and error.errno > 0:
        return os.strerror(error.errno)
    return error.strerror or str(error)
