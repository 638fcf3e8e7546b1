# One image for the manager, the REST API and the solve Jobs (all /routeopt).
# `make lint-dockerfile` checks this file and that its go build flags equal
# those of `make build-static`.

# The builder runs on the build host and cross-compiles (no emulation), so one
# Dockerfile serves every --platform. Patch-pinned to the Go the project uses.
FROM --platform=$BUILDPLATFORM golang:1.26.8 AS builder
ARG TARGETOS
ARG TARGETARCH
WORKDIR /workspace
# Modules first: this layer stays cached until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download
# The whole tree minus .dockerignore, so new packages need no edit here.
COPY . .
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w" -o /out/routeopt ./cmd/routeopt

# Static binary: no libc needed. distroless has no shell or package manager,
# and :nonroot runs as 65532.
FROM gcr.io/distroless/static:nonroot
LABEL org.opencontainers.image.title="routeopt" \
      org.opencontainers.image.description="routeopt Kubernetes operator: manager, REST API and route solver in one binary"
WORKDIR /
COPY --from=builder /out/routeopt /routeopt
# Numeric, so runAsNonRoot can verify it without a passwd lookup.
USER 65532:65532
ENTRYPOINT ["/routeopt"]
