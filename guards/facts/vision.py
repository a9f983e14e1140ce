"""Whether a service takes image input, as far as its command line decides it.

llama.cpp (docs/multimodal.md): ``--mmproj``/``-mm`` (or ``--mmproj-url``) loads the vision
projector; ``--no-mmproj`` turns it off; ``-hf`` loads the repository's projector by itself, so
without either flag an ``-hf`` model is undecided, and a ``-m`` model has no vision.
vLLM: ``--language-model-only`` or ``--limit-mm-per-prompt`` with every modality at 0 turns it
off; otherwise it follows the checkpoint, which the compose does not say.
"""

from __future__ import annotations

import json
import re

from ..sources.compose.engines import LLAMACPP, VLLM, Knob
from ..sources.compose.services import Service


def vision(service: Service) -> tuple[bool, Knob | None] | None:
    """(on, the knob that decides it — None when it is the engine's default), or None when
    the command line leaves it to the checkpoint."""
    if service.engine == LLAMACPP:
        return _llamacpp(service)
    if service.engine == VLLM:
        return _vllm(service)
    return None


def _llamacpp(service: Service) -> tuple[bool, Knob | None] | None:
    if (knob := service.knob("no_mmproj")) is not None:
        return False, knob
    if (knob := service.knob("mmproj")) is not None and knob.value:
        return True, knob
    if service.knob("hf_repo") is not None:
        return None
    return False, None


def _vllm(service: Service) -> tuple[bool, Knob | None] | None:
    if (knob := service.knob("language_model_only")) is not None and knob.value != "false":
        return False, knob
    knob = service.knob("limit_mm_per_prompt")
    if knob is None or not knob.value:
        return None
    try:
        limits = json.loads(knob.value)
    except (ValueError, RecursionError):  # not JSON, or nested past what the reader can hold
        return None
    if isinstance(limits, dict) and limits and all(v in (0, "0") for v in limits.values()):
        return False, knob
    return None


ON = re.compile(r"\b(?:on|yes|working|present|enabled)\b|✅", re.IGNORECASE)
OFF = re.compile(r"\b(?:off|no|none|text[\s-]only|disabled)\b|❌", re.IGNORECASE)


def stated_vision(text: str) -> bool | None:
    """What prose says about vision: ``VISION ON`` / ``Vision: ✅ working`` -> True,
    ``no vision`` / ``text-only`` / ``Vision: NO (…)`` -> False; whichever comes first."""
    on, off = ON.search(text), OFF.search(text)
    if on is None and off is None:
        return None
    return on is not None and (off is None or on.start() < off.start())
