# syntax=docker/dockerfile:1

# The Longrun worker image. The build stage compiles a static binary; the
# runtime is Debian slim rather than distroless because the shell tool runs
# `bash -c` in the workspace, and sessions expect git and the usual tools.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so editing code does not re-download them. hostcheck is
# a module of its own that go.mod replaces with its directory.
COPY go.mod go.sum ./
COPY hostcheck/go.mod hostcheck/
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/longrun-worker ./worker && \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/longrun ./starter

FROM debian:bookworm-slim
RUN apt-get update && \
    apt-get install -y --no-install-recommends bash ca-certificates git && \
    rm -rf /var/lib/apt/lists/*
# A fixed non-root user: the workspace, state and key volumes are created
# owned by it (a named volume copies its mount point's owner from the image),
# and a tool cannot touch anything in the image outside /workspace.
RUN useradd --uid 10001 --create-home --shell /bin/bash longrun && \
    mkdir /workspace /state /keys && chown longrun:longrun /workspace /state /keys && \
    chmod 0700 /state /keys
COPY --from=build /out/longrun-worker /out/longrun /usr/local/bin/
USER longrun
WORKDIR /workspace
ENV LONGRUN_WORKSPACE=/workspace \
    LONGRUN_STATE_DIR=/state \
    TEMPORAL_ADDRESS=temporal:7233
ENTRYPOINT ["/usr/local/bin/longrun-worker"]
