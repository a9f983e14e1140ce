# syntax=docker/dockerfile:1
# guards in a container, for CI systems that run images (docs/formats.md: the container image).
# The estate is mounted at /src:
#   docker build -t guards --build-arg VERSION="$(git describe --tags | sed 's/^v//')" .
#   docker run --rm -v "$PWD:/src:ro" guards                          # guards check
#   docker run --rm -u "$(id -u):$(id -g)" -v "$PWD:/src" guards regen # a command that writes

FROM python:3.11-slim AS build
# The build context holds no .git (.dockerignore), so setuptools-scm cannot read the tag here:
# the version comes in as VERSION, and without it is the fallback in pyproject.toml.
ARG VERSION=""
WORKDIR /build
COPY . .
RUN SETUPTOOLS_SCM_PRETEND_VERSION_FOR_COMPOSE_GUARDS="$VERSION" \
    pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
ARG VERSION=""
LABEL org.opencontainers.image.title="guards" \
      org.opencontainers.image.description="Lint docker-compose LLM-serving estates and the claims their headers and notes make." \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="$VERSION"
# The wheel is mounted from the build stage, not copied, so no layer keeps it.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-cache-dir /wheels/*.whl \
    && groupadd --system --gid 10001 guards \
    && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /home/guards guards
# Each container is one run: a run cache would be written and thrown away with it.
ENV GUARDS_NO_CACHE=1
# By number: a runtime that refuses root (runAsNonRoot) can only check a numeric user.
USER 10001:10001
WORKDIR /src
ENTRYPOINT ["guards"]
CMD ["check"]
