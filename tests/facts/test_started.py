"""What a documented ``docker compose up`` starts: services by profile, and the card ids each
reserves under a section's exports."""

from guards.facts.started import Started, started, starts
from guards.sources.compose.compose import parse_compose

MODELS = (
    "services:\n"
    "  embedder:\n"
    "    image: x\n"
    "    profiles: ['', rag]\n"
    "    deploy: {resources: {reservations: {devices: [{driver: nvidia, "
    "device_ids: ['${EMBED_GPU:-0}'], capabilities: [gpu]}]}}}\n"
    "  captioner:\n"
    "    image: x\n"
    "    profiles: [ingest]\n"
    "    deploy: {resources: {reservations: {devices: [{driver: nvidia, "
    "device_ids: ['${CAPTION_GPU:-6}'], capabilities: [gpu]}]}}}\n"
    "  proxy:\n"
    "    image: y\n"
)


def test_profiles_start_their_services_and_one_without_profiles_always():
    compose = parse_compose(MODELS, "models.yml")
    assert [s.name for s in compose.shipped if starts(s, ("ingest",))] == ["captioner", "proxy"]
    assert [s.name for s in compose.shipped if starts(s, ())] == ["proxy"]


def test_the_ids_each_started_service_reserves_under_the_exports():
    compose = parse_compose(MODELS, "models.yml")
    assert started(compose, ("rag", "ingest"), {"CAPTION_GPU": "1"}) == [
        Started("embedder", ("0",), 5),
        Started("captioner", ("1",), 9),
    ]
    assert started(compose, ("ingest",), {}) == [Started("captioner", ("6",), 9)]
    assert started(compose, (), {}) == []  # the proxy reserves no card
